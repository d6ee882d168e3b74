//! What a terrain exercises, as feature names, so a test can show that the golden corpus
//! covers every rule kind and version the writer supports (and every feather type, height
//! operation and fractal combination rule), and fail when one goes missing.

use std::collections::{BTreeSet, HashSet};
use trnbake_swg::model::layer::{Layer, LayerItem};
use trnbake_swg::model::rules::RuleKind;
use trnbake_swg::model::Terrain;

/// `TAG vvvv`, as `trnbake info` names rule versions.
pub fn tag_version_name(tag: &[u8; 4], version: u16) -> String {
    format!("{} {version:04}", String::from_utf8_lossy(tag))
}

/// The features a terrain exercises. Only enabled rules of enabled layers (whose ancestors
/// are enabled) count, since the evaluator skips the rest:
///
/// - `BCIR 0002`: a rule tag and version;
/// - `BCIR feather 3`, `FHGT feather 0`: feather types of boundaries and range filters;
/// - `AHCN operation 2`, `AHFR operation 1`: height operations;
/// - `fractal rule 4`, `fractal bias`, `fractal gain`: of fractal families that enabled
///   rules use;
/// - `FBIT gain`, `FBIT no gain`; `water BREC`, `water BPOL`, `water global`;
/// - `layer invert boundaries`, `layer invert filters`, `layer nested`, plus
///   `layer disabled` and `rule disabled` for what is skipped.
pub fn features(t: &Terrain) -> BTreeSet<String> {
    let mut f = BTreeSet::new();
    let mut fractals = HashSet::new();
    if t.header.use_global_water_table.get() {
        f.insert("water global".to_string());
    }
    for item in &t.generator.layers {
        if let LayerItem::Layer(l) = item {
            layer(l, 0, &mut f, &mut fractals);
        }
    }
    for fam in t.generator.fractal_families.families().iter().filter(|fam| fractals.contains(&fam.id)) {
        f.insert(format!("fractal rule {}", fam.fractal.combination_rule));
        if fam.fractal.use_bias.get() {
            f.insert("fractal bias".into());
        }
        if fam.fractal.use_gain.get() {
            f.insert("fractal gain".into());
        }
    }
    f
}

fn layer(l: &Layer, depth: usize, f: &mut BTreeSet<String>, fractals: &mut HashSet<i32>) {
    if !l.enabled.get() {
        f.insert("layer disabled".into());
        return;
    }
    for (flag, name) in [(l.invert_boundaries.get(), "layer invert boundaries"), (l.invert_filters.get(), "layer invert filters")] {
        if flag {
            f.insert(name.into());
        }
    }
    if depth > 0 {
        f.insert("layer nested".into());
    }
    for r in l.rules() {
        if !r.enabled.get() {
            f.insert("rule disabled".into());
            continue;
        }
        let (tag, version) = r.kind.tag_and_version();
        let tag_name = String::from_utf8_lossy(tag).into_owned();
        f.insert(tag_version_name(tag, version));
        use RuleKind as K;
        let feather = match &r.kind {
            K::Circle(b) => Some(b.feather_type),
            K::Rectangle(b) => Some(b.feather_type),
            K::Polygon(b) => Some(b.feather_type),
            K::Polyline(b) => Some(b.feather_type),
            K::FilterHeight(x) | K::FilterSlope(x) | K::FilterDirection(x) => Some(x.feather_type),
            K::FilterFractal(x) => Some(x.feather_type),
            K::FilterBitmap(x) => Some(x.feather_type),
            K::Road(x) => Some(x.height_feather_type),
            K::River(x) => Some(x.feather_type),
            _ => None,
        };
        if let Some(ft) = feather {
            f.insert(format!("{tag_name} feather {ft}"));
        }
        match &r.kind {
            K::HeightConstant(a) => {
                f.insert(format!("AHCN operation {}", a.operation));
            }
            K::HeightFractal(a) => {
                f.insert(format!("AHFR operation {}", a.operation));
                fractals.insert(a.family_id);
            }
            K::FilterFractal(x) => {
                fractals.insert(x.family_id);
            }
            K::ColorRampFractal(x) => {
                fractals.insert(x.family_id);
            }
            K::FilterBitmap(x) => {
                f.insert(if x.gain.is_some() { "FBIT gain" } else { "FBIT no gain" }.into());
            }
            K::Rectangle(b) if b.water.as_ref().is_some_and(|w| w.enabled.get()) => {
                f.insert("water BREC".into());
            }
            K::Polygon(b) if b.water_enabled.get() => {
                f.insert("water BPOL".into());
            }
            _ => {}
        }
    }
    for c in l.sublayers() {
        layer(c, depth + 1, f, fractals);
    }
}
