//! TGEN family groups (swg-trn §3): shader, flora, radial, environment, fractal and bitmap
//! families. A group of a version this reader does not know is kept as a raw node.

use super::codec::{chunk, chunk_of, form, payload_struct, version_form, Bool32, Codec, FormReader, MinSize, PayloadReader, Rgb};
use super::header::Bytes;
use super::RawNode;
use crate::iff::{FormatError, Node};
use serde::{Deserialize, Serialize};

payload_struct! { pub struct ShaderChild { pub name: String, pub weight: f32 } }
impl MinSize for ShaderChild {
    const MIN_SIZE: usize = 5;
}

payload_struct! {
    /// SFAM of SGRP 0006 (swg-trn §3.1).
    pub struct ShaderFamily {
        pub id: i32, pub name: String, pub surface_properties: String, pub color: Rgb,
        pub shader_size: f32, pub feather_clamp: f32, pub children: Vec<ShaderChild>,
    }
}

payload_struct! {
    pub struct FloraChild {
        pub appearance: String, pub weight: f32, pub should_sway: Bool32, pub displacement: f32, pub period: f32,
        pub align_to_terrain: Bool32, pub should_scale: Bool32, pub min_scale: f32, pub max_scale: f32,
    }
}
impl MinSize for FloraChild {
    const MIN_SIZE: usize = 33;
}

payload_struct! {
    /// FFAM of FGRP 0008 (swg-trn §3.2).
    pub struct FloraFamily {
        pub id: i32, pub name: String, pub color: Rgb, pub density: f32, pub floats: Bool32, pub children: Vec<FloraChild>,
    }
}

payload_struct! {
    pub struct RadialChildV3 {
        pub shader: String, pub weight: f32, pub distance: f32, pub width: f32, pub height: f32, pub should_sway: Bool32,
        pub displacement: f32, pub period: f32, pub align_to_terrain: Bool32, pub create_plus: Bool32,
    }
}
impl MinSize for RadialChildV3 {
    const MIN_SIZE: usize = 37;
}

payload_struct! {
    pub struct RadialChildV4 {
        pub shader: String, pub weight: f32, pub distance: f32, pub min_width: f32, pub max_width: f32,
        pub min_height: f32, pub max_height: f32, pub maintain_aspect_ratio: Bool32, pub should_sway: Bool32,
        pub displacement: f32, pub period: f32, pub align_to_terrain: Bool32, pub create_plus: Bool32,
    }
}
impl MinSize for RadialChildV4 {
    const MIN_SIZE: usize = 49;
}

/// Children of an RFAM; their layout depends on the RGRP version (swg-trn §3.3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RadialChildren {
    V4(Vec<RadialChildV4>),
    V3(Vec<RadialChildV3>),
}

/// RFAM of RGRP 0003/0004.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RadialFamily {
    pub id: i32,
    pub name: String,
    pub color: Rgb,
    pub density: f32,
    pub children: RadialChildren,
}

/// EFAM of EGRP 0002 (swg-trn §3.4). Bytes after the known fields (one 0013 test file has
/// them) are kept as they are.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EnvironmentFamily {
    pub id: i32,
    pub name: String,
    pub color: Rgb,
    pub feather_clamp: f32,
    #[serde(default, skip_serializing_if = "is_empty")]
    pub trailing: Bytes,
    /// Further children of the EFAM FORM (one 0013 test file has RAMP forms), kept as read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra: Vec<RawNode>,
}

fn is_empty(b: &Bytes) -> bool {
    b.0.is_empty()
}

payload_struct! {
    /// MFRC parameters (swg-trn §3.5).
    pub struct FractalParamsRecord {
        pub seed: u32, pub use_bias: Bool32, pub bias: f32, pub use_gain: Bool32, pub gain: f32,
        pub octaves: i32, pub octave_frequency_multiplier: f32, pub amplitude: f32,
        pub frequency_x: f32, pub frequency_z: f32, pub offset_x: f32, pub offset_z: f32, pub combination_rule: i32,
    }
}

/// A fractal family: MFAM with its MFRC 0001 (swg-trn §3.5).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FractalFamily {
    pub id: i32,
    pub name: String,
    pub fractal: FractalParamsRecord,
}

/// A bitmap family: MFAM with a TGA path (swg-trn §3.6).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BitmapFamily {
    pub id: i32,
    pub name: String,
    pub path: String,
}

/// A family group: the version FORM with its families, or a raw node when the version is unknown.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Group<T> {
    Known { version: u16, families: Vec<T> },
    Raw { raw: RawNode },
}

impl<T> Group<T> {
    pub fn families(&self) -> &[T] {
        match self {
            Group::Known { families, .. } => families,
            Group::Raw { .. } => &[],
        }
    }
    pub fn is_raw(&self) -> bool {
        matches!(self, Group::Raw { .. })
    }
}

impl<T> Default for Group<T> {
    fn default() -> Self {
        Group::Known { version: 0, families: Vec::new() }
    }
}

/// How one kind of family is laid out in its group.
pub trait FamilyCodec: Sized {
    /// The group FORM's tag.
    const GROUP: &'static [u8; 4];
    fn knows_version(v: u16) -> bool;
    /// Read one family from the group's version FORM.
    fn read(f: &mut FormReader, version: u16) -> Result<Self, FormatError>;
    fn to_node(&self, version: u16) -> Node;
}

impl<T: FamilyCodec> Group<T> {
    pub fn read(node: &Node, path: String) -> Result<Self, FormatError> {
        let mut g = FormReader::open(node, path, Some(T::GROUP))?;
        let version = match g.peek() {
            Some(Node::Form(f)) => f.tag.version(),
            _ => None,
        };
        let Some(version) = version.filter(|&v| T::knows_version(v)) else {
            return Ok(Group::Raw { raw: RawNode(node.clone()) });
        };
        let mut v = g.form(None)?;
        let mut families = Vec::new();
        while v.peek().is_some() {
            families.push(T::read(&mut v, version)?);
        }
        g.end()?;
        Ok(Group::Known { version, families })
    }

