//! The layer walk at one point (swg-trn §5.3), twin of `kernels/walk.wgsl`: shared by the
//! height pass and the surface passes, which differ only in their [`PassState`].

use crate::plan::{AffectorRecord, BakePlan, FilterRecord, TileList, LAYER_INVERT_BOUNDARIES, LAYER_INVERT_FILTERS, LAYER_NEEDS_EXTENT, MAX_DEPTH};

use super::boundary::boundary_influence;
use super::feather::feather;

/// What one pass of the layer walk computes at a point: the filter values it sees and what
/// its affectors do. The height pass ([`HeightState`](super::HeightState)) and the surface passes
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
        // A pure group (no boundaries, filters or affectors) arrives without invert flags:
        // the plan builder applies swg-trn §5.3's amended reading for both twins.
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
