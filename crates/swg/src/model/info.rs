//! A summary of a terrain file for `trnbake info`: header, family and layer counts, what the
//! layers reference, and warnings (unknown chunks, references to missing families).

use super::layer::{walk_layers, walk_raw, LayerItem};
use super::rules::RuleKind;
use super::{RawNode, Terrain};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Serialize)]
pub struct Info {
    pub version: u16,
    pub source_file: String,
    pub map_width: f32,
    pub chunk_width: f32,
    pub tiles_per_chunk: i32,
    pub pole_spacing: f32,
    /// Posts on a side at the pole spacing (map width / spacing + 1).
    pub posts_per_side: u64,
    pub global_water: Option<f32>,
    pub families: BTreeMap<&'static str, usize>,
    pub layers: usize,
    pub enabled_layers: usize,
    pub max_depth: usize,
    /// Rule counts keyed by `TAG vvvv`, with how many are disabled.
    pub rules: BTreeMap<String, RuleCount>,
    pub referenced_fractal_families: BTreeSet<i32>,
    pub referenced_bitmap_families: BTreeSet<i32>,
    /// Bitmap files (TGA paths relative to the data root) that enabled bitmap filters need.
    pub bitmap_files: BTreeSet<String>,
    pub has_baked_maps: bool,
    pub has_flora_maps: bool,
    pub warnings: Vec<String>,
}

#[derive(Debug, Default, Serialize)]
pub struct RuleCount {
    pub total: usize,
    pub disabled: usize,
}

