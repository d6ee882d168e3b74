//! The CPU backend's fast path, twin of `kernels/walk_strip.wgsl`: the same height pass as
//! [`super::height_at_point`], but layer-major over a strip of a row's posts (lanes) instead
//! of post by post — the way the GPU kernel runs it. Every post sees exactly the same f32 operations in the same order as in
//! `height_at_point` (a test asserts bit equality), but the per-layer bookkeeping is paid
//! once per row instead of once per post, and the inner loops run over contiguous lanes.
//!
//! Why this equals the per-post walk: a post whose amount is 0 at a layer skips that layer's
//! filters, affectors and subtree there; here its lanes are masked instead (its child
//! amount is set to 0, and nothing in a subtree has a side effect unless T > 0).

use super::affector::{apply_height_affector, height_operation, height_road_among, with_road_segments_near};
use super::boundary::{boundary_influence, boundary_span};
use super::feather::feather;
use super::filter::filter_value_height_pass;
use super::row_ops;
use crate::lanes::Lanes;
use crate::noise::RowFractals;
use crate::plan::{
    moves_height, AffectorRecord, BakePlan, BoundaryRecord, FilterRecord, TileList, AFFECTOR_HEIGHT_CONSTANT, AFFECTOR_HEIGHT_FRACTAL, AFFECTOR_ROAD,
    BOUNDARY_CIRCLE, BOUNDARY_RECTANGLE, FILTER_FRACTAL, FILTER_HEIGHT, LAYER_INVERT_BOUNDARIES, LAYER_INVERT_FILTERS, LAYER_NEEDS_EXTENT, MAX_DEPTH,
};

/// Scratch space for [`height_row`], reused across rows.
#[derive(Default)]
pub struct RowScratch {
    amounts: Vec<f32>,
    amount: Vec<f32>,
    extent: Vec<[f32; 4]>,
    reached: Vec<bool>,
    /// The row's fractal values per family, and lane scratch.
    fractals: RowFractals,
}

impl RowScratch {
    /// Let the next walk with this scratch read the fractal values `other`'s last walk
    /// computed, over lanes `offset..offset + lanes` of its row (`RowFractals::continue_row`):
    /// the surface walk of a block row after that row's trace walk over the block and its
    /// ring. The two scratches' memos are swapped.
    pub(crate) fn continue_fractals_of(&mut self, other: &mut RowScratch, offset: usize, lanes: usize) {
        std::mem::swap(&mut self.fractals, &mut other.fractals);
        self.fractals.continue_row(offset, lanes);
    }
}

/// Heights of the posts at `xs` (ascending, all at the same `z`) into `out`, walking
/// `tile`, at the process's lane width (`crate::lanes::width`).
pub fn height_row(plan: &BakePlan, tile: &TileList, xs: &[f32], z: f32, out: &mut [f32], s: &mut RowScratch) {
    crate::with_lanes!(
        |L; plan: &BakePlan, tile: &TileList, xs: &[f32], z: f32, out: &mut [f32], s: &mut RowScratch| -> () {
            height_row_with::<L>(plan, tile, xs, z, out, s)
        },
        plan, tile, xs, z, out, s
    )
}

/// [`height_row`] at the lane width `L`.
///
/// # Safety
/// The CPU must have `L`'s instructions.
#[inline(always)]
pub unsafe fn height_row_with<L: Lanes>(plan: &BakePlan, tile: &TileList, xs: &[f32], z: f32, out: &mut [f32], s: &mut RowScratch) {
    assert_eq!(out.len(), xs.len());
    out.fill(0.0);
    walk_row::<L, _>(plan, tile, xs, z, s, &mut HeightRow { out });
}

/// What one pass of the layer-major walk computes over a row's lanes: the row twin of
/// [`super::PassState`]. The height pass ([`HeightRow`]), the slope traces ([`TraceRow`]) and
/// the surface passes (`crate::surface::walk_strip`) share [`walk_row`], so the layer
/// semantics of swg-trn §5.3 over lanes live in one place.
pub(crate) trait RowPass {
    /// Called at each entry of the walk that some lane reaches, before its layer acts (the
    /// per-post walk's `trace_layer`); returning true ends the walk.
    #[inline(always)]
    fn enter_layer(&mut self, _plan: &BakePlan, _layer: usize) -> bool {
        false
    }
    /// `amount[l] = min(amount[l], feather(value of f))` on the lanes of `range` whose amount
    /// is > 0. `extent[l]` is lane l's FBIT extent (swg-trn §5.6), `None` when the layer needs
    /// none (then it is the whole map).
    ///
    /// # Safety
    /// The CPU must have `L`'s instructions.
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
    );
    /// Apply a layer's affectors, in order, to every lane with amount `t[l]` > 0.
    ///
    /// # Safety
    /// The CPU must have `L`'s instructions.
    unsafe fn affectors<L: Lanes>(&mut self, plan: &BakePlan, affectors: &[AffectorRecord], xs: &[f32], z: f32, t: &[f32], fractals: &mut RowFractals);
}

