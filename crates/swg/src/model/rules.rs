//! Boundaries, filters and affectors (swg-trn §4.3–§4.5): one typed variant per tag, read
//! from and written to the exact bytes of every version found in real files.

use super::codec::{chunk, chunk_of, form, payload_struct, version_form, Bool32, Codec, FormReader, PayloadReader, Point2, Point3, Rgb};
use crate::iff::{FormatError, Node, Tag};
use serde::{Deserialize, Serialize};

/// Which part of the layer a rule belongs to (swg-trn §4.1: boundaries, filters, affectors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleCategory {
    Boundary,
    Filter,
    Affector,
}

/// A boundary, filter or affector with its item header (IHDR: enabled flag and editor name).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    pub enabled: Bool32,
    pub name: String,
    #[serde(flatten)]
    pub kind: RuleKind,
}

payload_struct! {
    /// BCIR 0002. featherAmount is a fraction of the radius (swg-trn §4.3).
    pub struct BoundaryCircle { pub center_x: f32, pub center_z: f32, pub radius: f32, pub feather_type: i32, pub feather_amount: f32 }
}

payload_struct! {
    /// Local water of BREC 0003/0004 (swg-trn §4.3).
    pub struct RectangleWater {
        pub enabled: Bool32,
        /// Second flag, meaning unknown (probably "use the global water table height").
        pub use_global_height: Bool32,
        pub height: f32,
        pub shader_size: f32,
        pub shader: String,
    }
}

/// BREC 0002/0003/0004: the version follows from which optional parts are present.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoundaryRectangle {
    pub x0: f32,
    pub z0: f32,
    pub x1: f32,
    pub z1: f32,
    pub feather_type: i32,
    /// A fraction of the shorter side's half (swg-trn §5.4).
    pub feather_amount: f32,
    /// Version 0003 and up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub water: Option<RectangleWater>,
    /// Version 0004: 0 = water, 1 = lava.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub water_type: Option<i32>,
}

/// BPOL 0005/0007 (0007 adds `water_type` before the shader name).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoundaryPolygon {
    pub points: Vec<Point2>,
    pub feather_type: i32,
    /// In metres, not a fraction; never clamped (swg-trn §4.3).
    pub feather_distance: f32,
    pub water_enabled: Bool32,
    pub water_height: f32,
    pub water_shader_size: f32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub water_type: Option<i32>,
    pub water_shader: String,
}

/// BPLN 0001/0003 (the same layout). `width` acts as a half-width (swg-trn §5.4).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoundaryPolyline {
    pub version: u16,
    pub points: Vec<Point2>,
    pub feather_type: i32,
    pub feather_amount: f32,
    pub width: f32,
}

payload_struct! {
    /// FHGT 0002, FSLP 0002 and FDIR 0000 share this layout (swg-trn §4.4).
    pub struct RangeFilter { pub low: f32, pub high: f32, pub feather_type: i32, pub feather_amount: f32 }
}

payload_struct! {
    /// FFRA 0005 PARM.
    pub struct FilterFractal { pub family_id: i32, pub feather_type: i32, pub feather_amount: f32, pub low: f32, pub high: f32, pub scale_y: f32 }
}

/// FBIT 0000/0001 PARM. 0001 always has the gain; 0000 from community editors may carry it too.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FilterBitmap {
    pub version: u16,
    pub family_id: i32,
    pub feather_type: i32,
    pub feather_amount: f32,
    pub low: f32,
    pub high: f32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gain: Option<f32>,
}

payload_struct! { pub struct FilterShader { pub family_id: i32 } }
payload_struct! { pub struct HeightConstant { pub operation: i32, pub height: f32 } }
payload_struct! { pub struct HeightFractal { pub family_id: i32, pub operation: i32, pub scale_y: f32 } }
payload_struct! { pub struct HeightTerrace { pub flat_ratio: f32, pub terrace_height: f32 } }
payload_struct! { pub struct ColorConstant { pub operation: i32, pub color: Rgb } }
payload_struct! { pub struct ColorRampHeight { pub operation: i32, pub low: f32, pub high: f32, pub ramp: String } }
payload_struct! { pub struct ColorRampFractal { pub family_id: i32, pub operation: i32, pub ramp: String } }
payload_struct! {
    pub struct ShaderConstant { pub family_id: i32, pub use_feather_clamp_override: Bool32, pub feather_clamp_override: f32 }
}
payload_struct! {
    pub struct ShaderReplace {
        pub source_family_id: i32, pub destination_family_id: i32,
        pub use_feather_clamp_override: Bool32, pub feather_clamp_override: f32,
    }
}
payload_struct! {
    pub struct Environment { pub family_id: i32, pub use_feather_clamp_override: Bool32, pub feather_clamp_override: f32 }
}
payload_struct! { pub struct Exclude {} }
payload_struct! { pub struct Passable { pub passable: u8, pub feather_threshold: f32 } }
payload_struct! {
    /// AFSC/AFSN 0004 and AFDN/AFDF 0002 (swg-trn §4.5, §5.9).
    pub struct FloraAffector {
        pub family_id: i32,
        /// flagA: 1 = add.
        pub add: Bool32,
        /// flagB: 1 = remove all.
        pub remove_all: Bool32,
        pub use_density_override: Bool32,
        pub density_override: f32,
    }
}

