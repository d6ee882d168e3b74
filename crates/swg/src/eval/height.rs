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

/// A point or a region the terrain has no ground for: the one rule of every API (Rust, C,
/// Python) for input off the map. The map spans −half..half metres in x and z, edges included.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum OffMap {
    /// A point outside the map, or with a coordinate that is not a number.
    #[error("{x},{z} is off the map (x and z from {} to {half} m)", -half)]
    Point { x: f32, z: f32, half: f32 },
    /// A region of posts none of which lies on the map.
    #[error("the region {west},{south},{east},{north} lies entirely off the map (x and z from {} to {half} m)", -half)]
    Region { west: f64, south: f64, east: f64, north: f64, half: f32 },
    /// A region whose posts cannot be placed: a bound that is not finite, or whose post
    /// coordinates overflow single precision (the precision posts are evaluated in).
    #[error("the region {west},{south},{east},{north} has posts that are not finite numbers in single precision")]
    NotFinite { west: f64, south: f64, east: f64, north: f64 },
}

/// Heights of a terrain: the public entry point for server emulators and the CPU backend.
///
/// Points off the map have no height: [`HeightEvaluator::try_height_at`] says so with an
/// [`OffMap`] error, [`HeightEvaluator::height_at`] and [`HeightEvaluator::heights_at`] give
/// NaN there. The grid functions ([`HeightEvaluator::grid_region`] and friends) evaluate the
/// rules wherever the posts are, as a bake of a region reaching past the edge does; check a
/// region with [`HeightEvaluator::check_region`] first.
pub struct HeightEvaluator {
    pub plan: BakePlan,
    /// The culled layer lists of the map's cells, for the point queries.
    cells: CellLists,
}

/// Side of the cells whose culled layer lists the point queries share, m: culling a list for
/// each point cost more than walking it (about 0.5 µs of 0.9 µs a height on tatooine); a
/// 256 m cell's list is short enough that walking it costs little more than a point's own.
const CELL_SIDE: f32 = 256.0;

/// The culled layer list of each [`CELL_SIDE`] cell of the map, culled when a point first
/// needs it. Culling is exact, so a point's height from its cell's list equals the height from
/// its own list bit for bit.
struct CellLists {
    half: f32,
    per_side: usize,
    lists: Vec<std::sync::OnceLock<TileList>>,
}

impl CellLists {
    fn new(half: f32) -> CellLists {
        let per_side = if half.is_finite() && half > 0.0 { ((2.0 * half / CELL_SIDE).ceil() as usize).clamp(1, 256) } else { 1 };
        CellLists { half, per_side, lists: (0..per_side * per_side).map(|_| std::sync::OnceLock::new()).collect() }
    }

    /// The cell (column, row) holding coordinate pair (x, z), if on the map.
    fn cell_of(&self, x: f32, z: f32) -> Option<(usize, usize)> {
        let side = 2.0 * self.half / self.per_side as f32;
        let index = |v: f32| {
            let i = ((v + self.half) / side).floor();
            (i >= 0.0 && i < self.per_side as f32 + 1.0).then(|| (i as usize).min(self.per_side - 1))
        };
        Some((index(x)?, index(z)?))
    }

    /// The bounds of cell (c, r), padded by a metre against rounding at its edges.
    fn bounds(&self, c: usize, r: usize) -> [f32; 4] {
        let side = 2.0 * self.half / self.per_side as f32;
        let (x0, z0) = (-self.half + c as f32 * side, -self.half + r as f32 * side);
        [x0 - 1.0, z0 - 1.0, x0 + side + 1.0, z0 + side + 1.0]
    }
}

impl HeightEvaluator {
    pub fn new(terrain: &Terrain, opts: &HeightOptions) -> Result<HeightEvaluator, PlanError> {
        let plan = BakePlan::for_heights(terrain, opts)?;
        let cells = CellLists::new(plan.half_width);
        Ok(HeightEvaluator { plan, cells })
    }