/// The height pass over a row: `out` holds each lane's height so far.
pub(crate) struct HeightRow<'a> {
    pub out: &'a mut [f32],
}

impl RowPass for HeightRow<'_> {
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
        if lane_filter::<L>(plan, f, xs, z, self.out, range.clone(), amount, fractals) {
            return;
        }
        scalar_filter_lanes(plan, f, extent, range, amount, |l, ext| filter_value_height_pass(plan, f, ext, self.out[l], xs[l], z));
    }

    #[inline(always)]
    unsafe fn affectors<L: Lanes>(&mut self, plan: &BakePlan, affectors: &[AffectorRecord], xs: &[f32], z: f32, t: &[f32], fractals: &mut RowFractals) {
        if affectors.is_empty() {
            return;
        }
        let range = live_range(t);
        for a in affectors {
            height_affector_lanes::<L>(plan, a, xs, z, t, range.clone(), self.out, fractals);
        }
    }
}

/// The height pass over a row recording its slope traces (the row twin of the surface
/// passes' per-post `SlopeTrace`, swg-trn §5.9 `SlopeHeight::Tree`): slot k of lane l
/// (`slots[k * n + l]`) holds the height lane l had on first reaching a layer whose
/// `slope_rank` exceeds k — the height before the plan's (k + 1)-th FSLP layer acts.
pub(crate) struct TraceRow<'a> {
    pub height: HeightRow<'a>,
    pub slots: &'a mut [f32],
    pub filled: usize,
    pub count: usize,
}

impl TraceRow<'_> {
    /// Fill slots up to `upto` with the heights so far.
    fn fill(&mut self, upto: usize) {
        let n = self.height.out.len();
        while self.filled < upto.min(self.count) {
            self.slots[self.filled * n..(self.filled + 1) * n].copy_from_slice(self.height.out);
            self.filled += 1;
        }
    }
}

/// The first `count` slope traces of the posts at `xs` (ascending, all at the same `z`),
/// walking `tile` of `plan` as the height pass does, at lane width `width`: `slots` (count ×
/// xs.len(), slot-major) as [`TraceRow`] records them, `out` the heights where the walk
/// stopped. Bit-identical per lane to the per-post trace walk's first `count` slots
/// (`crate::surface`), which a test asserts.
#[allow(clippy::too_many_arguments)]
pub(crate) fn trace_row(
    width: crate::lanes::Width,
    plan: &BakePlan,
    tile: &TileList,
    xs: &[f32],
    z: f32,
    count: usize,
    out: &mut [f32],
    slots: &mut [f32],
    s: &mut RowScratch,
) {
    crate::with_lanes_at!(
        width,
        |L; plan: &BakePlan, tile: &TileList, xs: &[f32], z: f32, count: usize, out: &mut [f32], slots: &mut [f32], s: &mut RowScratch| -> () {
            assert_eq!(slots.len(), count * xs.len());
            out.fill(0.0);
            let mut trace = TraceRow { height: HeightRow { out }, slots, filled: 0, count };
            walk_row::<L, _>(plan, tile, xs, z, s, &mut trace);
            // FSLP layers after the walk's last entry: the final height.
            trace.fill(count);
        },
        plan, tile, xs, z, count, out, slots, s
    )
}

impl RowPass for TraceRow<'_> {
    #[inline(always)]
    fn enter_layer(&mut self, plan: &BakePlan, layer: usize) -> bool {
        self.fill(plan.layers[layer].slope_rank as usize);
        // Every FSLP layer recorded: the rest of the walk cannot change a slot.
        self.filled >= self.count
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
        self.height.filter::<L>(plan, f, xs, z, extent, range, amount, fractals)
    }

    #[inline(always)]
    unsafe fn affectors<L: Lanes>(&mut self, plan: &BakePlan, affectors: &[AffectorRecord], xs: &[f32], z: f32, t: &[f32], fractals: &mut RowFractals) {
        self.height.affectors::<L>(plan, affectors, xs, z, t, fractals)
    }
}

