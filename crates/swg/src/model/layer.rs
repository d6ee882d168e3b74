//! The layer tree (swg-trn §4.1): `FORM LAYR { FORM 0003 { IHDR, ADTA, rules…, layers… } }`.

use super::codec::{chunk, form, version_form, Bool32, Codec, FormReader};
use super::rules::{item_header_node, read_item_header, Rule};
use super::RawNode;
use crate::iff::{FormatError, Node};
use serde::{Deserialize, Serialize};

/// A layer of version 0003 (the only one in real data).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Layer {
    pub enabled: Bool32,
    pub name: String,
    pub invert_boundaries: Bool32,
    pub invert_filters: Bool32,
    /// Editor UI state only.
    pub expanded: Bool32,
    pub notes: String,
    /// Boundaries, filters, affectors and child layers in file order.
    pub children: Vec<LayerItem>,
}

/// One child of a layer (or of LYRS): a rule, a layer, or a node this reader does not type.
#[derive(Clone, Debug, PartialEq)]
pub enum LayerItem {
    Rule(Rule),
    Layer(Layer),
    Raw(RawNode),
}

impl LayerItem {
    /// Read a child node; rules and layers of unknown versions become raw items.
    pub fn read(node: &Node, path: String) -> Result<LayerItem, FormatError> {
        if let Node::Form(f) = node {
            if f.tag.0 == *b"LAYR" {
                let v = f.children.first().and_then(|c| match c {
                    Node::Form(v) => v.tag.version(),
                    _ => None,
                });
                if v == Some(3) {
                    return Ok(LayerItem::Layer(Layer::read(node, path)?));
                }
                return Ok(LayerItem::Raw(RawNode(node.clone())));
            }
            if let Some(rule) = Rule::read(node, path)? {
                return Ok(LayerItem::Rule(rule));
            }
        }
        Ok(LayerItem::Raw(RawNode(node.clone())))
    }

    pub fn to_node(&self) -> Node {
        match self {
            LayerItem::Rule(r) => r.to_node(),
            LayerItem::Layer(l) => l.to_node(),
            LayerItem::Raw(r) => r.0.clone(),
        }
    }
}

/// JSON form: a layer is `{"type": "layer", …}`, a raw node `{"type": "raw", "node": …}`,
/// anything else a rule tagged by its own `type`.
impl Serialize for LayerItem {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            LayerItem::Rule(r) => r.serialize(s),
            LayerItem::Layer(l) => {
                #[derive(Serialize)]
                struct Tagged<'a> {
                    #[serde(rename = "type")]
                    ty: &'static str,
                    #[serde(flatten)]
                    layer: &'a Layer,
                }
                Tagged { ty: "layer", layer: l }.serialize(s)
            }
            LayerItem::Raw(r) => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("type", "raw")?;
                m.serialize_entry("node", r)?;
                m.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for LayerItem {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut v = serde_json::Value::deserialize(d)?;
        let ty = v.get("type").and_then(|t| t.as_str()).map(str::to_owned);
        match ty.as_deref() {
            Some("layer") => {
                v.as_object_mut().map(|o| o.remove("type"));
                serde_json::from_value(v).map(LayerItem::Layer).map_err(|e| D::Error::custom(format!("in layer: {e}")))
            }
            Some("raw") => {
                let node = v.get("node").cloned().ok_or_else(|| D::Error::custom("raw item without `node`"))?;
                serde_json::from_value(node).map(LayerItem::Raw).map_err(D::Error::custom)
            }
            Some(t) => {
                let t = t.to_owned();
                serde_json::from_value(v).map(LayerItem::Rule).map_err(|e| D::Error::custom(format!("in rule of type `{t}`: {e}")))
            }
            None => Err(D::Error::custom("layer item without a `type`")),
        }
    }
}

impl Layer {
    pub fn read(node: &Node, path: String) -> Result<Layer, FormatError> {
        let mut outer = FormReader::open(node, path, Some(b"LAYR"))?;
        let mut f = outer.form(Some(b"0003"))?;
        let (enabled, name) = read_item_header(&mut f)?;
        let mut a = f.chunk(b"ADTA")?;
        let (invert_boundaries, invert_filters, expanded, notes) = (a.read()?, a.read()?, a.read()?, a.read()?);
        a.end()?;
        let mut children = Vec::new();
        while let Some((child, p)) = f.take() {
            children.push(LayerItem::read(child, p)?);
        }
        outer.end()?;
        Ok(Layer { enabled, name, invert_boundaries, invert_filters, expanded, notes, children })
    }

    pub fn to_node(&self) -> Node {
        let mut adta = Vec::new();
        self.invert_boundaries.encode(&mut adta);
        self.invert_filters.encode(&mut adta);
        self.expanded.encode(&mut adta);
        self.notes.encode(&mut adta);
        let mut kids = vec![item_header_node(self.enabled, &self.name), chunk(b"ADTA", adta)];
        kids.extend(self.children.iter().map(LayerItem::to_node));
        form(b"LAYR", vec![version_form(3, kids)])
    }

    /// Child rules in file order.
    pub fn rules(&self) -> impl Iterator<Item = &Rule> {
        self.children.iter().filter_map(|c| match c {
            LayerItem::Rule(r) => Some(r),
            _ => None,
        })
    }

    /// Child layers in file order.
    pub fn sublayers(&self) -> impl Iterator<Item = &Layer> {
        self.children.iter().filter_map(|c| match c {
            LayerItem::Layer(l) => Some(l),
            _ => None,
        })
    }
}

/// Visit every layer of a tree in pre-order with its depth (0 = top level).
pub fn walk_layers<'a>(items: &'a [LayerItem], depth: usize, f: &mut dyn FnMut(&'a Layer, usize)) {
    for item in items {
        if let LayerItem::Layer(l) = item {
            f(l, depth);
            walk_layers(&l.children, depth + 1, f);
        }
    }
}

/// Visit every raw (untyped) node of a tree.
pub fn walk_raw<'a>(items: &'a [LayerItem], f: &mut dyn FnMut(&'a RawNode)) {
    for item in items {
        match item {
            LayerItem::Raw(r) => f(r),
            LayerItem::Layer(l) => walk_raw(&l.children, f),
            LayerItem::Rule(_) => {}
        }
    }
}