    /// A culled layer list valid over `area` (west, south, east, north): the shared list of the
    /// cell holding it, else one culled for it.
    pub(crate) fn layers_for(&self, area: [f32; 4]) -> std::borrow::Cow<'_, TileList> {
        let cell = self.cells.cell_of(area[0], area[1]).filter(|&(c, r)| {
            let b = self.cells.bounds(c, r);
            area[0] >= b[0] && area[1] >= b[1] && area[2] <= b[2] && area[3] <= b[3]
        });
        match cell {
            Some((c, r)) => {
                std::borrow::Cow::Borrowed(self.cells.lists[r * self.cells.per_side + c].get_or_init(|| self.plan.tile_layers(self.cells.bounds(c, r))))
            }
            None => std::borrow::Cow::Owned(self.plan.tile_layers(area)),
        }
    }

    /// Half the map's width: the map spans −half..half metres in x and z.
    pub fn half_width(&self) -> f32 {
        self.plan.half_width
    }

    /// Whether world (x, z) lies on the map, its edges included (NaN does not).
    pub fn on_map(&self, x: f32, z: f32) -> bool {
        let h = self.plan.half_width;
        (-h..=h).contains(&x) && (-h..=h).contains(&z)
    }

    /// Exact ground height at world (x, z) in metres (x east, z north, origin at the map
    /// centre), or [`OffMap::Point`] for a point off the map (or not a number).
    pub fn try_height_at(&self, x: f32, z: f32) -> Result<f32, OffMap> {
        if !self.on_map(x, z) {
            return Err(OffMap::Point { x, z, half: self.plan.half_width });
        }
        Ok(self.height_anywhere(x, z))
    }

    /// Exact ground height at world (x, z) in metres (x east, z north, origin at the map
    /// centre); NaN for a point off the map (see [`HeightEvaluator::try_height_at`] for the
    /// error instead).
    pub fn height_at(&self, x: f32, z: f32) -> f32 {
        self.try_height_at(x, z).unwrap_or(f32::NAN)
    }

    /// What the rules give at (x, z), on the map or not: the heights of the posts past the
    /// edge that a region reaching beyond the map bakes (and the aprons of the normals).
    pub fn height_anywhere(&self, x: f32, z: f32) -> f32 {
        height_at_point(&self.plan, &self.layers_for([x, z, x, z]), x, z)
    }

    /// Heights at many points, in parallel, in input order; NaN for a point off the map, as
    /// [`HeightEvaluator::height_at`]. Each point walks only the layers that can touch it
    /// (bit-identical: culling is exact), which for scattered points is about twice as fast
    /// as walking every layer.
    pub fn heights_at(&self, points: &[(f32, f32)]) -> Vec<f32> {
        points.par_iter().with_min_len(256).map(|&(x, z)| self.height_at(x, z)).collect()
    }

    /// [`HeightEvaluator::heights_at`] into the caller's slice (`out.len() == points.len()`),
    /// allocating nothing; returns how many points are off the map (NaN in `out`).
    pub fn heights_at_into(&self, points: &[(f32, f32)], out: &mut [f32]) -> usize {
        assert_eq!(out.len(), points.len());
        out.par_iter_mut()
            .zip(points.par_iter())
            .with_min_len(256)
            .map(|(h, &(x, z))| {
                *h = self.height_at(x, z);
                usize::from(!self.on_map(x, z))
            })
            .sum()
    }

    /// [`HeightEvaluator::height_anywhere`] at many points, in parallel, in input order.
    pub fn heights_anywhere(&self, points: &[(f32, f32)]) -> Vec<f32> {
        points.par_iter().with_min_len(256).map(|&(x, z)| self.height_anywhere(x, z)).collect()
    }

    /// Whether `grid` is a region the API bakes: every post a finite single-precision
    /// position, and at least part of it on the map (a region reaching past the edge is
    /// baked, its posts outside holding what the rules give there).
    pub fn check_region(&self, grid: &Grid) -> Result<(), OffMap> {
        let (west, south) = (grid.x0, grid.z0);
        let (east, north) = (grid.east_x(), grid.north_z());
        let fits = |v: f64| v.is_finite() && v.abs() <= f64::from(f32::MAX);
        if ![west, south, east, north].into_iter().all(fits) || !grid.spacing.is_finite() {
            return Err(OffMap::NotFinite { west, south, east, north });
        }
        let h = f64::from(self.plan.half_width);
        if west > h || east < -h || south > h || north < -h {
            return Err(OffMap::Region { west, south, east, north, half: self.plan.half_width });
        }
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::json::demo_terrain;

    /// The point queries' shared cell lists give each point the height its own culled list
    /// gives, bit for bit: inside cells, on their edges (where the padding matters), at the
    /// map's edges and corners, and off the map.
    #[test]
    fn cell_lists_give_the_heights_of_a_points_own_list() {
        let e = HeightEvaluator::new(&demo_terrain(), &HeightOptions::default()).unwrap();
        let half = e.half_width();
        let own = |x: f32, z: f32| height_at_point(&e.plan, &e.plan.tile_layers([x, z, x, z]), x, z);
        let mut points = vec![(-half, -half), (half, half), (half, -half), (0.0, 0.0), (half + 10.0, 3.0), (-half - 0.5, -half - 0.5)];
        // Every cell edge crossed along a diagonal, and a pseudo-random scatter.
        for k in 0..=(2.0 * half / CELL_SIDE) as i32 {
            let v = -half + k as f32 * CELL_SIDE;
            points.extend([(v, v), (v - 0.001, v + 0.001), (v + 0.3, -v)]);
        }
        let mut s = 12345u64;
        for _ in 0..2000 {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let (a, b) = ((s >> 40) as f32 / (1u64 << 24) as f32, (s >> 16 & 0xFF_FFFF) as f32 / (1u64 << 24) as f32);
            points.push((-half + 2.0 * half * a, -half + 2.0 * half * b));
        }
        for &(x, z) in &points {
            let (shared, alone) = (e.height_anywhere(x, z), own(x, z));
            assert_eq!(shared.to_bits(), alone.to_bits(), "{x},{z}: {shared} from the cell, {alone} from its own list");
        }
        assert!(e.cells.lists.iter().filter(|l| l.get().is_some()).count() > 1, "the scatter used several cells");
    }
}
