//! The typed model of a Star Wars Galaxies procedural terrain file (`FORM PTAT`,
//! swg-trn §2–§4), read from and written back to the exact same bytes.
//!
//! Everything this reader does not know (unknown tags or versions) is kept as a raw IFF node
//! in place, so `write(read(bytes)) == bytes` holds for any well-formed file.

pub mod bitmap;
pub mod codec;
pub mod families;
pub mod header;
pub mod info;
pub mod json;
pub mod layer;
pub mod rules;
pub mod validate;

use crate::iff::{self, FormatError, Limits, Node, Tag};
use codec::{chunk, form, version_form, FormReader};
use families::{BitmapFamily, EnvironmentFamily, FloraFamily, FractalFamily, Group, RadialFamily, ShaderFamily};
use header::{BakedMaps, Bytes, Header, PackedFloatMap, PackedIntMap};
use layer::LayerItem;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where a `.trn`'s bitmap paths (`terrain/x.tga`) resolve when no data root is given: a file
/// inside a `terrain/` folder is in the client data layout, so that folder's parent is the root
/// (swg-trn §3.6).
pub fn default_data_root(trn: &Path) -> Option<PathBuf> {
    let dir = trn.parent()?;
    (dir.file_name()? == "terrain").then(|| dir.parent().map(Path::to_path_buf)).flatten()
}

/// A whole `.trn` file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Terrain {
    /// PTAT version: 13, 14 or 15.
    pub version: u16,
    pub header: Header,
    pub generator: Generator,
    /// `FORM 0000 | 0001` after TGEN (swg-trn §2.3); absent in hand-made files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baked_maps: Option<BakedMaps>,
    /// Top-level PIMP: static collidable flora family per 16 m cell (swg-trn §2.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flora_map: Option<PackedIntMap>,
    /// Top-level PFPM: ground height under each placed flora object (swg-trn §2.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flora_height_map: Option<PackedFloatMap>,
    /// Top-level nodes after those, kept as read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra: Vec<RawNode>,
}

/// `TGEN/0000`: families and the layer tree (swg-trn §3, §4).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
pub struct Generator {
    pub shader_families: Group<ShaderFamily>,
    pub flora_families: Group<FloraFamily>,
    pub radial_families: Group<RadialFamily>,
    pub environment_families: Group<EnvironmentFamily>,
    pub fractal_families: Group<FractalFamily>,
    /// The optional second MGRP (swg-trn §3.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bitmap_families: Option<Group<BitmapFamily>>,
    /// Top-level layers (`LYRS`), in order.
    pub layers: Vec<LayerItem>,
}

/// An IFF node kept as it was read. JSON: `{"form": TAG, "children": […]}` or
/// `{"chunk": TAG, "data": base64}`.
#[derive(Clone, Debug, PartialEq)]
pub struct RawNode(pub Node);

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum RawJson {
    Form { form: Tag, children: Vec<RawJson> },
    Chunk { chunk: Tag, data: Bytes },
}

impl RawJson {
    fn from_node(n: &Node) -> RawJson {
        match n {
            Node::Form(f) => RawJson::Form { form: f.tag, children: f.children.iter().map(RawJson::from_node).collect() },
            Node::Chunk(c) => RawJson::Chunk { chunk: c.tag, data: Bytes(c.data.clone()) },
        }
    }
    fn into_node(self) -> Node {
        match self {
            RawJson::Form { form, children } => {
                Node::Form(iff::Form { tag: form, children: children.into_iter().map(RawJson::into_node).collect(), offset: 0 })
            }
            RawJson::Chunk { chunk, data } => Node::Chunk(iff::Chunk { tag: chunk, data: data.0, offset: 0 }),
        }
    }
}

impl Serialize for RawNode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        RawJson::from_node(&self.0).serialize(s)
    }
}
impl<'de> Deserialize<'de> for RawNode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(RawNode(RawJson::deserialize(d)?.into_node()))
    }
}

/// Reading a file failed: which file, and where in it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    // The inner errors are fields, not `source`s, so `{:#}` prints them once.
    #[error("cannot read {}: {error}", path.display())]
    Io { path: PathBuf, error: std::io::Error },
    #[error("{}: {error}", path.display())]
    Format { path: PathBuf, error: FormatError },
}