    pub fn to_node(&self) -> Node {
        match self {
            Group::Known { version, families } => form(T::GROUP, vec![version_form(*version, families.iter().map(|f| f.to_node(*version)).collect())]),
            Group::Raw { raw } => raw.0.clone(),
        }
    }
}

impl FamilyCodec for ShaderFamily {
    const GROUP: &'static [u8; 4] = b"SGRP";
    fn knows_version(v: u16) -> bool {
        v == 6
    }
    fn read(f: &mut FormReader, _: u16) -> Result<Self, FormatError> {
        f.chunk_as(b"SFAM")
    }
    fn to_node(&self, _: u16) -> Node {
        chunk_of(b"SFAM", self)
    }
}

impl FamilyCodec for FloraFamily {
    const GROUP: &'static [u8; 4] = b"FGRP";
    fn knows_version(v: u16) -> bool {
        v == 8
    }
    fn read(f: &mut FormReader, _: u16) -> Result<Self, FormatError> {
        f.chunk_as(b"FFAM")
    }
    fn to_node(&self, _: u16) -> Node {
        chunk_of(b"FFAM", self)
    }
}

impl FamilyCodec for RadialFamily {
    const GROUP: &'static [u8; 4] = b"RGRP";
    fn knows_version(v: u16) -> bool {
        v == 3 || v == 4
    }
    fn read(f: &mut FormReader, version: u16) -> Result<Self, FormatError> {
        let mut r = f.chunk(b"RFAM")?;
        let fam = RadialFamily {
            id: r.read()?,
            name: r.read()?,
            color: r.read()?,
            density: r.read()?,
            children: if version == 3 { RadialChildren::V3(r.read()?) } else { RadialChildren::V4(r.read()?) },
        };
        r.end()?;
        Ok(fam)
    }
    fn to_node(&self, _: u16) -> Node {
        let mut d = Vec::new();
        self.id.encode(&mut d);
        self.name.encode(&mut d);
        self.color.encode(&mut d);
        self.density.encode(&mut d);
        match &self.children {
            RadialChildren::V3(c) => c.encode(&mut d),
            RadialChildren::V4(c) => c.encode(&mut d),
        }
        chunk(b"RFAM", d)
    }
}

impl FamilyCodec for EnvironmentFamily {
    const GROUP: &'static [u8; 4] = b"EGRP";
    fn knows_version(v: u16) -> bool {
        v == 2
    }
    fn read(f: &mut FormReader, _: u16) -> Result<Self, FormatError> {
        let mut e = f.form(Some(b"EFAM"))?;
        let mut r: PayloadReader = e.chunk(b"DATA")?;
        let fam =
            EnvironmentFamily { id: r.read()?, name: r.read()?, color: r.read()?, feather_clamp: r.read()?, trailing: Bytes(r.bytes_all()), extra: Vec::new() };
        let mut fam = fam;
        while let Some((n, _)) = e.take() {
            fam.extra.push(RawNode(n.clone()));
        }
        Ok(fam)
    }
    fn to_node(&self, _: u16) -> Node {
        let mut d = Vec::new();
        self.id.encode(&mut d);
        self.name.encode(&mut d);
        self.color.encode(&mut d);
        self.feather_clamp.encode(&mut d);
        d.extend_from_slice(&self.trailing.0);
        let mut kids = vec![chunk(b"DATA", d)];
        kids.extend(self.extra.iter().map(|r| r.0.clone()));
        form(b"EFAM", kids)
    }
}

impl FamilyCodec for FractalFamily {
    const GROUP: &'static [u8; 4] = b"MGRP";
    fn knows_version(v: u16) -> bool {
        v == 0
    }
    fn read(f: &mut FormReader, _: u16) -> Result<Self, FormatError> {
        let mut m = f.form(Some(b"MFAM"))?;
        let mut d = m.chunk(b"DATA")?;
        let (id, name) = (d.read()?, d.read()?);
        d.end()?;
        let mut mfrc = m.form(Some(b"MFRC"))?;
        let mut v = mfrc.form(Some(b"0001"))?;
        let fractal = v.chunk_as(b"DATA")?;
        v.end()?;
        mfrc.end()?;
        m.end()?;
        Ok(FractalFamily { id, name, fractal })
    }
    fn to_node(&self, _: u16) -> Node {
        let mut d = Vec::new();
        self.id.encode(&mut d);
        self.name.encode(&mut d);
        form(b"MFAM", vec![chunk(b"DATA", d), form(b"MFRC", vec![version_form(1, vec![chunk_of(b"DATA", &self.fractal)])])])
    }
}

impl FamilyCodec for BitmapFamily {
    const GROUP: &'static [u8; 4] = b"MGRP";
    fn knows_version(v: u16) -> bool {
        v == 0
    }
    fn read(f: &mut FormReader, _: u16) -> Result<Self, FormatError> {
        let mut m = f.form(Some(b"MFAM"))?;
        let mut d = m.chunk(b"DATA")?;
        let fam = BitmapFamily { id: d.read()?, name: d.read()?, path: d.read()? };
        d.end()?;
        m.end()?;
        Ok(fam)
    }
    fn to_node(&self, _: u16) -> Node {
        let mut d = Vec::new();
        self.id.encode(&mut d);
        self.name.encode(&mut d);
        self.path.encode(&mut d);
        form(b"MFAM", vec![chunk(b"DATA", d)])
    }
}
