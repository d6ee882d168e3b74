//! The CPU reference evaluator over a [`BakePlan`]: the oracle the GPU kernels are tested
//! against and the fallback backend. Each function has a WGSL twin of the same name in
//! `kernels/`, with the same f32 operation order (swg-trn §6.5, gpu.md §3.5).

pub mod affector;
pub mod block;
pub mod boundary;
pub mod feather;
pub mod filter;
pub mod row_ops;

use crate::plan::{AffectorRecord, BakePlan, FilterRecord, HeightOptions, PlanError, TileList, LAYER_INVERT_BOUNDARIES, LAYER_INVERT_FILTERS, LAYER_NEEDS_EXTENT, MAX_DEPTH};
use crate::model::Terrain;
use affector::apply_height_affector;
use boundary::boundary_influence;
use feather::feather;
use filter::filter_value_height_pass;
use rayon::prelude::*;

/// What one pass of the layer walk computes at a point: the filter values it sees and what
/// its affectors do. The height pass ([`HeightState`]) and the surface passes
/// (`crate::surface`) share [`walk_point`], so the layer semantics of swg-trn §5.3 live in
/// one place.
pub trait PassState {
    /// The value of filter `f` before its feather function, given the layer's FBIT extent.
    fn filter_value(&self, plan: &BakePlan, f: &FilterRecord, extent: [f32; 4], x: f32, z: f32) -> f32;
    /// Apply affector `a` with amount `t` > 0.
    fn apply(&mut self, plan: &BakePlan, a: &AffectorRecord, t: f32, x: f32, z: f32);
    /// Tracing hooks for explanations (`trnbake fidelity --explain`); no-ops by default,
    /// so the passes compile them away. Layer `layer` (index into `plan.layers`) was reached
    /// with boundary amount `boundary` (after inversion).
    #[inline]
    fn trace_layer(&mut self, _layer: usize, _boundary: f32) {}
    /// Filter `filter` (index into `plan.filters`) gave `weight` after its feather function.
    #[inline]
    fn trace_filter(&mut self, _filter: usize, _weight: f32) {}
    /// The layer's amount after its filters (and their inversion), and the affector amount T.
    #[inline]
    fn trace_amount(&mut self, _layer: usize, _amount: f32, _t: f32) {}
    /// Affector `affector` (index into `plan.affectors`) is about to be applied with `t`.
    #[inline]
    fn trace_affector(&mut self, _affector: usize, _t: f32) {}
    /// Whether the walk can stop (checked after [`PassState::trace_layer`]): a state that
    /// has recorded all it needs (the surface passes' slope traces). Never by default.
    #[inline]
    fn walk_done(&self) -> bool {
        false
    }
}

/// The height pass's state: the height accumulated so far at the point (swg-trn §5.2 step 1).
pub struct HeightState {
    pub h: f32,
}

impl PassState for HeightState {
    #[inline]
    fn filter_value(&self, plan: &BakePlan, f: &FilterRecord, extent: [f32; 4], x: f32, z: f32) -> f32 {
        filter_value_height_pass(plan, f, extent, self.h, x, z)
    }
    #[inline]
    fn apply(&mut self, plan: &BakePlan, a: &AffectorRecord, t: f32, x: f32, z: f32) {
        self.h = apply_height_affector(plan, a, self.h, t, x, z);
    }
}

/// The height at (x, z) after the height pass (swg-trn §5.2 step 1, §5.3), walking the
/// layers of `tile` (from [`BakePlan::tile_layers`] for an area containing the point).
pub fn height_at_point(plan: &BakePlan, tile: &TileList, x: f32, z: f32) -> f32 {
    let mut state = HeightState { h: 0.0 };
    walk_point(plan, tile, x, z, &mut state);
    state.h
}

/// Walk the layers of `tile` at (x, z) (swg-trn §5.3), letting `state` evaluate the filters
/// and apply the affectors.
#[inline]
pub fn walk_point<S: PassState>(plan: &BakePlan, tile: &TileList, x: f32, z: f32, state: &mut S) {
    // amounts[d]: product of the amounts of the open ancestors above depth d.
    let mut amounts = [1.0f32; MAX_DEPTH + 1];
    let mut i = 0usize;
    while i < tile.layers.len() {
        let entry = tile.layers[i];
        let layer = &plan.layers[entry.layer as usize];
        let depth = layer.depth as usize;
        let parent_amount = amounts[depth];

        // 1. Boundary amount: maximum over the boundaries (§5.3); the FBIT extent is the
        //    union of the boxes of the boundaries with non-zero influence (§5.3, §5.6).
        let mut amount: f32 = if layer.boundary_count == 0 { 1.0 } else { 0.0 };
        let needs_extent = layer.flags & LAYER_NEEDS_EXTENT != 0;
        let mut extent = [f32::MAX, f32::MAX, f32::MIN, f32::MIN];
        let bstart = entry.boundary_start as usize;
        for &bi in &tile.boundaries[bstart..bstart + entry.boundary_count as usize] {
            let b = &plan.boundaries[bi as usize];
            let v = feather(b.feather_type, boundary_influence(b, &plan.points, x, z));
            amount = amount.max(v);
            if needs_extent {
                if v > 0.0 {
                    extent = [extent[0].min(b.bounds[0]), extent[1].min(b.bounds[1]), extent[2].max(b.bounds[2]), extent[3].max(b.bounds[3])];
                }
            } else if amount >= 1.0 {
                break;
            }
        }
        if layer.flags & LAYER_INVERT_BOUNDARIES != 0 {
            amount = 1.0 - amount;
        }
        state.trace_layer(entry.layer as usize, amount);
        if state.walk_done() {
            break;
        }
        if amount <= 0.0 {
            i = entry.skip_to as usize;
            continue;
        }
        if extent[0] > extent[2] {
            // No boundary gave an extent: the layer covers the map.
            extent = [-plan.half_width, -plan.half_width, plan.half_width, plan.half_width];
        }

        // 2. Filter amount: minimum over the filters.
        let fstart = layer.filter_start as usize;
        for (k, f) in plan.filters[fstart..fstart + layer.filter_count as usize].iter().enumerate() {
            let v = feather(f.feather_type, state.filter_value(plan, f, extent, x, z));
            state.trace_filter(fstart + k, v);
            amount = amount.min(v);
            if amount <= 0.0 {
                break;
            }
        }
        if layer.flags & LAYER_INVERT_FILTERS != 0 {
            amount = 1.0 - amount;
        }
        state.trace_amount(entry.layer as usize, amount, amount * parent_amount);
        if amount <= 0.0 {
            i = entry.skip_to as usize;
            continue;
        }

        // 3. Affectors with T = own amount × ancestors' amounts.
        let t = amount * parent_amount;
        if t > 0.0 {
            let astart = layer.affector_start as usize;
            for (k, a) in plan.affectors[astart..astart + layer.affector_count as usize].iter().enumerate() {
                state.trace_affector(astart + k, t);
                state.apply(plan, a, t, x, z);
            }
        }
        // 4. Children see parentAmount × amount.
        amounts[depth + 1] = parent_amount * amount;
        i += 1;
    }
}

