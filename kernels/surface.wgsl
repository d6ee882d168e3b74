// surface.wgsl — the surface passes (swg-trn §5.2 steps 2–4): bindings, the per-post state
// and the entry points `normals_pass`, `shader_pass` and `later_pass`. Port of
// crates/swg/src/surface/mod.rs (`ShaderPass`, `LaterPass`, `ShaderResult::over`, `FloraStack`,
// `clamp_weight`, `surface_filter_value`) over the shared walk (walk.wgsl). Same names where
// the CPU has a function, same f32 operation order.
//
// One dispatch of each entry point covers one tile of posts. The shader pass and the later
// pass walk their own pruned plans (`BakePlan::for_pass`), bound in turn at bindings 1–17;
// the later pass starts from the shader pass's result in `surface`.

/// Most shader contributions kept per post (`SPLAT_LAYERS` in crates/swg/src/surface/mod.rs).
const SPLAT_LAYERS: u32 = 4u;
/// Deepest flora stack per class the kernel holds. The host checks each block's bound (the
/// number of flora adds on its culled layer list) and keeps the bake on the CPU beyond it.
const FLORA_STACK_DEPTH: u32 = 24u;
/// `FeatherClamp` (crates/swg/src/surface/mod.rs).
const FEATHER_CLAMP_IGNORE: u32 = 0u;
const FEATHER_CLAMP_THRESHOLD: u32 = 1u;
const FEATHER_CLAMP_WEIGHT: u32 = 2u;
/// `DirectionFilter` (the aspect reading needs atan2 and stays on the CPU).
const DIRECTION_ZERO: u32 = 0u;
const DIRECTION_ONE: u32 = 1u;
const FLORA_ADD: i32 = 1i;
const FLORA_REMOVE_ALL: i32 = 2i;
/// `PostRecord::passable` where no APAS applied.
const PASSABLE_NONE: i32 = -1i;
/// `SurfaceWalk` (crates/swg/src/surface/mod.rs): the GPU computes `separate` and `tree`.
const WALK_SEPARATE: u32 = 0u;
const WALK_TREE: u32 = 1u;

// keep in sync with GpuSurfaceParams in crates/gpu/src/surface_pass.rs
struct SurfaceParams {
    x0: f32,
    z0: f32,
    spacing: f32,
    half_width: f32,
    tile_c0: u32,
    tile_r0: u32,
    tile_cols: u32,
    tile_rows: u32,
    /// Side of the culling blocks, posts, and blocks per tile row (binding `blocks`).
    block: u32,
    blocks_per_row: u32,
    /// Global post indices (mod 2^32) of the tile's first post, for the quad diagonals.
    parity_c0: u32,
    parity_r0: u32,
    feather_clamp: u32,
    direction: u32,
    normal_method: u32,
    /// 0 separate passes, 1 one walk of every affector in tree order (`SurfaceWalk::Tree`).
    walk: u32,
    /// 1 where FSLP reads the heights built so far at its layer (`SlopeHeight::Tree`, with
    /// `walk` = WALK_TREE), from `slope_heights`.
    slope_tree: u32,
    /// Must be 0: `keep_bits` (records.wgsl).
    keep_zero: u32,
    /// 1 where a flora add pushes density × T (`FloraAmount::Scale`), 0 the full density.
    flora_scale: u32,
    /// FSLP layers of the plan: the slots per post in `slope_heights` (`slope_tree` only).
    slope_layers: u32,
}

// keep in sync with GpuPostRecord in crates/gpu/src/surface_pass.rs
struct PostRecord {
    shader: i32,
    splat_family: array<i32, 4>,
    splat_weight: array<f32, 4>,
    flora_family: array<i32, 4>,
    flora_probability: array<f32, 4>,
    environment: i32,
    color: array<f32, 3>,
    excluded: u32,
    passable: i32,
    /// 1 where a flora stack outgrew FLORA_STACK_DEPTH: the host recomputes the post on the CPU.
    flora_overflow: u32,
}