impl Terrain {
    /// Parse a `.trn` from bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Terrain, FormatError> {
        let root = iff::parse(bytes, &Limits::default())?;
        Terrain::from_node(&root)
    }

    /// Read a `.trn` file; errors name the file, the chunk path and the byte offset.
    pub fn load(path: &Path) -> Result<Terrain, LoadError> {
        let bytes = std::fs::read(path).map_err(|error| LoadError::Io { path: path.to_owned(), error })?;
        Terrain::from_bytes(&bytes).map_err(|error| LoadError::Format { path: path.to_owned(), error })
    }

    pub fn from_node(root: &Node) -> Result<Terrain, FormatError> {
        let mut ptat = FormReader::open(root, "PTAT".into(), Some(b"PTAT"))?;
        let mut v = ptat.form(None)?;
        let version = match v.tag().version() {
            Some(n @ 13..=15) => n,
            _ => return Err(v.error(format!("unsupported PTAT version {} (13, 14 and 15 are known)", v.tag()))),
        };
        let mut d = v.chunk(b"DATA")?;
        let header = Header::decode(&mut d, version)?;
        let generator = Generator::read(&mut v.form(Some(b"TGEN"))?)?;
        let baked_maps = match v.peek() {
            Some(Node::Form(f)) if f.tag.version().is_some() => Some(BakedMaps::read(&mut v.form(None)?)?),
            _ => None,
        };
        let flora_map = if v.next_is_form(b"PIMP") { Some(PackedIntMap::read(&mut v.form(Some(b"PIMP"))?)?) } else { None };
        let flora_height_map = if v.next_is_form(b"PFPM") { Some(PackedFloatMap::read(&mut v.form(Some(b"PFPM"))?)?) } else { None };
        let mut extra = Vec::new();
        while let Some((n, _)) = v.take() {
            extra.push(RawNode(n.clone()));
        }
        ptat.end()?;
        Ok(Terrain { version, header, generator, baked_maps, flora_map, flora_height_map, extra })
    }

    pub fn to_node(&self) -> Node {
        let mut data = Vec::new();
        self.header.encode(&mut data);
        let mut kids = vec![chunk(b"DATA", data), self.generator.to_node()];
        kids.extend(self.baked_maps.as_ref().map(BakedMaps::to_node));
        kids.extend(self.flora_map.as_ref().map(PackedIntMap::to_node));
        kids.extend(self.flora_height_map.as_ref().map(PackedFloatMap::to_node));
        kids.extend(self.extra.iter().map(|r| r.0.clone()));
        form(b"PTAT", vec![version_form(self.version, kids)])
    }

    /// The file's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.to_node().to_bytes()
    }
}

impl Generator {
    fn read(tgen: &mut FormReader) -> Result<Generator, FormatError> {
        let mut g = tgen.form(Some(b"0000"))?;
        let group = |tag: &[u8; 4], g: &mut FormReader| -> Result<(Node, String), FormatError> {
            if !g.next_is_form(tag) {
                return Err(g.form(Some(tag)).err().expect("next is not the form"));
            }
            let (n, p) = g.take().expect("peeked");
            Ok((n.clone(), p))
        };
        let (n, p) = group(b"SGRP", &mut g)?;
        let shader_families = Group::read(&n, p)?;
        let (n, p) = group(b"FGRP", &mut g)?;
        let flora_families = Group::read(&n, p)?;
        let (n, p) = group(b"RGRP", &mut g)?;
        let radial_families = Group::read(&n, p)?;
        let (n, p) = group(b"EGRP", &mut g)?;
        let environment_families = Group::read(&n, p)?;
        let (n, p) = group(b"MGRP", &mut g)?;
        let fractal_families = Group::read(&n, p)?;
        let bitmap_families = if g.next_is_form(b"MGRP") {
            let (n, p) = group(b"MGRP", &mut g)?;
            Some(Group::read(&n, p)?)
        } else {
            None
        };
        let mut lyrs = g.form(Some(b"LYRS"))?;
        let mut layers = Vec::new();
        while let Some((n, p)) = lyrs.take() {
            layers.push(LayerItem::read(n, p)?);
        }
        g.end()?;
        tgen.end()?;
        Ok(Generator { shader_families, flora_families, radial_families, environment_families, fractal_families, bitmap_families, layers })
    }

    fn to_node(&self) -> Node {
        let mut kids = vec![
            self.shader_families.to_node(),
            self.flora_families.to_node(),
            self.radial_families.to_node(),
            self.environment_families.to_node(),
            self.fractal_families.to_node(),
        ];
        kids.extend(self.bitmap_families.as_ref().map(Group::to_node));
        kids.push(form(b"LYRS", self.layers.iter().map(LayerItem::to_node).collect()));
        form(b"TGEN", vec![version_form(0, kids)])
    }
}
