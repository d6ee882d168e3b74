//! The surface passes (swg-trn §5.2 steps 2–4): normals from the finished heights, then the
//! shader pass (ASCN, ASRP) and the flora / environment / colour / exclude / passable pass,
//! walking a [`BakePlan::for_surface`] plan with every filter live. The CPU reference;
//! the walk itself is [`crate::eval::walk_point`], shared with the height pass.

pub mod explain;
pub mod grid;
pub mod normals;
pub mod smap;
pub mod supersample;
mod walk_strip;

use crate::eval::affector::{height_operation, road_hit, road_hit_among, with_road_segments_near, RoadHit};
use crate::eval::feather::feathered_range;
use crate::eval::filter::filter_value_height_pass;
use crate::eval::{walk_point, PassState};
use crate::model::Terrain;
use crate::plan::{
    moves_height, AffectorRecord, BakePlan, FilterRecord, HeightOptions, Pass, PlanError, TileList, AFFECTOR_COLOR_CONSTANT, AFFECTOR_COLOR_RAMP_FRACTAL,
    AFFECTOR_COLOR_RAMP_HEIGHT, AFFECTOR_ENVIRONMENT, AFFECTOR_EXCLUDE, AFFECTOR_FLORA_BASE, AFFECTOR_PASSABLE, AFFECTOR_ROAD_SHADER, AFFECTOR_SHADER_CONSTANT,
    AFFECTOR_SHADER_REPLACE, FILTER_DIRECTION, FILTER_SHADER, FILTER_SLOPE, FLORA_ADD, FLORA_REMOVE_ALL,
};
use crate::rounding::round_clamped;

/// How an ASCN/ASRP/AENV feather clamp acts (swg-trn §5.10, [?]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum FeatherClamp {
    /// The affector claims every post with T > 0, weight T (the reading the flora
    /// validation of §5.9 used).
    Ignore,
    /// (a) it claims only posts with T ≥ clamp, weight T. The default: it raises PIMP
    /// agreement through FSHD-gated flora layers (README, Surface maps): naboo 92.3 →
    /// 93.4 %, dathomir 24.8 → 35.2 %, tatooine and yavin4 unchanged.
    #[default]
    Threshold,
    /// (b) it claims posts with T > 0 with weight min(T / clamp, 1).
    Weight,
}

/// The FDIR convention (swg-trn §5.5, [?]: used twice in the data, both on tatooine).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum DirectionFilter {
    /// The filter is 0 (its layers never act): best PIMP agreement on tatooine (98.0 %,
    /// against 97.8 % for aspect and 97.0 % for one; README).
    #[default]
    Zero,
    /// The filter is 1 (its layers act wherever their other rules let them).
    One,
    /// I(aspect; min, max, a) with aspect the compass bearing (degrees, clockwise from
    /// north, in (−180, 180]) of the downhill direction.
    Aspect,
    /// As `aspect` with the uphill bearing (the downhill one + 180°).
    AspectUp,
}

/// How the surface passes walk the tree (swg-trn §5.2, §5.9 [?]): which height and shader
/// a surface-pass FHGT / FSHD reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum SurfaceWalk {
    /// Separate passes (§5.2): FHGT reads the final height, FSHD the final shader map.
    Separate,
    /// One walk of every affector in tree order: FHGT in the surface passes reads the
    /// height the height affectors have built so far at that layer (FSHD the final shader).
    TreeHeight,
    /// FSHD reads the shader the shader affectors have set so far (FHGT the final height).
    TreeShader,
    /// Both: FHGT and FSHD read what the walk has built so far; FSLP/FDIR read the final
    /// normals (a point walk cannot have them earlier). The default: PIMP agreement (4,000
    /// cells, separate → tree) tatooine 98.05 → 98.05 %, yavin4 97.97 → 98.18 %, naboo
    /// 93.36 → 93.62 %, dathomir 35.24 → 95.84 %, mustafar and kashyyyk_main unchanged
    /// (100 %, 87.5 %): dathomir's mesa flora sits under an FHGT 99–101 m band that only
    /// the height at that point of the tree (an AHCN replace 100 just before it) meets,
    /// and its canyon flora under an FSHD that later shader layers would hide.
    #[default]
    Tree,
}

impl SurfaceWalk {
    fn tree_height(self) -> bool {
        matches!(self, SurfaceWalk::TreeHeight | SurfaceWalk::Tree)
    }
    fn tree_shader(self) -> bool {
        matches!(self, SurfaceWalk::TreeShader | SurfaceWalk::Tree)
    }
}

/// FSLP with minAngle 0 (swg-trn §5.5 [?]): its upper cosine bound is 1, and a perfectly
/// flat post (n_y = 1) lies on the open end of the strict interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum SlopeFlat {
    /// The strict interval: a flat post gets 0 (CORE3-consistent).
    #[default]
    Exclude,
    /// minAngle 0 means "no lower slope bound": n_y up to 1 inclusive, no feather at that end.
    Include,
}

/// Which heights FSLP's normal is computed from (swg-trn §5.5, §5.9 [?]). `Tree` with
/// [`FloraAmount::Scale`] is the default: PIMP agreement (4,000 cells, header-box sampling;
/// README, Surface maps) dathomir 95.84 → 99.74 %, yavin4 98.18 → 98.74 %, tatooine 98.05 →
/// 98.17 %, naboo 93.62 → 93.71 %, kashyyyk_main (every cell) 94.73 → 95.54 %, mustafar 100 %,
/// every calibration bin within 0.1. The CPU walks each grid post's trace once per
/// [`GridBlock`]; the GPU records the same traces in a pre-pass (kernels/surface.wgsl
/// `slope_heights_pass`). Ignored by the separate passes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum SlopeHeight {
    /// The final heights (the normal of the finished terrain at the post).
    Final,
    /// With a tree walk: the heights the height affectors have built so far at the filter's
    /// layer, at the post and its 8 neighbouring posts (as FHGT reads the height so far); the
    /// default, with `--flora-amount scale` (best PIMP agreement, calibrated; README).
    #[default]
    Tree,
}

/// How a flora add uses the layer's amount T (swg-trn §5.9 [?]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum FloraAmount {
    /// Any T > 0 pushes the full density.
    Any,
    /// The add pushes density × T (feathered edges thin the flora); the default, with
    /// `--slope-height tree` (README).
    #[default]
    Scale,
}

