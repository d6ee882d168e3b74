//! The flattened evaluation plan: the layer tree of one pass as `#[repr(C)]` records in
//! pre-order, shared by the CPU reference (`eval`) and the GPU kernels (`kernels/`).
//!
//! Only what the pass can see is kept: disabled items are dropped (swg-trn §4.1), and for
//! the height pass every layer whose subtree holds no height affector is pruned, which is
//! exact because filters and boundaries have no side effects. Each layer record carries the
//! bounding box where it can be non-zero, so tiles (and single points) skip whole subtrees.
//!
//! Every record here has a WGSL twin in `kernels/records.wgsl`; keep them in sync (a test
//! compares the layouts through naga).

use crate::model::bitmap::{Bitmap, BitmapError};
use crate::noise::{Fractal, FractalParams, PERLIN_TABLE_LEN};
use crate::model::layer::{Layer, LayerItem};
use crate::model::rules::{RuleCategory, RuleKind};
use crate::model::Terrain;
use bytemuck::{Pod, Zeroable};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

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

/// Options that change what the height pass computes.
#[derive(Clone, Debug)]
pub struct HeightOptions {
    /// Apply the road and river height model of swg-trn §5.12 (unvalidated, [I]).
    pub roads: bool,
    /// Apply the FBIT gain of swg-trn §5.6 step 3.
    pub bitmap_gain: bool,
    /// Where bitmap paths such as `terrain/x.tga` resolve.
    pub data_root: Option<PathBuf>,
    /// A missing bitmap is an error (false) or a warning with an all-zero bitmap (true).
    pub missing_bitmaps_zero: bool,
}

impl Default for HeightOptions {
    fn default() -> Self {
        HeightOptions { roads: false, bitmap_gain: true, data_root: None, missing_bitmaps_zero: false }
    }
}

/// Building a plan failed.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("layer `{layer}` needs bitmap family {family} (`{path}`), but {reason}; pass --data-root DIR so that `{path}` resolves to DIR/{path}, or --missing-bitmaps=zero to treat it as black")]
    MissingBitmap { layer: String, family: i32, path: String, reason: String },
    #[error("layer `{layer}`: bitmap `{}`: {error}", path.display())]
    Bitmap { layer: String, path: PathBuf, error: BitmapError },
    #[error("the layer tree is nested {0} deep; at most {MAX_DEPTH} is supported")]
    TooDeep(usize),
}

/// The flattened height pass of one terrain.
#[derive(Clone, Debug, Default)]
pub struct BakePlan {
    pub layers: Vec<LayerRecord>,
    pub boundaries: Vec<BoundaryRecord>,
    pub filters: Vec<FilterRecord>,
    pub affectors: Vec<AffectorRecord>,
    pub roads: Vec<RoadRecord>,
    /// Polygon/polyline/road control points (x, z).
    pub points: Vec<[f32; 2]>,
    /// `[sample_start, sample_count]` into `road_samples`, per road control segment.
    pub road_segments: Vec<[u32; 2]>,
    /// Road profile samples (x, height, z).
    pub road_samples: Vec<[f32; 4]>,
    pub road_heights: Vec<f32>,
    pub fractal_records: Vec<FractalRecord>,
    /// Colour ramps of the surface pass (ACRH/ACRF), 64 RGB entries each, and their paths.
    pub ramps: Vec<Vec<[u8; 3]>>,
    pub ramp_names: Vec<String>,
    /// The same fractals for the CPU evaluator.
    pub fractals: Vec<Fractal>,
    pub bitmap_records: Vec<BitmapRecord>,
    pub bitmaps: Vec<Bitmap>,
    /// Half the map width: the map spans [−half, +half] in x and z.
    pub half_width: f32,
    /// Warnings met while planning (missing bitmaps in zero mode, unknown operations).
    pub warnings: Vec<String>,
    /// Where each record came from in the file, for explanations (`trnbake fidelity --explain`).
    pub names: PlanNames,
}

/// The file names of a plan's records, parallel to `layers`, `filters` and `affectors`:
/// a layer's path in the tree (`top/child/grandchild`), a rule's tag and editor name
/// (`FHGT "height band"`).
#[derive(Clone, Debug, Default)]
pub struct PlanNames {
    pub layers: Vec<String>,
    pub filters: Vec<String>,
    pub affectors: Vec<String>,
}