/// AROA 0005/0006 (swg-trn §4.5). `segments` are the HDTA SGMT chunks: (x, height, z) samples.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Road {
    pub segments: Vec<Vec<Point3>>,
    pub points: Vec<Point2>,
    /// Version 0006: fixed heights per control point (may be empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heights: Option<Vec<f32>>,
    pub width: f32,
    pub family_id: i32,
    pub height_feather_type: i32,
    pub height_feather_amount: f32,
    pub shader_feather_type: i32,
    pub shader_feather_amount: f32,
    /// Version 0006.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_fixed_heights: Option<Bool32>,
}

/// ARIV 0005/0006 (swg-trn §4.5).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct River {
    pub segments: Vec<Vec<Point3>>,
    pub points: Vec<Point2>,
    pub width: f32,
    pub bank_family_id: i32,
    pub bottom_family_id: i32,
    pub feather_type: i32,
    pub feather_amount: f32,
    pub trench_depth: f32,
    pub velocity: f32,
    pub has_local_water_table: Bool32,
    pub water_depth: f32,
    pub water_width: f32,
    pub water_shader_size: f32,
    pub water_shader: String,
    /// Version 0006.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub water_type: Option<i32>,
}

payload_struct! {
    /// ARIB 0005 (swg-trn §4.5); points are (x, z, height).
    pub struct Ribbon {
        pub points: Vec<Point3>, pub width: f32, pub water_shader_size: f32, pub velocity: f32, pub cap_width: f32,
        pub terrain_family_id: i32, pub terrain_feather_type: i32, pub terrain_feather_amount: f32,
        pub water_shader: String, pub water_type: i32,
    }
}

/// Every rule kind, tagged by `type` in JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RuleKind {
    // Boundaries
    Circle(BoundaryCircle),
    Rectangle(BoundaryRectangle),
    Polygon(BoundaryPolygon),
    Polyline(BoundaryPolyline),
    // Filters
    FilterHeight(RangeFilter),
    FilterFractal(FilterFractal),
    FilterBitmap(FilterBitmap),
    FilterSlope(RangeFilter),
    FilterDirection(RangeFilter),
    FilterShader(FilterShader),
    // Affectors
    HeightConstant(HeightConstant),
    HeightFractal(HeightFractal),
    HeightTerrace(HeightTerrace),
    ColorConstant(ColorConstant),
    ColorRampHeight(ColorRampHeight),
    ColorRampFractal(ColorRampFractal),
    ShaderConstant(ShaderConstant),
    ShaderReplace(ShaderReplace),
    Environment(Environment),
    Exclude(Exclude),
    Passable(Passable),
    FloraCollidable(FloraAffector),
    FloraNonCollidable(FloraAffector),
    FloraRadialNear(FloraAffector),
    FloraRadialFar(FloraAffector),
    Road(Road),
    River(River),
    Ribbon(Ribbon),
}

/// Every rule tag and the versions this reader types and the writer writes (swg-trn §4.2);
/// anything else is kept raw. The golden corpus is checked against this list
/// (`tests/golden.rs`), so a newly typed version must also get a fixture.
pub const TYPED_RULES: &[(&[u8; 4], &[u16])] = &[
    (b"BCIR", &[2]),
    (b"BREC", &[2, 3, 4]),
    (b"BPOL", &[5, 7]),
    (b"BPLN", &[1, 3]),
    (b"FHGT", &[2]),
    (b"FFRA", &[5]),
    (b"FBIT", &[0, 1]),
    (b"FSLP", &[2]),
    (b"FDIR", &[0]),
    (b"FSHD", &[0]),
    (b"AHCN", &[0]),
    (b"AHFR", &[3]),
    (b"AHTR", &[4]),
    (b"ACCN", &[0]),
    (b"ACRH", &[0]),
    (b"ACRF", &[1]),
    (b"ASCN", &[1]),
    (b"ASRP", &[1]),
    (b"AENV", &[0]),
    (b"AEXC", &[0]),
    (b"APAS", &[0]),
    (b"AFSC", &[4]),
    (b"AFSN", &[4]),
    (b"AFDN", &[2]),
    (b"AFDF", &[2]),
    (b"AROA", &[5, 6]),
    (b"ARIV", &[5, 6]),
    (b"ARIB", &[5]),
];

fn known(tag: &[u8; 4], v: u16) -> bool {
    TYPED_RULES.iter().any(|(t, vs)| *t == tag && vs.contains(&v))
}

/// The category of a rule tag, judged by its first letter (B…, F…, A…).
pub fn category_of_tag(tag: Tag) -> Option<RuleCategory> {
    match tag.0[0] {
        b'B' => Some(RuleCategory::Boundary),
        b'F' => Some(RuleCategory::Filter),
        b'A' if tag.0 != *b"ADTA" => Some(RuleCategory::Affector),
        _ => None,
    }
}

