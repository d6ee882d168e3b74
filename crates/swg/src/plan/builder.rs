//! The builder: flattens a terrain's layer tree into a [`BakePlan`] for one pass (pre-order,
//! subtree-end indices, bounding boxes), pruning what the pass cannot see.

use std::collections::HashMap;

use super::bitmaps::load_family_bitmap;
use super::*;
use crate::model::bitmap::Bitmap;
use crate::model::layer::Layer;
use crate::model::rules::{RuleCategory, RuleKind};
use crate::model::Terrain;
use crate::noise::{Fractal, FractalParams, PERLIN_TABLE_LEN};

fn union(a: [f32; 4], b: [f32; 4]) -> [f32; 4] {
    [a[0].min(b[0]), a[1].min(b[1]), a[2].max(b[2]), a[3].max(b[3])]
}

const EMPTY: [f32; 4] = [f32::MAX, f32::MAX, f32::MIN, f32::MIN];
pub(super) const EVERYWHERE: [f32; 4] = [-UNBOUNDED, -UNBOUNDED, UNBOUNDED, UNBOUNDED];

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

/// Whether `layer` is a pure group: no enabled boundaries, filters or affectors, only child
/// layers. swg-trn §5.3 "Points to note" (amended, turn 3, PSWG's reading): such a layer passes
/// amount 1 to its children whatever its invert flags, where CORE3's `1 − 1 = 0` would silence
/// its whole subtree. Judged on the file's rules, not on what one pass keeps: an affector of
/// another pass (a shader affector in the height plan) still makes the layer an ordinary one,
/// so every pass reads the layer alike. Raw items (rules of unknown versions) are never
/// evaluated, so they do not count.
fn is_group_only(layer: &Layer) -> bool {
    !layer.rules().any(|r| r.enabled.get())
}

fn subtree_has_affector(layer: &Layer, pass: Pass, opts: &HeightOptions) -> bool {
    layer.enabled.get()
        && (layer.rules().any(|r| r.enabled.get() && is_pass_affector(&r.kind, pass, opts)) || layer.sublayers().any(|l| subtree_has_affector(l, pass, opts)))
}

pub(super) struct Builder<'a> {
    pub(super) terrain: &'a Terrain,
    pub(super) opts: &'a HeightOptions,
    pub(super) pass: Pass,
    pub(super) plan: BakePlan,
    pub(super) fractal_index: HashMap<i32, u32>,
    pub(super) bitmap_index: HashMap<i32, u32>,
    /// Names of the open layers, for `BakePlan::names`.
    pub(super) path: Vec<String>,
}

impl Builder<'_> {
    /// Add `layer` (if enabled and useful) and its subtree. `parent_bounds` limits where it can act.
    pub(super) fn layer(&mut self, layer: &Layer, depth: usize, parent_bounds: [f32; 4]) -> Result<(), PlanError> {
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
        // A pure group's invert flags are dropped here rather than in the walks, so the CPU
        // walks and their WGSL twins read the amended §5.3 alike: with no boundaries and no
        // filters the amount is 1 before inversion, and stays 1.
        let group = is_group_only(layer);
        if layer.invert_boundaries.get() && !group {
            rec.flags |= LAYER_INVERT_BOUNDARIES;
        }
        if layer.invert_filters.get() && !group {
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
                                (Pass::All, true) if self.opts.roads => {
                                    vec![self.affector(&rule.kind, &layer.name)?, self.surface_affector(&rule.kind, &layer.name)?]
                                }
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
        let fam = self.terrain.generator.bitmap_families.as_ref().and_then(|g| g.families().iter().find(|f| f.id == family_id));
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
                    self.plan.warnings.push(format!("layer `{layer}`: fractal family {} is missing; the height fractal is skipped", f.family_id));
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
                a.index = self.road(
                    &r.points,
                    &r.segments,
                    if fixed { r.heights.as_deref() } else { None },
                    r.width,
                    r.height_feather_type,
                    r.height_feather_amount,
                    0.0,
                );
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
