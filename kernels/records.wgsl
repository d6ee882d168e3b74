// records.wgsl — WGSL twins of the `#[repr(C)]` plan records in crates/swg/src/plan/records.rs, the dispatch
// parameters, and the plan constants.
//
// The kernel files are concatenated by build.rs in this order: records, noise, feather,
// boundary, filter, affector, then height for the height pass, or walk, normals and surface
// for the surface passes (module-scope declarations may be used before they appear). tests/kernel_layout.rs checks every struct here against the Rust layout (member
// offsets and size, through naga) and every constant against its Rust value.
//
// Layout rule: only 4-byte scalars and `array<T, N>` of them (alignment 4, stride 4), so the
// WGSL storage layout is exactly Rust's `repr(C)` layout. No vec3, no vec4 members.

// ---- Plan constants (crates/swg/src/plan/records.rs) ----------------------------------------------------

/// Deepest layer nesting (keep in sync with `MAX_DEPTH` in crates/swg/src/plan/records.rs).
const MAX_DEPTH: u32 = 32u;
/// f32::MAX, also `UNBOUNDED` in crates/swg/src/plan/records.rs.
const F32_MAX: f32 = 0x1.fffffep+127f;
const UNBOUNDED: f32 = 0x1.fffffep+127f;
/// Bit pattern of +inf (used only to reproduce IEEE `x / 0` results without dividing).
const F32_INF_BITS: u32 = 0x7f800000u;
/// Entries per fractal family in the `perm` and `gradients` buffers
/// (keep in sync with `PERLIN_TABLE_LEN` in crates/swg/src/noise.rs).
const PERLIN_TABLE_LEN: u32 = 514u;

const LAYER_INVERT_BOUNDARIES: u32 = 1u;
const LAYER_INVERT_FILTERS: u32 = 2u;
const LAYER_NEEDS_EXTENT: u32 = 4u;

const BOUNDARY_CIRCLE: u32 = 0u;
const BOUNDARY_RECTANGLE: u32 = 1u;
const BOUNDARY_POLYGON: u32 = 2u;
const BOUNDARY_POLYLINE: u32 = 3u;

const FILTER_HEIGHT: u32 = 0u;
const FILTER_FRACTAL: u32 = 1u;
const FILTER_BITMAP: u32 = 2u;
const FILTER_SLOPE: u32 = 3u;
const FILTER_DIRECTION: u32 = 4u;
const FILTER_SHADER: u32 = 5u;

const AFFECTOR_HEIGHT_CONSTANT: u32 = 0u;
const AFFECTOR_HEIGHT_FRACTAL: u32 = 1u;
const AFFECTOR_HEIGHT_TERRACE: u32 = 2u;
const AFFECTOR_ROAD: u32 = 3u;
// Surface-pass affector kinds (crates/swg/src/plan/records.rs; plans from `BakePlan::for_pass`), applied by
// kernels/surface.wgsl.
const AFFECTOR_SHADER_CONSTANT: u32 = 10u;
const AFFECTOR_SHADER_REPLACE: u32 = 11u;
const AFFECTOR_FLORA_BASE: u32 = 12u;
const AFFECTOR_ENVIRONMENT: u32 = 16u;
const AFFECTOR_COLOR_CONSTANT: u32 = 17u;
const AFFECTOR_COLOR_RAMP_HEIGHT: u32 = 18u;
const AFFECTOR_COLOR_RAMP_FRACTAL: u32 = 19u;
const AFFECTOR_EXCLUDE: u32 = 20u;
const AFFECTOR_PASSABLE: u32 = 21u;
const AFFECTOR_ROAD_SHADER: u32 = 22u;

// ---- Records ---------------------------------------------------------------------------

// keep in sync with LayerRecord in crates/swg/src/plan/records.rs
struct LayerRecord {
    subtree_end: u32,
    depth: u32,
    flags: u32,
    boundary_start: u32,
    boundary_count: u32,
    filter_start: u32,
    filter_count: u32,
    affector_start: u32,
    affector_count: u32,
    /// Layers up to and including this one that hold an FSLP filter (`slope_rank`).
    slope_rank: u32,
    _pad: array<u32, 2>,
    bounds: array<f32, 4>,
}

// keep in sync with BoundaryRecord in crates/swg/src/plan/records.rs
struct BoundaryRecord {
    kind: u32,
    feather_type: i32,
    point_start: u32,
    point_count: u32,
    params: array<f32, 4>,
    extra: f32,
    _pad: array<u32, 3>,
    bounds: array<f32, 4>,
}

// keep in sync with FilterRecord in crates/swg/src/plan/records.rs
struct FilterRecord {
    kind: u32,
    feather_type: i32,
    family: u32,
    has_gain: u32,
    feather_amount: f32,
    low: f32,
    high: f32,
    value: f32,
}