/// What a flora affector with neither flag (0,0) does (swg-trn §5.9 [?]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum FloraZero {
    /// Removes its family from the stack.
    #[default]
    RemoveFamily,
    /// Does nothing.
    Ignore,
    /// Clears the stack like a remove-all.
    RemoveAll,
}

/// What a flora affector with both flags (add and remove-all) does (swg-trn §5.9 [?]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum FloraBoth {
    /// Clears the stack (remove-all wins).
    #[default]
    Clear,
    /// Clears the stack, then adds its family (the stack becomes this family alone).
    Replace,
}

/// Options of the surface passes.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SurfaceOptions {
    pub feather_clamp: FeatherClamp,
    pub direction: DirectionFilter,
    pub walk: SurfaceWalk,
    pub slope_flat: SlopeFlat,
    pub flora_amount: FloraAmount,
    pub flora_zero: FloraZero,
    pub flora_both: FloraBoth,
    pub slope_height: SlopeHeight,
}

impl SurfaceOptions {
    /// Whether FSLP reads the heights built so far ([`SlopeHeight::Tree`], which only a tree
    /// walk has).
    pub fn tree_slopes(&self) -> bool {
        self.slope_height == SlopeHeight::Tree && self.walk != SurfaceWalk::Separate
    }

    /// Whether the GPU kernels compute these readings (else the surface maps fall back to
    /// the CPU): FDIR aspect needs atan2; the partial tree walks and the rarer flora and
    /// FSLP readings are CPU-only.
    pub fn gpu_unsupported(&self) -> Option<String> {
        if matches!(self.direction, DirectionFilter::Aspect | DirectionFilter::AspectUp) {
            return Some("the FDIR aspect reading needs atan2, which GPUs do not compute like the CPU".into());
        }
        if matches!(self.walk, SurfaceWalk::TreeHeight | SurfaceWalk::TreeShader) {
            return Some(format!("the surface walk `{:?}` is implemented on the CPU only (the GPU computes separate and tree)", self.walk));
        }
        if self.slope_flat != SlopeFlat::Exclude || self.flora_zero != FloraZero::RemoveFamily || self.flora_both != FloraBoth::Clear {
            return Some("the slope-flat, flora-zero and flora-both readings other than the defaults are implemented on the CPU only".into());
        }
        None
    }
}

/// What the surface passes need to know about the ground at a post: its final height and
/// unit normal (y up).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ground {
    pub height: f32,
    pub normal: [f32; 3],
}

/// Most shader contributions kept per post for the splat weights.
pub const SPLAT_LAYERS: usize = 4;

/// The shader pass's result at a post: the dominant family (last writer, 0 = none) and up to
/// [`SPLAT_LAYERS`] (family, weight) contributions composited "over" (swg-trn §5.10).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ShaderResult {
    pub family: i32,
    pub splat: [(i32, f32); SPLAT_LAYERS],
}

impl ShaderResult {
    /// Composite a new contribution over the earlier ones: earlier weights × (1 − w).
    #[inline]
    fn over(&mut self, family: i32, w: f32) {
        let w = w.clamp(0.0, 1.0);
        for e in self.splat.iter_mut() {
            e.1 *= 1.0 - w;
        }
        if let Some(e) = self.splat.iter_mut().find(|e| e.0 == family && e.1 > 0.0) {
            e.1 += w;
            return;
        }
        // Replace the weakest (or an empty) entry.
        let weakest = (0..SPLAT_LAYERS).min_by(|&a, &b| self.splat[a].1.total_cmp(&self.splat[b].1)).unwrap_or(0);
        self.splat[weakest] = (family, w);
    }
}

/// One flora class's stack (swg-trn §5.9 "stack reading"): the adds since the last
/// remove-all, oldest first, as (family id, density).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FloraStack(pub Vec<(i32, f32)>);

impl FloraStack {
    /// Each family's placement probability: the newest add claims the tile with its density;
    /// if it fails the next older one is tried: P(k) = d_k · Π(1 − d_j) over newer adds j.
    /// Families that appear several times sum their chances. Sorted by family id.
    pub fn probabilities(&self) -> Vec<(i32, f32)> {
        let mut out: Vec<(i32, f32)> = Vec::new();
        self.each_chance(|family, p| match out.iter_mut().find(|e| e.0 == family) {
            Some(e) => e.1 += p,
            None => out.push((family, p)),
        });
        out.retain(|e| e.1 > 0.0);
        out.sort_by_key(|e| e.0);
        out
    }

    /// Each add's chance to claim the tile, newest first: (family, d_k · Π(1 − d_j) over newer
    /// adds j) — what [`FloraStack::probabilities`] sums per family.
    fn each_chance(&self, mut chance: impl FnMut(i32, f32)) {
        let mut remaining = 1.0f32;
        for &(family, density) in self.0.iter().rev() {
            let d = density.clamp(0.0, 1.0);
            chance(family, remaining * d);
            remaining *= 1.0 - d;
        }
    }

    /// The most likely family and its probability; (0, 0) where no family can be placed.
    /// Ties go to the lower family id (deterministic).
    pub fn most_likely(&self) -> (i32, f32) {
        // Without allocating for the usual short stacks: the sums of `probabilities` in its
        // order, then the largest with ties to the lower family id (as `most_likely_of` reads
        // the sorted list).
        const SHORT: usize = 16;
        if self.0.len() > SHORT {
            return most_likely_of(&self.probabilities());
        }
        let mut sums = [(0i32, 0.0f32); SHORT];
        let mut n = 0;
        self.each_chance(|family, p| match sums[..n].iter_mut().find(|e| e.0 == family) {
            Some(e) => e.1 += p,
            None => {
                sums[n] = (family, p);
                n += 1;
            }
        });
        sums[..n].iter().fold((0, 0.0), |best, &e| if e.1 > best.1 || (e.1 > 0.0 && e.1 == best.1 && e.0 < best.0) { e } else { best })
    }
}

/// The most likely family of a class's [`FloraStack::probabilities`] and its probability;
/// (0, 0) where none can be placed; ties go to the lower family id.
pub fn most_likely_of(probabilities: &[(i32, f32)]) -> (i32, f32) {
    probabilities.iter().fold((0, 0.0), |best, &e| if e.1 > best.1 { e } else { best })
}