impl RuleKind {
    pub fn category(&self) -> RuleCategory {
        use RuleKind::*;
        match self {
            Circle(_) | Rectangle(_) | Polygon(_) | Polyline(_) => RuleCategory::Boundary,
            FilterHeight(_) | FilterFractal(_) | FilterBitmap(_) | FilterSlope(_) | FilterDirection(_) | FilterShader(_) => RuleCategory::Filter,
            _ => RuleCategory::Affector,
        }
    }

    /// The IFF tag and version this rule is written as.
    pub fn tag_and_version(&self) -> (&'static [u8; 4], u16) {
        use RuleKind::*;
        match self {
            Circle(_) => (b"BCIR", 2),
            Rectangle(r) => (
                b"BREC",
                if r.water.is_none() {
                    2
                } else if r.water_type.is_none() {
                    3
                } else {
                    4
                },
            ),
            Polygon(p) => (b"BPOL", if p.water_type.is_some() { 7 } else { 5 }),
            Polyline(p) => (b"BPLN", p.version),
            FilterHeight(_) => (b"FHGT", 2),
            FilterFractal(_) => (b"FFRA", 5),
            FilterBitmap(b) => (b"FBIT", b.version),
            FilterSlope(_) => (b"FSLP", 2),
            FilterDirection(_) => (b"FDIR", 0),
            FilterShader(_) => (b"FSHD", 0),
            HeightConstant(_) => (b"AHCN", 0),
            HeightFractal(_) => (b"AHFR", 3),
            HeightTerrace(_) => (b"AHTR", 4),
            ColorConstant(_) => (b"ACCN", 0),
            ColorRampHeight(_) => (b"ACRH", 0),
            ColorRampFractal(_) => (b"ACRF", 1),
            ShaderConstant(_) => (b"ASCN", 1),
            ShaderReplace(_) => (b"ASRP", 1),
            Environment(_) => (b"AENV", 0),
            Exclude(_) => (b"AEXC", 0),
            Passable(_) => (b"APAS", 0),
            FloraCollidable(_) => (b"AFSC", 4),
            FloraNonCollidable(_) => (b"AFSN", 4),
            FloraRadialNear(_) => (b"AFDN", 2),
            FloraRadialFar(_) => (b"AFDF", 2),
            Road(r) => (b"AROA", if r.heights.is_some() { 6 } else { 5 }),
            River(r) => (b"ARIV", if r.water_type.is_some() { 6 } else { 5 }),
            Ribbon(_) => (b"ARIB", 5),
        }
    }
}

/// Read the item header `FORM IHDR { FORM 0001 { DATA: i32 enabled, string name } }`.
pub fn read_item_header(f: &mut FormReader) -> Result<(Bool32, String), FormatError> {
    let mut ihdr = f.form(Some(b"IHDR"))?;
    let mut v = ihdr.form(Some(b"0001"))?;
    let mut d = v.chunk(b"DATA")?;
    let enabled = d.read()?;
    let name = d.read()?;
    d.end()?;
    v.end()?;
    ihdr.end()?;
    Ok((enabled, name))
}

pub fn item_header_node(enabled: Bool32, name: &str) -> Node {
    let mut d = Vec::new();
    enabled.encode(&mut d);
    name.to_string().encode(&mut d);
    form(b"IHDR", vec![version_form(1, vec![chunk(b"DATA", d)])])
}

/// `FORM DATA { PARM }` wrappers used by FFRA, FBIT, AHFR and ACRF.
fn read_parm<'a>(f: &mut FormReader<'a>) -> Result<(FormReader<'a>, PayloadReader<'a>), FormatError> {
    let mut data = f.form(Some(b"DATA"))?;
    let parm = data.chunk(b"PARM")?;
    Ok((data, parm))
}

fn parm_node(payload: Vec<u8>) -> Node {
    form(b"DATA", vec![chunk(b"PARM", payload)])
}

fn encoded<T: Codec>(v: &T) -> Vec<u8> {
    let mut d = Vec::new();
    v.encode(&mut d);
    d
}

/// HDTA of roads and rivers: `FORM HDTA { FORM 0001 { SGMT × n } }`; each SGMT is packed
/// (x, height, z) triples with no count.
fn read_segments(f: &mut FormReader) -> Result<Vec<Vec<Point3>>, FormatError> {
    let mut hdta = f.form(Some(b"HDTA"))?;
    let mut v = hdta.form(Some(b"0001"))?;
    let mut segments = Vec::new();
    while v.peek().is_some() {
        let mut s = v.chunk(b"SGMT")?;
        if s.remaining() % 12 != 0 {
            return Err(s.error(format!("SGMT of {} bytes is not a whole number of 12-byte samples", s.remaining())));
        }
        let mut pts = Vec::with_capacity(s.remaining() / 12);
        while s.remaining() > 0 {
            pts.push(s.read()?);
        }
        segments.push(pts);
    }
    hdta.end()?;
    Ok(segments)
}

fn segments_node(segments: &[Vec<Point3>]) -> Node {
    let sg = segments
        .iter()
        .map(|s| {
            let mut d = Vec::with_capacity(s.len() * 12);
            for p in s {
                p.encode(&mut d);
            }
            chunk(b"SGMT", d)
        })
        .collect();
    form(b"HDTA", vec![version_form(1, sg)])
}