// keep in sync with AffectorRecord in crates/swg/src/plan/records.rs
struct AffectorRecord {
    kind: u32,
    operation: i32,
    index: u32,
    _pad: u32,
    value: f32,
    value2: f32,
    _pad2: array<f32, 2>,
}

// keep in sync with RoadRecord in crates/swg/src/plan/records.rs
struct RoadRecord {
    point_start: u32,
    point_count: u32,
    segment_start: u32,
    heights_start: u32,
    fixed_heights: u32,
    feather_type: i32,
    half_width: f32,
    feather_amount: f32,
    depth: f32,
    _pad: array<u32, 3>,
}

// keep in sync with FractalRecord in crates/swg/src/plan/records.rs
struct FractalRecord {
    octaves: i32,
    combination_rule: i32,
    use_bias: u32,
    use_gain: u32,
    frequency_x: f32,
    frequency_z: f32,
    offset_x: f32,
    offset_z: f32,
    octave_frequency_multiplier: f32,
    amplitude: f32,
    norm: f32,
    bias_exponent: f32,
    gain_exponent: f32,
    table_offset: u32,
    _pad: array<u32, 2>,
}

// keep in sync with BitmapRecord in crates/swg/src/plan/records.rs
struct BitmapRecord {
    width: u32,
    height: u32,
    byte_offset: u32,
    _pad: u32,
}

// keep in sync with TileLayer in crates/swg/src/plan/records.rs
struct TileLayer {
    layer: u32,
    skip_to: u32,
    boundary_start: u32,
    boundary_count: u32,
}

// TileList (crates/swg/src/plan/mod.rs) has no struct twin: its two Vecs are the `tile_layers` and
// `tile_boundaries` bindings; the height pass's `blocks` (binding 18) says which entries
// each HEIGHT_CULL_BLOCK² block of the tile walks.

// keep in sync with GpuParams in crates/gpu/src/records.rs
struct Params {
    x0: f32,
    z0: f32,
    spacing: f32,
    half_width: f32,
    grid_cols: u32,
    grid_rows: u32,
    tile_c0: u32,
    tile_r0: u32,
    tile_cols: u32,
    tile_rows: u32,
    /// Culling blocks per row of the tile (`blocks`, binding 18 of the height pass).
    blocks_per_row: u32,
    _pad: u32,
}

// ---- Helpers shared by the ports -------------------------------------------------------
//
// WGSL's min/max/clamp are implementation-defined when an operand is NaN, while Rust's
// f32::min/max return the other operand and f32::clamp keeps a NaN. These helpers spell out
// the Rust semantics with comparisons so that a NaN (only possible from hostile records)
// takes the same path as on the CPU, as far as the GPU compiler honours NaN at all (WGSL
// lets implementations assume NaN and infinities are absent). Signed zeros: Rust's min/max
// may return either zero; these return the first operand on ties.

/// Rust `a.min(b)`.
fn rmin(a: f32, b: f32) -> f32 {
    if (b < a || a != a) {
        return b;
    }
    return a;
}

/// Rust `a.max(b)`.
fn rmax(a: f32, b: f32) -> f32 {
    if (b > a || a != a) {
        return b;
    }
    return a;
}

/// Rust `x.clamp(lo, hi)` (std's implementation: two ifs; NaN stays NaN).
fn rclamp(x: f32, lo: f32, hi: f32) -> f32 {
    var r = x;
    if (r < lo) {
        r = lo;
    }
    if (r > hi) {
        r = hi;
    }
    return r;
}

/// Optimisation barrier: `keep(x)` is x, bit for bit, but the GPU compiler cannot see through
/// it. WGSL lets implementations reassociate f32 arithmetic, and Mesa's NIR does so for
/// non-`precise` operations (naga cannot mark SPIR-V results NoContraction). Measured on
/// lavapipe: `v - u` with v = rx1·q0 + ry0·q1 (noise2) is rewritten as
/// (rx1·q0 − u) + ry0·q1 (nir_opt_algebraic "reassociate add chains for more MAD/FMA-friendly
/// code"), which changes the rounding. Other rewrites of that kind: (a·b)·#c → (a·#c)·b,
/// (a + b) + #c → (a + #c) + b, a·b + a·c → a·(b + c). Wrap a sub-expression in `keep` where
/// its shape matches one of them; the XOR with a run-time zero (`params._pad`, loaded into
/// `keep_bits` by the entry point) is an integer operation no float rule matches.
var<private> keep_bits: u32;

fn keep(x: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(x) ^ keep_bits);
}

/// +inf, for the places where the CPU divides a positive value by 0.
fn f32_inf() -> f32 {
    return bitcast<f32>(F32_INF_BITS);
}