/// The flora / environment / colour / exclude / passable pass's result at a post.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SurfaceResult {
    pub shader: ShaderResult,
    /// Per class of [`crate::plan::FLORA_CLASSES`].
    pub flora: [FloraStack; 4],
    /// Environment family id (0 = none).
    pub environment: i32,
    /// Colour tint, RGB in [0, 1] (starts black).
    pub color: [f32; 3],
    pub excluded: bool,
    /// The APAS byte where one applied.
    pub passable: Option<u8>,
}

/// Whether FSLP `f` has no upper end under `opts` ([`SlopeFlat::Include`] with a top of 1):
/// otherwise its value is the feathered range of the normal's y, as FHGT's of a height.
fn slope_open_above(opts: &SurfaceOptions, f: &FilterRecord) -> bool {
    opts.slope_flat == SlopeFlat::Include && f.high >= 1.0
}

/// Filter values with every filter live (swg-trn §5.2 steps 3–4, §5.5).
fn surface_filter_value(plan: &BakePlan, f: &FilterRecord, extent: [f32; 4], ground: &Ground, shader: i32, opts: &SurfaceOptions, x: f32, z: f32) -> f32 {
    match f.kind {
        FILTER_SLOPE => {
            if slope_open_above(opts, f) {
                // No upper end: only the lower (steep) side of the interval and its feather.
                let (v, lo) = (ground.normal[1], f.low);
                let d = (f.high - lo) * f.feather_amount * 0.5;
                return if v <= lo {
                    0.0
                } else if v < lo + d {
                    (v - lo) / d
                } else {
                    1.0
                };
            }
            feathered_range(ground.normal[1], f.low, f.high, f.feather_amount)
        }
        FILTER_DIRECTION => match opts.direction {
            DirectionFilter::Zero => 0.0,
            DirectionFilter::One => 1.0,
            DirectionFilter::Aspect | DirectionFilter::AspectUp => {
                let [nx, _, nz] = ground.normal;
                if nx == 0.0 && nz == 0.0 {
                    return 0.0;
                }
                let bearing = if opts.direction == DirectionFilter::AspectUp { (-nx).atan2(-nz) } else { nx.atan2(nz) };
                feathered_range(bearing.to_degrees(), f.low, f.high, f.feather_amount)
            }
        },
        FILTER_SHADER => {
            if shader != 0 && shader as u32 == f.family {
                1.0
            } else {
                0.0
            }
        }
        // FHGT (on the final height), FFRA and FBIT as in the height pass.
        _ => filter_value_height_pass(plan, f, extent, ground.height, x, z),
    }
}

/// The weight an ASCN/ASRP/AENV with amount `t` and clamp `clamp` gets, or `None` where it
/// does not claim the post.
fn clamp_weight(opts: &SurfaceOptions, t: f32, clamp: f32) -> Option<f32> {
    match opts.feather_clamp {
        FeatherClamp::Ignore => Some(t),
        FeatherClamp::Threshold => (t >= clamp).then_some(t),
        FeatherClamp::Weight => Some(if clamp > 0.0 { (t / clamp).min(1.0) } else { 1.0 }),
    }
}

struct ShaderPass<'a> {
    ground: Ground,
    opts: &'a SurfaceOptions,
    result: ShaderResult,
}

impl PassState for ShaderPass<'_> {
    fn filter_value(&self, plan: &BakePlan, f: &FilterRecord, extent: [f32; 4], x: f32, z: f32) -> f32 {
        surface_filter_value(plan, f, extent, &self.ground, self.result.family, self.opts, x, z)
    }

    fn apply(&mut self, _plan: &BakePlan, a: &AffectorRecord, t: f32, _x: f32, _z: f32) {
        apply_shader(self.opts, &mut self.result, a, t);
    }
}

/// ASCN / ASRP at a post (swg-trn §5.10).
#[inline(always)]
fn apply_shader(opts: &SurfaceOptions, result: &mut ShaderResult, a: &AffectorRecord, t: f32) {
    match a.kind {
        AFFECTOR_SHADER_CONSTANT => {
            if let Some(w) = clamp_weight(opts, t, a.value) {
                result.family = a.index as i32;
                result.over(a.index as i32, w);
            }
        }
        AFFECTOR_SHADER_REPLACE => {
            let (source, destination) = (a.index as i32, a.operation);
            if result.family == source && clamp_weight(opts, t, a.value).is_some() {
                result.family = destination;
                for e in result.splat.iter_mut().filter(|e| e.0 == source) {
                    e.0 = destination;
                }
            }
        }
        _ => {}
    }
}

struct LaterPass<'a> {
    ground: Ground,
    opts: &'a SurfaceOptions,
    result: SurfaceResult,
}

impl PassState for LaterPass<'_> {
    fn filter_value(&self, plan: &BakePlan, f: &FilterRecord, extent: [f32; 4], x: f32, z: f32) -> f32 {
        surface_filter_value(plan, f, extent, &self.ground, self.result.shader.family, self.opts, x, z)
    }

    fn apply(&mut self, plan: &BakePlan, a: &AffectorRecord, t: f32, x: f32, z: f32) {
        apply_later(plan, self.opts, self.ground.height, &mut self.result, a, t, x, z, None);
    }
}

/// `v / 255` for every byte v, as f32: a colour byte as a channel value (the division,
/// evaluated at compile time with the same IEEE rounding, out of the colour affectors' loops).
static BYTE_UNITS: [f32; 256] = {
    let mut units = [0.0f32; 256];
    let mut v = 0;
    while v < 256 {
        units[v] = v as f32 / 255.0;
        v += 1;
    }
    units
};

