//! The surface tree walk over the rows of a [`GridBlock`], layer-major over lanes: the CPU
//! backend's fast path for the surface passes, as [`crate::eval::walk_strip`] is for the
//! heights. Every post sees exactly the f32 operations of the per-post tree walk
//! (`SurfaceEvaluator::at_grid_post`) in the same order — tests/surface_lanes.rs asserts bit
//! equality at every lane width — but the per-layer bookkeeping, the boundaries, the fractal
//! filters and the height affectors run once per row over contiguous lanes, and the slope
//! traces of swg-trn §5.9 (`SlopeHeight::Tree`) are walked a row at a time as well (the CPU
//! twin of kernels/surface.wgsl `slope_heights_pass`).

use super::normals::faces_normals_row;
use super::{apply_tree_surface_lanes, slope_open_above, surface_filter_value, GridBlock, Ground, LiveLanes, SurfaceEvaluator, SurfaceResult, SurfaceWalk};
use crate::eval::walk_strip::{
    filter_lanes, height_affector_lanes, lane_filter, live_lanes, live_range, scalar_filter_lanes, trace_row, walk_row, RowPass, RowScratch,
};
use crate::lanes::{Lanes, Width};
use crate::noise::RowFractals;
use crate::plan::{moves_height, AffectorRecord, BakePlan, FilterRecord, TileList, AFFECTOR_COLOR_RAMP_FRACTAL, FILTER_SLOPE};

/// The slope traces of the rows around a walked row (south, own, north), each slot-major:
/// slot k of ring column j at `rows[dz][k * width + j]`, ring column j being grid column
/// c0 − 1 + j of a row whose first post is column c0.
struct SlopeRows<'a> {
    rows: [&'a [f32]; 3],
    width: usize,
    spacing: f32,
    /// The posts' global indices (the quad diagonals of the normal, swg-trn §5.1).
    gx: &'a [i64],
    gz: i64,
    lanes: Width,
    /// The normals last computed ([`SlopeRows::normals_before`]), per lane.
    normals: &'a mut [[f32; 3]],
    /// Their slot and lanes (FSLP layers with no height affector between them read the same
    /// heights, so the next layer's normals are often these).
    last: Option<(usize, std::ops::Range<usize>)>,
}

impl SlopeRows<'_> {
    /// The unit normals (faces reading) of lanes `lanes` from the heights before FSLP layer
    /// `layer`, in [`SlopeRows::normals`]: computed a row of lanes at a time, or kept when the
    /// last ones cover these lanes and read the same heights.
    fn normals_before(&mut self, plan: &BakePlan, layer: usize, lanes: std::ops::Range<usize>) {
        let slot = (plan.layers[layer].slope_rank as usize).max(1) - 1;
        let ring = |slot: usize, dz: usize| &self.rows[dz][slot * self.width + lanes.start..slot * self.width + lanes.end + 2];
        if let Some((last, done)) = &self.last {
            // Bit patterns (one memory compare), so NaN heights compare equal to themselves.
            let same = |a: &[f32], b: &[f32]| bytemuck::cast_slice::<f32, u32>(a) == bytemuck::cast_slice::<f32, u32>(b);
            if done.start <= lanes.start && lanes.end <= done.end {
                if *last == slot {
                    return;
                }
                if (0..3).all(|dz| same(ring(*last, dz), ring(slot, dz))) {
                    // Only these lanes are known to read the same heights.
                    self.last = Some((slot, lanes));
                    return;
                }
            }
        }
        // A row's posts are consecutive columns, so their parities alternate from the first's.
        let even_first = (self.gx[lanes.start] ^ self.gz) & 1 == 0;
        faces_normals_row(self.lanes, [ring(slot, 0), ring(slot, 1), ring(slot, 2)], self.spacing, even_first, &mut self.normals[lanes.clone()]);
        self.last = Some((slot, lanes));
    }
}

/// The tree walk's state over a row's lanes ([`SurfaceWalk::Tree`]): the height so far, the
/// results so far, and what the post's final ground is.
struct SurfaceRow<'a> {
    se: &'a SurfaceEvaluator,
    h: &'a mut [f32],
    results: &'a mut [SurfaceResult],
    ground: &'a [Ground],
    slope: Option<SlopeRows<'a>>,
    /// The layer being walked (for FSLP's slot).
    layer: usize,
    /// The lanes an affector list acts on (T > 0), found once for all its surface affectors:
    /// a layer's lanes are often few and far between in its live range.
    live: &'a mut Vec<u32>,
}

