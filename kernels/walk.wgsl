// walk.wgsl — the layer walk of swg-trn §5.3 (port of `walk_point` in crates/swg/src/eval/walk.rs),
// shared by the height pass (height.wgsl) and the surface passes (surface.wgsl). WGSL has no
// generics: each pass's module defines the two hooks the CPU's `PassState` trait names, over
// its own `var<private>` state:
//
//   fn pass_filter_value(f: FilterRecord, extent: array<f32, 4>, x: f32, z: f32) -> f32
//   fn pass_apply(a: AffectorRecord, t: f32, x: f32, z: f32)
//   fn pass_reach_layer(layer: u32)   (each entry reached, before it acts)
//   fn pass_walk_done() -> bool      (checked after pass_reach_layer: stop the walk)
//
// Uses the bindings `params` (for `half_width`), `layers`, `boundaries`, `filters`,
// `affectors`, `tile_layers` and `tile_boundaries`.

/// The layer the walk is at (plan index), for hooks that need it (the surface pass's
/// FSLP under `SlopeHeight::Tree`; `TreeWalk::layer` in crates/swg/src/surface/mod.rs).
var<private> walk_layer: u32;

/// Walk the culled layer list `tile_layers[start .. end]` at (x, z) (swg-trn §5.3). The
/// entries' `skip_to` and `boundary_start` are absolute indices into `tile_layers` and
/// `tile_boundaries`.
fn walk_point(start: u32, end: u32, x: f32, z: f32) {
    // amounts[d]: product of the amounts of the open ancestors above depth d.
    var amounts: array<f32, MAX_DEPTH + 1u>;
    for (var k = 0u; k <= MAX_DEPTH; k++) {
        amounts[k] = 1.0;
    }
    var i = start;
    while (i < end) {
        let entry = tile_layers[i];
        let layer = layers[entry.layer];
        let depth = layer.depth;
        let parent_amount = amounts[depth];
        walk_layer = entry.layer;
        pass_reach_layer(entry.layer);
        if (pass_walk_done()) {
            break;
        }

        // 1. Boundary amount: maximum over the boundaries (§5.3); the FBIT extent is the
        //    union of the boxes of the boundaries with non-zero influence (§5.3, §5.6).
        var amount: f32;
        if (layer.boundary_count == 0u) {
            amount = 1.0;
        } else {
            amount = 0.0;
        }
        let needs_extent = (layer.flags & LAYER_NEEDS_EXTENT) != 0u;
        var extent = array<f32, 4>(F32_MAX, F32_MAX, -F32_MAX, -F32_MAX);
        let bstart = entry.boundary_start;
        for (var k = 0u; k < entry.boundary_count; k++) {
            let bi = tile_boundaries[bstart + k];
            let b = boundaries[bi];
            let v = feather(b.feather_type, boundary_influence(b, x, z));
            amount = rmax(amount, v);
            if (needs_extent) {
                if (v > 0.0) {
                    extent = array<f32, 4>(
                        rmin(extent[0], b.bounds[0]),
                        rmin(extent[1], b.bounds[1]),
                        rmax(extent[2], b.bounds[2]),
                        rmax(extent[3], b.bounds[3]),
                    );
                }
            } else if (amount >= 1.0) {
                break;
            }
        }
        // A pure group (no boundaries, filters or affectors) arrives without invert flags:
        // the plan builder applies swg-trn §5.3's amended reading for both twins.
        if ((layer.flags & LAYER_INVERT_BOUNDARIES) != 0u) {
            amount = 1.0 - amount;
        }
        if (amount <= 0.0) {
            i = entry.skip_to;
            continue;
        }
        if (extent[0] > extent[2]) {
            // No boundary gave an extent: the layer covers the map.
            extent = array<f32, 4>(-params.half_width, -params.half_width, params.half_width, params.half_width);
        }

        // 2. Filter amount: minimum over the filters.
        let fstart = layer.filter_start;
        for (var k = 0u; k < layer.filter_count; k++) {
            let f = filters[fstart + k];
            let v = feather(f.feather_type, pass_filter_value(f, extent, x, z));
            amount = rmin(amount, v);
            if (amount <= 0.0) {
                break;
            }
        }
        if ((layer.flags & LAYER_INVERT_FILTERS) != 0u) {
            amount = 1.0 - amount;
        }
        if (amount <= 0.0) {
            i = entry.skip_to;
            continue;
        }

        // 3. Affectors with T = own amount × ancestors' amounts.
        let t = amount * parent_amount;
        if (t > 0.0) {
            let astart = layer.affector_start;
            for (var k = 0u; k < layer.affector_count; k++) {
                pass_apply(affectors[astart + k], t, x, z);
            }
        }
        // 4. Children see parentAmount × amount.
        amounts[depth + 1u] = parent_amount * amount;
        i += 1u;
    }
}
