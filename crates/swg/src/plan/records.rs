//! The plan's records: the `#[repr(C)]` layout of layers, boundaries, filters, affectors,
//! roads, fractals and bitmaps, and the kind constants the kernels switch on. Every record here
//! has a WGSL twin in `kernels/records.wgsl`; keep them in sync (a test compares the layouts
//! through naga).

use bytemuck::{Pod, Zeroable};

/// Deepest layer nesting the evaluators support (real files nest at most 6 deep).
pub const MAX_DEPTH: usize = 32;
/// "No limit" for a bounding box side.
pub const UNBOUNDED: f32 = f32::MAX;

/// Layer flags.
pub const LAYER_INVERT_BOUNDARIES: u32 = 1;
pub const LAYER_INVERT_FILTERS: u32 = 2;
/// The layer has a bitmap filter, so it needs the extent of its active boundaries (§5.6).
pub const LAYER_NEEDS_EXTENT: u32 = 4;

/// Keep in sync with `LayerRecord` in kernels/records.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable, PartialEq)]
pub struct LayerRecord {
    /// Index of the first layer after this layer's subtree.
    pub subtree_end: u32,
    /// 0 for top-level layers.
    pub depth: u32,
    pub flags: u32,
    pub boundary_start: u32,
    pub boundary_count: u32,
    pub filter_start: u32,
    pub filter_count: u32,
    pub affector_start: u32,
    pub affector_count: u32,
    /// How many layers up to and including this one (in plan order) hold an FSLP filter:
    /// the slot of this layer's FSLP normal in the GPU's slope-height buffer is
    /// `slope_rank - 1` (`SlopeHeight::Tree`, kernels/surface.wgsl).
    pub slope_rank: u32,
    pub _pad: [u32; 2],
    /// min x, min z, max x, max z where the layer's amount can be non-zero.
    pub bounds: [f32; 4],
}

pub const BOUNDARY_CIRCLE: u32 = 0;
pub const BOUNDARY_RECTANGLE: u32 = 1;
pub const BOUNDARY_POLYGON: u32 = 2;
pub const BOUNDARY_POLYLINE: u32 = 3;

/// Keep in sync with `BoundaryRecord` in kernels/records.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable, PartialEq)]
pub struct BoundaryRecord {
    pub kind: u32,
    pub feather_type: i32,
    /// Polygon vertices / polyline points in `BakePlan::points`.
    pub point_start: u32,
    pub point_count: u32,
    /// circle: cx, cz, r, clamped fraction; rectangle: x0, z0, x1, z1 (normalised);
    /// polygon: feather distance (m), 0, 0, 0; polyline: width, clamped fraction, 0, 0.
    pub params: [f32; 4],
    /// Rectangle feather fraction (clamped) in `extra`; unused otherwise.
    pub extra: f32,
    pub _pad: [u32; 3],
    /// Bounding box of where the influence can be non-zero.
    pub bounds: [f32; 4],
}

pub const FILTER_HEIGHT: u32 = 0;
pub const FILTER_FRACTAL: u32 = 1;
pub const FILTER_BITMAP: u32 = 2;
pub const FILTER_SLOPE: u32 = 3;
pub const FILTER_DIRECTION: u32 = 4;
pub const FILTER_SHADER: u32 = 5;

/// Keep in sync with `FilterRecord` in kernels/records.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable, PartialEq)]
pub struct FilterRecord {
    pub kind: u32,
    pub feather_type: i32,
    /// Fractal or bitmap index in the plan; `u32::MAX` when the family is missing.
    pub family: u32,
    /// 1 when a bitmap gain applies.
    pub has_gain: u32,
    pub feather_amount: f32,
    pub low: f32,
    pub high: f32,
    /// Fractal: scaleY. Bitmap: gain.
    pub value: f32,
}

pub const AFFECTOR_HEIGHT_CONSTANT: u32 = 0;
pub const AFFECTOR_HEIGHT_FRACTAL: u32 = 1;
pub const AFFECTOR_HEIGHT_TERRACE: u32 = 2;
pub const AFFECTOR_ROAD: u32 = 3;

/// Whether affectors of `kind` change the height (the height pass's kinds, below 10); every
/// other kind leaves it as it is.
pub fn moves_height(kind: u32) -> bool {
    matches!(kind, AFFECTOR_HEIGHT_CONSTANT | AFFECTOR_HEIGHT_FRACTAL | AFFECTOR_HEIGHT_TERRACE | AFFECTOR_ROAD)
}
// Surface-pass affectors (swg-trn §5.9, §5.10), only in plans built by `BakePlan::for_surface`.
/// ASCN: `index` = shader family id, `value` = feather clamp (the override or the SFAM's).
pub const AFFECTOR_SHADER_CONSTANT: u32 = 10;
/// ASRP: `index` = source family id, `operation` = destination family id, `value` = clamp.
pub const AFFECTOR_SHADER_REPLACE: u32 = 11;
/// AFSC/AFSN/AFDN/AFDF: `index` = family id, `operation` = FLORA_* flags, `value` = the
/// density (the override or the family's own). The class is `kind − AFFECTOR_FLORA_BASE`.
pub const AFFECTOR_FLORA_BASE: u32 = 12;
/// AENV: `index` = environment family id, `value` = feather clamp.
pub const AFFECTOR_ENVIRONMENT: u32 = 16;
/// ACCN: `operation`, `index` = 0xRRGGBB.
pub const AFFECTOR_COLOR_CONSTANT: u32 = 17;
/// ACRH: `operation`, `index` = ramp index, `value`/`value2` = low/high height.
pub const AFFECTOR_COLOR_RAMP_HEIGHT: u32 = 18;
/// ACRF: `operation`, `index` = ramp index, `_pad` = fractal index.
pub const AFFECTOR_COLOR_RAMP_FRACTAL: u32 = 19;
/// AEXC.
pub const AFFECTOR_EXCLUDE: u32 = 20;
/// APAS: `operation` = the passable byte, `value` = feather threshold.
pub const AFFECTOR_PASSABLE: u32 = 21;
/// The shader part of AROA/ARIV/ARIB (swg-trn §5.12 step 5): `index` = road record (with the
/// shader feather), `operation` = shader family (road, river bank, ribbon terrain); rivers
/// also put their bottom family in `_pad` and half their water width in `value`.
pub const AFFECTOR_ROAD_SHADER: u32 = 22;
/// Flora affector flags (`operation`): flagA "add" and flagB "remove all" (swg-trn §5.9).
pub const FLORA_ADD: i32 = 1;
pub const FLORA_REMOVE_ALL: i32 = 2;

