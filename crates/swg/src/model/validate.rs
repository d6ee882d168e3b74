//! Validation of a terrain model before it is written (used by `trnbake compile` on
//! hand-edited JSON). Like gltf-json's validation pass it reports *every* problem with a
//! JSON path to it, not just the first.

use super::families::{FamilyCodec, Group, RadialChildren};
use super::info::referenced_families;
use super::layer::{Layer, LayerItem};
use super::rules::RuleKind;
use super::Terrain;
use std::collections::HashSet;
use std::fmt;

/// One problem at a JSON path such as `generator.layers[3].children[1].family_id`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

struct Checker<'a> {
    terrain: &'a Terrain,
    problems: Vec<Problem>,
}

impl Checker<'_> {
    fn push(&mut self, path: &str, message: impl Into<String>) {
        self.problems.push(Problem { path: path.to_string(), message: message.into() });
    }

    /// Strings are written as 8-bit Latin-1 with a NUL terminator (swg-trn §1).
    fn string(&mut self, path: &str, s: &str) {
        if let Some(c) = s.chars().find(|&c| u32::from(c) > 255 || c == '\0') {
            self.push(path, format!("character {c:?} cannot be stored (strings are 8-bit Latin-1 without NUL)"));
        }
    }

    fn ids<T: FamilyCodec>(&mut self, path: &str, group: &Group<T>, id: impl Fn(&T) -> i32, name: impl Fn(&T) -> &str) {
        // The reader decides known or raw by the group's version FORM (swg-trn §3): a known
        // group with a version it does not know would be written and then read back as raw,
        // and a raw group that holds a known version would read back as known (fuzz finding,
        // compile_json). Either way `compile` would not write what the JSON says.
        match group {
            Group::Known { version, .. } if !T::knows_version(*version) => {
                self.push(&format!("{path}.version"), format!("group version {version} is not one the reader knows; give the group as `raw`"))
            }
            Group::Raw { raw } => match Group::<T>::read(&raw.0, String::new()) {
                Ok(Group::Raw { .. }) => {}
                Ok(Group::Known { version, .. }) => {
                    self.push(&format!("{path}.raw"), format!("reads back as a known version {version} group; give it as `version` and `families`"))
                }
                Err(e) => self.push(&format!("{path}.raw"), format!("does not read back as a group: {e}")),
            },
            Group::Known { .. } => {}
        }
        let mut seen = HashSet::new();
        for (i, f) in group.families().iter().enumerate() {
            if !seen.insert(id(f)) {
                self.push(&format!("{path}.families[{i}].id"), format!("family id {} is used twice", id(f)));
            }
            self.string(&format!("{path}.families[{i}].name"), name(f));
        }
    }

    fn layer_items(&mut self, path: &str, items: &[LayerItem]) {
        for (i, item) in items.iter().enumerate() {
            let p = format!("{path}[{i}]");
            match item {
                LayerItem::Layer(l) => self.layer(&p, l),
                LayerItem::Rule(r) => {
                    self.string(&format!("{p}.name"), &r.name);
                    self.rule(&p, &r.kind);
                }
                LayerItem::Raw(_) => {}
            }
        }
    }

    fn layer(&mut self, path: &str, l: &Layer) {
        self.string(&format!("{path}.name"), &l.name);
        self.string(&format!("{path}.notes"), &l.notes);
        self.layer_items(&format!("{path}.children"), &l.children);
    }

    fn rule(&mut self, path: &str, kind: &RuleKind) {
        for (fk, id) in referenced_families(kind) {
            if !self.terrain.has_family(fk, id) {
                self.push(path, format!("{} family id {id} is referenced but missing", fk.name()));
            }
        }
        match kind {
            RuleKind::Polyline(p) if !matches!(p.version, 1 | 3) => {
                self.push(&format!("{path}.version"), format!("polyline version {} is not 1 or 3", p.version))
            }
            RuleKind::FilterBitmap(b) => {
                if !matches!(b.version, 0 | 1) {
                    self.push(&format!("{path}.version"), format!("bitmap filter version {} is not 0 or 1", b.version));
                } else if b.version == 1 && b.gain.is_none() {
                    self.push(&format!("{path}.gain"), "version 1 bitmap filters need a gain");
                }
            }
            RuleKind::Rectangle(r) => {
                if r.water_type.is_some() && r.water.is_none() {
                    self.push(&format!("{path}.water_type"), "a water type needs `water` (version 0004 has both)");
                }
                if let Some(w) = &r.water {
                    self.string(&format!("{path}.water.shader"), &w.shader);
                }
            }
            RuleKind::Polygon(p) => self.string(&format!("{path}.water_shader"), &p.water_shader),
            RuleKind::Road(r) => {
                if r.heights.is_some() != r.has_fixed_heights.is_some() {
                    self.push(path, "`heights` and `has_fixed_heights` go together (version 0006) or are both absent (0005)");
                }
            }
            RuleKind::River(r) => self.string(&format!("{path}.water_shader"), &r.water_shader),
            RuleKind::Ribbon(r) => self.string(&format!("{path}.water_shader"), &r.water_shader),
            RuleKind::ColorRampHeight(c) => self.string(&format!("{path}.ramp"), &c.ramp),
            RuleKind::ColorRampFractal(c) => self.string(&format!("{path}.ramp"), &c.ramp),
            _ => {}
        }
    }
}