pub use crate::grid::Grid;

/// Side in posts of the blocks the CPU backend culls the layer list for: smaller blocks
/// cull more layers but pay the per-block culling and per-row setup more often; 256 was
/// fastest on tatooine's 2 m region (docs: Performance).
pub const CPU_CULL_BLOCK: u32 = 256;

/// Heights of a terrain: the public entry point for server emulators and the CPU backend.
pub struct HeightEvaluator {
    pub plan: BakePlan,
    everywhere: TileList,
}

impl HeightEvaluator {
    pub fn new(terrain: &Terrain, opts: &HeightOptions) -> Result<HeightEvaluator, PlanError> {
        let plan = BakePlan::for_heights(terrain, opts)?;
        let everywhere = plan.tile_layers([f32::MIN, f32::MIN, f32::MAX, f32::MAX]);
        Ok(HeightEvaluator { plan, everywhere })
    }

    /// Exact ground height at world (x, z) in metres (x east, z north, origin at the map centre).
    pub fn height_at(&self, x: f32, z: f32) -> f32 {
        let tile = self.plan.tile_layers([x, z, x, z]);
        height_at_point(&self.plan, &tile, x, z)
    }

    /// Heights at many points, in parallel, in input order.
    pub fn heights_at(&self, points: &[(f32, f32)]) -> Vec<f32> {
        points.par_iter().with_min_len(256).map(|&(x, z)| height_at_point(&self.plan, &self.everywhere, x, z)).collect()
    }

    /// Heights of a grid block of posts [c0, c0+cols) × [r0, r0+rows), row-major from the
    /// south, evaluated with the block's culled program on the calling thread (row by row,
    /// layer-major: [`block::height_row`], bit-identical to [`height_at_point`]).
    pub fn grid_block(&self, grid: &Grid, c0: u32, r0: u32, cols: u32, rows: u32, out: &mut [f32]) {
        assert_eq!(out.len(), cols as usize * rows as usize);
        if cols == 0 || rows == 0 {
            return;
        }
        let tile = self.plan.tile_layers(grid.area(c0, r0, c0 + cols - 1, r0 + rows - 1));
        let xs: Vec<f32> = (0..cols).map(|c| grid.post(c0 + c, 0).0).collect();
        let mut scratch = block::RowScratch::default();
        for (r, row) in out.chunks_mut(cols as usize).enumerate() {
            let z = grid.post(0, r0 + r as u32).1;
            block::height_row(&self.plan, &tile, &xs, z, row, &mut scratch);
        }
    }

    /// Heights of every post of `grid`, row-major from the south, in parallel over
    /// [`CPU_CULL_BLOCK`]² blocks: the whole-grid bake of the CPU backend.
    pub fn grid_heights(&self, grid: &Grid) -> Vec<f32> {
        let mut out = vec![0.0f32; grid.len()];
        self.grid_region(grid, 0, 0, grid.cols, grid.rows, CPU_CULL_BLOCK, &mut out);
        out
    }

    /// Heights of posts [c0, c0+cols) × [r0, r0+rows) of `grid`, in parallel over `block`²
    /// sub-blocks (each with its own culled program), row-major from the south.
    pub fn grid_region(&self, grid: &Grid, c0: u32, r0: u32, cols: u32, rows: u32, block: u32, out: &mut [f32]) {
        assert_eq!(out.len(), cols as usize * rows as usize);
        let block = block.max(1);
        // Bands of `block` rows; within a band, blocks left to right, all in parallel.
        out.par_chunks_mut(cols as usize * block as usize).enumerate().for_each(|(band, band_out)| {
            let br = r0 + band as u32 * block;
            let nrows = block.min(r0 + rows - br);
            let mut buf = Vec::new();
            for bc in (0..cols).step_by(block as usize) {
                let ncols = block.min(cols - bc);
                buf.resize(ncols as usize * nrows as usize, 0.0);
                self.grid_block(grid, c0 + bc, br, ncols, nrows, &mut buf);
                for r in 0..nrows as usize {
                    let dst = r * cols as usize + bc as usize;
                    band_out[dst..dst + ncols as usize].copy_from_slice(&buf[r * ncols as usize..(r + 1) * ncols as usize]);
                }
            }
        });
    }
}