/// A rule's tag and its editor name, as [`PlanNames`] holds them.
pub fn rule_label(rule: &crate::model::rules::Rule) -> String {
    let (tag, _) = rule.kind.tag_and_version();
    format!("{} \"{}\"", String::from_utf8_lossy(tag), rule.name)
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

/// The culled program of one tile (or one point).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TileList {
    pub layers: Vec<TileLayer>,
    pub boundaries: Vec<u32>,
}

fn union(a: [f32; 4], b: [f32; 4]) -> [f32; 4] {
    [a[0].min(b[0]), a[1].min(b[1]), a[2].max(b[2]), a[3].max(b[3])]
}

const EMPTY: [f32; 4] = [f32::MAX, f32::MAX, f32::MIN, f32::MIN];
const EVERYWHERE: [f32; 4] = [-UNBOUNDED, -UNBOUNDED, UNBOUNDED, UNBOUNDED];

fn points_bounds(points: &[crate::model::codec::Point2], grow: f32) -> [f32; 4] {
    let mut b = EMPTY;
    for p in points {
        b = union(b, [p.x, p.z, p.x, p.z]);
    }
    if b[0] > b[2] {
        return b;
    }
    [b[0] - grow, b[1] - grow, b[2] + grow, b[3] + grow]
}

/// Whether a rule is an affector of `pass` (swg-trn §5.2).
fn is_pass_affector(kind: &RuleKind, pass: Pass, opts: &HeightOptions) -> bool {
    match (pass, kind) {
        (Pass::Height, RuleKind::HeightConstant(_) | RuleKind::HeightFractal(_) | RuleKind::HeightTerrace(_)) => true,
        (Pass::Height, RuleKind::Road(_) | RuleKind::River(_)) => opts.roads,
        (Pass::All, _) => is_pass_affector(kind, Pass::Height, opts) || is_pass_affector(kind, Pass::Surface, opts),
        (Pass::Surface | Pass::Shader, RuleKind::ShaderConstant(_) | RuleKind::ShaderReplace(_)) => true,
        (
            Pass::Surface | Pass::Later,
            RuleKind::FloraCollidable(_)
            | RuleKind::FloraNonCollidable(_)
            | RuleKind::FloraRadialNear(_)
            | RuleKind::FloraRadialFar(_)
            | RuleKind::Environment(_)
            | RuleKind::ColorConstant(_)
            | RuleKind::ColorRampHeight(_)
            | RuleKind::ColorRampFractal(_)
            | RuleKind::Exclude(_)
            | RuleKind::Passable(_)
            | RuleKind::Road(_)
            | RuleKind::River(_)
            | RuleKind::Ribbon(_),
        ) => true,
        _ => false,
    }
}

fn subtree_has_affector(layer: &Layer, pass: Pass, opts: &HeightOptions) -> bool {
    layer.enabled.get()
        && (layer.rules().any(|r| r.enabled.get() && is_pass_affector(&r.kind, pass, opts))
            || layer.sublayers().any(|l| subtree_has_affector(l, pass, opts)))
}

struct Builder<'a> {
    terrain: &'a Terrain,
    opts: &'a HeightOptions,
    pass: Pass,
    plan: BakePlan,
    fractal_index: HashMap<i32, u32>,
    bitmap_index: HashMap<i32, u32>,
    /// Names of the open layers, for `BakePlan::names`.
    path: Vec<String>,
}

impl BakePlan {
    /// Flatten the height pass of `terrain`, loading the bitmaps it needs.
    pub fn for_heights(terrain: &Terrain, opts: &HeightOptions) -> Result<BakePlan, PlanError> {
        Self::for_pass(terrain, opts, Pass::Height)
    }

    /// Flatten the surface passes of `terrain` (swg-trn §5.2 steps 3–4), with the colour
    /// ramps they reference (a missing ramp is treated like a missing bitmap).
    pub fn for_surface(terrain: &Terrain, opts: &HeightOptions) -> Result<BakePlan, PlanError> {
        Self::for_pass(terrain, opts, Pass::Surface)
    }