/// The layer walk of swg-trn §5.3 over the lanes `xs` (ascending, all at the same `z`),
/// layer-major, letting `pass` evaluate the filters and apply the affectors.
///
/// # Safety
/// The CPU must have `L`'s instructions.
#[inline(always)]
pub(crate) unsafe fn walk_row<L: Lanes, P: RowPass>(plan: &BakePlan, tile: &TileList, xs: &[f32], z: f32, s: &mut RowScratch, pass: &mut P) {
    let n = xs.len();
    debug_assert!(xs.windows(2).all(|w| w[0] <= w[1]), "walk_row needs ascending xs");
    // amounts[d * n + l]: product of the open ancestors' amounts above depth d at lane l.
    // Only depth 0 needs initialising: a layer writes its children's row before they run.
    s.amounts.resize((MAX_DEPTH + 1) * n, 1.0);
    s.amounts[..n].fill(1.0);
    s.amount.resize(n, 0.0);
    s.extent.resize(n, [0.0; 4]);
    s.reached.resize(n, false);
    s.fractals.begin_row(plan.fractals.len(), n);
    let half = plan.half_width;
    let mut i = 0usize;
    while i < tile.layers.len() {
        let entry = tile.layers[i];
        if pass.enter_layer(plan, entry.layer as usize) {
            break;
        }
        let layer = &plan.layers[entry.layer as usize];
        let depth = layer.depth as usize;
        let (before, after) = s.amounts.split_at_mut((depth + 1) * n);
        let parent = &before[depth * n..];
        let child = &mut after[..n];
        let astart = layer.affector_start as usize;
        let affectors = &plan.affectors[astart..astart + layer.affector_count as usize];
        let invert_b = layer.flags & LAYER_INVERT_BOUNDARIES != 0;
        let invert_f = layer.flags & LAYER_INVERT_FILTERS != 0;

        if entry.boundary_count == 0 && !invert_b && layer.filter_count == 0 && !invert_f {
            // A layer without boundaries or filters has amount 1 wherever its parent is
            // open: T = parent, and its children see the parent's amounts (parent × 1).
            child.copy_from_slice(parent);
            pass.affectors::<L>(plan, affectors, xs, z, parent, &mut s.fractals);
            i += 1;
            continue;
        }

        let amount = &mut s.amount[..n];
        let extent = &mut s.extent[..n];

        // 1. Boundaries, each only over the lanes it can reach (`boundary_span`: elsewhere
        //    its influence is exactly 0, and max(amount, 0) = amount).
        let initial = if layer.boundary_count == 0 { 1.0 } else { 0.0 };
        amount.fill(initial);
        let needs_extent = layer.flags & LAYER_NEEDS_EXTENT != 0;
        if needs_extent {
            extent.fill([f32::MAX, f32::MAX, f32::MIN, f32::MIN]);
        }
        let bstart = entry.boundary_start as usize;
        for &bi in &tile.boundaries[bstart..bstart + entry.boundary_count as usize] {
            let b = &plan.boundaries[bi as usize];
            let span = boundary_span(b, xs, z);
            if span.is_empty() {
                continue;
            }
            if !needs_extent && (b.kind == BOUNDARY_CIRCLE || b.kind == BOUNDARY_RECTANGLE) {
                boundary_lanes::<L>(b, &xs[span.clone()], z, &parent[span.clone()], &mut amount[span]);
                continue;
            }
            for l in span {
                if parent[l] <= 0.0 || (!needs_extent && amount[l] >= 1.0) {
                    continue;
                }
                let v = feather(b.feather_type, boundary_influence(b, &plan.points, xs[l], z));
                amount[l] = amount[l].max(v);
                if needs_extent && v > 0.0 {
                    let e = &mut extent[l];
                    *e = [e[0].min(b.bounds[0]), e[1].min(b.bounds[1]), e[2].max(b.bounds[2]), e[3].max(b.bounds[3])];
                }
            }
        }
        // Branch-free lane loops (the flags are loop-invariant), so they vectorise.
        for (a, &p) in amount.iter_mut().zip(parent) {
            let v = if invert_b { 1.0 - *a } else { *a };
            *a = if p <= 0.0 { 0.0 } else { v };
        }
        if !amount.iter().any(|&a| a > 0.0) {
            i = entry.skip_to as usize;
            continue;
        }
        if needs_extent {
            for e in extent.iter_mut() {
                if e[0] > e[2] {
                    *e = [-half, -half, half, half];
                }
            }
        }

        // 2. Filters, on the lanes that passed the boundaries (`reached`).
        if layer.filter_count > 0 || invert_f {
            for (r, &a) in s.reached[..n].iter_mut().zip(amount.iter()) {
                *r = a > 0.0;
            }
            let fstart = layer.filter_start as usize;
            for f in &plan.filters[fstart..fstart + layer.filter_count as usize] {
                // Once a lane's amount is 0 the per-post walk stops its filter loop; min(0, v)
                // with v ≥ 0 would stay 0 anyway, so such lanes are skipped.
                let range = live_range(amount);
                if range.is_empty() {
                    break;
                }
                pass.filter::<L>(plan, f, xs, z, needs_extent.then_some(&*extent), range, amount, &mut s.fractals);
            }
            for (a, &r) in amount.iter_mut().zip(&s.reached[..n]) {
                let v = if invert_f { 1.0 - *a } else { *a };
                *a = if !r || v <= 0.0 { 0.0 } else { v };
            }
            if !amount.iter().any(|&a| a > 0.0) {
                i = entry.skip_to as usize;
                continue;
            }
        }

        // 3. Affectors with T = own amount × ancestors' amounts; 4. children's parent amount
        //    (parent × amount, the same bits: an f32 product commutes), so one row holds both.
        for l in 0..n {
            let product = amount[l] * parent[l];
            child[l] = if amount[l] > 0.0 { product } else { 0.0 };
        }
        pass.affectors::<L>(plan, affectors, xs, z, child, &mut s.fractals);
        i += 1;
    }
}

