//! The CPU backend's fast path: the same height pass as [`super::height_at_point`], but
//! layer-major over a row of posts (lanes) instead of post by post — the way a GPU runs
//! it. Every post sees exactly the same f32 operations in the same order as in
//! `height_at_point` (a test asserts bit equality), but the per-layer bookkeeping is paid
//! once per row instead of once per post, and the inner loops run over contiguous lanes.
//!
//! Why this equals the per-post walk: a post whose amount is 0 at a layer skips that layer's
//! filters, affectors and subtree there; here its lanes are masked instead (its child
//! amount is set to 0, and nothing in a subtree has a side effect unless T > 0).

use super::affector::{apply_height_affector, height_operation};
use super::boundary::boundary_influence;
use super::feather::{feather, feathered_range};
use super::filter::filter_value_height_pass;
use crate::plan::{AffectorRecord, BakePlan, TileList, AFFECTOR_HEIGHT_FRACTAL, FILTER_FRACTAL, LAYER_INVERT_BOUNDARIES, LAYER_INVERT_FILTERS, LAYER_NEEDS_EXTENT, MAX_DEPTH};

/// Scratch space for [`height_row`], reused across rows.
#[derive(Default)]
pub struct RowScratch {
    amounts: Vec<f32>,
    amount: Vec<f32>,
    extent: Vec<[f32; 4]>,
    reached: Vec<bool>,
    /// Per-lane amount T of the current layer's affectors (0 where they do not apply).
    t: Vec<f32>,
    /// Fractal values of the current filter or affector, from [`crate::noise::Fractal::value_row`].
    fractal: Vec<f32>,
}


/// Heights of the posts at `xs` (all at the same `z`) into `out`, walking `tile`.
pub fn height_row(plan: &BakePlan, tile: &TileList, xs: &[f32], z: f32, out: &mut [f32], s: &mut RowScratch) {
    let n = xs.len();
    assert_eq!(out.len(), n);
    out.fill(0.0);
    // amounts[d * n + l]: product of the open ancestors' amounts above depth d at lane l.
    // Only depth 0 needs initialising: a layer writes its children's row before they run.
    s.amounts.resize((MAX_DEPTH + 1) * n, 1.0);
    s.amounts[..n].fill(1.0);
    s.amount.resize(n, 0.0);
    s.extent.resize(n, [0.0; 4]);
    s.reached.resize(n, false);
    s.t.resize(n, 0.0);
    s.fractal.resize(n, 0.0);
    let half = plan.half_width;
    let mut i = 0usize;
    while i < tile.layers.len() {
        let entry = tile.layers[i];
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
            apply_affectors(plan, affectors, xs, z, parent, out, &mut s.fractal);
            i += 1;
            continue;
        }

        let amount = &mut s.amount[..n];
        let extent = &mut s.extent[..n];

        // 1. Boundaries.
        let initial = if layer.boundary_count == 0 { 1.0 } else { 0.0 };
        amount.fill(initial);
        let needs_extent = layer.flags & LAYER_NEEDS_EXTENT != 0;
        if needs_extent {
            extent.fill([f32::MAX, f32::MAX, f32::MIN, f32::MIN]);
        }
        let bstart = entry.boundary_start as usize;
        for &bi in &tile.boundaries[bstart..bstart + entry.boundary_count as usize] {
            let b = &plan.boundaries[bi as usize];
            for l in 0..n {
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
                if f.kind == FILTER_FRACTAL {
                    if let Some(fractal) = plan.fractals.get(f.family as usize) {
                        // Row-evaluated fractal over the live lanes: equal per lane to the
                        // `fr.value(x, z)` of filter_value_height_pass.
                        let range = live_range(amount);
                        fractal.value_row(&xs[range.clone()], z, &mut s.fractal[range.clone()]);
                        for l in range {
                            if amount[l] > 0.0 {
                                let v = feather(f.feather_type, feathered_range(s.fractal[l] * f.value, f.low, f.high, f.feather_amount));
                                amount[l] = amount[l].min(v);
                            }
                        }
                        continue;
                    }
                }
                for l in 0..n {
                    if amount[l] > 0.0 {
                        let ext = if needs_extent { extent[l] } else { [-half, -half, half, half] };
                        let v = feather(f.feather_type, filter_value_height_pass(plan, f, ext, out[l], xs[l], z));
                        amount[l] = amount[l].min(v);
                    }
                }
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

        // 3. Affectors with T = own amount × ancestors' amounts; 4. children's parent amount.
        let t = &mut s.t[..n];
        for l in 0..n {
            let open = amount[l] > 0.0;
            t[l] = if open { amount[l] * parent[l] } else { 0.0 };
            child[l] = if open { parent[l] * amount[l] } else { 0.0 };
        }
        apply_affectors(plan, affectors, xs, z, t, out, &mut s.fractal);
        i += 1;
    }
}

/// The smallest lane range holding every lane with a positive value (empty if none).
fn live_range(values: &[f32]) -> std::ops::Range<usize> {
    let Some(lo) = values.iter().position(|&v| v > 0.0) else { return 0..0 };
    let hi = values.iter().rposition(|&v| v > 0.0).unwrap_or(lo);
    lo..hi + 1
}

/// Apply a layer's height affectors, in order, to every lane with amount `t[l]` > 0.
/// Affector-major, but each lane still sees its affectors in order.
fn apply_affectors(plan: &BakePlan, affectors: &[AffectorRecord], xs: &[f32], z: f32, t: &[f32], out: &mut [f32], fractal_values: &mut [f32]) {
    if affectors.is_empty() {
        return;
    }
    let range = live_range(t);
    for a in affectors {
        let fractal = if a.kind == AFFECTOR_HEIGHT_FRACTAL { plan.fractals.get(a.index as usize) } else { None };
        match fractal {
            Some(fractal) => {
                // Equal per lane to apply_height_affector's `f.value(x, z) * a.value`.
                fractal.value_row(&xs[range.clone()], z, &mut fractal_values[range.clone()]);
                for l in range.clone() {
                    if t[l] > 0.0 {
                        out[l] = height_operation(a.operation, out[l], fractal_values[l] * a.value, t[l]);
                    }
                }
            }
            None => {
                for l in range.clone() {
                    if t[l] > 0.0 {
                        out[l] = apply_height_affector(plan, a, out[l], t[l], xs[l], z);
                    }
                }
            }
        }
    }
}