    /// Flatten one pass of `terrain`: layers whose subtrees hold none of the pass's affectors
    /// are pruned (exact: filters and boundaries have no side effects).
    pub fn for_pass(terrain: &Terrain, opts: &HeightOptions, pass: Pass) -> Result<BakePlan, PlanError> {
        let mut b = Builder {
            terrain,
            opts,
            pass,
            plan: BakePlan { half_width: terrain.header.map_width * 0.5, ..Default::default() },
            fractal_index: HashMap::new(),
            bitmap_index: HashMap::new(),
            path: Vec::new(),
        };
        for item in &terrain.generator.layers {
            if let LayerItem::Layer(l) = item {
                b.layer(l, 0, EVERYWHERE)?;
            }
        }
        let mut rank = 0;
        for l in &mut b.plan.layers {
            rank += b.plan.filters[l.filter_start as usize..(l.filter_start + l.filter_count) as usize].iter().any(|f| f.kind == FILTER_SLOPE) as u32;
            l.slope_rank = rank;
        }
        Ok(b.plan)
    }

    /// How many layers hold an FSLP filter (the last layer's `slope_rank`).
    pub fn slope_layer_count(&self) -> u32 {
        self.layers.last().map_or(0, |l| l.slope_rank)
    }

    /// The culled program of a tile covering `area` (min x, min z, max x, max z): the
    /// layers whose bounds meet it, in pre-order, with skip targets inside the list, and for
    /// each the boundaries that meet it. A layer with boundaries none of which meet the tile
    /// has amount 0 there (1 when inverted: then it is kept with an empty boundary list).
    pub fn tile_layers(&self, area: [f32; 4]) -> TileList {
        let meets = |b: [f32; 4]| !(b[0] > area[2] || b[2] < area[0] || b[1] > area[3] || b[3] < area[1]);
        let mut out = TileList::default();
        let mut i = 0usize;
        // Stack of (out index, layer subtree end) to patch skip targets.
        let mut open: Vec<(usize, u32)> = Vec::new();
        while i < self.layers.len() {
            while let Some(&(at, end)) = open.last() {
                if (i as u32) < end {
                    break;
                }
                out.layers[at].skip_to = out.layers.len() as u32;
                open.pop();
            }
            let l = &self.layers[i];
            if !meets(l.bounds) {
                i = l.subtree_end as usize;
                continue;
            }
            let boundary_start = out.boundaries.len() as u32;
            let range = l.boundary_start..l.boundary_start + l.boundary_count;
            out.boundaries.extend(range.filter(|&b| meets(self.boundaries[b as usize].bounds)));
            let boundary_count = out.boundaries.len() as u32 - boundary_start;
            if l.boundary_count > 0 && boundary_count == 0 && l.flags & LAYER_INVERT_BOUNDARIES == 0 {
                i = l.subtree_end as usize;
                continue;
            }
            open.push((out.layers.len(), l.subtree_end));
            out.layers.push(TileLayer { layer: i as u32, skip_to: 0, boundary_start, boundary_count });
            i += 1;
        }
        while let Some((at, _)) = open.pop() {
            out.layers[at].skip_to = out.layers.len() as u32;
        }
        out
    }
}

