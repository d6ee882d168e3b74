// height.wgsl — the height pass: bindings and the entry point `height_pass`, one f32 per post
// of one tile, STRIP posts of a row per invocation over the strip walk (walk_strip.wgsl).
//
// Bindings (group 0; the order is fixed, crates/gpu/src/records.rs names them in `binding`): 0 and
// 17–18 here, 1–16 in plan_bindings.wgsl. Every storage buffer holds at least one element
// (empty buffers cannot be bound); the kernel only indexes what the records and `params` say.

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(17) var<storage, read_write> heights: array<f32>;
@group(0) @binding(18) var<storage, read> blocks: array<vec2<u32>>;

/// Side in posts of the culling blocks (crates/gpu/src/records.rs `HEIGHT_CULL_BLOCK`).
const HEIGHT_CULL_BLOCK: u32 = 128u;

/// One invocation per strip of STRIP posts of a row of the tile [tile_c0, tile_c0 +
/// tile_cols) × [tile_r0, tile_r0 + tile_rows), row 0 = south (walk_strip.wgsl). Dispatch
/// ceil(tile_cols / (8·STRIP)) × ceil(tile_rows / 8) workgroups.
///
/// Post coordinates: x0 + f32(col)·spacing in f32, the same expression and order as the
/// CPU's `Grid::post` (crates/swg/src/grid.rs), so both evaluate the same points.
@compute @workgroup_size(8, 8)
fn height_pass(@builtin(global_invocation_id) gid: vec3<u32>) {
    keep_bits = params._pad;
    let first_col = gid.x * STRIP;
    let local_row = gid.y;
    if (first_col >= params.tile_cols || local_row >= params.tile_rows) {
        return;
    }
    let z = params.z0 + f32(params.tile_r0 + local_row) * params.spacing;
    var xs: array<f32, MAX_STRIP>;
    var open: array<bool, MAX_STRIP>;
    for (var l = 0u; l < STRIP; l++) {
        open[l] = first_col + l < params.tile_cols;
        xs[l] = params.x0 + f32(params.tile_c0 + first_col + l) * params.spacing;
    }
    // The strip's culling block (uniform over the workgroup: blocks are whole workgroups,
    // HEIGHT_CULL_BLOCK being a multiple of 8·STRIP).
    let block = (local_row / HEIGHT_CULL_BLOCK) * params.blocks_per_row + first_col / HEIGHT_CULL_BLOCK;
    let range = blocks[block];
    walk_strip(range.x, range.y, xs, z, open);
    for (var l = 0u; l < STRIP; l++) {
        if (open[l]) {
            heights[local_row * params.tile_cols + first_col + l] = strip_h[l];
        }
    }
}