// Bindings 1–16 (the plan and the block lists) are in plan_bindings.wgsl.
@group(0) @binding(0) var<uniform> params: SurfaceParams;
/// Per culling block of the tile: [start, end) of its entries in `tile_layers`.
@group(0) @binding(17) var<storage, read> blocks: array<vec2<u32>>;
/// Colour ramps: words 2i and 2i + 1 hold ramp i's first entry and length, entries are 0xRRGGBB.
@group(0) @binding(18) var<storage, read> ramps: array<u32>;
/// The tile's heights with a 1-post apron: (tile_cols + 2) × (tile_rows + 2), row 0 = south.
@group(0) @binding(19) var<storage, read> heights: array<f32>;
/// Unit normals of the tile's posts, 3 floats each (x, y, z).
@group(0) @binding(20) var<storage, read_write> normals: array<f32>;
@group(0) @binding(21) var<storage, read_write> surface: array<PostRecord>;
/// `SlopeHeight::Tree`: the heights before each FSLP layer at the tile's posts and apron
/// (`slope_heights_pass`, `slope_height_index`); one unused word otherwise.
@group(0) @binding(22) var<storage, read_write> slope_heights: array<f32>;

// ---- Per-post state (the CPU's `ShaderPass` / `LaterPass`) ------------------------------

var<private> ground_height: f32;
var<private> ground_normal_y: f32;
var<private> shader_family: i32;
var<private> splat_family: array<i32, SPLAT_LAYERS>;
var<private> splat_weight: array<f32, SPLAT_LAYERS>;
var<private> flora_family: array<array<i32, FLORA_STACK_DEPTH>, 4>;
var<private> flora_density: array<array<f32, FLORA_STACK_DEPTH>, 4>;
var<private> flora_len: array<u32, 4>;
/// Set when a push found its stack full (the post's flora results are then not exact).
var<private> flora_overflow: bool;
var<private> environment: i32;
var<private> color: array<f32, 3>;
var<private> excluded: bool;
var<private> passable: i32;
/// The height the tree walk has built so far (`TreeWalk::h`).
var<private> tree_h: f32;
/// The tile post being walked (`walk_post`), for FSLP's neighbourhood under `slope_tree`.
var<private> walk_col: u32;
var<private> walk_row: u32;
/// 1 in `slope_heights_pass`: the hooks act as the height pass and record the heights.
var<private> tracing_heights: bool;
/// `slope_heights_pass`: the apron post being traced and its next unrecorded slot.
var<private> trace_col: u32;
var<private> trace_row: u32;
var<private> trace_next_slot: u32;

/// Rust's `f32::total_cmp` as an i32 key: a < b in total order iff key(a) < key(b).
fn total_order_key(x: f32) -> i32 {
    let b = bitcast<i32>(x);
    return b ^ bitcast<i32>(bitcast<u32>(b >> 31u) >> 1u);
}

/// Port of `ShaderResult::over`: composite (family, w) over the earlier contributions.
fn shader_over(family: i32, w_in: f32) {
    let w = rclamp(w_in, 0.0, 1.0);
    for (var k = 0u; k < SPLAT_LAYERS; k++) {
        splat_weight[k] = splat_weight[k] * (1.0 - w);
    }
    for (var k = 0u; k < SPLAT_LAYERS; k++) {
        if (splat_family[k] == family && splat_weight[k] > 0.0) {
            splat_weight[k] = splat_weight[k] + w;
            return;
        }
    }
    // Replace the weakest (or an empty) entry: the first minimum in total order.
    var weakest = 0u;
    for (var k = 1u; k < SPLAT_LAYERS; k++) {
        if (total_order_key(splat_weight[k]) < total_order_key(splat_weight[weakest])) {
            weakest = k;
        }
    }
    splat_family[weakest] = family;
    splat_weight[weakest] = w;
}

/// Port of `clamp_weight`: whether an ASCN/ASRP/AENV with amount `t` and clamp `c` claims
/// the post (x = 1) and with which weight (y).
fn clamp_weight(t: f32, c: f32) -> vec2<f32> {
    switch params.feather_clamp {
        case FEATHER_CLAMP_THRESHOLD: {
            if (t >= c) {
                return vec2<f32>(1.0, t);
            }
            return vec2<f32>(0.0, 0.0);
        }
        case FEATHER_CLAMP_WEIGHT: {
            if (c > 0.0) {
                return vec2<f32>(1.0, rmin(t / c, 1.0));
            }
            return vec2<f32>(1.0, 1.0);
        }
        default: {
            return vec2<f32>(1.0, t);
        }
    }
}