impl Builder<'_> {
    /// Add `layer` (if enabled and useful) and its subtree. `parent_bounds` limits where it can act.
    fn layer(&mut self, layer: &Layer, depth: usize, parent_bounds: [f32; 4]) -> Result<(), PlanError> {
        if !subtree_has_affector(layer, self.pass, self.opts) {
            return Ok(());
        }
        if depth >= MAX_DEPTH {
            return Err(PlanError::TooDeep(depth + 1));
        }
        let index = self.plan.layers.len();
        self.plan.layers.push(LayerRecord::default());
        self.path.push(layer.name.clone());
        self.plan.names.layers.push(self.path.join("/"));
        let mut rec = LayerRecord {
            depth: depth as u32,
            boundary_start: self.plan.boundaries.len() as u32,
            filter_start: self.plan.filters.len() as u32,
            affector_start: self.plan.affectors.len() as u32,
            ..Default::default()
        };
        if layer.invert_boundaries.get() {
            rec.flags |= LAYER_INVERT_BOUNDARIES;
        }
        if layer.invert_filters.get() {
            rec.flags |= LAYER_INVERT_FILTERS;
        }
        let mut own = EMPTY;
        // Evaluation order is boundaries, filters, affectors (swg-trn §5.3), each in file order.
        for cat in [RuleCategory::Boundary, RuleCategory::Filter, RuleCategory::Affector] {
            for rule in layer.rules().filter(|r| r.enabled.get() && r.kind.category() == cat) {
                match cat {
                    RuleCategory::Boundary => {
                        let bnd = self.boundary(&rule.kind);
                        own = union(own, bnd.bounds);
                        self.plan.boundaries.push(bnd);
                        rec.boundary_count += 1;
                    }
                    RuleCategory::Filter => {
                        let f = self.filter(&rule.kind, &layer.name)?;
                        if f.kind == FILTER_BITMAP {
                            rec.flags |= LAYER_NEEDS_EXTENT;
                        }
                        self.plan.filters.push(f);
                        self.plan.names.filters.push(rule_label(rule));
                        rec.filter_count += 1;
                    }
                    RuleCategory::Affector => {
                        if is_pass_affector(&rule.kind, self.pass, self.opts) {
                            let road = matches!(rule.kind, RuleKind::Road(_) | RuleKind::River(_));
                            // One walk of every pass: a road's height part (when roads are on)
                            // and its shader part.
                            // In the surface passes a road or river is its shader part (swg-trn
                            // §5.12 step 5); `affector` would give its height part, which the
                            // later pass ignores.
                            let records = match (self.pass, road) {
                                (Pass::All, true) if self.opts.roads => vec![self.affector(&rule.kind, &layer.name)?, self.surface_affector(&rule.kind, &layer.name)?],
                                (Pass::Height, _) | (_, false) => vec![self.affector(&rule.kind, &layer.name)?],
                                (_, true) => vec![self.surface_affector(&rule.kind, &layer.name)?],
                            };
                            for a in records {
                                self.plan.affectors.push(a);
                                self.plan.names.affectors.push(rule_label(rule));
                                rec.affector_count += 1;
                            }
                        }
                    }
                }
            }
        }
        // Without boundaries the amount is 1 everywhere; inverted, the boundaries limit nothing.
        let own_bounds = if rec.boundary_count == 0 || layer.invert_boundaries.get() { EVERYWHERE } else { own };
        let bounds = [
            own_bounds[0].max(parent_bounds[0]),
            own_bounds[1].max(parent_bounds[1]),
            own_bounds[2].min(parent_bounds[2]),
            own_bounds[3].min(parent_bounds[3]),
        ];
        rec.bounds = bounds;
        for child in layer.sublayers() {
            self.layer(child, depth + 1, bounds)?;
        }
        rec.subtree_end = self.plan.layers.len() as u32;
        self.plan.layers[index] = rec;
        self.path.pop();
        Ok(())
    }

    fn boundary(&mut self, kind: &RuleKind) -> BoundaryRecord {
        let mut r = BoundaryRecord::default();
        match kind {
            RuleKind::Circle(c) => {
                r.kind = BOUNDARY_CIRCLE;
                r.feather_type = c.feather_type;
                r.params = [c.center_x, c.center_z, c.radius, c.feather_amount.clamp(0.0, 1.0)];
                r.bounds = [c.center_x - c.radius, c.center_z - c.radius, c.center_x + c.radius, c.center_z + c.radius];
            }
            RuleKind::Rectangle(b) => {
                r.kind = BOUNDARY_RECTANGLE;
                r.feather_type = b.feather_type;
                let (x0, x1) = (b.x0.min(b.x1), b.x0.max(b.x1));
                let (z0, z1) = (b.z0.min(b.z1), b.z0.max(b.z1));
                r.params = [x0, z0, x1, z1];
                r.extra = b.feather_amount.clamp(0.0, 1.0);
                r.bounds = [x0, z0, x1, z1];
            }
            RuleKind::Polygon(p) => {
                r.kind = BOUNDARY_POLYGON;
                r.feather_type = p.feather_type;
                r.point_start = self.plan.points.len() as u32;
                r.point_count = p.points.len() as u32;
                self.plan.points.extend(p.points.iter().map(|q| [q.x, q.z]));
                r.params = [p.feather_distance, 0.0, 0.0, 0.0];
                r.bounds = points_bounds(&p.points, 0.0);
            }
            RuleKind::Polyline(p) => {
                r.kind = BOUNDARY_POLYLINE;
                r.feather_type = p.feather_type;
                r.point_start = self.plan.points.len() as u32;
                r.point_count = p.points.len() as u32;
                self.plan.points.extend(p.points.iter().map(|q| [q.x, q.z]));
                r.params = [p.width, p.feather_amount.clamp(0.0, 1.0), 0.0, 0.0];
                r.bounds = points_bounds(&p.points, p.width.abs());
            }
            _ => unreachable!("only boundaries reach here"),
        }
        r
    }

    fn fractal(&mut self, family_id: i32) -> u32 {
        if let Some(&i) = self.fractal_index.get(&family_id) {
            return i;
        }
        let Some(fam) = self.terrain.generator.fractal_families.families().iter().find(|f| f.id == family_id) else {
            return u32::MAX;
        };
        let m = &fam.fractal;
        let f = Fractal::new(FractalParams {
            seed: m.seed,
            use_bias: m.use_bias.get(),
            bias: m.bias,
            use_gain: m.use_gain.get(),
            gain: m.gain,
            octaves: m.octaves,
            octave_frequency_multiplier: m.octave_frequency_multiplier,
            amplitude: m.amplitude,
            frequency_x: m.frequency_x,
            frequency_z: m.frequency_z,
            offset_x: m.offset_x,
            offset_z: m.offset_z,
            combination_rule: m.combination_rule,
        });
        let index = self.plan.fractals.len() as u32;
        self.plan.fractal_records.push(FractalRecord {
            octaves: f.params.octaves,
            combination_rule: f.params.combination_rule,
            use_bias: f.params.use_bias as u32,
            use_gain: f.params.use_gain as u32,
            frequency_x: f.params.frequency_x,
            frequency_z: f.params.frequency_z,
            offset_x: f.params.offset_x,
            offset_z: f.params.offset_z,
            octave_frequency_multiplier: f.params.octave_frequency_multiplier,
            amplitude: f.params.amplitude,
            norm: f.norm,
            bias_exponent: f.bias_exponent,
            gain_exponent: f.gain_exponent,
            table_offset: index * PERLIN_TABLE_LEN as u32,
            _pad: [0; 2],
        });
        self.plan.fractals.push(f);
        self.fractal_index.insert(family_id, index);
        index
    }

    fn bitmap(&mut self, family_id: i32, layer: &str) -> Result<u32, PlanError> {
        if let Some(&i) = self.bitmap_index.get(&family_id) {
            return Ok(i);
        }
        let fam = self
            .terrain
            .generator
            .bitmap_families
            .as_ref()
            .and_then(|g| g.families().iter().find(|f| f.id == family_id));
        let loaded = match fam {
            None => Err(PlanError::MissingBitmap {
                layer: layer.into(),
                family: family_id,
                path: String::new(),
                reason: "the file has no such bitmap family".into(),
            }),
            Some(f) => load_family_bitmap(self.opts.data_root.as_deref(), &f.path, layer, family_id),
        };
        let bitmap = match loaded {
            Ok(b) => b,
            Err(e) if self.opts.missing_bitmaps_zero && matches!(e, PlanError::MissingBitmap { .. }) => {
                self.plan.warnings.push(format!("{e} — using an all-zero bitmap"));
                Bitmap { width: 1, height: 1, pixels: vec![0] }
            }
            Err(e) => return Err(e),
        };
        let index = self.plan.bitmaps.len() as u32;
        let byte_offset = self.plan.bitmaps.iter().map(|b| b.pixels.len().next_multiple_of(4)).sum::<usize>() as u32;
        self.plan.bitmap_records.push(BitmapRecord { width: bitmap.width, height: bitmap.height, byte_offset, _pad: 0 });
        self.plan.bitmaps.push(bitmap);
        self.bitmap_index.insert(family_id, index);
        Ok(index)
    }

    fn filter(&mut self, kind: &RuleKind, layer: &str) -> Result<FilterRecord, PlanError> {
        Ok(match kind {
            RuleKind::FilterHeight(f) => FilterRecord {
                kind: FILTER_HEIGHT,
                feather_type: f.feather_type,
                low: f.low,
                high: f.high,
                feather_amount: f.feather_amount,
                ..Default::default()
            },
            RuleKind::FilterFractal(f) => FilterRecord {
                kind: FILTER_FRACTAL,
                feather_type: f.feather_type,
                family: self.fractal(f.family_id),
                low: f.low,
                high: f.high,
                feather_amount: f.feather_amount,
                value: f.scale_y,
                ..Default::default()
            },
            RuleKind::FilterBitmap(f) => FilterRecord {
                kind: FILTER_BITMAP,
                feather_type: f.feather_type,
                family: self.bitmap(f.family_id, layer)?,
                has_gain: (self.opts.bitmap_gain && f.gain.is_some()) as u32,
                low: f.low,
                high: f.high,
                feather_amount: f.feather_amount,
                value: f.gain.unwrap_or(0.0),
            },
            RuleKind::FilterSlope(f) => {
                // swg-trn §5.5: the filter tests n_y in [cos(maxAngle), cos(minAngle)], both
                // angles clamped to [0°, 90°]. (The height pass never reads these bounds.)
                let cos_deg = |a: f32| a.clamp(0.0, 90.0).to_radians().cos();
                FilterRecord {
                    kind: FILTER_SLOPE,
                    feather_type: f.feather_type,
                    low: cos_deg(f.high),
                    high: cos_deg(f.low),
                    feather_amount: f.feather_amount.clamp(0.0, 1.0),
                    ..Default::default()
                }
            }
            RuleKind::FilterDirection(f) => FilterRecord {
                kind: FILTER_DIRECTION,
                feather_type: f.feather_type,
                low: f.low,
                high: f.high,
                feather_amount: f.feather_amount,
                ..Default::default()
            },
            RuleKind::FilterShader(f) => FilterRecord { kind: FILTER_SHADER, family: f.family_id as u32, ..Default::default() },
            _ => unreachable!("only filters reach here"),
        })
    }

    fn affector(&mut self, kind: &RuleKind, layer: &str) -> Result<AffectorRecord, PlanError> {
        let mut a = AffectorRecord::default();
        match kind {
            RuleKind::HeightConstant(c) => {
                a.kind = AFFECTOR_HEIGHT_CONSTANT;
                a.operation = c.operation;
                a.value = c.height;
                if !(0..=3).contains(&c.operation) {
                    self.plan.warnings.push(format!("layer `{layer}`: height operation {} is unknown; ignored", c.operation));
                }
            }
            RuleKind::HeightFractal(f) => {
                a.kind = AFFECTOR_HEIGHT_FRACTAL;
                a.operation = f.operation;
                a.index = self.fractal(f.family_id);
                a.value = f.scale_y;
                if a.index == u32::MAX {
                    self.plan.warnings.push(format!(
                        "layer `{layer}`: fractal family {} is missing; the height fractal is skipped",
                        f.family_id
                    ));
                }
            }
            RuleKind::HeightTerrace(t) => {
                a.kind = AFFECTOR_HEIGHT_TERRACE;
                a.value = t.flat_ratio;
                a.value2 = t.terrace_height;
            }
            RuleKind::Road(r) => {
                a.kind = AFFECTOR_ROAD;
                let fixed = r.has_fixed_heights.is_some_and(|f| f.get()) && r.heights.as_ref().is_some_and(|h| h.len() == r.points.len());
                a.index = self.road(&r.points, &r.segments, if fixed { r.heights.as_deref() } else { None }, r.width, r.height_feather_type, r.height_feather_amount, 0.0);
            }
            RuleKind::River(r) => {
                a.kind = AFFECTOR_ROAD;
                a.index = self.road(&r.points, &r.segments, None, r.width, r.feather_type, r.feather_amount, r.trench_depth);
            }
            _ => return self.surface_affector(kind, layer),
        }
        Ok(a)
    }

    /// A surface-pass affector record (swg-trn §5.9, §5.10); families are resolved here so
    /// the evaluators need no family tables.
    fn surface_affector(&mut self, kind: &RuleKind, layer: &str) -> Result<AffectorRecord, PlanError> {
        let g = &self.terrain.generator;
        let shader_clamp = |id: i32, over: bool, v: f32| {
            if over {
                v
            } else {
                g.shader_families.families().iter().find(|f| f.id == id).map_or(1.0, |f| f.feather_clamp)
            }
        };
        let mut a = AffectorRecord::default();
        match kind {
            RuleKind::ShaderConstant(c) => {
                a.kind = AFFECTOR_SHADER_CONSTANT;
                a.index = c.family_id as u32;
                a.value = shader_clamp(c.family_id, c.use_feather_clamp_override.get(), c.feather_clamp_override);
            }
            RuleKind::ShaderReplace(c) => {
                a.kind = AFFECTOR_SHADER_REPLACE;
                a.index = c.source_family_id as u32;
                a.operation = c.destination_family_id;
                a.value = shader_clamp(c.destination_family_id, c.use_feather_clamp_override.get(), c.feather_clamp_override);
            }
            RuleKind::FloraCollidable(f) | RuleKind::FloraNonCollidable(f) | RuleKind::FloraRadialNear(f) | RuleKind::FloraRadialFar(f) => {
                let class = match kind {
                    RuleKind::FloraCollidable(_) => 0,
                    RuleKind::FloraNonCollidable(_) => 1,
                    RuleKind::FloraRadialNear(_) => 2,
                    _ => 3,
                };
                a.kind = AFFECTOR_FLORA_BASE + class;
                a.index = f.family_id as u32;
                // Both flags are kept (remove-all acts first; `--flora-both` reads the add).
                a.operation = if f.remove_all.get() { FLORA_REMOVE_ALL } else { 0 } | if f.add.get() { FLORA_ADD } else { 0 };
                let family_density = if class < 2 {
                    g.flora_families.families().iter().find(|x| x.id == f.family_id).map(|x| x.density)
                } else {
                    g.radial_families.families().iter().find(|x| x.id == f.family_id).map(|x| x.density)
                };
                a.value = if f.use_density_override.get() { f.density_override } else { family_density.unwrap_or(0.0) };
            }
            RuleKind::Environment(e) => {
                a.kind = AFFECTOR_ENVIRONMENT;
                a.index = e.family_id as u32;
                a.value = if e.use_feather_clamp_override.get() {
                    e.feather_clamp_override
                } else {
                    g.environment_families.families().iter().find(|f| f.id == e.family_id).map_or(1.0, |f| f.feather_clamp)
                };
            }
            RuleKind::ColorConstant(c) => {
                a.kind = AFFECTOR_COLOR_CONSTANT;
                a.operation = c.operation;
                a.index = u32::from(c.color[0]) << 16 | u32::from(c.color[1]) << 8 | u32::from(c.color[2]);
            }
            RuleKind::ColorRampHeight(c) => {
                a.kind = AFFECTOR_COLOR_RAMP_HEIGHT;
                a.operation = c.operation;
                a.index = self.ramp(&c.ramp, layer)?;
                a.value = c.low;
                a.value2 = c.high;
            }
            RuleKind::ColorRampFractal(c) => {
                a.kind = AFFECTOR_COLOR_RAMP_FRACTAL;
                a.operation = c.operation;
                a.index = self.ramp(&c.ramp, layer)?;
                a._pad = self.fractal(c.family_id);
            }
            RuleKind::Road(r) => {
                a.kind = AFFECTOR_ROAD_SHADER;
                a.operation = r.family_id;
                a.index = self.road(&r.points, &r.segments, None, r.width, r.shader_feather_type, r.shader_feather_amount, 0.0);
            }
            RuleKind::River(r) => {
                a.kind = AFFECTOR_ROAD_SHADER;
                a.operation = r.bank_family_id;
                a._pad = r.bottom_family_id as u32;
                a.value = r.water_width * 0.5;
                a.index = self.road(&r.points, &r.segments, None, r.width, r.feather_type, r.feather_amount, 0.0);
            }
            RuleKind::Ribbon(r) => {
                a.kind = AFFECTOR_ROAD_SHADER;
                a.operation = r.terrain_family_id;
                let points: Vec<crate::model::codec::Point2> = r.points.iter().map(|p| crate::model::codec::Point2 { x: p.a, z: p.b }).collect();
                a.index = self.road(&points, &[], None, r.width, r.terrain_feather_type, r.terrain_feather_amount, 0.0);
            }
            RuleKind::Exclude(_) => a.kind = AFFECTOR_EXCLUDE,
            RuleKind::Passable(p) => {
                a.kind = AFFECTOR_PASSABLE;
                a.operation = i32::from(p.passable);
                a.value = p.feather_threshold;
            }
            _ => unreachable!("only pass affectors reach here"),
        }
        Ok(a)
    }

    /// Load a colour-ramp TGA (swg-trn §5.10) once, from `ROOT/<path>` or the client's
    /// `ROOT/terrain/colorramp/<name>`. Colour is cosmetic, so a missing or unreadable ramp
    /// is a warning and reads as mid grey rather than failing the bake.
    fn ramp(&mut self, rel: &str, layer: &str) -> Result<u32, PlanError> {
        if let Some(i) = self.plan.ramp_names.iter().position(|n| n == rel) {
            return Ok(i as u32);
        }
        let rel_path = rel.replace('\\', "/");
        let name = rel_path.rsplit('/').next().unwrap_or(&rel_path).to_string();
        let loaded = match self.opts.data_root.as_deref() {
            None => Err("no data root was given".to_string()),
            Some(root) => [root.join(&rel_path), root.join("terrain/colorramp").join(&name)]
                .into_iter()
                .find(|p| p.exists())
                .ok_or_else(|| format!("neither {rel_path} nor terrain/colorramp/{name} exists under {}", root.display()))
                .and_then(|path| {
                    std::fs::read(&path)
                        .map_err(|e| format!("{}: {e}", path.display()))
                        .and_then(|b| crate::model::bitmap::load_color_ramp_tga(&b).map_err(|e| format!("{}: {e}", path.display())))
                }),
        };
        let ramp = match loaded {
            Ok(r) if !r.is_empty() => r,
            Ok(_) => vec![[128, 128, 128]],
            Err(reason) => {
                self.plan.warnings.push(format!("layer `{layer}`: colour ramp `{rel_path}`: {reason}; using mid grey"));
                vec![[128, 128, 128]]
            }
        };
        self.plan.ramps.push(ramp);
        self.plan.ramp_names.push(rel.to_string());
        Ok((self.plan.ramps.len() - 1) as u32)
    }

    #[allow(clippy::too_many_arguments)]
    fn road(
        &mut self,
        points: &[crate::model::codec::Point2],
        segments: &[Vec<crate::model::codec::Point3>],
        heights: Option<&[f32]>,
        width: f32,
        feather_type: i32,
        feather_amount: f32,
        depth: f32,
    ) -> u32 {
        let p = &mut self.plan;
        let rec = RoadRecord {
            point_start: p.points.len() as u32,
            point_count: points.len() as u32,
            segment_start: p.road_segments.len() as u32,
            heights_start: p.road_heights.len() as u32,
            fixed_heights: heights.is_some() as u32,
            feather_type,
            half_width: width * 0.5,
            feather_amount: feather_amount.clamp(0.0, 1.0),
            depth,
            _pad: [0; 3],
        };
        p.points.extend(points.iter().map(|q| [q.x, q.z]));
        for s in 0..points.len().saturating_sub(1) {
            let samples = segments.get(s).map(Vec::as_slice).unwrap_or(&[]);
            p.road_segments.push([p.road_samples.len() as u32, samples.len() as u32]);
            p.road_samples.extend(samples.iter().map(|q| [q.a, q.b, q.c, 0.0]));
        }
        if let Some(h) = heights {
            p.road_heights.extend_from_slice(h);
        }
        p.roads.push(rec);
        (p.roads.len() - 1) as u32
    }
}