/// A later-pass affector (flora, AENV, colour, road shader, AEXC, APAS) at a post (swg-trn
/// §5.2 step 4), the final height there being `height`; `ramp_fractal` is an ACRF's fractal
/// value at the post where the caller has it (a row walk computes a row's at once).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn apply_later(
    plan: &BakePlan,
    opts: &SurfaceOptions,
    height: f32,
    r: &mut SurfaceResult,
    a: &AffectorRecord,
    t: f32,
    x: f32,
    z: f32,
    ramp_fractal: Option<f32>,
) {
    match a.kind {
        k if (AFFECTOR_FLORA_BASE..AFFECTOR_FLORA_BASE + 4).contains(&k) => {
            let stack = &mut r.flora[(k - AFFECTOR_FLORA_BASE) as usize].0;
            let family = a.index as i32;
            if a.operation & FLORA_REMOVE_ALL != 0 {
                stack.clear();
                if opts.flora_both == FloraBoth::Replace && a.operation & FLORA_ADD != 0 {
                    stack.push((family, a.value));
                }
            } else if a.operation & FLORA_ADD != 0 {
                let density = if opts.flora_amount == FloraAmount::Scale { a.value * t } else { a.value };
                stack.push((family, density));
            } else {
                match opts.flora_zero {
                    FloraZero::RemoveFamily => stack.retain(|e| e.0 != family),
                    FloraZero::Ignore => {}
                    FloraZero::RemoveAll => stack.clear(),
                }
            }
        }
        AFFECTOR_ENVIRONMENT => {
            if clamp_weight(opts, t, a.value).is_some() {
                r.environment = a.index as i32;
            }
        }
        AFFECTOR_COLOR_CONSTANT | AFFECTOR_COLOR_RAMP_HEIGHT | AFFECTOR_COLOR_RAMP_FRACTAL => {
            let c = match a.kind {
                AFFECTOR_COLOR_CONSTANT => [(a.index >> 16) as u8, (a.index >> 8) as u8, a.index as u8],
                _ => {
                    let u = if a.kind == AFFECTOR_COLOR_RAMP_HEIGHT {
                        let range = a.value2 - a.value;
                        if range != 0.0 {
                            ((height - a.value) / range).clamp(0.0, 1.0)
                        } else {
                            0.0
                        }
                    } else {
                        ramp_fractal.unwrap_or_else(|| plan.fractals.get(a._pad as usize).map_or(0.0, |f| f.value(x, z)))
                    };
                    let ramp = &plan.ramps[a.index as usize];
                    // A ramp is one TGA row (a u16 width), so its last index fits a u16.
                    let last = u16::try_from(ramp.len() - 1).unwrap_or(u16::MAX);
                    ramp[round_clamped(u * f32::from(last), last) as usize]
                }
            };
            for (channel, v) in r.color.iter_mut().zip(c) {
                *channel = height_operation(a.operation, *channel, BYTE_UNITS[usize::from(v)], t);
            }
        }
        AFFECTOR_ROAD_SHADER => {
            // swg-trn §5.12 step 5 (applied in the later pass, §5.2 step 4): the road's
            // (river bank's, ribbon's) shader family with the shader feather; a river's
            // bottom family inside half its water width.
            let Some(road) = plan.roads.get(a.index as usize) else { return };
            if let Some(hit) = road_hit(plan, road, x, z) {
                apply_road_shader(r, a, &hit, t);
            }
        }
        AFFECTOR_EXCLUDE => r.excluded = true,
        AFFECTOR_PASSABLE => {
            if t >= a.value {
                r.passable = Some(a.operation as u8);
            }
        }
        _ => {}
    }
}

/// A road shader affector `a` (swg-trn §5.12 step 5) at a post its road hits (`hit`) with
/// amount `t`.
fn apply_road_shader(r: &mut SurfaceResult, a: &AffectorRecord, hit: &RoadHit, t: f32) {
    let w = hit.weight * t;
    if w > 0.0 {
        let family = if a._pad != 0 && hit.distance <= a.value { a._pad as i32 } else { a.operation };
        r.shader.family = family;
        r.shader.over(family, w);
    }
}

/// One walk of every affector in tree order (the [`SurfaceWalk`] tree readings): the height
/// affectors build `h` as in the height pass, the shader and later affectors act as in their
/// passes; FHGT reads `h` or the final height, FSHD the shader so far or the final one.
struct TreeWalk<'a> {
    h: f32,
    final_shader: i32,
    later: LaterPass<'a>,
    /// [`SlopeHeight::Tree`]: the layer being walked and, computed at the first FSLP, the
    /// height-pass traces of the post's 3×3 neighbourhood (`None` otherwise).
    layer: usize,
    slope: Option<SlopeNeighbourhood<'a>>,
}

/// The 3×3 posts around a tree-walked post for [`SlopeHeight::Tree`]: their height-pass
/// walks over the tree walk's plan, each recording the height before every FSLP layer
/// ([`SlopeTrace`]), computed at the first FSLP the post reaches.
struct SlopeNeighbourhood<'a> {
    plan: &'a BakePlan,
    tile: &'a TileList,
    frame: PostFrame,
    spacing: f32,
    gx: i64,
    gz: i64,
    traces: TraceSource<'a>,
    /// The last 3×3 heights and their normal: FSLP layers with no height affector between
    /// them read the same heights, and the normal is the costly part.
    last: std::cell::Cell<Option<LastNormal>>,
}

/// Where a neighbourhood's traces come from.
enum TraceSource<'a> {
    /// Walked for this post alone (a free point).
    Own(std::cell::OnceCell<Vec<SlopeTrace>>),
    /// Shared by the posts of a [`GridBlock`] (each grid post walked once).
    Block(&'a GridBlock),
}

/// Where a walked post sits, so that its neighbours for [`SlopeHeight::Tree`] are posts of
/// the same lattice: neighbour (dx, dz) is at (x0 + (col + dx)·s, z0 + (row + dz)·s) in f32,
/// as [`crate::eval::Grid::post`] places the posts of a grid (the GPU's
/// `slope_heights_pass` computes the same). A free point is its own origin (col = row = 0).
#[derive(Clone, Copy, Debug)]
struct PostFrame {
    x0: f32,
    z0: f32,
    col: i64,
    row: i64,
}

impl PostFrame {
    fn free(x: f32, z: f32) -> PostFrame {
        PostFrame { x0: x, z0: z, col: 0, row: 0 }
    }

    fn grid(grid: &crate::eval::Grid, col: i64, row: i64) -> PostFrame {
        PostFrame { x0: grid.x0 as f32, z0: grid.z0 as f32, col, row }
    }

    /// The position of the post (dx, dz) posts away, `spacing` apart.
    fn neighbour(&self, dx: i64, dz: i64, spacing: f32) -> (f32, f32) {
        (self.x0 + (self.col + dx) as f32 * spacing, self.z0 + (self.row + dz) as f32 * spacing)
    }
}

/// The bits of a 3×3 neighbourhood's heights and the unit normal they give.
type LastNormal = ([[u32; 3]; 3], [f32; 3]);