impl Terrain {
    /// Every problem that would make the model unwritable or inconsistent.
    pub fn validate(&self) -> Vec<Problem> {
        let mut c = Checker { terrain: self, problems: Vec::new() };
        if !(13..=15).contains(&self.version) {
            c.push("version", format!("PTAT version {} is not 13, 14 or 15", self.version));
        }
        let h = &self.header;
        if (self.version == 13) != h.extra_0013.is_some() {
            c.push("header.extra_0013", "present exactly when the version is 13");
        }
        if !(h.map_width.is_finite() && h.map_width > 0.0) {
            c.push("header.map_width", format!("map width {} must be a positive number", h.map_width));
        }
        c.string("header.source_file", &h.source_file);
        c.string("header.global_water_shader", &h.global_water_shader);
        let g = &self.generator;
        c.ids("generator.shader_families", &g.shader_families, |f| f.id, |f| &f.name);
        c.ids("generator.flora_families", &g.flora_families, |f| f.id, |f| &f.name);
        c.ids("generator.radial_families", &g.radial_families, |f| f.id, |f| &f.name);
        c.ids("generator.environment_families", &g.environment_families, |f| f.id, |f| &f.name);
        c.ids("generator.fractal_families", &g.fractal_families, |f| f.id, |f| &f.name);
        if let Some(b) = &g.bitmap_families {
            c.ids("generator.bitmap_families", b, |f| f.id, |f| &f.name);
            for (i, f) in b.families().iter().enumerate() {
                c.string(&format!("generator.bitmap_families.families[{i}].path"), &f.path);
            }
        }
        if let Group::Known { version, families } = &g.radial_families {
            for (i, f) in families.iter().enumerate() {
                let ok = matches!((version, &f.children), (3, RadialChildren::V3(_)) | (4, RadialChildren::V4(_)));
                if !ok {
                    c.push(
                        &format!("generator.radial_families.families[{i}].children"),
                        format!("children do not have the layout of radial group version {version}"),
                    );
                }
            }
        }
        c.layer_items("generator.layers", &g.layers);
        if let Some(m) = &self.flora_map {
            check_packed(&mut c, "flora_map", m);
        }
        if let Some(m) = &self.flora_height_map {
            check_packed(&mut c, "flora_height_map.values", &m.values);
        }
        c.problems
    }
}

