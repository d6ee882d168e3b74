//! The height pass on the CPU (swg-trn §5.2 step 1), twin of `kernels/height.wgsl`: one
//! point, many points, or a grid in parallel blocks ([`super::walk_strip`] runs the rows).

use rayon::prelude::*;

use crate::grid::Grid;
use crate::model::Terrain;
use crate::plan::{AffectorRecord, BakePlan, FilterRecord, HeightOptions, PlanError, TileList};

use super::affector::apply_height_affector;
use super::filter::filter_value_height_pass;
use super::walk::{walk_point, PassState};
use super::walk_strip;

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

/// Side in posts of the blocks the CPU backend culls the layer list for: smaller blocks
/// cull more layers but pay the per-block culling and per-row setup more often; 256 was
/// fastest on tatooine's 2 m region (docs: Performance).
pub const CPU_CULL_BLOCK: u32 = 256;

/// Heights of a terrain: the public entry point for server emulators and the CPU backend.
pub struct HeightEvaluator {
    pub plan: BakePlan,
}

impl HeightEvaluator {
    pub fn new(terrain: &Terrain, opts: &HeightOptions) -> Result<HeightEvaluator, PlanError> {
        Ok(HeightEvaluator { plan: BakePlan::for_heights(terrain, opts)? })
    }

    /// Exact ground height at world (x, z) in metres (x east, z north, origin at the map centre).
    pub fn height_at(&self, x: f32, z: f32) -> f32 {
        let tile = self.plan.tile_layers([x, z, x, z]);
        height_at_point(&self.plan, &tile, x, z)
    }

    /// Heights at many points, in parallel, in input order. Each point walks only the layers
    /// that can touch it, as [`HeightEvaluator::height_at`] does (bit-identical: culling is
    /// exact), which for scattered points is about twice as fast as walking every layer.
    pub fn heights_at(&self, points: &[(f32, f32)]) -> Vec<f32> {
        points.par_iter().with_min_len(256).map(|&(x, z)| self.height_at(x, z)).collect()
    }

    /// Heights of a grid block of posts [c0, c0+cols) × [r0, r0+rows), row-major from the
    /// south, evaluated with the block's culled program on the calling thread (row by row,
    /// layer-major: [`walk_strip::height_row`], bit-identical to [`height_at_point`]).
    pub fn grid_block(&self, grid: &Grid, c0: u32, r0: u32, cols: u32, rows: u32, out: &mut [f32]) {
        assert_eq!(out.len(), cols as usize * rows as usize);
        if cols == 0 || rows == 0 {
            return;
        }
        let tile = self.plan.tile_layers(grid.area(c0, r0, c0 + cols - 1, r0 + rows - 1));
        let xs: Vec<f32> = (0..cols).map(|c| grid.post(c0 + c, 0).0).collect();
        let mut scratch = walk_strip::RowScratch::default();
        for (r, row) in out.chunks_mut(cols as usize).enumerate() {
            let z = grid.post(0, r0 + r as u32).1;
            walk_strip::height_row(&self.plan, &tile, &xs, z, row, &mut scratch);
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