/// Family ids referenced by a rule, by family kind.
pub fn referenced_families(kind: &RuleKind) -> Vec<(FamilyKind, i32)> {
    use FamilyKind::*;
    use RuleKind as K;
    match kind {
        K::FilterFractal(f) => vec![(Fractal, f.family_id)],
        K::FilterBitmap(f) => vec![(Bitmap, f.family_id)],
        K::FilterShader(f) => vec![(Shader, f.family_id)],
        K::HeightFractal(a) => vec![(Fractal, a.family_id)],
        K::ColorRampFractal(a) => vec![(Fractal, a.family_id)],
        K::ShaderConstant(a) => vec![(Shader, a.family_id)],
        K::ShaderReplace(a) => vec![(Shader, a.source_family_id), (Shader, a.destination_family_id)],
        K::Environment(a) => vec![(Environment, a.family_id)],
        K::FloraCollidable(a) | K::FloraNonCollidable(a) => vec![(Flora, a.family_id)],
        K::FloraRadialNear(a) | K::FloraRadialFar(a) => vec![(Radial, a.family_id)],
        _ => vec![],
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FamilyKind {
    Shader,
    Flora,
    Radial,
    Environment,
    Fractal,
    Bitmap,
}

impl FamilyKind {
    pub fn name(self) -> &'static str {
        match self {
            FamilyKind::Shader => "shader",
            FamilyKind::Flora => "flora",
            FamilyKind::Radial => "radial",
            FamilyKind::Environment => "environment",
            FamilyKind::Fractal => "fractal",
            FamilyKind::Bitmap => "bitmap",
        }
    }
}

impl Terrain {
    /// Whether a family of this kind and id exists.
    pub fn has_family(&self, kind: FamilyKind, id: i32) -> bool {
        let g = &self.generator;
        match kind {
            FamilyKind::Shader => g.shader_families.is_raw() || g.shader_families.families().iter().any(|f| f.id == id),
            FamilyKind::Flora => g.flora_families.is_raw() || g.flora_families.families().iter().any(|f| f.id == id),
            FamilyKind::Radial => g.radial_families.is_raw() || g.radial_families.families().iter().any(|f| f.id == id),
            FamilyKind::Environment => g.environment_families.is_raw() || g.environment_families.families().iter().any(|f| f.id == id),
            FamilyKind::Fractal => g.fractal_families.is_raw() || g.fractal_families.families().iter().any(|f| f.id == id),
            FamilyKind::Bitmap => g.bitmap_families.as_ref().is_some_and(|b| b.is_raw() || b.families().iter().any(|f| f.id == id)),
        }
    }

    pub fn info(&self) -> Info {
        let h = &self.header;
        let g = &self.generator;
        let spacing = h.pole_spacing();
        let mut families = BTreeMap::new();
        families.insert("shader", g.shader_families.families().len());
        families.insert("flora", g.flora_families.families().len());
        families.insert("radial", g.radial_families.families().len());
        families.insert("environment", g.environment_families.families().len());
        families.insert("fractal", g.fractal_families.families().len());
        families.insert("bitmap", g.bitmap_families.as_ref().map_or(0, |b| b.families().len()));

        let mut info = Info {
            version: self.version,
            source_file: h.source_file.clone(),
            map_width: h.map_width,
            chunk_width: h.chunk_width,
            tiles_per_chunk: h.tiles_per_chunk,
            pole_spacing: spacing,
            posts_per_side: if spacing > 0.0 && h.map_width.is_finite() && h.map_width > 0.0 { ((h.map_width / spacing) as u64).saturating_add(1) } else { 0 },
            global_water: h.use_global_water_table.get().then_some(h.global_water_height),
            families,
            layers: 0,
            enabled_layers: 0,
            max_depth: 0,
            rules: BTreeMap::new(),
            referenced_fractal_families: BTreeSet::new(),
            referenced_bitmap_families: BTreeSet::new(),
            bitmap_files: BTreeSet::new(),
            has_baked_maps: self.baked_maps.is_some(),
            has_flora_maps: self.flora_map.is_some(),
            warnings: Vec::new(),
        };
        for (name, raw) in [
            ("shader", g.shader_families.is_raw()),
            ("flora", g.flora_families.is_raw()),
            ("radial", g.radial_families.is_raw()),
            ("environment", g.environment_families.is_raw()),
            ("fractal", g.fractal_families.is_raw()),
            ("bitmap", g.bitmap_families.as_ref().is_some_and(|b| b.is_raw())),
        ] {
            if raw {
                info.warnings.push(format!("the {name} family group has a version this reader does not know; kept as raw bytes"));
            }
        }
        let mut warnings = Vec::new();
        walk_layers(&g.layers, 0, &mut |layer, depth| {
            info.layers += 1;
            info.max_depth = info.max_depth.max(depth + 1);
            if layer.enabled.get() {
                info.enabled_layers += 1;
            }
            for rule in layer.rules() {
                let (tag, v) = rule.kind.tag_and_version();
                let c = info.rules.entry(format!("{} {v:04}", String::from_utf8_lossy(tag))).or_default();
                c.total += 1;
                if !rule.enabled.get() {
                    c.disabled += 1;
                }
                for (kind, id) in referenced_families(&rule.kind) {
                    if rule.enabled.get() {
                        match kind {
                            FamilyKind::Fractal => {
                                info.referenced_fractal_families.insert(id);
                            }
                            FamilyKind::Bitmap => {
                                info.referenced_bitmap_families.insert(id);
                                if let Some(f) = g.bitmap_families.as_ref().and_then(|b| b.families().iter().find(|f| f.id == id)) {
                                    info.bitmap_files.insert(f.path.clone());
                                }
                            }
                            _ => {}
                        }
                    }
                    if !self.has_family(kind, id) {
                        warnings.push(format!(
                            "layer `{}`: {} `{}` refers to {} family {id}, which does not exist",
                            layer.name,
                            String::from_utf8_lossy(tag),
                            rule.name,
                            kind.name()
                        ));
                    }
                }
            }
        });
        info.warnings.extend(warnings);
        let mut raws: BTreeMap<String, usize> = BTreeMap::new();
        walk_raw(&g.layers, &mut |r: &RawNode| {
            *raws.entry(describe_raw(r)).or_default() += 1;
        });
        for r in &self.extra {
            *raws.entry(format!("top-level {}", describe_raw(r))).or_default() += 1;
        }
        for (what, n) in raws {
            info.warnings.push(format!("{n} × unknown {what} kept as raw bytes"));
        }
        info
    }
}

fn describe_raw(r: &RawNode) -> String {
    match &r.0 {
        crate::iff::Node::Form(f) => match f.children.first() {
            Some(crate::iff::Node::Form(v)) if v.tag.version().is_some() => format!("FORM {} {}", f.tag, v.tag),
            _ => format!("FORM {}", f.tag),
        },
        crate::iff::Node::Chunk(c) => format!("chunk {}", c.tag),
    }
}

/// The layer tree as indented text for `info --tree`.
pub fn tree_text(items: &[LayerItem]) -> String {
    fn go(items: &[LayerItem], depth: usize, out: &mut String) {
        for item in items {
            let pad = "  ".repeat(depth);
            match item {
                LayerItem::Layer(l) => {
                    let mut flags = Vec::new();
                    if !l.enabled.get() {
                        flags.push("disabled");
                    }
                    if l.invert_boundaries.get() {
                        flags.push("invert boundaries");
                    }
                    if l.invert_filters.get() {
                        flags.push("invert filters");
                    }
                    let flags = if flags.is_empty() { String::new() } else { format!(" ({})", flags.join(", ")) };
                    out.push_str(&format!("{pad}LAYR \"{}\"{flags}\n", l.name));
                    go(&l.children, depth + 1, out);
                }
                LayerItem::Rule(r) => {
                    let (tag, v) = r.kind.tag_and_version();
                    let off = if r.enabled.get() { "" } else { " (disabled)" };
                    out.push_str(&format!("{pad}{} {v:04} \"{}\"{off}\n", String::from_utf8_lossy(tag), r.name));
                }
                LayerItem::Raw(r) => out.push_str(&format!("{pad}{} (raw)\n", describe_raw(r))),
            }
        }
    }
    let mut s = String::new();
    go(items, 0, &mut s);
    s
}