impl RowPass for SurfaceRow<'_> {
    #[inline(always)]
    fn enter_layer(&mut self, _plan: &BakePlan, layer: usize) -> bool {
        self.layer = layer;
        false
    }

    #[inline(always)]
    unsafe fn filter<L: Lanes>(
        &mut self,
        plan: &BakePlan,
        f: &FilterRecord,
        xs: &[f32],
        z: f32,
        extent: Option<&[[f32; 4]]>,
        range: std::ops::Range<usize>,
        amount: &mut [f32],
        fractals: &mut RowFractals,
    ) {
        // FFRA, and FHGT on the tree walk's height so far.
        if lane_filter::<L>(plan, f, xs, z, self.h, range.clone(), amount, fractals) {
            return;
        }
        let slope = match &mut self.slope {
            Some(slope) if f.kind == FILTER_SLOPE => {
                let first = range.clone().find(|&l| amount[l] > 0.0);
                let last = range.clone().rev().find(|&l| amount[l] > 0.0);
                if let (Some(first), Some(last)) = (first, last) {
                    slope.normals_before(plan, self.layer, first..last + 1);
                }
                Some(&*slope)
            }
            _ => None,
        };
        if f.kind == FILTER_SLOPE && !slope_open_above(&self.se.opts, f) {
            // FSLP: the feathered range of each lane's normal y (`surface_filter_value`), a
            // vector at a time as FHGT's; the lane scratch holds the normals' y.
            let normal_y = &mut fractals.scratch;
            for l in range.clone() {
                normal_y[l] = slope.map_or(self.ground[l].normal, |s| s.normals[l])[1];
            }
            filter_lanes::<L>(f, &normal_y[range.clone()], &mut amount[range]);
            return;
        }
        scalar_filter_lanes(plan, f, extent, range, amount, |l, ext| {
            let normal = slope.map_or(self.ground[l].normal, |s| s.normals[l]);
            let ground = Ground { height: self.h[l], normal };
            surface_filter_value(plan, f, ext, &ground, self.results[l].shader.family, &self.se.opts, xs[l], z)
        });
    }

    #[inline(always)]
    unsafe fn affectors<L: Lanes>(&mut self, plan: &BakePlan, affectors: &[AffectorRecord], xs: &[f32], z: f32, t: &[f32], fractals: &mut RowFractals) {
        if affectors.is_empty() {
            return;
        }
        let range = live_range(t);
        let mut live_found = false;
        for a in affectors {
            if moves_height(a.kind) {
                height_affector_lanes::<L>(plan, a, xs, z, t, range.clone(), self.h, fractals);
                continue;
            }
            // ACRF's fractal over the live lanes at once (equal per lane to `value`).
            let ramp = match plan.fractals.get(a._pad as usize) {
                Some(f) if a.kind == AFFECTOR_COLOR_RAMP_FRACTAL => Some(fractals.values::<L>(f, a._pad as usize, xs, z, range.clone())),
                _ => None,
            };
            if !live_found {
                live_lanes(t, range.clone(), self.live);
                live_found = true;
            }
            let lanes = LiveLanes { plan, opts: &self.se.opts, live: self.live, t, xs, z, ground: self.ground, ramp };
            apply_tree_surface_lanes(&lanes, a, self.results);
        }
    }
}

/// Walk `row` over `tile` of the tree walk's plan at lane width `width`.
fn surface_row(width: Width, plan: &BakePlan, tile: &TileList, xs: &[f32], z: f32, s: &mut RowScratch, row: &mut SurfaceRow<'_>) {
    crate::with_lanes_at!(
        width,
        |L; plan: &BakePlan, tile: &TileList, xs: &[f32], z: f32, s: &mut RowScratch, row: &mut SurfaceRow<'_>| -> () { walk_row::<L, _>(plan, tile, xs, z, s, row) },
        plan, tile, xs, z, s, row
    )
}

/// The highest `slope_rank` of the layers of `tile` that hold an FSLP filter (0: none). The
/// tile's walk reads no slope slot beyond it, so its traces can stop there.
fn slope_slots_read(plan: &BakePlan, tile: &TileList) -> usize {
    let holds_slope =
        |l: &crate::plan::LayerRecord| plan.filters[l.filter_start as usize..(l.filter_start + l.filter_count) as usize].iter().any(|f| f.kind == FILTER_SLOPE);
    tile.layers.iter().map(|e| &plan.layers[e.layer as usize]).filter(|l| holds_slope(l)).map(|l| l.slope_rank as usize).max().unwrap_or(0)
}

impl SurfaceResult {
    /// Back to the state before any affector, keeping the flora stacks' memory.
    fn reset(&mut self) {
        let mut flora = std::mem::take(&mut self.flora);
        for stack in &mut flora {
            stack.0.clear();
        }
        *self = SurfaceResult { flora, ..Default::default() };
    }
}

/// Ring rows of slope traces [`SurfaceEvaluator::block_rows`] keeps: the 3 a row reads.
const TRACE_ROWS: usize = 3;

impl SurfaceEvaluator {
    /// Whether [`SurfaceEvaluator::block_rows`] computes these readings: the full tree walk
    /// (the default); the separate and partial walks run post by post.
    pub fn walks_rows(&self) -> bool {
        self.opts.walk == SurfaceWalk::Tree
    }

    /// Both surface passes at every post of `block` (posts [c0, c1] × [r0, r1] of its grid),
    /// row by row from the south, layer-major over each row's posts: `each_row(row, results)`
    /// gets the results of grid row `row`, one a post from column c0, bit-identical to
    /// [`SurfaceEvaluator::at_grid_post`] at each. `ground(col, row)` is a post's final
    /// height and normal. Only under [`SurfaceEvaluator::walks_rows`].
    pub fn block_rows(&self, block: &GridBlock, posts: (u32, u32, u32, u32), ground: impl Fn(u32, u32) -> Ground, each_row: impl FnMut(u32, &[SurfaceResult])) {
        self.block_rows_at(crate::lanes::width(), block, posts, ground, each_row)
    }

