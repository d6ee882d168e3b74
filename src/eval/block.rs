//! The CPU backend's fast path: the same height pass as [`super::height_at_point`], but
//! layer-major over a row of posts (lanes) instead of post by post — the way a GPU runs
//! it. Every post sees exactly the same f32 operations in the same order as in
//! `height_at_point` (a test asserts bit equality), but the per-layer bookkeeping is paid
//! once per row instead of once per post, and the inner loops run over contiguous lanes.
//!
//! Why this equals the per-post walk: a post whose amount is 0 at a layer skips that layer's
//! filters, affectors and subtree there; here its lanes are masked instead (its child
//! amount is set to 0, and nothing in a subtree has a side effect unless T > 0).

use super::affector::apply_height_affector;
use super::boundary::boundary_influence;
use super::feather::feather;
use super::filter::filter_value_height_pass;
use crate::plan::{BakePlan, TileList, LAYER_INVERT_BOUNDARIES, LAYER_INVERT_FILTERS, LAYER_NEEDS_EXTENT, MAX_DEPTH};

/// Scratch space for [`height_row`], reused across rows.
#[derive(Default)]
pub struct RowScratch {
    amounts: Vec<f32>,
    amount: Vec<f32>,
    extent: Vec<[f32; 4]>,
    reached: Vec<bool>,
}

/// Heights of the posts at `xs` (all at the same `z`) into `out`, walking `tile`.
pub fn height_row(plan: &BakePlan, tile: &TileList, xs: &[f32], z: f32, out: &mut [f32], s: &mut RowScratch) {
    let n = xs.len();
    assert_eq!(out.len(), n);
    out.fill(0.0);
    // amounts[d * n + l]: product of the open ancestors' amounts above depth d at lane l.
    s.amounts.clear();
    s.amounts.resize((MAX_DEPTH + 1) * n, 1.0);
    s.amount.resize(n, 0.0);
    s.extent.resize(n, [0.0; 4]);
    s.reached.resize(n, false);
    let half = plan.half_width;
    let mut i = 0usize;
    while i < tile.layers.len() {
        let entry = tile.layers[i];
        let layer = &plan.layers[entry.layer as usize];
        let depth = layer.depth as usize;
        let (before, after) = s.amounts.split_at_mut((depth + 1) * n);
        let parent = &before[depth * n..];
        let child = &mut after[..n];
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
        let invert_b = layer.flags & LAYER_INVERT_BOUNDARIES != 0;
        let mut any = false;
        for l in 0..n {
            if invert_b {
                amount[l] = 1.0 - amount[l];
            }
            if parent[l] <= 0.0 {
                amount[l] = 0.0;
            }
            any |= amount[l] > 0.0;
        }
        if !any {
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
        for l in 0..n {
            s.reached[l] = amount[l] > 0.0;
        }
        let reached = &s.reached[..n];
        let fstart = layer.filter_start as usize;
        for f in &plan.filters[fstart..fstart + layer.filter_count as usize] {
            for l in 0..n {
                // Once a lane's amount is 0 the per-post walk stops its filter loop; min(0, v)
                // with v ≥ 0 would stay 0 anyway.
                if amount[l] > 0.0 {
                    let ext = if needs_extent { extent[l] } else { [-half, -half, half, half] };
                    let v = feather(f.feather_type, filter_value_height_pass(plan, f, ext, out[l], xs[l], z));
                    amount[l] = amount[l].min(v);
                }
            }
        }
        let invert_f = layer.flags & LAYER_INVERT_FILTERS != 0;
        let mut any = false;
        for l in 0..n {
            if !reached[l] {
                amount[l] = 0.0;
                continue;
            }
            if invert_f {
                amount[l] = 1.0 - amount[l];
            }
            if amount[l] <= 0.0 {
                amount[l] = 0.0;
            }
            any |= amount[l] > 0.0;
        }
        if !any {
            i = entry.skip_to as usize;
            continue;
        }

        // 3. Affectors with T = own amount × ancestors' amounts; 4. children's parent amount.
        let astart = layer.affector_start as usize;
        let affectors = &plan.affectors[astart..astart + layer.affector_count as usize];
        for l in 0..n {
            if amount[l] > 0.0 {
                let t = amount[l] * parent[l];
                if t > 0.0 {
                    for a in affectors {
                        out[l] = apply_height_affector(plan, a, out[l], t, xs[l], z);
                    }
                }
                child[l] = parent[l] * amount[l];
            } else {
                child[l] = 0.0;
            }
        }
        i += 1;
    }
}