/// Port of `surface_filter_value`: every filter live (swg-trn §5.2 steps 3–4, §5.5).
fn surface_filter_value(f: FilterRecord, extent: array<f32, 4>, x: f32, z: f32) -> f32 {
    switch f.kind {
        case FILTER_SLOPE: {
            if (params.slope_tree == 1u) {
                let n = slope_normal_before(walk_layer, walk_col, walk_row, x, z);
                return feathered_range(n.y, f.low, f.high, f.feather_amount);
            }
            return feathered_range(ground_normal_y, f.low, f.high, f.feather_amount);
        }
        case FILTER_DIRECTION: {
            if (params.direction == DIRECTION_ONE) {
                return 1.0;
            }
            return 0.0;
        }
        case FILTER_SHADER: {
            if (shader_family != 0i && bitcast<u32>(shader_family) == f.family) {
                return 1.0;
            }
            return 0.0;
        }
        default: {
            // FHGT (on the final height, or in a tree walk on the height built so far), FFRA
            // and FBIT as in the height pass.
            let h = select(ground_height, tree_h, params.walk == WALK_TREE);
            return filter_value_height_pass(f, extent, h, x, z);
        }
    }
}

/// A flora class's most likely family and its placement probability.
struct FloraChoice {
    family: i32,
    probability: f32,
}

/// Push an add on a flora class's stack; a full stack flags the post (`flora_overflow`).
fn flora_push(cls: u32, family: i32, density: f32) {
    let n = flora_len[cls];
    if (n < FLORA_STACK_DEPTH) {
        flora_family[cls][n] = family;
        flora_density[cls][n] = density;
        flora_len[cls] = n + 1u;
    } else {
        flora_overflow = true;
    }
}

/// Remove every entry of `family` from a flora class's stack, keeping the order.
fn flora_remove(cls: u32, family: i32) {
    var j = 0u;
    for (var k = 0u; k < flora_len[cls]; k++) {
        if (flora_family[cls][k] != family) {
            flora_family[cls][j] = flora_family[cls][k];
            flora_density[cls][j] = flora_density[cls][k];
            j += 1u;
        }
    }
    flora_len[cls] = j;
}

/// Port of `FloraStack::most_likely` (through `probabilities`): the newest add claims the
/// tile with its density, else the next older one; a family's chances sum newest first; the
/// most likely family wins, ties to the lower id; (0, 0) where nothing can be placed.
fn flora_most_likely(cls: u32) -> FloraChoice {
    let n = flora_len[cls];
    var p: array<f32, FLORA_STACK_DEPTH>;
    var remaining = 1.0f;
    for (var k = n; k > 0u; k--) {
        let d = rclamp(flora_density[cls][k - 1u], 0.0, 1.0);
        p[k - 1u] = remaining * d;
        remaining = remaining * (1.0 - d);
    }
    var best_family = 0i;
    var best_p = 0.0f;
    for (var k = n; k > 0u; k--) {
        let family = flora_family[cls][k - 1u];
        var newest = true;
        for (var j = k; j < n; j++) {
            if (flora_family[cls][j] == family) {
                newest = false;
            }
        }
        if (!newest) {
            continue;
        }
        var sum = p[k - 1u];
        for (var j = k - 1u; j > 0u; j--) {
            if (flora_family[cls][j - 1u] == family) {
                sum = sum + p[j - 1u];
            }
        }
        if (sum > 0.0 && (sum > best_p || (sum == best_p && family < best_family))) {
            best_family = family;
            best_p = sum;
        }
    }
    return FloraChoice(best_family, best_p);
}

/// Round half away from zero, as an index ≤ `last` (Rust's `(x.round() as usize).min(last)`
/// for the ramp lookup; negative and NaN give 0).
fn ramp_index(x: f32, last: u32) -> u32 {
    if (!(x >= 0.5)) {
        return 0u;
    }
    if (x >= f32(last)) {
        return last;
    }
    let f = floor(x);
    var r = u32(f);
    if (x - f >= 0.5) {
        r += 1u;
    }
    return min(r, last);
}