/// The heights a height-pass walk (FSLP, FDIR and FSHD are 0, only height affectors act)
/// had on first reaching a layer at or after each FSLP layer of the plan: slot k holds the
/// height before the plan's (k + 1)-th FSLP layer acts (`LayerRecord::slope_rank`; the GPU's
/// `slope_heights_pass` records the same slots).
struct SlopeTrace(Vec<f32>);

/// The walk behind a [`SlopeTrace`].
struct HeightTrace<'p> {
    plan: &'p BakePlan,
    h: f32,
    slots: Vec<f32>,
}

impl SlopeTrace {
    fn walk(plan: &BakePlan, tile: &TileList, x: f32, z: f32) -> SlopeTrace {
        let mut t = HeightTrace { plan, h: 0.0, slots: Vec::with_capacity(plan.slope_layer_count() as usize) };
        walk_point(plan, tile, x, z, &mut t);
        // FSLP layers after the walk's last entry: the final height.
        t.slots.resize(plan.slope_layer_count() as usize, t.h);
        SlopeTrace(t.slots)
    }

    /// The height before FSLP layer `layer` acts.
    fn before(&self, plan: &BakePlan, layer: usize) -> f32 {
        let rank = plan.layers[layer].slope_rank as usize;
        self.0[rank.max(1) - 1]
    }
}

impl PassState for HeightTrace<'_> {
    fn filter_value(&self, plan: &BakePlan, f: &FilterRecord, extent: [f32; 4], x: f32, z: f32) -> f32 {
        filter_value_height_pass(plan, f, extent, self.h, x, z)
    }
    fn apply(&mut self, plan: &BakePlan, a: &AffectorRecord, t: f32, x: f32, z: f32) {
        if matches!(
            a.kind,
            crate::plan::AFFECTOR_HEIGHT_CONSTANT | crate::plan::AFFECTOR_HEIGHT_FRACTAL | crate::plan::AFFECTOR_HEIGHT_TERRACE | crate::plan::AFFECTOR_ROAD
        ) {
            self.h = crate::eval::affector::apply_height_affector(plan, a, self.h, t, x, z);
        }
    }
    fn trace_layer(&mut self, layer: usize, _boundary: f32) {
        let upto = self.plan.layers[layer].slope_rank as usize;
        if self.slots.len() < upto {
            self.slots.resize(upto, self.h);
        }
    }
    /// Every FSLP layer recorded: the rest of the walk cannot change a slot.
    fn walk_done(&self) -> bool {
        self.slots.len() >= self.plan.slope_layer_count() as usize
    }
}

impl SlopeNeighbourhood<'_> {
    /// The unit normal (faces reading) at the post from the heights before `layer`.
    fn normal_before(&self, layer: usize) -> [f32; 3] {
        let walk = |dx: i64, dz: i64| {
            let (x, z) = self.frame.neighbour(dx, dz, self.spacing);
            SlopeTrace::walk(self.plan, self.tile, x, z)
        };
        let h: [[f32; 3]; 3] = match &self.traces {
            TraceSource::Own(cell) => {
                let traces = cell.get_or_init(|| (0..9).map(|k| walk(k % 3 - 1, k / 3 - 1)).collect());
                std::array::from_fn(|dz| std::array::from_fn(|dx| traces[dz * 3 + dx].before(self.plan, layer)))
            }
            TraceSource::Block(block) => std::array::from_fn(|dz| {
                std::array::from_fn(|dx| {
                    let (dx, dz) = (dx as i64 - 1, dz as i64 - 1);
                    match block.trace(self.frame.col + dx, self.frame.row + dz) {
                        Some(cell) => cell.get_or_init(|| walk(dx, dz)).before(self.plan, layer),
                        None => walk(dx, dz).before(self.plan, layer),
                    }
                })
            }),
        };
        let key = h.map(|row| row.map(f32::to_bits));
        if let Some((k, n)) = self.last.get() {
            if k == key {
                return n;
            }
        }
        let n = normals::post_normal(normals::NormalMethod::Faces, &h, self.spacing, self.gx, self.gz);
        self.last.set(Some((key, n)));
        n
    }
}

/// A block of grid posts to evaluate together ([`SurfaceEvaluator::grid_block`]): its culled
/// programs and, under [`SlopeHeight::Tree`], one `SlopeTrace` per post of the block and of
/// its 1-post ring, each walked once for all the posts whose FSLP reads it (the CPU twin of
/// the GPU's `slope_heights_pass`).
pub struct GridBlock {
    pub tiles: SurfaceTiles,
    grid: crate::eval::Grid,
    /// The ring's south-west post and the traced area's size, in posts.
    c0: i64,
    r0: i64,
    cols: usize,
    rows: usize,
    traces: Vec<std::cell::OnceCell<SlopeTrace>>,
}

impl GridBlock {
    /// Grid post (col, row)'s trace slot, `None` outside the block and its ring.
    fn trace(&self, col: i64, row: i64) -> Option<&std::cell::OnceCell<SlopeTrace>> {
        let (c, r) = (col - self.c0, row - self.r0);
        if c < 0 || r < 0 || c as usize >= self.cols || r as usize >= self.rows {
            return None;
        }
        self.traces.get(r as usize * self.cols + c as usize)
    }
}

impl PassState for TreeWalk<'_> {
    fn trace_layer(&mut self, layer: usize, _boundary: f32) {
        self.layer = layer;
    }

    fn filter_value(&self, plan: &BakePlan, f: &FilterRecord, extent: [f32; 4], x: f32, z: f32) -> f32 {
        let walk = self.later.opts.walk;
        let mut ground = self.later.ground;
        if walk.tree_height() {
            ground.height = self.h;
        }
        if f.kind == FILTER_SLOPE {
            if let Some(n) = &self.slope {
                ground.normal = n.normal_before(self.layer);
            }
        }
        let shader = if walk.tree_shader() { self.later.result.shader.family } else { self.final_shader };
        surface_filter_value(plan, f, extent, &ground, shader, self.later.opts, x, z)
    }

    fn apply(&mut self, plan: &BakePlan, a: &AffectorRecord, t: f32, x: f32, z: f32) {
        match a.kind {
            crate::plan::AFFECTOR_HEIGHT_CONSTANT
            | crate::plan::AFFECTOR_HEIGHT_FRACTAL
            | crate::plan::AFFECTOR_HEIGHT_TERRACE
            | crate::plan::AFFECTOR_ROAD => {
                self.h = crate::eval::affector::apply_height_affector(plan, a, self.h, t, x, z);
            }
            _ => apply_tree_surface(plan, self.later.opts, self.later.ground.height, &mut self.later.result, a, t, x, z, None),
        }
    }
}