impl Rule {
    /// Read a rule FORM. `Ok(None)` when its tag or version is not one this reader types.
    pub fn read(node: &Node, path: String) -> Result<Option<Rule>, FormatError> {
        let Node::Form(outer_form) = node else { return Ok(None) };
        let tag = outer_form.tag.0;
        let version = match outer_form.children.first() {
            Some(Node::Form(v)) => v.tag.version(),
            _ => None,
        };
        let Some(version) = version.filter(|&v| known(&tag, v)) else { return Ok(None) };
        let mut outer = FormReader::open(node, path, None)?;
        let mut f = outer.form(None)?;
        let (enabled, name) = read_item_header(&mut f)?;
        let kind = read_kind(&tag, version, &mut f)?;
        f.end()?;
        outer.end()?;
        Ok(Some(Rule { enabled, name, kind }))
    }

    pub fn to_node(&self) -> Node {
        let (tag, version) = self.kind.tag_and_version();
        let mut children = vec![item_header_node(self.enabled, &self.name)];
        children.extend(write_kind(&self.kind));
        form(tag, vec![version_form(version, children)])
    }
}

fn read_kind(tag: &[u8; 4], version: u16, f: &mut FormReader) -> Result<RuleKind, FormatError> {
    use RuleKind as K;
    Ok(match tag {
        b"BCIR" => K::Circle(f.chunk_as(b"DATA")?),
        b"BREC" => {
            let mut d = f.chunk(b"DATA")?;
            let mut r = BoundaryRectangle {
                x0: d.read()?,
                z0: d.read()?,
                x1: d.read()?,
                z1: d.read()?,
                feather_type: d.read()?,
                feather_amount: d.read()?,
                water: None,
                water_type: None,
            };
            if version >= 3 {
                r.water = Some(d.read()?);
            }
            if version >= 4 {
                r.water_type = Some(d.read()?);
            }
            d.end()?;
            K::Rectangle(r)
        }
        b"BPOL" => {
            let mut d = f.chunk(b"DATA")?;
            let p = BoundaryPolygon {
                points: d.read()?,
                feather_type: d.read()?,
                feather_distance: d.read()?,
                water_enabled: d.read()?,
                water_height: d.read()?,
                water_shader_size: d.read()?,
                water_type: if version >= 7 { Some(d.read()?) } else { None },
                water_shader: d.read()?,
            };
            d.end()?;
            K::Polygon(p)
        }
        b"BPLN" => {
            let mut d = f.chunk(b"DATA")?;
            let p = BoundaryPolyline { version, points: d.read()?, feather_type: d.read()?, feather_amount: d.read()?, width: d.read()? };
            d.end()?;
            K::Polyline(p)
        }
        b"FHGT" => K::FilterHeight(f.chunk_as(b"DATA")?),
        b"FSLP" => K::FilterSlope(f.chunk_as(b"DATA")?),
        b"FDIR" => K::FilterDirection(f.chunk_as(b"DATA")?),
        b"FSHD" => K::FilterShader(f.chunk_as(b"DATA")?),
        b"FFRA" => {
            let (data, mut p) = read_parm(f)?;
            let v = p.read()?;
            p.end()?;
            data.end()?;
            K::FilterFractal(v)
        }
        b"FBIT" => {
            let (data, mut p) = read_parm(f)?;
            let mut b =
                FilterBitmap { version, family_id: p.read()?, feather_type: p.read()?, feather_amount: p.read()?, low: p.read()?, high: p.read()?, gain: None };
            // 0001 always has the gain; 0000 has it when 4 more bytes remain (swg-trn §4.4).
            if version >= 1 || p.remaining() >= 4 {
                b.gain = Some(p.read()?);
            }
            p.end()?;
            data.end()?;
            K::FilterBitmap(b)
        }
        b"AHCN" => K::HeightConstant(f.chunk_as(b"DATA")?),
        b"AHTR" => K::HeightTerrace(f.chunk_as(b"DATA")?),
        b"AHFR" => {
            let (data, mut p) = read_parm(f)?;
            let v = p.read()?;
            p.end()?;
            data.end()?;
            K::HeightFractal(v)
        }
        b"ACCN" => K::ColorConstant(f.chunk_as(b"DATA")?),
        b"ACRH" => K::ColorRampHeight(f.chunk_as(b"DATA")?),
        b"ACRF" => {
            let (data, mut p) = read_parm(f)?;
            let v = p.read()?;
            p.end()?;
            data.end()?;
            K::ColorRampFractal(v)
        }
        b"ASCN" => K::ShaderConstant(f.chunk_as(b"DATA")?),
        b"ASRP" => K::ShaderReplace(f.chunk_as(b"DATA")?),
        b"AENV" => K::Environment(f.chunk_as(b"DATA")?),
        b"AEXC" => K::Exclude(f.chunk_as(b"DATA")?),
        b"APAS" => K::Passable(f.chunk_as(b"DATA")?),
        b"AFSC" => K::FloraCollidable(f.chunk_as(b"DATA")?),
        b"AFSN" => K::FloraNonCollidable(f.chunk_as(b"DATA")?),
        b"AFDN" => K::FloraRadialNear(f.chunk_as(b"DATA")?),
        b"AFDF" => K::FloraRadialFar(f.chunk_as(b"DATA")?),
        b"AROA" => {
            let mut data = f.form(Some(b"DATA"))?;
            let segments = read_segments(&mut data)?;
            let mut d = data.chunk(b"DATA")?;
            let points = d.read()?;
            let heights = if version >= 6 { Some(d.read()?) } else { None };
            let r = Road {
                segments,
                points,
                heights,
                width: d.read()?,
                family_id: d.read()?,
                height_feather_type: d.read()?,
                height_feather_amount: d.read()?,
                shader_feather_type: d.read()?,
                shader_feather_amount: d.read()?,
                has_fixed_heights: if version >= 6 { Some(d.read()?) } else { None },
            };
            d.end()?;
            data.end()?;
            K::Road(r)
        }
        b"ARIV" => {
            let mut data = f.form(Some(b"DATA"))?;
            let segments = read_segments(&mut data)?;
            let mut d = data.chunk(b"DATA")?;
            let r = River {
                segments,
                points: d.read()?,
                width: d.read()?,
                bank_family_id: d.read()?,
                bottom_family_id: d.read()?,
                feather_type: d.read()?,
                feather_amount: d.read()?,
                trench_depth: d.read()?,
                velocity: d.read()?,
                has_local_water_table: d.read()?,
                water_depth: d.read()?,
                water_width: d.read()?,
                water_shader_size: d.read()?,
                water_shader: d.read()?,
                water_type: if version >= 6 { Some(d.read()?) } else { None },
            };
            d.end()?;
            data.end()?;
            K::River(r)
        }
        b"ARIB" => {
            let mut data = f.form(Some(b"DATA"))?;
            let r = data.chunk_as(b"DATA")?;
            data.end()?;
            K::Ribbon(r)
        }
        _ => unreachable!("`known` admits only the tags above"),
    })
}

