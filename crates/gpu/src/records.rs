//! GPU-side records and the WGSL source of the height pass.
//!
//! The plan records themselves (`LayerRecord`, …) live in `trnbake_swg::plan` and are uploaded as
//! they are; their WGSL twins are in `kernels/records.wgsl`. This file holds what only the
//! GPU path needs: the dispatch parameters, the binding numbers and the concatenated,
//! build-time-validated kernel source (see `build.rs`). It depends on nothing but bytemuck so
//! that tests can include it on its own.

use bytemuck::{Pod, Zeroable};

/// The height pass kernels (`kernels/{records,noise,feather,boundary,filter,affector,walk,height}.wgsl`
/// concatenated by build.rs and validated with naga at build time).
pub const HEIGHT_PASS_WGSL: &str = include_str!(concat!(env!("OUT_DIR"), "/height_pass.wgsl"));

/// The surface pass kernels (`kernels/{records,noise,feather,boundary,filter,affector,walk,
/// normals,surface}.wgsl` concatenated by build.rs and validated with naga at build time):
/// entry points `normals_pass`, `shader_pass` and `later_pass`, bindings in
/// `crate::surface_pass::binding`.
pub const SURFACE_PASS_WGSL: &str = include_str!(concat!(env!("OUT_DIR"), "/surface_pass.wgsl"));

/// Entry point of the height pass in [`HEIGHT_PASS_WGSL`].
pub const HEIGHT_PASS_ENTRY: &str = "height_pass";

/// `@workgroup_size` of [`HEIGHT_PASS_ENTRY`]: dispatch `ceil(tile_cols / 8)` ×
/// `ceil(tile_rows / 8)` workgroups.
pub const HEIGHT_PASS_WORKGROUP: [u32; 2] = [8, 8];

/// Side in posts of the blocks each height-pass tile's layer list is culled for (WGSL twin
/// `HEIGHT_CULL_BLOCK` in kernels/height.wgsl): a GPU tile is up to 2048² posts, where one
/// list would keep nearly every layer of a planet; 128² blocks keep what the CPU's 256²
/// blocks keep or less (README, Performance). A multiple of a workgroup's width in posts (8 invocations × up to 4 posts).
pub const HEIGHT_CULL_BLOCK: u32 = 128;

/// Uniform parameters of one height-pass dispatch (binding 0).
///
/// Post (col, row) of the grid is at x = x0 + col·spacing, z = z0 + row·spacing (computed in
/// f32 on the GPU). The dispatch covers the tile [tile_c0, tile_c0 + tile_cols) ×
/// [tile_r0, tile_r0 + tile_rows) and writes `heights[local_row * tile_cols + local_col]`.
///
/// Keep in sync with `Params` in kernels/records.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable, PartialEq)]
pub struct GpuParams {
    pub x0: f32,
    pub z0: f32,
    pub spacing: f32,
    /// `BakePlan::half_width`: the FBIT extent of a layer without boundary extent.
    pub half_width: f32,
    pub grid_cols: u32,
    pub grid_rows: u32,
    pub tile_c0: u32,
    pub tile_r0: u32,
    pub tile_cols: u32,
    pub tile_rows: u32,
    /// Culling blocks ([`HEIGHT_CULL_BLOCK`]² posts) per row of the tile: block (bc, br)'s
    /// [start, end) in binding 15 is `blocks[br · blocks_per_row + bc]` (binding 18).
    pub blocks_per_row: u32,
    /// Must be 0. The kernels XOR f32 bit patterns with it (`keep` in kernels/records.wgsl):
    /// a value the shader compiler cannot know, which stops it from reassociating f32
    /// arithmetic that must round exactly like the CPU reference.
    pub _pad: u32,
}

const _: () = assert!(std::mem::size_of::<GpuParams>() == 48);

/// Binding numbers (group 0) of the height pass. Every binding except [`binding::PARAMS`]
/// (uniform) and [`binding::HEIGHTS`] (read-write) is a read-only storage buffer; none may be
/// empty (upload one zeroed element instead).
pub mod binding {
    /// `GpuParams` (uniform).
    pub const PARAMS: u32 = 0;
    /// `BakePlan::layers`: `array<LayerRecord>`.
    pub const LAYERS: u32 = 1;
    /// `BakePlan::boundaries`: `array<BoundaryRecord>`.
    pub const BOUNDARIES: u32 = 2;
    /// `BakePlan::filters`: `array<FilterRecord>`.
    pub const FILTERS: u32 = 3;
    /// `BakePlan::affectors`: `array<AffectorRecord>`.
    pub const AFFECTORS: u32 = 4;
    /// `BakePlan::roads`: `array<RoadRecord>`.
    pub const ROADS: u32 = 5;
    /// `BakePlan::points`: `array<vec2<f32>>`.
    pub const POINTS: u32 = 6;
    /// `BakePlan::road_segments`: `array<vec2<u32>>`.
    pub const ROAD_SEGMENTS: u32 = 7;
    /// `BakePlan::road_samples`: `array<vec4<f32>>`.
    pub const ROAD_SAMPLES: u32 = 8;
    /// `BakePlan::road_heights`: `array<f32>`.
    pub const ROAD_HEIGHTS: u32 = 9;
    /// `BakePlan::fractal_records`: `array<FractalRecord>`.
    pub const FRACTALS: u32 = 10;
    /// `BakePlan::perm_table()`: `array<u32>`.
    pub const PERM: u32 = 11;
    /// `BakePlan::gradient_table()`: `array<vec2<f32>>`.
    pub const GRADIENTS: u32 = 12;
    /// `BakePlan::bitmap_records`: `array<BitmapRecord>`.
    pub const BITMAPS: u32 = 13;
    /// `BakePlan::bitmap_words()`: `array<u32>`.
    pub const BITMAP_WORDS: u32 = 14;
    /// `TileList::layers`: `array<TileLayer>`.
    pub const TILE_LAYERS: u32 = 15;
    /// `TileList::boundaries`: `array<u32>`.
    pub const TILE_BOUNDARIES: u32 = 16;
    /// Output, one f32 per post of the tile: `array<f32>` (read_write).
    pub const HEIGHTS: u32 = 17;
    /// Per culling block of the tile, [start, end) of its entries in binding 15:
    /// `array<vec2<u32>>`.
    pub const BLOCKS: u32 = 18;
    /// Number of bindings.
    pub const COUNT: u32 = 19;
    /// The WGSL variable name of each binding, by binding number.
    pub const NAMES: [&str; COUNT as usize] = [
        "params",
        "layers",
        "boundaries",
        "filters",
        "affectors",
        "roads",
        "points",
        "road_segments",
        "road_samples",
        "road_heights",
        "fractals",
        "perm",
        "gradients",
        "bitmaps",
        "bitmap_words",
        "tile_layers",
        "tile_boundaries",
        "heights",
        "blocks",
    ];
}