/// A row's live lanes as the row walk (`crate::surface::walk_strip`) hands them to a surface
/// affector: lane l's post at (`xs[l]`, z) with amount `t[l]`, final height
/// `ground[l].height` and, for an ACRF, fractal value `ramp[l]`, for each l of `live`.
pub(super) struct LiveLanes<'a> {
    pub plan: &'a BakePlan,
    pub opts: &'a SurfaceOptions,
    pub live: &'a [u32],
    pub t: &'a [f32],
    pub xs: &'a [f32],
    pub z: f32,
    pub ground: &'a [Ground],
    pub ramp: Option<&'a [f32]>,
}

/// [`apply_tree_surface`] of `a` at each of `lanes`, lane l's result being `results[l]`. The
/// affector's kind (and a colour affector's operation) is matched once, outside the loop:
/// each arm runs a copy of the per-post code ([`surface_lanes`]) with them constant, so its
/// `match`es fold away.
#[inline(always)]
fn apply_tree_surface_lanes(lanes: &LiveLanes, a: &AffectorRecord, results: &mut [SurfaceResult]) {
    macro_rules! with {
        ($kind:expr, $operation:expr) => {
            surface_lanes::<{ $kind }, { $operation }>(lanes, a, results)
        };
    }
    macro_rules! colour {
        ($kind:expr) => {
            match a.operation {
                0 => with!($kind, 0),
                1 => with!($kind, 1),
                2 => with!($kind, 2),
                3 => with!($kind, 3),
                _ => with!($kind, ANY_OPERATION),
            }
        };
    }
    match a.kind {
        AFFECTOR_SHADER_CONSTANT => with!(AFFECTOR_SHADER_CONSTANT, ANY_OPERATION),
        AFFECTOR_SHADER_REPLACE => with!(AFFECTOR_SHADER_REPLACE, ANY_OPERATION),
        AFFECTOR_ENVIRONMENT => with!(AFFECTOR_ENVIRONMENT, ANY_OPERATION),
        AFFECTOR_COLOR_CONSTANT => colour!(AFFECTOR_COLOR_CONSTANT),
        AFFECTOR_COLOR_RAMP_HEIGHT => colour!(AFFECTOR_COLOR_RAMP_HEIGHT),
        AFFECTOR_COLOR_RAMP_FRACTAL => colour!(AFFECTOR_COLOR_RAMP_FRACTAL),
        AFFECTOR_ROAD_SHADER => with!(AFFECTOR_ROAD_SHADER, ANY_OPERATION),
        AFFECTOR_EXCLUDE => with!(AFFECTOR_EXCLUDE, ANY_OPERATION),
        AFFECTOR_PASSABLE => with!(AFFECTOR_PASSABLE, ANY_OPERATION),
        k if k == AFFECTOR_FLORA_BASE => with!(AFFECTOR_FLORA_BASE, ANY_OPERATION),
        k if k == AFFECTOR_FLORA_BASE + 1 => with!(AFFECTOR_FLORA_BASE + 1, ANY_OPERATION),
        k if k == AFFECTOR_FLORA_BASE + 2 => with!(AFFECTOR_FLORA_BASE + 2, ANY_OPERATION),
        k if k == AFFECTOR_FLORA_BASE + 3 => with!(AFFECTOR_FLORA_BASE + 3, ANY_OPERATION),
        _ => with!(ANY_KIND, ANY_OPERATION),
    }
}

/// [`surface_lanes`]' `KIND` when the affector's own kind is to be read.
const ANY_KIND: u32 = u32::MAX;
/// [`surface_lanes`]' `OPERATION` when the affector's own operation is to be read.
const ANY_OPERATION: i32 = i32::MIN;

/// One arm of [`apply_tree_surface_lanes`]: affector `a`, whose kind is `KIND` and operation
/// `OPERATION` unless they are [`ANY_KIND`] / [`ANY_OPERATION`], at each of `lanes`.
fn surface_lanes<const KIND: u32, const OPERATION: i32>(lanes: &LiveLanes, a: &AffectorRecord, results: &mut [SurfaceResult]) {
    let kind = if KIND == ANY_KIND { a.kind } else { KIND };
    let operation = if OPERATION == ANY_OPERATION { a.operation } else { OPERATION };
    debug_assert!(kind == a.kind && operation == a.operation);
    let a = AffectorRecord { kind, operation, ..*a };
    let LiveLanes { plan, opts, live, t, xs, z, ground, ramp } = *lanes;
    if kind == AFFECTOR_ROAD_SHADER {
        // The road's segments near the row, found once: most rows of a long road are near
        // few of them, or none (then no lane is hit).
        let (Some(road), Some(&first), Some(&last)) = (plan.roads.get(a.index as usize), live.first(), live.last()) else { return };
        return with_road_segments_near(plan, road, (xs[first as usize], xs[last as usize]), z, |near| {
            if near.is_empty() {
                return;
            }
            for &l in live {
                let l = l as usize;
                if let Some(hit) = road_hit_among(plan, road, near.iter().map(|&s| s as usize), xs[l], z) {
                    apply_road_shader(&mut results[l], &a, &hit, t[l]);
                }
            }
        });
    }
    for &l in live {
        let l = l as usize;
        apply_tree_surface(plan, opts, ground[l].height, &mut results[l], &a, t[l], xs[l], z, ramp.map(|r| r[l]));
    }
}

/// A surface affector of the tree walk (every kind but the height affectors) at a post whose
/// final height is `height`: ASCN/ASRP on the shader so far, the rest as in the later pass
/// ([`apply_later`], with its `ramp_fractal`).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn apply_tree_surface(
    plan: &BakePlan,
    opts: &SurfaceOptions,
    height: f32,
    r: &mut SurfaceResult,
    a: &AffectorRecord,
    t: f32,
    x: f32,
    z: f32,
    ramp_fractal: Option<f32>,
) {
    match a.kind {
        AFFECTOR_SHADER_CONSTANT | AFFECTOR_SHADER_REPLACE => apply_shader(opts, &mut r.shader, a, t),
        _ => apply_later(plan, opts, height, r, a, t, x, z, ramp_fractal),
    }
}