fn write_kind(kind: &RuleKind) -> Vec<Node> {
    use RuleKind as K;
    let data = |d: Vec<u8>| vec![chunk(b"DATA", d)];
    match kind {
        K::Circle(v) => vec![chunk_of(b"DATA", v)],
        K::Rectangle(r) => {
            let mut d = Vec::new();
            for v in [r.x0, r.z0, r.x1, r.z1] {
                v.encode(&mut d);
            }
            r.feather_type.encode(&mut d);
            r.feather_amount.encode(&mut d);
            if let Some(w) = &r.water {
                w.encode(&mut d);
                if let Some(t) = r.water_type {
                    t.encode(&mut d);
                }
            }
            data(d)
        }
        K::Polygon(p) => {
            let mut d = encoded(&p.points);
            p.feather_type.encode(&mut d);
            p.feather_distance.encode(&mut d);
            p.water_enabled.encode(&mut d);
            p.water_height.encode(&mut d);
            p.water_shader_size.encode(&mut d);
            if let Some(t) = p.water_type {
                t.encode(&mut d);
            }
            p.water_shader.encode(&mut d);
            data(d)
        }
        K::Polyline(p) => {
            let mut d = encoded(&p.points);
            p.feather_type.encode(&mut d);
            p.feather_amount.encode(&mut d);
            p.width.encode(&mut d);
            data(d)
        }
        K::FilterHeight(v) | K::FilterSlope(v) | K::FilterDirection(v) => vec![chunk_of(b"DATA", v)],
        K::FilterShader(v) => vec![chunk_of(b"DATA", v)],
        K::FilterFractal(v) => vec![parm_node(encoded(v))],
        K::FilterBitmap(b) => {
            let mut d = encoded(&b.family_id);
            b.feather_type.encode(&mut d);
            b.feather_amount.encode(&mut d);
            b.low.encode(&mut d);
            b.high.encode(&mut d);
            if let Some(g) = b.gain {
                g.encode(&mut d);
            }
            vec![parm_node(d)]
        }
        K::HeightConstant(v) => vec![chunk_of(b"DATA", v)],
        K::HeightTerrace(v) => vec![chunk_of(b"DATA", v)],
        K::HeightFractal(v) => vec![parm_node(encoded(v))],
        K::ColorConstant(v) => vec![chunk_of(b"DATA", v)],
        K::ColorRampHeight(v) => vec![chunk_of(b"DATA", v)],
        K::ColorRampFractal(v) => vec![parm_node(encoded(v))],
        K::ShaderConstant(v) => vec![chunk_of(b"DATA", v)],
        K::ShaderReplace(v) => vec![chunk_of(b"DATA", v)],
        K::Environment(v) => vec![chunk_of(b"DATA", v)],
        K::Exclude(v) => vec![chunk_of(b"DATA", v)],
        K::Passable(v) => vec![chunk_of(b"DATA", v)],
        K::FloraCollidable(v) | K::FloraNonCollidable(v) | K::FloraRadialNear(v) | K::FloraRadialFar(v) => {
            vec![chunk_of(b"DATA", v)]
        }
        K::Road(r) => {
            let mut d = encoded(&r.points);
            if let Some(h) = &r.heights {
                h.encode(&mut d);
            }
            r.width.encode(&mut d);
            r.family_id.encode(&mut d);
            r.height_feather_type.encode(&mut d);
            r.height_feather_amount.encode(&mut d);
            r.shader_feather_type.encode(&mut d);
            r.shader_feather_amount.encode(&mut d);
            if let Some(f) = r.has_fixed_heights {
                f.encode(&mut d);
            }
            vec![form(b"DATA", vec![segments_node(&r.segments), chunk(b"DATA", d)])]
        }
        K::River(r) => {
            let mut d = encoded(&r.points);
            r.width.encode(&mut d);
            r.bank_family_id.encode(&mut d);
            r.bottom_family_id.encode(&mut d);
            r.feather_type.encode(&mut d);
            r.feather_amount.encode(&mut d);
            r.trench_depth.encode(&mut d);
            r.velocity.encode(&mut d);
            r.has_local_water_table.encode(&mut d);
            r.water_depth.encode(&mut d);
            r.water_width.encode(&mut d);
            r.water_shader_size.encode(&mut d);
            r.water_shader.encode(&mut d);
            if let Some(t) = r.water_type {
                t.encode(&mut d);
            }
            vec![form(b"DATA", vec![segments_node(&r.segments), chunk(b"DATA", d)])]
        }
        K::Ribbon(v) => vec![form(b"DATA", vec![chunk_of(b"DATA", v)])],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iff::{parse, Limits};

    fn round_trip(bytes: &[u8]) -> Rule {
        let node = parse(bytes, &Limits::default()).unwrap();
        let rule = Rule::read(&node, node.tag().to_string()).unwrap().expect("known rule");
        assert_eq!(rule.to_node().to_bytes(), bytes);
        let json = serde_json::to_string(&rule).unwrap();
        let back: Rule = serde_json::from_str(&json).unwrap();
        assert_eq!(back, rule, "{json}");
        rule
    }

    fn ihdr(enabled: i32, name: &str) -> Vec<u8> {
        item_header_node(Bool32(enabled), name).to_bytes()
    }

    fn rule_bytes(tag: &[u8; 4], version: u16, body: Vec<Node>, name: &str) -> Vec<u8> {
        let mut kids = vec![item_header_node(Bool32(1), name)];
        kids.extend(body);
        form(tag, vec![version_form(version, kids)]).to_bytes()
    }

    #[test]
    fn bcir_hex_fragment() {
        // FORM BCIR { FORM 0002 { IHDR, DATA(20) } } built by hand, byte by byte.
        let mut data = Vec::new();
        for v in [100.0f32, -50.0, 25.0] {
            data.extend_from_slice(&v.to_le_bytes());
        }
        data.extend_from_slice(&1i32.to_le_bytes());
        data.extend_from_slice(&0.5f32.to_le_bytes());
        let mut inner = b"0002".to_vec();
        inner.extend(ihdr(1, "circle"));
        inner.extend_from_slice(b"DATA\0\0\0\x14");
        inner.extend(&data);
        let mut v = b"FORM".to_vec();
        v.extend_from_slice(&(inner.len() as u32).to_be_bytes());
        v.extend(inner);
        let mut bytes = b"FORM".to_vec();
        bytes.extend_from_slice(&(v.len() as u32 + 4).to_be_bytes());
        bytes.extend_from_slice(b"BCIR");
        bytes.extend(v);
        let r = round_trip(&bytes);
        assert_eq!(r.name, "circle");
        assert_eq!(r.kind, RuleKind::Circle(BoundaryCircle { center_x: 100.0, center_z: -50.0, radius: 25.0, feather_type: 1, feather_amount: 0.5 }));
    }

    #[test]
    fn brec_versions() {
        let base = BoundaryRectangle { x0: 1.0, z0: 2.0, x1: -3.0, z1: 4.0, feather_type: 0, feather_amount: 0.25, water: None, water_type: None };
        for (v, water, wt, len) in [(2u16, false, false, 24usize), (3, true, false, 24 + 16 + 4), (4, true, true, 24 + 16 + 4 + 4)] {
            let mut r = base.clone();
            if water {
                r.water = Some(RectangleWater { enabled: Bool32(1), use_global_height: Bool32(0), height: 73.0, shader_size: 2.0, shader: "lva".into() });
            }
            if wt {
                r.water_type = Some(1);
            }
            let rule = Rule { enabled: Bool32(1), name: "r".into(), kind: RuleKind::Rectangle(r) };
            assert_eq!(rule.kind.tag_and_version(), (b"BREC", v));
            let Node::Form(outer) = rule.to_node() else { panic!() };
            let Node::Form(ver) = &outer.children[0] else { panic!() };
            let Node::Chunk(data) = &ver.children[1] else { panic!() };
            assert_eq!(data.data.len(), len);
            round_trip(&rule.to_node().to_bytes());
        }
    }

    #[test]
    fn bpol_0007_water_type_before_shader() {
        let mut d = Vec::new();
        2i32.encode(&mut d);
        for v in [0.0f32, 0.0, 10.0, 0.0] {
            v.encode(&mut d);
        }
        0i32.encode(&mut d); // feather type
        300.0f32.encode(&mut d); // feather distance in metres
        1i32.encode(&mut d);
        73.0f32.encode(&mut d);
        64.0f32.encode(&mut d);
        1i32.encode(&mut d); // water type: lava
        "wter_lava_01_still".to_string().encode(&mut d);
        let r = round_trip(&rule_bytes(b"BPOL", 7, vec![chunk(b"DATA", d)], "lava"));
        let RuleKind::Polygon(p) = r.kind else { panic!() };
        assert_eq!((p.water_type, p.water_shader.as_str(), p.feather_distance), (Some(1), "wter_lava_01_still", 300.0));
    }

    #[test]
    fn fbit_0000_with_and_without_gain() {
        for (payload_len, gain) in [(20usize, None), (24, Some(0.0f32))] {
            let mut d = Vec::new();
            7i32.encode(&mut d);
            0i32.encode(&mut d);
            0.5f32.encode(&mut d);
            0.0f32.encode(&mut d);
            1.0f32.encode(&mut d);
            if let Some(g) = gain {
                g.encode(&mut d);
            }
            assert_eq!(d.len(), payload_len);
            let r = round_trip(&rule_bytes(b"FBIT", 0, vec![parm_node(d)], "bitmap"));
            let RuleKind::FilterBitmap(b) = r.kind else { panic!() };
            assert_eq!(b.gain, gain);
        }
    }

    #[test]
    fn road_0006_with_segments() {
        let road = Road {
            segments: vec![vec![Point3 { a: -4003.0, b: 60.0, c: 6320.5 }, Point3 { a: -3995.0, b: 61.0, c: 6321.0 }]],
            points: vec![Point2 { x: -4003.0, z: 6320.5 }, Point2 { x: -3995.0, z: 6321.0 }],
            heights: Some(vec![]),
            width: 12.0,
            family_id: 3,
            height_feather_type: 1,
            height_feather_amount: 0.5,
            shader_feather_type: 0,
            shader_feather_amount: 0.25,
            has_fixed_heights: Some(Bool32(0)),
        };
        let rule = Rule { enabled: Bool32(1), name: "road".into(), kind: RuleKind::Road(road) };
        assert_eq!(round_trip(&rule.to_node().to_bytes()), rule);
    }

    #[test]
    fn unknown_version_is_not_typed() {
        let bytes = rule_bytes(b"BCIR", 1, vec![chunk(b"DATA", vec![0; 12])], "old");
        let node = parse(&bytes, &Limits::default()).unwrap();
        assert!(Rule::read(&node, "BCIR".into()).unwrap().is_none());
    }

    #[test]
    fn wrong_payload_size_is_an_error_with_path() {
        let bytes = rule_bytes(b"AHCN", 0, vec![chunk(b"DATA", vec![0; 9])], "h");
        let node = parse(&bytes, &Limits::default()).unwrap();
        let e = Rule::read(&node, "X/AHCN".into()).unwrap_err();
        assert_eq!(e.path, "X/AHCN/0000/DATA");
        assert!(e.message.contains("trailing"), "{e}");
    }

    /// Little-endian payload builder for hand-made byte vectors.
    #[derive(Default)]
    struct P(Vec<u8>);
    impl P {
        fn i(mut self, v: i32) -> Self {
            self.0.extend_from_slice(&v.to_le_bytes());
            self
        }
        fn f(mut self, v: f32) -> Self {
            self.0.extend_from_slice(&v.to_le_bytes());
            self
        }
        fn s(mut self, v: &str) -> Self {
            self.0.extend_from_slice(v.as_bytes());
            self.0.push(0);
            self
        }
        fn b(mut self, v: &[u8]) -> Self {
            self.0.extend_from_slice(v);
            self
        }
    }

    /// Every rule tag and version of swg-trn §4.3–§4.5, from hand-built payloads in the
    /// spec's field order: it reads as the expected variant and writes back byte for byte.
    #[test]
    fn every_rule_kind_from_hand_built_payloads() {
        let data = |p: P| vec![chunk(b"DATA", p.0)];
        let parm = |p: P| vec![parm_node(p.0)];
        let hdta = |samples: &[[f32; 3]], d: P| {
            let mut sg = Vec::new();
            for s in samples {
                for v in s {
                    sg.extend_from_slice(&v.to_le_bytes());
                }
            }
            vec![form(b"DATA", vec![form(b"HDTA", vec![version_form(1, vec![chunk(b"SGMT", sg)])]), chunk(b"DATA", d.0)])]
        };
        let pts = |p: P| p.i(2).f(0.0).f(0.0).f(10.0).f(5.0);
        let cases: Vec<(&[u8; 4], u16, Vec<Node>, &str)> = vec![
            (b"BCIR", 2, data(P::default().f(1.0).f(2.0).f(3.0).i(1).f(0.5)), "circle"),
            (b"BREC", 2, data(P::default().f(1.0).f(2.0).f(3.0).f(4.0).i(0).f(0.5)), "rectangle"),
            (b"BREC", 3, data(P::default().f(1.0).f(2.0).f(3.0).f(4.0).i(0).f(0.5).i(1).i(1).f(-210.0).f(2.0).s("w")), "rectangle"),
            (b"BREC", 4, data(P::default().f(1.0).f(2.0).f(3.0).f(4.0).i(0).f(0.5).i(1).i(0).f(73.0).f(2.0).s("lava").i(1)), "rectangle"),
            (b"BPOL", 5, data(pts(P::default()).i(0).f(300.0).i(0).f(0.0).f(2.0).s("")), "polygon"),
            (b"BPOL", 7, data(pts(P::default()).i(0).f(300.0).i(1).f(73.0).f(64.0).i(1).s("wter_lava_01_still")), "polygon"),
            (b"BPLN", 1, data(pts(P::default()).i(2).f(0.5).f(4.0)), "polyline"),
            (b"BPLN", 3, data(pts(P::default()).i(3).f(0.25).f(8.0)), "polyline"),
            (b"FHGT", 2, data(P::default().f(10.0).f(20.0).i(0).f(0.5)), "filter_height"),
            (b"FSLP", 2, data(P::default().f(15.0).f(45.0).i(1).f(0.2)), "filter_slope"),
            (b"FDIR", 0, data(P::default().f(-45.0).f(45.0).i(0).f(0.0)), "filter_direction"),
            (b"FSHD", 0, data(P::default().i(4)), "filter_shader"),
            (b"FFRA", 5, parm(P::default().i(3).i(0).f(0.5).f(0.2).f(0.8).f(1.0)), "filter_fractal"),
            (b"FBIT", 1, parm(P::default().i(1).i(0).f(0.0).f(0.0).f(1.0).f(-0.5)), "filter_bitmap"),
            (b"AHCN", 0, data(P::default().i(1).f(300.0)), "height_constant"),
            (b"AHFR", 3, parm(P::default().i(1).i(0).f(50.0)), "height_fractal"),
            (b"AHTR", 4, data(P::default().f(0.216).f(30.0)), "height_terrace"),
            (b"ACCN", 0, data(P::default().i(2).b(&[255, 0, 7])), "color_constant"),
            (b"ACRH", 0, data(P::default().i(0).f(0.0).f(100.0).s("colorramp/x.tga")), "color_ramp_height"),
            (b"ACRF", 1, parm(P::default().i(5).i(1).s("colorramp/y.tga")), "color_ramp_fractal"),
            (b"ASCN", 1, data(P::default().i(2).i(1).f(0.319)), "shader_constant"),
            (b"ASRP", 1, data(P::default().i(2).i(3).i(0).f(1.0)), "shader_replace"),
            (b"AENV", 0, data(P::default().i(6).i(0).f(1.0)), "environment"),
            (b"AEXC", 0, data(P::default()), "exclude"),
            (b"APAS", 0, data(P::default().b(&[1]).f(0.5)), "passable"),
            (b"AFSC", 4, data(P::default().i(3).i(1).i(0).i(1).f(0.6)), "flora_collidable"),
            (b"AFSN", 4, data(P::default().i(3).i(0).i(1).i(0).f(0.0)), "flora_non_collidable"),
            (b"AFDN", 2, data(P::default().i(2).i(1).i(0).i(0).f(1.0)), "flora_radial_near"),
            (b"AFDF", 2, data(P::default().i(2).i(0).i(0).i(0).f(1.0)), "flora_radial_far"),
            (b"AROA", 5, hdta(&[[0.0, 60.0, 0.0], [10.0, 61.0, 5.0]], pts(P::default()).f(12.0).i(3).i(1).f(0.5).i(0).f(0.25)), "road"),
            (b"AROA", 6, hdta(&[[0.0, 60.0, 0.0]], pts(P::default()).i(2).f(60.0).f(61.0).f(12.0).i(3).i(1).f(0.5).i(0).f(0.25).i(1)), "road"),
            (b"ARIV", 5, hdta(&[[0.0, 9.0, 0.0]], pts(P::default()).f(20.0).i(1).i(2).i(0).f(0.5).f(3.0).f(1.0).i(1).f(1.5).f(10.0).f(2.0).s("wter")), "river"),
            (
                b"ARIV",
                6,
                hdta(&[[0.0, 9.0, 0.0]], pts(P::default()).f(20.0).i(1).i(2).i(0).f(0.5).f(3.0).f(1.0).i(1).f(1.5).f(10.0).f(2.0).s("wter").i(0)),
                "river",
            ),
            (
                b"ARIB",
                5,
                vec![form(
                    b"DATA",
                    vec![chunk(b"DATA", P::default().i(1).f(1.0).f(2.0).f(3.0).f(6.0).f(64.0).f(0.1).f(2.0).i(4).i(0).f(0.5).s("wter_lava").i(1).0)],
                )],
                "ribbon",
            ),
        ];
        for (tag, version, body, ty) in cases {
            let bytes = rule_bytes(tag, version, body, "item");
            let rule = round_trip(&bytes);
            assert_eq!(rule.kind.tag_and_version(), (tag, version), "{}", String::from_utf8_lossy(tag));
            let json = serde_json::to_value(&rule).unwrap();
            assert_eq!(json["type"], ty, "{}", String::from_utf8_lossy(tag));
        }
    }
}