/// Apply one surface affector with amount `t` > 0: `ShaderPass::apply` and
/// `LaterPass::apply` in one (each pass's plan holds only its own kinds).
fn apply_surface_affector(a: AffectorRecord, t: f32, x: f32, z: f32) {
    switch a.kind {
        case AFFECTOR_SHADER_CONSTANT: {
            let cw = clamp_weight(t, a.value);
            if (cw.x != 0.0) {
                shader_family = bitcast<i32>(a.index);
                shader_over(bitcast<i32>(a.index), cw.y);
            }
        }
        case AFFECTOR_SHADER_REPLACE: {
            let source = bitcast<i32>(a.index);
            let destination = a.operation;
            if (shader_family == source && clamp_weight(t, a.value).x != 0.0) {
                shader_family = destination;
                for (var k = 0u; k < SPLAT_LAYERS; k++) {
                    if (splat_family[k] == source) {
                        splat_family[k] = destination;
                    }
                }
            }
        }
        case AFFECTOR_ENVIRONMENT: {
            if (clamp_weight(t, a.value).x != 0.0) {
                environment = bitcast<i32>(a.index);
            }
        }
        case AFFECTOR_COLOR_CONSTANT, AFFECTOR_COLOR_RAMP_HEIGHT, AFFECTOR_COLOR_RAMP_FRACTAL: {
            var rgb: u32;
            if (a.kind == AFFECTOR_COLOR_CONSTANT) {
                rgb = a.index;
            } else {
                var u: f32;
                if (a.kind == AFFECTOR_COLOR_RAMP_HEIGHT) {
                    let range = a.value2 - a.value;
                    if (range != 0.0) {
                        u = rclamp((ground_height - a.value) / range, 0.0, 1.0);
                    } else {
                        u = 0.0;
                    }
                } else if (a._pad < arrayLength(&fractals)) {
                    u = fractal_value(fractals[a._pad], x, z);
                } else {
                    u = 0.0;
                }
                let first = ramps[2u * a.index];
                let last = ramps[2u * a.index + 1u] - 1u;
                rgb = ramps[first + ramp_index(u * f32(last), last)];
            }
            let c = array<u32, 3>((rgb >> 16u) & 255u, (rgb >> 8u) & 255u, rgb & 255u);
            for (var k = 0u; k < 3u; k++) {
                color[k] = height_operation(a.operation, color[k], f32(c[k]) / 255.0, t);
            }
        }
        case AFFECTOR_ROAD_SHADER: {
            // swg-trn §5.12 step 5: the road's (river bank's, ribbon's) shader family with the
            // shader feather; a river's bottom family inside half its water width.
            if (a.index >= arrayLength(&roads)) {
                return;
            }
            let hit = road_hit(roads[a.index], x, z);
            if (!hit.inside) {
                return;
            }
            let w = hit.weight * t;
            if (w > 0.0) {
                var family = a.operation;
                if (a._pad != 0u && hit.distance <= a.value) {
                    family = bitcast<i32>(a._pad);
                }
                shader_family = family;
                shader_over(family, w);
            }
        }
        case AFFECTOR_EXCLUDE: {
            excluded = true;
        }
        case AFFECTOR_PASSABLE: {
            if (t >= a.value) {
                passable = bitcast<i32>(bitcast<u32>(a.operation) & 255u);
            }
        }
        default: {
            if (a.kind >= AFFECTOR_FLORA_BASE && a.kind < AFFECTOR_FLORA_BASE + 4u) {
                let cls = a.kind - AFFECTOR_FLORA_BASE;
                let family = bitcast<i32>(a.index);
                if ((a.operation & FLORA_REMOVE_ALL) != 0i) {
                    flora_len[cls] = 0u;
                } else if ((a.operation & FLORA_ADD) != 0i) {
                    var density = a.value;
                    if (params.flora_scale == 1u) {
                        density = a.value * t;
                    }
                    flora_push(cls, family, density);
                } else {
                    flora_remove(cls, family);
                }
            }
        }
    }
}

// ---- FSLP on the heights built so far (`SlopeHeight::Tree`) ------------------------------
//
// `slope_heights_pass` walks the height pass (FSLP, FDIR, FSHD 0; only height affectors
// act) at every post of the tile and its 1-post apron and records, for each FSLP layer of
// the plan (slot k = the layer's `slope_rank` − 1), the height when the walk first reached a
// layer at or after it: the height before that layer acts (`HeightTrace::before` in
// crates/swg/src/surface/mod.rs). The tree walk's FSLP then reads its 3×3 neighbourhood from
// `slope_heights` instead of walking its neighbours inside its own walk.

/// Slot-major: slot k of apron post (col, row) is at k · apron_posts + row · (tile_cols + 2)
/// + col, apron row 0 being the tile's row −1.
fn slope_height_index(slot: u32, apron_col: u32, apron_row: u32) -> u32 {
    let stride = params.tile_cols + 2u;
    return slot * stride * (params.tile_rows + 2u) + apron_row * stride + apron_col;
}

/// Record the height so far in the traced post's slots up to (not including) `upto`.
fn record_slope_heights(upto: u32) {
    while (trace_next_slot < upto) {
        slope_heights[slope_height_index(trace_next_slot, trace_col, trace_row)] = tree_h;
        trace_next_slot += 1u;
    }
}