/// The surface passes of one terrain.
pub struct SurfaceEvaluator {
    /// Every surface affector, for what the maps need to know about the file.
    pub plan: BakePlan,
    /// The shader pass's and the later pass's own plans: each walk skips the layers that
    /// hold none of its affectors.
    pub shader_plan: BakePlan,
    pub later_plan: BakePlan,
    /// Every affector of every pass, for the tree walks ([`SurfaceWalk`]); empty otherwise.
    pub all_plan: BakePlan,
    pub opts: SurfaceOptions,
    everywhere: SurfaceTiles,
    /// The pole spacing (for [`SlopeHeight::Tree`]'s neighbours).
    pole: f32,
    /// Per layer of `all_plan`: whether its subtree holds a height affector
    /// ([`SurfaceTiles::trace`]).
    moves_height: Vec<bool>,
}

/// The culled programs of one area for both surface walks.
pub struct SurfaceTiles {
    pub shader: TileList,
    pub later: TileList,
    /// The tree walk's program (empty unless a tree reading is chosen).
    pub all: TileList,
    /// [`SlopeHeight::Tree`]: the part of `all` the slope traces walk, the layers whose
    /// subtrees move the height (the rest cannot change a trace; empty otherwise).
    pub trace: TileList,
    /// [`SlopeHeight::Tree`]: the spacing of the posts whose heights give FSLP's normal (the
    /// grid's, as for the final normals).
    pub slope_spacing: f32,
}

impl SurfaceEvaluator {
    pub fn new(terrain: &Terrain, heights: &HeightOptions, opts: SurfaceOptions) -> Result<SurfaceEvaluator, PlanError> {
        let plan = BakePlan::for_surface(terrain, heights)?;
        let shader_plan = BakePlan::for_pass(terrain, heights, Pass::Shader)?;
        let later_plan = BakePlan::for_pass(terrain, heights, Pass::Later)?;
        let all_plan = if opts.walk == SurfaceWalk::Separate { BakePlan::default() } else { BakePlan::for_pass(terrain, heights, Pass::All)? };
        let empty =
            SurfaceTiles { shader: TileList::default(), later: TileList::default(), all: TileList::default(), trace: TileList::default(), slope_spacing: 0.0 };
        let moves_height = all_plan.subtrees_holding(|a| moves_height(a.kind));
        let mut se = SurfaceEvaluator { plan, shader_plan, later_plan, all_plan, opts, everywhere: empty, pole: terrain.header.pole_spacing(), moves_height };
        se.everywhere = se.tile([f32::MIN, f32::MIN, f32::MAX, f32::MAX]);
        Ok(se)
    }

    /// The culled programs for an area (min x, min z, max x, max z) of posts at the pole
    /// spacing.
    pub fn tile(&self, area: [f32; 4]) -> SurfaceTiles {
        self.tile_spaced(area, self.pole)
    }

    /// The culled programs for an area of posts `spacing` metres apart. Under
    /// [`SlopeHeight::Tree`] the tree walk's program also covers the 1-post ring around the
    /// area, whose heights FSLP's normal reads ([`SurfaceEvaluator::slope_margin`]).
    pub fn tile_spaced(&self, area: [f32; 4], spacing: f32) -> SurfaceTiles {
        let m = self.slope_margin(spacing);
        let grown = [area[0] - m, area[1] - m, area[2] + m, area[3] + m];
        let all = self.all_plan.tile_layers(grown);
        let trace = if self.opts.tree_slopes() { all.keeping(&self.moves_height) } else { TileList::default() };
        SurfaceTiles { shader: self.shader_plan.tile_layers(area), later: self.later_plan.tile_layers(area), all, trace, slope_spacing: spacing }
    }

    /// How far beyond an area the tree walk's culled program must reach for posts `spacing`
    /// apart: one post under [`SlopeHeight::Tree`] with a tree walk, else 0.
    pub fn slope_margin(&self, spacing: f32) -> f32 {
        if self.opts.tree_slopes() {
            spacing
        } else {
            0.0
        }
    }

    /// Both surface passes at one post with the whole-map program.
    pub fn at(&self, x: f32, z: f32, ground: Ground) -> SurfaceResult {
        self.at_with(&self.everywhere, x, z, ground)
    }

    /// The separate shader pass at one post (what FSHD reads under `separate` and
    /// `tree-height`).
    fn shader_pass_at_with(&self, tiles: &SurfaceTiles, x: f32, z: f32, ground: Ground) -> ShaderResult {
        let mut shader = ShaderPass { ground, opts: &self.opts, result: ShaderResult::default() };
        walk_point(&self.shader_plan, &tiles.shader, x, z, &mut shader);
        shader.result
    }

    /// Both surface passes at one post, walking `tiles` (culled for an area holding the
    /// post): the shader pass first, then the later pass that sees its final shader (§5.2);
    /// or, with a tree reading ([`SurfaceWalk`]), one walk of every affector.
    pub fn at_with(&self, tiles: &SurfaceTiles, x: f32, z: f32, ground: Ground) -> SurfaceResult {
        self.at_framed(tiles, x, z, None, ground)
    }

    /// The posts [c0, c1] × [r0, r1] of `grid` as one [`GridBlock`]: programs culled for
    /// their area (and ring) at the grid's spacing, and under [`SlopeHeight::Tree`] the
    /// shared traces of the block and its 1-post ring.
    pub fn grid_block(&self, grid: &crate::eval::Grid, c0: u32, r0: u32, c1: u32, r1: u32) -> GridBlock {
        let tiles = self.tile_spaced(grid.area(c0, r0, c1, r1), grid.spacing as f32);
        let traced = self.slope_margin(grid.spacing as f32) > 0.0;
        let (cols, rows) = if traced { ((c1 - c0 + 3) as usize, (r1 - r0 + 3) as usize) } else { (0, 0) };
        GridBlock {
            tiles,
            grid: *grid,
            c0: i64::from(c0) - 1,
            r0: i64::from(r0) - 1,
            cols,
            rows,
            traces: (0..cols * rows).map(|_| std::cell::OnceCell::new()).collect(),
        }
    }