/// Load the TGA of a bitmap family from the data root (`terrain/x.tga` → `ROOT/terrain/x.tga`).
fn load_family_bitmap(root: Option<&Path>, rel: &str, layer: &str, family: i32) -> Result<Bitmap, PlanError> {
    let rel_path = rel.replace('\\', "/");
    let Some(root) = root else {
        return Err(PlanError::MissingBitmap {
            layer: layer.into(),
            family,
            path: rel_path,
            reason: "no data root was given".into(),
        });
    };
    let path = root.join(&rel_path);
    if !path.exists() {
        return Err(PlanError::MissingBitmap {
            layer: layer.into(),
            family,
            path: rel_path,
            reason: format!("{} does not exist", path.display()),
        });
    }
    Bitmap::load_tga(&path).map_err(|error| PlanError::Bitmap { layer: layer.into(), path, error })
}

impl BakePlan {
    /// All bitmaps packed 4 pixels per u32 word, for the GPU.
    pub fn bitmap_words(&self) -> Vec<u32> {
        let mut bytes = Vec::new();
        for b in &self.bitmaps {
            bytes.extend_from_slice(&b.pixels);
            bytes.resize(bytes.len().next_multiple_of(4), 0);
        }
        bytes.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
    }

    /// Permutation tables of all fractals, concatenated (514 entries each).
    pub fn perm_table(&self) -> Vec<u32> {
        self.fractals.iter().flat_map(|f| f.tables.perm.iter().copied()).collect()
    }

    /// g2 gradients of all fractals, concatenated.
    pub fn gradient_table(&self) -> Vec<[f32; 2]> {
        self.fractals.iter().flat_map(|f| f.tables.g2.iter().copied()).collect()
    }
}