/// The filters every row pass evaluates as vectors over the live lanes `range`: FFRA
/// ([`fractal_filter_lanes`]) and FHGT on `heights`, the heights so far (equal per lane to
/// filter_value_height_pass). False for the other kinds, which each pass evaluates per lane.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn lane_filter<L: Lanes>(
    plan: &BakePlan,
    f: &FilterRecord,
    xs: &[f32],
    z: f32,
    heights: &[f32],
    range: std::ops::Range<usize>,
    amount: &mut [f32],
    fractals: &mut RowFractals,
) -> bool {
    if fractal_filter_lanes::<L>(plan, f, xs, z, range.clone(), amount, fractals) {
        return true;
    }
    if f.kind == FILTER_HEIGHT {
        filter_lanes::<L>(f, &heights[range.clone()], &mut amount[range]);
        return true;
    }
    false
}

/// FFRA over the live lanes `range`, when `f` is one with a fractal: row-evaluated, equal
/// per lane to the `fr.value(x, z) * f.value` of filter_value_height_pass. False for other filters.
#[inline(always)]
unsafe fn fractal_filter_lanes<L: Lanes>(
    plan: &BakePlan,
    f: &FilterRecord,
    xs: &[f32],
    z: f32,
    range: std::ops::Range<usize>,
    amount: &mut [f32],
    fractals: &mut RowFractals,
) -> bool {
    if f.kind != FILTER_FRACTAL {
        return false;
    }
    let Some(fr) = plan.fractals.get(f.family as usize) else { return false };
    let values = fractals.scaled::<L>(fr, f.family as usize, xs, z, range.clone(), f.value);
    filter_lanes::<L>(f, values, &mut amount[range]);
    true
}

/// The scalar rest of a filter (the kinds [`lane_filter`] leaves): each lane of `range` still
/// in the layer takes the smaller of its amount and the feathered `value(lane, extent)`.
#[inline(always)]
pub(crate) fn scalar_filter_lanes(
    plan: &BakePlan,
    f: &FilterRecord,
    extent: Option<&[[f32; 4]]>,
    range: std::ops::Range<usize>,
    amount: &mut [f32],
    mut value: impl FnMut(usize, [f32; 4]) -> f32,
) {
    let half = plan.half_width;
    for l in range {
        if amount[l] > 0.0 {
            let ext = extent.map_or([-half, -half, half, half], |e| e[l]);
            amount[l] = amount[l].min(feather(f.feather_type, value(l, ext)));
        }
    }
}