    /// [`SurfaceEvaluator::block_rows`] at lane width `lanes` (tests comparing widths).
    pub fn block_rows_at(
        &self,
        lanes: Width,
        block: &GridBlock,
        (c0, r0, c1, r1): (u32, u32, u32, u32),
        ground: impl Fn(u32, u32) -> Ground,
        mut each_row: impl FnMut(u32, &[SurfaceResult]),
    ) {
        assert!(self.walks_rows(), "block_rows walks the tree reading");
        let grid = &block.grid;
        let plan = &self.all_plan;
        let tile = &block.tiles.all;
        let n = (c1 - c0 + 1) as usize;
        let xs: Vec<f32> = (c0..=c1).map(|c| grid.post(c, 0).0).collect();
        let mut scratch = RowScratch::default();

        // SlopeHeight::Tree: the traces of the block's posts and its 1-post ring, placed as
        // the per-post walk's `PostFrame::neighbour` places them.
        let spacing = block.tiles.slope_spacing;
        let count = if self.opts.tree_slopes() { slope_slots_read(plan, tile) } else { 0 };
        let traced = count > 0;
        let width = n + 2;
        let row_slots = count * width;
        // The traces of the 3 ring rows a row's slopes read (south, own, north), ring row k
        // at k mod 3: a row's walk needs no older one, and 3 rows stay in the cache where the
        // block's whole ring (130 rows, megabytes zeroed and written a block) did not.
        let mut traces = vec![0.0f32; if traced { TRACE_ROWS * row_slots } else { 0 }];
        let trace_row_at = |k: usize| (k % TRACE_ROWS) * row_slots..(k % TRACE_ROWS + 1) * row_slots;
        let (x0, z0) = (grid.x0 as f32, grid.z0 as f32);
        let ring_xs: Vec<f32> = (0..width as i64).map(|j| x0 + (i64::from(c0) - 1 + j) as f32 * spacing).collect();
        let ring_z = |k: usize| z0 + (i64::from(r0) - 1 + k as i64) as f32 * spacing;
        let mut end = vec![0.0f32; width];
        // Two trace scratches, a ring row's in turn, so that a row's fractal values are still
        // there when its surface walk follows the walk of the row north of it.
        let mut trace_scratch = [RowScratch::default(), RowScratch::default()];
        let mut traced_rows = 0;
        // The surface walk reads the trace walk's fractal values where both walk the same
        // posts (the ring's columns 1..=n are the block's), bit for bit.
        let same_xs = traced && ring_xs[1..=n].iter().zip(&xs).all(|(a, b)| a.to_bits() == b.to_bits());
        let half = plan.half_width;
        let gx: Vec<i64> = xs.iter().map(|&x| ((x + half) / spacing + 0.5).floor() as i64).collect();
        debug_assert!(gx.windows(2).all(|w| w[1] == w[0] + 1), "a block's columns are consecutive posts");
        let mut slope_normals = vec![[0.0f32; 3]; n];

        let mut results = vec![SurfaceResult::default(); n];
        let mut h = vec![0.0f32; n];
        let mut grounds = vec![Ground { height: 0.0, normal: [0.0; 3] }; n];
        let mut live = Vec::with_capacity(n);
        for r in r0..=r1 {
            let z = grid.post(0, r).1;
            // The ring rows this row's slopes read (south, own, north), walked once each.
            let k = (r - r0) as usize;
            while traced && traced_rows < k + TRACE_ROWS {
                let slots = &mut traces[trace_row_at(traced_rows)];
                // The trace list: the layers that cannot move the height left out.
                trace_row(lanes, plan, &block.tiles.trace, &ring_xs, ring_z(traced_rows), count, &mut end, slots, &mut trace_scratch[traced_rows % 2]);
                traced_rows += 1;
            }
            if same_xs && ring_z(k + 1).to_bits() == z.to_bits() {
                scratch.continue_fractals_of(&mut trace_scratch[(k + 1) % 2], 1, n);
            }
            for (c, g) in (c0..=c1).zip(grounds.iter_mut()) {
                *g = ground(c, r);
            }
            results.iter_mut().for_each(SurfaceResult::reset);
            h.fill(0.0);
            let slope = traced.then(|| SlopeRows {
                rows: [0, 1, 2].map(|dz| &traces[trace_row_at(k + dz)]),
                width,
                spacing,
                gx: &gx,
                gz: ((z + half) / spacing + 0.5).floor() as i64,
                lanes,
                normals: &mut slope_normals,
                last: None,
            });
            let mut row = SurfaceRow { se: self, h: &mut h, results: &mut results, ground: &grounds, slope, layer: 0, live: &mut live };
            surface_row(lanes, plan, tile, &xs, z, &mut scratch, &mut row);
            each_row(r, &results);
        }
    }
}
