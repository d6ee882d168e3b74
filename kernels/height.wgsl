// height.wgsl — the height pass: bindings, `height_at_point` (port of src/eval/mod.rs) and
// the entry point `height_pass`, one f32 per post of one tile.
//
// Bindings (group 0; the order is fixed, src/gpu/records.rs names them in `binding`). Every
// storage buffer holds at least one element (empty buffers cannot be bound); the kernel only
// indexes what the records and `params` say.

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> layers: array<LayerRecord>;
@group(0) @binding(2) var<storage, read> boundaries: array<BoundaryRecord>;
@group(0) @binding(3) var<storage, read> filters: array<FilterRecord>;
@group(0) @binding(4) var<storage, read> affectors: array<AffectorRecord>;
@group(0) @binding(5) var<storage, read> roads: array<RoadRecord>;
@group(0) @binding(6) var<storage, read> points: array<vec2<f32>>;
@group(0) @binding(7) var<storage, read> road_segments: array<vec2<u32>>;
@group(0) @binding(8) var<storage, read> road_samples: array<vec4<f32>>;
@group(0) @binding(9) var<storage, read> road_heights: array<f32>;
@group(0) @binding(10) var<storage, read> fractals: array<FractalRecord>;
@group(0) @binding(11) var<storage, read> perm: array<u32>;
@group(0) @binding(12) var<storage, read> gradients: array<vec2<f32>>;
@group(0) @binding(13) var<storage, read> bitmaps: array<BitmapRecord>;
@group(0) @binding(14) var<storage, read> bitmap_words: array<u32>;
@group(0) @binding(15) var<storage, read> tile_layers: array<TileLayer>;
@group(0) @binding(16) var<storage, read> tile_boundaries: array<u32>;
@group(0) @binding(17) var<storage, read_write> heights: array<f32>;

/// The height at (x, z) after the height pass (swg-trn §5.2 step 1, §5.3), walking the
/// tile's culled layer list (`tile_layers[0 .. params.tile_layer_count]`, built on the CPU by
/// `BakePlan::tile_layers` for an area containing the point).
fn height_at_point(x: f32, z: f32) -> f32 {
    var h = 0.0f;
    // amounts[d]: product of the amounts of the open ancestors above depth d.
    var amounts: array<f32, MAX_DEPTH + 1u>;
    for (var k = 0u; k <= MAX_DEPTH; k++) {
        amounts[k] = 1.0;
    }
    let n = params.tile_layer_count;
    var i = 0u;
    while (i < n) {
        let entry = tile_layers[i];
        let layer = layers[entry.layer];
        let depth = layer.depth;
        let parent_amount = amounts[depth];

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
            let v = feather(f.feather_type, filter_value_height_pass(f, extent, h, x, z));
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
                h = apply_height_affector(affectors[astart + k], h, t, x, z);
            }
        }
        // 4. Children see parentAmount × amount.
        amounts[depth + 1u] = parent_amount * amount;
        i += 1u;
    }
    return h;
}

/// One invocation per post of the tile [tile_c0, tile_c0 + tile_cols) ×
/// [tile_r0, tile_r0 + tile_rows), row 0 = south. Dispatch
/// ceil(tile_cols / 8) × ceil(tile_rows / 8) workgroups.
///
/// Post coordinates: x0 + f32(col)·spacing in f32, the same expression and order as the
/// CPU's `Grid::post` (src/eval/mod.rs), so both evaluate the same points.
@compute @workgroup_size(8, 8)
fn height_pass(@builtin(global_invocation_id) gid: vec3<u32>) {
    keep_bits = params._pad;
    let local_col = gid.x;
    let local_row = gid.y;
    if (local_col >= params.tile_cols || local_row >= params.tile_rows) {
        return;
    }
    let global_col = params.tile_c0 + local_col;
    let global_row = params.tile_r0 + local_row;
    let x = params.x0 + f32(global_col) * params.spacing;
    let z = params.z0 + f32(global_row) * params.spacing;
    heights[local_row * params.tile_cols + local_col] = height_at_point(x, z);
}