/// The lanes of `range` whose value is positive, ascending, into `live` (cleared first):
/// 64 lanes' signs gathered into a bit mask at a time, so the loop has no branch a lane.
pub(crate) fn live_lanes(values: &[f32], range: std::ops::Range<usize>, live: &mut Vec<u32>) {
    live.clear();
    let start = range.start;
    for (k, chunk) in values[range].chunks(64).enumerate() {
        let mut mask = 0u64;
        for (i, &v) in chunk.iter().enumerate() {
            mask |= u64::from(v > 0.0) << i;
        }
        let base = (start + k * 64) as u32;
        while mask != 0 {
            live.push(base + mask.trailing_zeros());
            mask &= mask - 1;
        }
    }
}

/// The smallest lane range holding every lane with a positive value (empty if none).
pub(crate) fn live_range(values: &[f32]) -> std::ops::Range<usize> {
    let Some(lo) = values.iter().position(|&v| v > 0.0) else { return 0..0 };
    let hi = values.iter().rposition(|&v| v > 0.0).unwrap_or(lo);
    lo..hi + 1
}

/// `amount[l] = min(amount[l], feather(I(input[l]; low, high, a)))` where `amount[l] > 0`:
/// the FFRA/FHGT step of the filter loop, a vector at a time (tail padded).
#[inline(always)]
pub(crate) unsafe fn filter_lanes<L: Lanes>(f: &FilterRecord, input: &[f32], amount: &mut [f32]) {
    let w = L::WIDTH;
    let groups = input.len() / w;
    for k in 0..groups {
        let pa = amount.as_mut_ptr().add(k * w);
        L::store(pa, filter_step::<L>(f, L::load(input.as_ptr().add(k * w)), L::load(pa)));
    }
    let done = groups * w;
    if done < input.len() {
        let (mut vi, mut va) = (L::Arr::default(), L::Arr::default());
        let m = input.len() - done;
        vi.as_mut()[..m].copy_from_slice(&input[done..]);
        va.as_mut()[..m].copy_from_slice(&amount[done..]);
        let r = L::to_arr(filter_step::<L>(f, L::from_arr(&vi), L::from_arr(&va)));
        amount[done..].copy_from_slice(&r.as_ref()[..m]);
    }
}

/// One vector of [`filter_lanes`].
#[inline(always)]
unsafe fn filter_step<L: Lanes>(f: &FilterRecord, v: L::F, a: L::F) -> L::F {
    let weight = row_ops::feather::<L>(f.feather_type, row_ops::feathered_range::<L>(v, f.low, f.high, f.feather_amount));
    // f32::min(a, weight): `min(weight, a)` returns `a` when weight is NaN, as f32::min does.
    L::select(L::gt(a, L::splat(0.0)), L::min(weight, a), a)
}

/// One vector of [`boundary_lanes`].
#[inline(always)]
unsafe fn boundary_step<L: Lanes>(b: &BoundaryRecord, x: L::F, z: f32, p: L::F, a: L::F) -> L::F {
    let raw = if b.kind == BOUNDARY_CIRCLE { row_ops::circle::<L>(b, x, z) } else { row_ops::rectangle::<L>(b, x, z) };
    let v = row_ops::feather::<L>(b.feather_type, raw);
    let skip = L::or(L::le(p, L::splat(0.0)), L::ge(a, L::splat(1.0)));
    // f32::max(a, v): `max(v, a)` returns `a` when v is NaN, as f32::max does.
    L::select(skip, a, L::max(v, a))
}

/// One circle or rectangle over its span: `amount = max(amount, feather(influence))` on the
/// lanes whose parent is open and amount below 1 (the scalar loop's skip rule).
#[inline(always)]
unsafe fn boundary_lanes<L: Lanes>(b: &BoundaryRecord, xs: &[f32], z: f32, parent: &[f32], amount: &mut [f32]) {
    let w = L::WIDTH;
    let groups = xs.len() / w;
    for k in 0..groups {
        let pa = amount.as_mut_ptr().add(k * w);
        L::store(pa, boundary_step::<L>(b, L::load(xs.as_ptr().add(k * w)), z, L::load(parent.as_ptr().add(k * w)), L::load(pa)));
    }
    let done = groups * w;
    if done < xs.len() {
        let m = xs.len() - done;
        let (mut vx, mut vp, mut va) = (L::Arr::default(), L::Arr::default(), L::Arr::default());
        vx.as_mut()[..m].copy_from_slice(&xs[done..]);
        vp.as_mut()[..m].copy_from_slice(&parent[done..]);
        va.as_mut()[..m].copy_from_slice(&amount[done..]);
        let r = L::to_arr(boundary_step::<L>(b, L::from_arr(&vx), z, L::from_arr(&vp), L::from_arr(&va)));
        amount[done..].copy_from_slice(&r.as_ref()[..m]);
    }
}