fn check_packed(c: &mut Checker, path: &str, m: &super::header::PackedIntMap) {
    let ctl = &m.control;
    // width · height · bits can reach 2^96 (three u32 fields from the file, swg-trn §2.4):
    // checked, so a hostile control block is a problem, not an overflow panic (debug) or a
    // wrapped size that a short DATA happens to match (release). Found by fuzzing.
    let need = if ctl.bits_per_element == 0 {
        Some(1)
    } else {
        u64::from(ctl.width).checked_mul(u64::from(ctl.height)).and_then(|n| n.checked_mul(u64::from(ctl.bits_per_element))).map(|bits| bits.div_ceil(8))
    };
    match need {
        None => c.push(
            &format!("{path}.control"),
            format!("{}x{} elements of {} bits is more data than any file can hold", ctl.width, ctl.height, ctl.bits_per_element),
        ),
        Some(need) if m.data.0.len() as u64 != need => c.push(&format!("{path}.data"), format!("{} bytes, but the control block needs {need}", m.data.0.len())),
        Some(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::header::{Bytes, PackedIntMap, PackedMapControl};
    use super::Problem;

    /// The fuzz finding (shared/fuzz-findings/validate-overflow.trn), rebuilt in code: a flora
    /// map whose control block says 2^32−1 × 2^32−1 elements of 2^32−1 bits. The product
    /// overflows u64; it must be reported, not panic, and not wrap to a size the data matches.
    #[test]
    fn packed_map_size_overflow_is_a_problem() {
        let mut t = super::super::json::demo_terrain();
        assert!(t.validate().is_empty(), "the demo terrain is valid");
        let control = PackedMapControl { width: u32::MAX, height: u32::MAX, bits_per_element: u32::MAX, minimum_value: 0 };
        t.flora_map = Some(PackedIntMap { control, data: Bytes(vec![0; 16]) });
        let problems = t.validate();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].path, "flora_map.control");
        assert!(problems[0].message.contains("more data than any file can hold"), "{}", problems[0]);
        // 2^31 · 2^31 · 32 = 2^67 wraps to 0 in u64: a wrapped check would accept 0 bytes of data.
        let control = PackedMapControl { width: 1 << 31, height: 1 << 31, bits_per_element: 32, minimum_value: 0 };
        t.flora_map = Some(PackedIntMap { control, data: Bytes(Vec::new()) });
        let problems = t.validate();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].path, "flora_map.control");
    }

    /// compile_json fuzz finding: a JSON shader group with version 3 (the reader knows only
    /// 6) was written as SGRP/0003 and read back as a raw group. And the reverse: a raw
    /// group holding SGRP/0006 reads back as known. Both must be problems.
    #[test]
    fn family_group_versions_must_read_back_the_same() {
        use super::super::families::{Group, ShaderFamily};
        use crate::iff::{Form, Node, Tag};
        let mut t = super::super::json::demo_terrain();
        assert!(t.validate().is_empty());
        let Group::Known { version, .. } = &mut t.generator.shader_families else { panic!("demo groups are known") };
        *version = 3;
        let problems = t.validate();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].path, "generator.shader_families.version");
        // (Raw groups below hold no families, so the demo's references to them are problems
        // too; only the group's own problem is checked.)
        let ours = |p: &[Problem]| p.iter().filter(|p| p.path.starts_with("generator.shader_families")).cloned().collect::<Vec<_>>();
        let known = Node::Form(Form { tag: Tag(*b"SGRP"), children: vec![Node::Form(Form { tag: Tag(*b"0006"), children: vec![], offset: 0 })], offset: 0 });
        t.generator.shader_families = Group::<ShaderFamily>::Raw { raw: super::super::RawNode(known) };
        let problems = ours(&t.validate());
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].path, "generator.shader_families.raw");
        assert!(problems[0].message.contains("known version 6"), "{}", problems[0]);
        // A raw group with an unknown version is fine: it reads back raw.
        let unknown = Node::Form(Form { tag: Tag(*b"SGRP"), children: vec![Node::Form(Form { tag: Tag(*b"0099"), children: vec![], offset: 0 })], offset: 0 });
        t.generator.shader_families = Group::Raw { raw: super::super::RawNode(unknown) };
        assert!(ours(&t.validate()).is_empty(), "{:?}", t.validate());
    }
}
