// walk_strip.wgsl — the height pass's layer walk over a strip of STRIP posts of one row per
// invocation (port of `height_row` in crates/swg/src/eval/walk_strip.rs, layer-major over lanes): each layer,
// boundary, filter and affector record is loaded once for the strip instead of once per post.
// Lanes whose amount is 0 at a layer are masked the way the CPU's row walk masks them (their
// amount, and so their children's, is 0, and nothing in a subtree acts unless T > 0), so every
// lane computes exactly what `walk_point` (walk.wgsl) computes for its post; a layer is
// skipped only when every lane is closed.
//
// Uses the bindings `params` (for `half_width`), `layers`, `boundaries`, `filters`,
// `affectors`, `tile_layers` and `tile_boundaries`, and the strip's heights `strip_h`.

/// Largest strip (the private arrays' size).
const MAX_STRIP: u32 = 4u;

/// Posts per invocation, set by the host (`height_strip`, crates/gpu/src/context.rs): 4 on a
/// CPU adapter (one record load serves four posts), 1 on a hardware GPU (2x faster on the
/// H200); `TRNBAKE_GPU_STRIP` overrides.
override STRIP: u32 = 4u;

/// The heights accumulated so far at the strip's posts.
var<private> strip_h: array<f32, MAX_STRIP>;

/// Walk the culled layer list `tile_layers[start .. end]` for the posts (xs[l], z),
/// l < STRIP; lanes with `open[l]` false (outside the tile) take no part.
fn walk_strip(start: u32, end: u32, xs: array<f32, MAX_STRIP>, z: f32, open: array<bool, MAX_STRIP>) {
    // amounts[d][l]: product of the open ancestors' amounts above depth d at lane l. Only
    // depth 0 needs initialising: a layer writes its children's amounts before they run.
    var amounts: array<array<f32, MAX_STRIP>, MAX_DEPTH + 1u>;
    for (var l = 0u; l < STRIP; l++) {
        amounts[0][l] = select(0.0, 1.0, open[l]);
        strip_h[l] = 0.0;
    }
    let everywhere = array<f32, 4>(-params.half_width, -params.half_width, params.half_width, params.half_width);
    var i = start;
    while (i < end) {
        let entry = tile_layers[i];
        let layer = layers[entry.layer];
        let depth = layer.depth;
        let parent = amounts[depth];
        let needs_extent = (layer.flags & LAYER_NEEDS_EXTENT) != 0u;

        // 1. Boundaries: maximum of the feathered influences (§5.3), the FBIT extent.
        var amount: array<f32, MAX_STRIP>;
        var extent: array<array<f32, 4>, MAX_STRIP>;
        let initial = select(0.0, 1.0, layer.boundary_count == 0u);
        for (var l = 0u; l < STRIP; l++) {
            amount[l] = initial;
            extent[l] = array<f32, 4>(F32_MAX, F32_MAX, -F32_MAX, -F32_MAX);
        }
        let bstart = entry.boundary_start;
        for (var k = 0u; k < entry.boundary_count; k++) {
            let b = boundaries[tile_boundaries[bstart + k]];
            for (var l = 0u; l < STRIP; l++) {
                if (parent[l] <= 0.0 || (!needs_extent && amount[l] >= 1.0)) {
                    continue;
                }
                let v = feather(b.feather_type, boundary_influence(b, xs[l], z));
                amount[l] = rmax(amount[l], v);
                if (needs_extent && v > 0.0) {
                    let e = extent[l];
                    extent[l] = array<f32, 4>(rmin(e[0], b.bounds[0]), rmin(e[1], b.bounds[1]), rmax(e[2], b.bounds[2]), rmax(e[3], b.bounds[3]));
                }
            }
        }
        let invert_b = (layer.flags & LAYER_INVERT_BOUNDARIES) != 0u;
        var any_open = false;
        for (var l = 0u; l < STRIP; l++) {
            var a = amount[l];
            if (invert_b) {
                a = 1.0 - a;
            }
            if (parent[l] <= 0.0) {
                a = 0.0;
            }
            amount[l] = a;
            any_open = any_open || a > 0.0;
            if (extent[l][0] > extent[l][2]) {
                // No boundary gave an extent: the layer covers the map.
                extent[l] = everywhere;
            }
        }
        if (!any_open) {
            i = entry.skip_to;
            continue;
        }

        // 2. Filters: minimum over the filters, on the lanes the boundaries left open.
        let invert_f = (layer.flags & LAYER_INVERT_FILTERS) != 0u;
        if (layer.filter_count > 0u || invert_f) {
            var reached: array<bool, MAX_STRIP>;
            for (var l = 0u; l < STRIP; l++) {
                reached[l] = amount[l] > 0.0;
            }
            let fstart = layer.filter_start;
            for (var k = 0u; k < layer.filter_count; k++) {
                let f = filters[fstart + k];
                for (var l = 0u; l < STRIP; l++) {
                    if (amount[l] > 0.0) {
                        let v = feather(f.feather_type, filter_value_height_pass(f, extent[l], strip_h[l], xs[l], z));
                        amount[l] = rmin(amount[l], v);
                    }
                }
            }
            any_open = false;
            for (var l = 0u; l < STRIP; l++) {
                var a = amount[l];
                if (invert_f) {
                    a = 1.0 - a;
                }
                if (!reached[l] || a <= 0.0) {
                    a = 0.0;
                }
                amount[l] = a;
                any_open = any_open || a > 0.0;
            }
            if (!any_open) {
                i = entry.skip_to;
                continue;
            }
        }

        // 3. Affectors with T = own amount × ancestors' amounts; 4. children's amounts.
        var t: array<f32, MAX_STRIP>;
        for (var l = 0u; l < STRIP; l++) {
            let lane_open = amount[l] > 0.0;
            t[l] = select(0.0, amount[l] * parent[l], lane_open);
            amounts[depth + 1u][l] = select(0.0, parent[l] * amount[l], lane_open);
        }
        let astart = layer.affector_start;
        for (var k = 0u; k < layer.affector_count; k++) {
            let a = affectors[astart + k];
            for (var l = 0u; l < STRIP; l++) {
                if (t[l] > 0.0) {
                    strip_h[l] = apply_height_affector(a, strip_h[l], t[l], xs[l], z);
                }
            }
        }
        i += 1u;
    }
}