/// The operand of a height operation over a row: a constant (AHCN), or per-lane fractal
/// values times the affector's scale (AHFR: `f.value(x, z) * a.value`).
#[derive(Clone, Copy)]
enum Operand<'a> {
    Constant(f32),
    Scaled(&'a [f32], f32),
}

/// `out[l] = height_operation(op, out[l], c[l], t[l])` where `t[l] > 0`, a vector at a time.
#[inline(always)]
unsafe fn operation_lanes<L: Lanes>(op: i32, operand: Operand, t: &[f32], out: &mut [f32]) {
    let w = L::WIDTH;
    let groups = out.len() / w;
    for k in 0..groups {
        let po = out.as_mut_ptr().add(k * w);
        let cv = match operand {
            Operand::Constant(c) => L::splat(c),
            Operand::Scaled(values, scale) => L::mul(L::load(values.as_ptr().add(k * w)), L::splat(scale)),
        };
        L::store(po, row_ops::height_operation::<L>(op, L::load(po), cv, L::load(t.as_ptr().add(k * w))));
    }
    for l in groups * w..out.len() {
        if t[l] > 0.0 {
            let c = match operand {
                Operand::Constant(c) => c,
                Operand::Scaled(values, scale) => values[l] * scale,
            };
            out[l] = height_operation(op, out[l], c, t[l]);
        }
    }
}

/// Apply height affector `a` to every lane of `range` with amount `t[l]` > 0 (other kinds
/// leave the heights alone, as `apply_height_affector` does).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn height_affector_lanes<L: Lanes>(
    plan: &BakePlan,
    a: &AffectorRecord,
    xs: &[f32],
    z: f32,
    t: &[f32],
    range: std::ops::Range<usize>,
    out: &mut [f32],
    fractals: &mut RowFractals,
) {
    match a.kind {
        AFFECTOR_HEIGHT_FRACTAL if (a.index as usize) < plan.fractals.len() => {
            // Equal per lane to apply_height_affector's `f.value(x, z) * a.value`.
            let values = fractals.values::<L>(&plan.fractals[a.index as usize], a.index as usize, xs, z, range.clone());
            operation_lanes::<L>(a.operation, Operand::Scaled(&values[range.clone()], a.value), &t[range.clone()], &mut out[range]);
        }
        AFFECTOR_HEIGHT_CONSTANT => {
            operation_lanes::<L>(a.operation, Operand::Constant(a.value), &t[range.clone()], &mut out[range]);
        }
        AFFECTOR_ROAD if (a.index as usize) < plan.roads.len() && !range.is_empty() => {
            // The road's segments near the row's lanes, found once (`road_segments_near`):
            // most rows are near few of a long road's segments, or none.
            let road = &plan.roads[a.index as usize];
            with_road_segments_near(plan, road, (xs[range.start], xs[range.end - 1]), z, |near| {
                if near.is_empty() {
                    return;
                }
                for l in range {
                    if t[l] > 0.0 {
                        out[l] = height_road_among(plan, road, near.iter().map(|&s| s as usize), out[l], t[l], xs[l], z);
                    }
                }
            });
        }
        // The surface affectors of a surface plan's walk (the slope traces) leave it as it is.
        kind if !moves_height(kind) => {}
        _ => {
            for l in range {
                if t[l] > 0.0 {
                    out[l] = apply_height_affector(plan, a, out[l], t[l], xs[l], z);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `live_lanes` lists exactly the lanes a per-lane filter keeps, in order, for ranges that
    /// start and end off the 64-lane chunks, with zeros, −0, negatives and NaN among them.
    #[test]
    fn live_lanes_are_the_positive_lanes() {
        let specials = [0.0, -0.0, -1.0, f32::NAN, 1e-30, 0.5, 1.0, f32::MIN_POSITIVE];
        let values: Vec<f32> = (0..300u32).map(|i| specials[(i.wrapping_mul(2_654_435_761) >> 7) as usize % specials.len()]).collect();
        let mut live = Vec::new();
        for range in [0..300, 0..0, 5..6, 3..67, 64..128, 1..299, 130..300] {
            live_lanes(&values, range.clone(), &mut live);
            let want: Vec<u32> = range.clone().filter(|&l| values[l] > 0.0).map(|l| l as u32).collect();
            assert_eq!(live, want, "lanes {range:?}");
        }
    }
}