/// The faces normal at the tile's post (col, row) from the heights of its 3×3
/// neighbourhood before layer `layer` acts (`SlopeNeighbourhood::normal_before`), with the
/// quad diagonals of the post's global indices computed from x, z as the CPU does.
fn slope_normal_before(layer: u32, col: u32, row: u32, x: f32, z: f32) -> vec3<f32> {
    let slot = layers[layer].slope_rank - 1u;
    var h: array<array<f32, 3>, 3>;
    for (var dz = 0u; dz < 3u; dz++) {
        for (var dx = 0u; dx < 3u; dx++) {
            h[dz][dx] = slope_heights[slope_height_index(slot, col + dx, row + dz)];
        }
    }
    let s = params.spacing;
    let gx = bitcast<u32>(i32(floor((x + params.half_width) / s + 0.5)));
    let gz = bitcast<u32>(i32(floor((z + params.half_width) / s + 0.5)));
    return post_normal(NORMALS_FACES, h, s, gx, gz);
}

// ---- The walk's hooks (walk.wgsl) -------------------------------------------------------

fn pass_filter_value(f: FilterRecord, extent: array<f32, 4>, x: f32, z: f32) -> f32 {
    if (tracing_heights) {
        // `HeightTrace::filter_value`.
        return filter_value_height_pass(f, extent, tree_h, x, z);
    }
    return surface_filter_value(f, extent, x, z);
}

fn pass_apply(a: AffectorRecord, t: f32, x: f32, z: f32) {
    // `TreeWalk::apply`: a tree walk's plan also holds the height affectors.
    if (a.kind <= AFFECTOR_ROAD) {
        tree_h = apply_height_affector(a, tree_h, t, x, z);
        return;
    }
    if (!tracing_heights) {
        apply_surface_affector(a, t, x, z);
    }
}

fn pass_reach_layer(layer: u32) {
    if (tracing_heights) {
        // Every slot whose FSLP layer is at or before `layer`.
        record_slope_heights(min(layers[layer].slope_rank, params.slope_layers));
    }
}

/// The height trace stops once every FSLP layer is recorded (`HeightTrace::walk_done`).
fn pass_walk_done() -> bool {
    return tracing_heights && trace_next_slot >= params.slope_layers;
}

// ---- Entry points -----------------------------------------------------------------------

/// Load the ground of post (col, row) of the tile and walk its block's layer list at the
/// post's position, computed as the CPU's `Grid::post` does.
fn walk_post(col: u32, row: u32) {
    let x = params.x0 + f32(params.tile_c0 + col) * params.spacing;
    let z = params.z0 + f32(params.tile_r0 + row) * params.spacing;
    ground_height = heights[(row + 1u) * (params.tile_cols + 2u) + col + 1u];
    ground_normal_y = normals[3u * (row * params.tile_cols + col) + 1u];
    let range = blocks[(row / params.block) * params.blocks_per_row + col / params.block];
    walk_col = col;
    walk_row = row;
    walk_point(range.x, range.y, x, z);
}

/// Normals of the tile's posts from the heights with their apron (swg-trn §5.2 step 2).
@compute @workgroup_size(8, 8)
fn normals_pass(@builtin(global_invocation_id) gid: vec3<u32>) {
    keep_bits = params.keep_zero;
    if (gid.x >= params.tile_cols || gid.y >= params.tile_rows) {
        return;
    }
    let stride = params.tile_cols + 2u;
    var h: array<array<f32, 3>, 3>;
    for (var dz = 0u; dz < 3u; dz++) {
        for (var dx = 0u; dx < 3u; dx++) {
            h[dz][dx] = heights[(gid.y + dz) * stride + gid.x + dx];
        }
    }
    let n = post_normal(params.normal_method, h, params.spacing, params.parity_c0 + gid.x, params.parity_r0 + gid.y);
    let i = gid.y * params.tile_cols + gid.x;
    normals[3u * i] = n.x;
    normals[3u * i + 1u] = n.y;
    normals[3u * i + 2u] = n.z;
}

