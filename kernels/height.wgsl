// height.wgsl — the height pass: bindings, `height_at_point` (port of src/eval/mod.rs) over
// the shared walk (walk.wgsl) and the entry point `height_pass`, one f32 per post of one tile.
//
// Bindings (group 0; the order is fixed, src/gpu/records.rs names them in `binding`): 0 and
// 17–18 here, 1–16 in plan_bindings.wgsl. Every storage buffer holds at least one element
// (empty buffers cannot be bound); the kernel only indexes what the records and `params` say.

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(17) var<storage, read_write> heights: array<f32>;
@group(0) @binding(18) var<storage, read> blocks: array<vec2<u32>>;

/// Side in posts of the culling blocks (src/gpu/records.rs `HEIGHT_CULL_BLOCK`).
const HEIGHT_CULL_BLOCK: u32 = 128u;

/// The height accumulated so far at the invocation's point: the height pass's state for the
/// shared walk (kernels/walk.wgsl; `HeightState` in src/eval/mod.rs).
var<private> height_state: f32;

fn pass_filter_value(f: FilterRecord, extent: array<f32, 4>, x: f32, z: f32) -> f32 {
    return filter_value_height_pass(f, extent, height_state, x, z);
}

fn pass_apply(a: AffectorRecord, t: f32, x: f32, z: f32) {
    height_state = apply_height_affector(a, height_state, t, x, z);
}

/// The height at (x, z) after the height pass (swg-trn §5.2 step 1, §5.3), walking the
/// culled layer list `tile_layers[range.x .. range.y]` (built on the CPU by
/// `BakePlan::tile_layers` for an area containing the point).
fn height_at_point(range: vec2<u32>, x: f32, z: f32) -> f32 {
    height_state = 0.0;
    walk_point(range.x, range.y, x, z);
    return height_state;
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
    // The post's culling block (uniform over the workgroup: blocks are whole workgroups).
    let block = (local_row / HEIGHT_CULL_BLOCK) * params.blocks_per_row + local_col / HEIGHT_CULL_BLOCK;
    heights[local_row * params.tile_cols + local_col] = height_at_point(blocks[block], x, z);
}