    /// Both surface passes at post (col, row) of `block`'s grid (inside the block):
    /// [`SurfaceEvaluator::at_with`] where FSLP's neighbourhood under [`SlopeHeight::Tree`] is
    /// the grid's own posts.
    pub fn at_grid_post(&self, block: &GridBlock, col: u32, row: u32, ground: Ground) -> SurfaceResult {
        let (x, z) = block.grid.post(col, row);
        self.at_framed(&block.tiles, x, z, Some((block, PostFrame::grid(&block.grid, col.into(), row.into()))), ground)
    }

    /// The shader map at post (col, row) of `block`'s grid: the shader pass alone (swg-trn
    /// §5.2 step 3), or with a tree reading ([`SurfaceWalk`]) the shader of the tree walk.
    pub fn shader_at_grid_post(&self, block: &GridBlock, col: u32, row: u32, ground: Ground) -> ShaderResult {
        if self.opts.walk != SurfaceWalk::Separate {
            return self.at_grid_post(block, col, row, ground).shader;
        }
        let (x, z) = block.grid.post(col, row);
        self.shader_pass_at_with(&block.tiles, x, z, ground)
    }

    /// Both passes at (x, z); `on_grid` is the block and frame of a grid post (shared slope
    /// traces), `None` for a free point.
    fn at_framed(&self, tiles: &SurfaceTiles, x: f32, z: f32, on_grid: Option<(&GridBlock, PostFrame)>, ground: Ground) -> SurfaceResult {
        if self.opts.walk != SurfaceWalk::Separate {
            return self.tree_at_with(tiles, x, z, on_grid, ground);
        }
        let shader = self.shader_pass_at_with(tiles, x, z, ground);
        let mut later = LaterPass { ground, opts: &self.opts, result: SurfaceResult { shader, ..Default::default() } };
        walk_point(&self.later_plan, &tiles.later, x, z, &mut later);
        later.result
    }

    fn tree_at_with(&self, tiles: &SurfaceTiles, x: f32, z: f32, on_grid: Option<(&GridBlock, PostFrame)>, ground: Ground) -> SurfaceResult {
        let final_shader = if self.opts.walk.tree_shader() { 0 } else { self.shader_pass_at_with(tiles, x, z, ground).family };
        let later = LaterPass { ground, opts: &self.opts, result: SurfaceResult::default() };
        let mut walk = TreeWalk { h: 0.0, final_shader, later, layer: 0, slope: self.slope_neighbourhood(tiles, x, z, on_grid) };
        walk_point(&self.all_plan, &tiles.all, x, z, &mut walk);
        walk.later.result
    }

    /// [`SlopeHeight::Tree`]'s neighbourhood of a post, `None` under the other readings.
    fn slope_neighbourhood<'a>(
        &'a self,
        tiles: &'a SurfaceTiles,
        x: f32,
        z: f32,
        on_grid: Option<(&'a GridBlock, PostFrame)>,
    ) -> Option<SlopeNeighbourhood<'a>> {
        if !self.opts.tree_slopes() {
            return None;
        }
        let half = self.all_plan.half_width;
        let spacing = tiles.slope_spacing;
        // The post's global indices for the quad diagonals (kernels/surface.wgsl computes
        // the same f32 expression).
        let (gx, gz) = (((x + half) / spacing + 0.5).floor() as i64, ((z + half) / spacing + 0.5).floor() as i64);
        let (frame, traces) = match on_grid {
            Some((block, frame)) => (frame, TraceSource::Block(block)),
            None => (PostFrame::free(x, z), TraceSource::Own(std::cell::OnceCell::new())),
        };
        Some(SlopeNeighbourhood { plan: &self.all_plan, tile: &tiles.all, frame, spacing, gx, gz, traces, last: std::cell::Cell::new(None) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_units_are_the_runtime_division() {
        // Through black_box, so the division below runs on this CPU, not in the compiler.
        for v in 0..=255u8 {
            let runtime = f32::from(std::hint::black_box(v)) / std::hint::black_box(255.0f32);
            assert_eq!(BYTE_UNITS[usize::from(v)].to_bits(), runtime.to_bits(), "byte {v}");
        }
    }

    #[test]
    fn stack_reading_matches_the_spec_examples() {
        // swg-trn §5.9: family 2 at 1.0, then 6 at 0.3 → 70 / 30 %.
        let s = FloraStack(vec![(2, 1.0), (6, 0.3)]);
        let p = s.probabilities();
        assert_eq!(p.len(), 2);
        assert!((p[0].1 - 0.7).abs() < 1e-6 && (p[1].1 - 0.3).abs() < 1e-6, "{p:?}");
        assert_eq!(s.most_likely().0, 2);
        // 2, then 6 at 0.3, then 6 at 0.4 → 42 / 58 %.
        let s = FloraStack(vec![(2, 1.0), (6, 0.3), (6, 0.4)]);
        let p = s.probabilities();
        assert!((p[0].1 - 0.42).abs() < 1e-6 && (p[1].1 - 0.58).abs() < 1e-6, "{p:?}");
        assert_eq!(s.most_likely().0, 6);
        assert_eq!(FloraStack(vec![(3, 0.0)]).most_likely(), (0, 0.0));
        assert_eq!(FloraStack::default().most_likely(), (0, 0.0));
    }

    #[test]
    fn most_likely_equals_the_reading_of_the_probabilities() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        for _ in 0..20_000 {
            // Short and long stacks, repeated families, densities with ties, 0, 1 and above.
            let len = next(20) as usize;
            let s = FloraStack((0..len).map(|_| (next(5) as i32 - 1, [0.0, 0.25, 0.5, 1.0, 1.5, 0.3][next(6) as usize])).collect());
            let (got, want) = (s.most_likely(), most_likely_of(&s.probabilities()));
            assert_eq!((got.0, got.1.to_bits()), (want.0, want.1.to_bits()), "{s:?}");
        }
    }

    #[test]
    fn shader_over_compositing() {
        let mut s = ShaderResult::default();
        s.over(5, 1.0);
        s.over(7, 0.25);
        let w5 = s.splat.iter().find(|e| e.0 == 5).unwrap().1;
        let w7 = s.splat.iter().find(|e| e.0 == 7).unwrap().1;
        assert_eq!((w5, w7), (0.75, 0.25));
        for f in 10..20 {
            s.over(f, 0.5);
        }
        assert!(s.splat.iter().all(|e| e.0 >= 10), "the oldest, weakest contributions are dropped: {:?}", s.splat);
    }
}