/// The flora classes of swg-trn §5.9, in `AFFECTOR_FLORA_BASE` order.
pub const FLORA_CLASSES: [&str; 4] = ["collidable", "noncollidable", "radial_near", "radial_far"];

/// Which pass a plan flattens: the height pass keeps height affectors; the surface pass
/// (swg-trn §5.2 steps 3–4) keeps shader, flora, environment, colour, exclude and passable
/// affectors, and its slope filters carry cosine bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    Height,
    /// Every surface affector (what a bake's surface maps can use).
    Surface,
    /// The shader pass alone (ASCN, ASRP: swg-trn §5.2 step 3).
    Shader,
    /// The later pass alone (flora, environment, colour, exclude, passable and the shader
    /// parts of roads, rivers and ribbons: §5.2 step 4).
    Later,
    /// Every affector of every pass in one walk, in tree order (the `--surface-walk tree`
    /// readings of swg-trn §5.9 [?]): height affectors (roads' height parts only with
    /// `roads`), then as `Surface`.
    All,
}

/// Keep in sync with `AffectorRecord` in kernels/records.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable, PartialEq)]
pub struct AffectorRecord {
    pub kind: u32,
    pub operation: i32,
    /// Fractal index (height fractal) or road index (road/river); `u32::MAX` when missing.
    pub index: u32,
    pub _pad: u32,
    /// constant: height; fractal: scaleY; terrace: flat ratio.
    pub value: f32,
    /// terrace: terrace height.
    pub value2: f32,
    pub _pad2: [f32; 2],
}

/// A road or river profile for the height pass (swg-trn §5.12, recommended model).
/// Keep in sync with `RoadRecord` in kernels/records.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable, PartialEq)]
pub struct RoadRecord {
    /// Control points in `BakePlan::points`.
    pub point_start: u32,
    pub point_count: u32,
    /// Per control segment (point_count − 1 of them): `[sample_start, sample_count]` pairs
    /// in `BakePlan::road_segments`, starting here.
    pub segment_start: u32,
    /// Fixed heights per control point in `BakePlan::road_heights` (when `fixed_heights` is 1).
    pub heights_start: u32,
    pub fixed_heights: u32,
    pub feather_type: i32,
    /// Half the width.
    pub half_width: f32,
    /// Feather fraction, clamped to [0, 1].
    pub feather_amount: f32,
    /// Subtracted from the profile height (river trench depth; 0 for roads).
    pub depth: f32,
    pub _pad: [u32; 3],
}

/// Fractal family parameters. Keep in sync with `FractalRecord` in kernels/records.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable, PartialEq)]
pub struct FractalRecord {
    pub octaves: i32,
    pub combination_rule: i32,
    pub use_bias: u32,
    pub use_gain: u32,
    pub frequency_x: f32,
    pub frequency_z: f32,
    pub offset_x: f32,
    pub offset_z: f32,
    pub octave_frequency_multiplier: f32,
    pub amplitude: f32,
    pub norm: f32,
    pub bias_exponent: f32,
    pub gain_exponent: f32,
    /// Offset of this family's 514 entries in the permutation and gradient buffers.
    pub table_offset: u32,
    pub _pad: [u32; 2],
}

/// A bitmap in `BakePlan::bitmap_words` (4 pixels per u32, little-endian byte order).
/// Keep in sync with `BitmapRecord` in kernels/records.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable, PartialEq)]
pub struct BitmapRecord {
    pub width: u32,
    pub height: u32,
    /// Byte offset of pixel (0, 0) (row 0 = south) in the packed buffer.
    pub byte_offset: u32,
    pub _pad: u32,
}

/// One entry of a tile's layer list: a layer, its boundaries that can touch the tile, and
/// where to continue when its amount is 0.
/// Keep in sync with `TileLayer` in kernels/records.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable, PartialEq, Eq)]
pub struct TileLayer {
    pub layer: u32,
    /// Index in the tile list of the first entry after this layer's subtree.
    pub skip_to: u32,
    /// The layer's boundaries whose bounds meet the tile, as a range of
    /// `TileList::boundaries` (indices into `BakePlan::boundaries`). Boundaries that cannot
    /// touch the tile contribute 0 to the maximum and nothing to the FBIT extent, so leaving
    /// them out is exact.
    pub boundary_start: u32,
    pub boundary_count: u32,
}
