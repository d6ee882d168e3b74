// water.wgsl — the water tables (swg-trn §5.11, §5.12 [?]): entry point `water_pass`, a port
// of `WaterTables::height_at` and `WaterLine::height_at` in crates/swg/src/water.rs. Same f32 operation
// order; the boundaries reuse `boundary_influence` (boundary.wgsl) over the bindings
// `boundaries` (2, the local water boundaries) and `points` (6, their polygon vertices), the
// lines `nearest_on_segment` (affector.wgsl). Post positions come from `params` (binding 0,
// `SurfaceParams`: x0, z0, spacing, the tile and `keep_zero`), as in the surface passes.
//
// Highest wins: the global table, then every local table whose boundary covers the post,
// then every line within half its width, each folded in with Rust's `f32::max` (`rmax`).

// keep in sync with GpuWaterParams in crates/gpu/src/water_pass.rs
struct WaterParams {
    /// The global water table's height, when `has_global` is 1.
    global_height: f32,
    has_global: u32,
    /// Entries of `boundaries` / `local_water`, and of `water_lines`.
    local_count: u32,
    line_count: u32,
}

// keep in sync with GpuLocalWater in crates/gpu/src/water_pass.rs (one per `boundaries` entry)
struct LocalWaterRecord {
    height: f32,
    /// 0 water, 1 lava.
    water_type: i32,
}

// keep in sync with GpuWaterLine in crates/gpu/src/water_pass.rs
struct WaterLineRecord {
    /// First vertex in `water_line_points` (3 f32 a vertex: x, z, surface height) and count.
    point_start: u32,
    point_count: u32,
    half_width: f32,
    /// 0 water, 1 lava.
    water_type: i32,
    /// min x, min z, max x, max z of where the line can apply.
    bounds: array<f32, 4>,
}

// keep in sync with GpuWaterPost in crates/gpu/src/water_pass.rs
struct WaterPost {
    /// The water surface height; meaningful only where `covered` is 1.
    height: f32,
    /// 1 where some table covers the post (the CPU's `Some`), else 0.
    covered: u32,
}

@group(0) @binding(23) var<uniform> water_params: WaterParams;
@group(0) @binding(24) var<storage, read> local_water: array<LocalWaterRecord>;
@group(0) @binding(25) var<storage, read> water_lines: array<WaterLineRecord>;
@group(0) @binding(26) var<storage, read> water_line_points: array<f32>;
@group(0) @binding(27) var<storage, read_write> water: array<WaterPost>;

/// `WaterLine::height_at`: vec2(1, height) within half the width of the line, else vec2(0, 0).
/// The first segment always sets the best; a later one only when strictly nearer.
fn water_line_height(l: WaterLineRecord, x: f32, z: f32) -> vec2<f32> {
    let b = l.bounds;
    if (x < b[0] || x > b[2] || z < b[1] || z > b[3]) {
        return vec2<f32>(0.0, 0.0);
    }
    var found = false;
    var best_d2 = 0.0f;
    var best_h = 0.0f;
    for (var k = 1u; k < l.point_count; k++) {
        let p = 3u * (l.point_start + k - 1u);
        let q = p + 3u;
        let ax = water_line_points[p];
        let az = water_line_points[p + 1u];
        let ah = water_line_points[p + 2u];
        let bx = water_line_points[q];
        let bz = water_line_points[q + 1u];
        let bh = water_line_points[q + 2u];
        let hit = nearest_on_segment(ax, az, bx, bz, x, z);
        if (!found || hit.x < best_d2) {
            found = true;
            best_d2 = hit.x;
            best_h = ah + (bh - ah) * hit.y;
        }
    }
    if (found && best_d2 <= l.half_width * l.half_width) {
        return vec2<f32>(1.0, best_h);
    }
    return vec2<f32>(0.0, 0.0);
}

/// The water surface at each post of the tile (`WaterTables::height_at`).
@compute @workgroup_size(8, 8)
fn water_pass(@builtin(global_invocation_id) gid: vec3<u32>) {
    keep_bits = params.keep_zero;
    if (gid.x >= params.tile_cols || gid.y >= params.tile_rows) {
        return;
    }
    let x = params.x0 + f32(params.tile_c0 + gid.x) * params.spacing;
    let z = params.z0 + f32(params.tile_r0 + gid.y) * params.spacing;
    var covered = water_params.has_global != 0u;
    var best = select(0.0f, water_params.global_height, covered);
    for (var i = 0u; i < water_params.local_count; i++) {
        if (boundary_influence(boundaries[i], x, z) > 0.0) {
            let h = local_water[i].height;
            best = select(h, rmax(best, h), covered);
            covered = true;
        }
    }
    for (var i = 0u; i < water_params.line_count; i++) {
        let hit = water_line_height(water_lines[i], x, z);
        if (hit.x != 0.0) {
            best = select(hit.y, rmax(best, hit.y), covered);
            covered = true;
        }
    }
    water[gid.y * params.tile_cols + gid.x] = WaterPost(best, select(0u, 1u, covered));
}