/// The heights before each FSLP layer at every post of the tile and its 1-post apron
/// (`SlopeHeight::Tree`), walking the culled list of the nearest block of the tile (each
/// grown by a post for this).
@compute @workgroup_size(8, 8)
fn slope_heights_pass(@builtin(global_invocation_id) gid: vec3<u32>) {
    keep_bits = params.keep_zero;
    if (gid.x >= params.tile_cols + 2u || gid.y >= params.tile_rows + 2u) {
        return;
    }
    // Grid post (tile_c0 + gid.x − 1, tile_r0 + gid.y − 1), at the f32 position the CPU's
    // `SlopeNeighbourhood` gives it: x0 + f32(column) · spacing, columns from −1.
    let gc = i32(params.tile_c0 + gid.x) - 1i;
    let gr = i32(params.tile_r0 + gid.y) - 1i;
    let x = params.x0 + f32(gc) * params.spacing;
    let z = params.z0 + f32(gr) * params.spacing;
    // The apron's own block: the nearest post of the tile.
    let col = min(select(gid.x - 1u, 0u, gid.x == 0u), params.tile_cols - 1u);
    let row = min(select(gid.y - 1u, 0u, gid.y == 0u), params.tile_rows - 1u);
    let range = blocks[(row / params.block) * params.blocks_per_row + col / params.block];
    tracing_heights = true;
    tree_h = 0.0;
    trace_col = gid.x;
    trace_row = gid.y;
    trace_next_slot = 0u;
    walk_point(range.x, range.y, x, z);
    // FSLP layers after the walk's last entry: the final height.
    record_slope_heights(params.slope_layers);
}

/// The shader pass (swg-trn §5.2 step 3) at each post of the tile; the other fields of the
/// record get their empty values, like the CPU's shader-only selection.
@compute @workgroup_size(8, 8)
fn shader_pass(@builtin(global_invocation_id) gid: vec3<u32>) {
    keep_bits = params.keep_zero;
    if (gid.x >= params.tile_cols || gid.y >= params.tile_rows) {
        return;
    }
    shader_family = 0i;
    for (var k = 0u; k < SPLAT_LAYERS; k++) {
        splat_family[k] = 0i;
        splat_weight[k] = 0.0;
    }
    walk_post(gid.x, gid.y);
    var r: PostRecord;
    r.shader = shader_family;
    for (var k = 0u; k < SPLAT_LAYERS; k++) {
        r.splat_family[k] = splat_family[k];
        r.splat_weight[k] = splat_weight[k];
        r.flora_family[k] = 0i;
        r.flora_probability[k] = 0.0;
    }
    r.environment = 0i;
    r.color = array<f32, 3>(0.0, 0.0, 0.0);
    r.excluded = 0u;
    r.passable = PASSABLE_NONE;
    r.flora_overflow = 0u;
    surface[gid.y * params.tile_cols + gid.x] = r;
}

/// The flora / environment / colour / exclude / passable pass (swg-trn §5.2 step 4), from
/// the shader pass's result in `surface`.
@compute @workgroup_size(8, 8)
fn later_pass(@builtin(global_invocation_id) gid: vec3<u32>) {
    keep_bits = params.keep_zero;
    if (gid.x >= params.tile_cols || gid.y >= params.tile_rows) {
        return;
    }
    let i = gid.y * params.tile_cols + gid.x;
    var r = surface[i];
    shader_family = r.shader;
    for (var k = 0u; k < SPLAT_LAYERS; k++) {
        splat_family[k] = r.splat_family[k];
        splat_weight[k] = r.splat_weight[k];
    }
    tree_h = 0.0;
    if (params.walk == WALK_TREE) {
        // One walk of every affector (`tree_at_with`): the shader starts empty here.
        shader_family = 0i;
        for (var k = 0u; k < SPLAT_LAYERS; k++) {
            splat_family[k] = 0i;
            splat_weight[k] = 0.0;
        }
    }
    for (var k = 0u; k < 4u; k++) {
        flora_len[k] = 0u;
    }
    flora_overflow = false;
    environment = 0i;
    color = array<f32, 3>(0.0, 0.0, 0.0);
    excluded = false;
    passable = PASSABLE_NONE;
    walk_post(gid.x, gid.y);
    r.shader = shader_family;
    for (var k = 0u; k < SPLAT_LAYERS; k++) {
        r.splat_family[k] = splat_family[k];
        r.splat_weight[k] = splat_weight[k];
    }
    for (var k = 0u; k < 4u; k++) {
        let best = flora_most_likely(k);
        r.flora_family[k] = best.family;
        r.flora_probability[k] = best.probability;
    }
    r.environment = environment;
    r.color = color;
    r.excluded = select(0u, 1u, excluded);
    r.passable = passable;
    r.flora_overflow = select(0u, 1u, flora_overflow);
    surface[i] = r;
}
