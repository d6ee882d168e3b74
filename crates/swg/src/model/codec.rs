//! Reading and writing payload fields (swg-trn §1: little-endian scalars, NUL-terminated
//! Latin-1 strings, i32 booleans) and walking FORMs with precise error locations.
//!
//! Every payload struct is declared once with `payload_struct!`, which derives both its
//! decoder and its encoder from the same field list, so reader and writer cannot drift.

use crate::iff::{Chunk, Form, FormatError, Node, Tag};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// A field that can be decoded from and encoded to a chunk payload.
pub trait Codec: Sized {
    fn decode(r: &mut PayloadReader) -> Result<Self, FormatError>;
    fn encode(&self, out: &mut Vec<u8>);
}

/// Cursor over one chunk's payload; errors carry the chunk path and the file offset.
pub struct PayloadReader<'a> {
    data: &'a [u8],
    pos: usize,
    /// File offset of `data[0]`.
    base: usize,
    path: String,
}

impl<'a> PayloadReader<'a> {
    pub fn new(data: &'a [u8], base: usize, path: String) -> Self {
        PayloadReader { data, pos: 0, base, path }
    }
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }
    pub fn error(&self, message: impl Into<String>) -> FormatError {
        FormatError::new(self.path.clone(), self.base + self.pos, message)
    }
    pub fn bytes(&mut self, n: usize, what: &str) -> Result<&'a [u8], FormatError> {
        if self.remaining() < n {
            return Err(self.error(format!("truncated: {what} needs {n} bytes, {} left in the chunk", self.remaining())));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    pub fn read<T: Codec>(&mut self) -> Result<T, FormatError> {
        T::decode(self)
    }
    /// Every byte must have been consumed.
    pub fn end(&self) -> Result<(), FormatError> {
        if self.remaining() != 0 {
            return Err(self.error(format!("{} unexpected trailing bytes in the chunk", self.remaining())));
        }
        Ok(())
    }
}

macro_rules! scalar_codec {
    ($t:ty, $n:expr) => {
        impl Codec for $t {
            fn decode(r: &mut PayloadReader) -> Result<Self, FormatError> {
                let b = r.bytes($n, stringify!($t))?;
                Ok(<$t>::from_le_bytes(b.try_into().expect("length checked")))
            }
            fn encode(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    };
}
scalar_codec!(i32, 4);
scalar_codec!(u32, 4);
scalar_codec!(f32, 4);
scalar_codec!(u8, 1);

/// Strings are 8-bit (Latin-1) and NUL-terminated with no length prefix. Each byte maps to
/// the char of the same code point, so any byte string round-trips through JSON.
impl Codec for String {
    fn decode(r: &mut PayloadReader) -> Result<Self, FormatError> {
        let rest = &r.data[r.pos..];
        let Some(n) = rest.iter().position(|&b| b == 0) else {
            return Err(r.error("string without its terminating NUL before the end of the chunk"));
        };
        let s = rest[..n].iter().map(|&b| b as char).collect();
        r.pos += n + 1;
        Ok(s)
    }
    fn encode(&self, out: &mut Vec<u8>) {
        // Validation (`Terrain::validate`) rejects chars above U+00FF and NUL before writing.
        out.extend(self.chars().map(|c| u32::from(c).min(255) as u8));
        out.push(0);
    }
}

/// A boolean stored as an i32 (swg-trn §1). Any value round-trips: JSON shows `true`/`false`
/// for 1/0 and the plain number otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Bool32(pub i32);

impl Bool32 {
    pub fn get(self) -> bool {
        self.0 != 0
    }
}
impl From<bool> for Bool32 {
    fn from(b: bool) -> Self {
        Bool32(b as i32)
    }
}
impl Codec for Bool32 {
    fn decode(r: &mut PayloadReader) -> Result<Self, FormatError> {
        Ok(Bool32(r.read()?))
    }
    fn encode(&self, out: &mut Vec<u8>) {
        self.0.encode(out)
    }
}
impl Serialize for Bool32 {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            0 => s.serialize_bool(false),
            1 => s.serialize_bool(true),
            v => s.serialize_i32(v),
        }
    }
}
impl<'de> Deserialize<'de> for Bool32 {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum B {
            Bool(bool),
            Int(i32),
        }
        Ok(match B::deserialize(d)? {
            B::Bool(b) => Bool32(b as i32),
            B::Int(v) => Bool32(v),
        })
    }
}

/// RGB colour, three bytes.
pub type Rgb = [u8; 3];
impl Codec for [u8; 3] {
    fn decode(r: &mut PayloadReader) -> Result<Self, FormatError> {
        Ok(r.bytes(3, "RGB colour")?.try_into().expect("length checked"))
    }
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self)
    }
}

/// A list with an i32 count prefix. The count is checked against the bytes left before
/// anything is allocated, so a hostile count cannot allocate more than the file holds.
impl<T: Codec + MinSize> Codec for Vec<T> {
    fn decode(r: &mut PayloadReader) -> Result<Self, FormatError> {
        let n: i32 = r.read()?;
        if n < 0 || (n as usize).saturating_mul(T::MIN_SIZE) > r.remaining() {
            return Err(r.error(format!("count {n} does not fit the {} bytes left in the chunk", r.remaining())));
        }
        (0..n).map(|_| T::decode(r)).collect()
    }
    fn encode(&self, out: &mut Vec<u8>) {
        (self.len() as i32).encode(out);
        for v in self {
            v.encode(out);
        }
    }
}

/// The fewest bytes one encoded value can take (for count checks).
pub trait MinSize {
    const MIN_SIZE: usize;
}
impl MinSize for f32 {
    const MIN_SIZE: usize = 4;
}

/// Declare a payload struct: the field list is the byte layout, in order.
macro_rules! payload_struct {
    ($(#[$m:meta])* pub struct $name:ident { $( $(#[$fm:meta])* pub $f:ident : $t:ty ),* $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        pub struct $name { $( $(#[$fm])* pub $f: $t ),* }
        impl $crate::model::codec::Codec for $name {
            #[allow(unused_variables)]
            fn decode(r: &mut $crate::model::codec::PayloadReader) -> Result<Self, $crate::iff::FormatError> {
                Ok(Self { $( $f: r.read()? ),* })
            }
            #[allow(unused_variables)]
            fn encode(&self, out: &mut Vec<u8>) {
                $( $crate::model::codec::Codec::encode(&self.$f, out); )*
            }
        }
    };
}
pub(crate) use payload_struct;

payload_struct! {
    /// A point in the xz plane, world metres.
    #[derive(Copy)]
    pub struct Point2 { pub x: f32, pub z: f32 }
}
impl MinSize for Point2 {
    const MIN_SIZE: usize = 8;
}

payload_struct! {
    /// A point with a height: (x, height, z) as stored in SGMT, or (x, z, height) in ARIB.
    #[derive(Copy)]
    pub struct Point3 { pub a: f32, pub b: f32, pub c: f32 }
}
impl MinSize for Point3 {
    const MIN_SIZE: usize = 12;
}

/// Walks the children of one FORM in order, with the chunk path of each.
pub struct FormReader<'a> {
    form: &'a Form,
    path: String,
    next: usize,
    /// How many children carry each tag, and how many of those were passed: the sibling
    /// index of a path segment (`LAYR[12]`) in O(1), so a FORM with 100,000 children is
    /// walked in linear time.
    totals: HashMap<Tag, usize>,
    seen: HashMap<Tag, usize>,
}

impl<'a> FormReader<'a> {
    /// Start at `node`, which must be a FORM of type `tag` (any type when `None`).
    pub fn open(node: &'a Node, path: String, tag: Option<&[u8; 4]>) -> Result<Self, FormatError> {
        match node {
            Node::Form(f) if tag.is_none_or(|t| f.tag.0 == *t) => {
                let mut totals = HashMap::new();
                for c in &f.children {
                    *totals.entry(c.tag()).or_insert(0) += 1;
                }
                Ok(FormReader { form: f, path, next: 0, totals, seen: HashMap::new() })
            }
            _ => Err(FormatError::new(
                path,
                node.offset(),
                format!("expected FORM {}, found {}", tag.map(|t| Tag(*t).to_string()).unwrap_or_else(|| "(any)".into()), describe(node)),
            )),
        }
    }
    pub fn tag(&self) -> Tag {
        self.form.tag
    }
    pub fn path(&self) -> &str {
        &self.path
    }
    pub fn offset(&self) -> usize {
        self.form.offset
    }
    pub fn error(&self, message: impl Into<String>) -> FormatError {
        FormatError::new(self.path.clone(), self.form.offset, message)
    }
    /// The next child without consuming it.
    pub fn peek(&self) -> Option<&'a Node> {
        self.form.children.get(self.next)
    }
    /// Whether the next child is a FORM of this type.
    pub fn next_is_form(&self, tag: &[u8; 4]) -> bool {
        matches!(self.peek(), Some(Node::Form(f)) if f.tag.0 == *tag)
    }
    pub fn next_is_chunk(&self, tag: &[u8; 4]) -> bool {
        matches!(self.peek(), Some(Node::Chunk(c)) if c.tag.0 == *tag)
    }
    /// Path of the next child (`TAG`, or `TAG[k]` when several siblings share the tag).
    fn next_path(&self) -> String {
        let Some(n) = self.form.children.get(self.next) else { return self.path.clone() };
        let tag = n.tag();
        if self.totals.get(&tag).copied().unwrap_or(0) > 1 {
            format!("{}/{tag}[{}]", self.path, self.seen.get(&tag).copied().unwrap_or(0))
        } else {
            format!("{}/{tag}", self.path)
        }
    }
    fn advance(&mut self) {
        if let Some(n) = self.form.children.get(self.next) {
            *self.seen.entry(n.tag()).or_insert(0) += 1;
            self.next += 1;
        }
    }
    /// Consume the next child, whatever it is, with its path.
    pub fn take(&mut self) -> Option<(&'a Node, String)> {
        let n = self.form.children.get(self.next)?;
        let p = self.next_path();
        self.advance();
        Some((n, p))
    }
    fn missing(&self, what: String) -> FormatError {
        let end = self.form.offset + 8 + self.form.children.iter().map(Node::encoded_len).sum::<usize>() + 4;
        match self.peek() {
            Some(n) => FormatError::new(self.next_path(), n.offset(), format!("expected {what}, found {}", describe(n))),
            None => FormatError::new(self.path.clone(), end, format!("expected {what}, found the end of the FORM")),
        }
    }
    /// The next child must be FORM `tag` (or any FORM when `None`).
    pub fn form(&mut self, tag: Option<&[u8; 4]>) -> Result<FormReader<'a>, FormatError> {
        match self.peek() {
            Some(n @ Node::Form(f)) if tag.is_none_or(|t| f.tag.0 == *t) => {
                let path = self.next_path();
                self.advance();
                FormReader::open(n, path, None)
            }
            _ => Err(self.missing(match tag {
                Some(t) => format!("FORM {}", Tag(*t)),
                None => "a FORM".into(),
            })),
        }
    }
    /// The next child must be chunk `tag`.
    pub fn chunk(&mut self, tag: &[u8; 4]) -> Result<PayloadReader<'a>, FormatError> {
        match self.peek() {
            Some(Node::Chunk(c)) if c.tag.0 == *tag => {
                let path = self.next_path();
                self.advance();
                Ok(PayloadReader::new(&c.data, c.offset + 8, path))
            }
            _ => Err(self.missing(format!("chunk {}", Tag(*tag)))),
        }
    }
    /// Decode a whole chunk as one payload struct, all bytes consumed.
    pub fn chunk_as<T: Codec>(&mut self, tag: &[u8; 4]) -> Result<T, FormatError> {
        let mut r = self.chunk(tag)?;
        let v = r.read()?;
        r.end()?;
        Ok(v)
    }
    /// All children must have been consumed.
    pub fn end(&self) -> Result<(), FormatError> {
        match self.peek() {
            None => Ok(()),
            Some(n) => Err(FormatError::new(self.next_path(), n.offset(), format!("unexpected {} in FORM {}", describe(n), self.form.tag))),
        }
    }
}

fn describe(n: &Node) -> String {
    match n {
        Node::Form(f) => format!("FORM {}", f.tag),
        Node::Chunk(c) => format!("chunk {}", c.tag),
    }
}

/// Build a FORM node.
pub fn form(tag: &[u8; 4], children: Vec<Node>) -> Node {
    Node::Form(Form { tag: Tag(*tag), children, offset: 0 })
}
/// Build a FORM node whose type is a version number.
pub fn version_form(version: u16, children: Vec<Node>) -> Node {
    Node::Form(Form { tag: Tag::from_version(version), children, offset: 0 })
}
/// Build a chunk node.
pub fn chunk(tag: &[u8; 4], data: Vec<u8>) -> Node {
    Node::Chunk(Chunk { tag: Tag(*tag), data, offset: 0 })
}
/// Build a chunk from one payload value.
pub fn chunk_of<T: Codec>(tag: &[u8; 4], v: &T) -> Node {
    let mut data = Vec::new();
    v.encode(&mut data);
    chunk(tag, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    payload_struct! {
        pub struct Sample { pub a: i32, pub b: f32, pub s: String, pub c: Rgb, pub list: Vec<Point2> }
    }

    #[test]
    fn payload_struct_round_trip() {
        let v = Sample { a: -3, b: 1.5, s: "café\u{ff}".into(), c: [1, 2, 3], list: vec![Point2 { x: 1.0, z: -2.0 }] };
        let mut bytes = Vec::new();
        v.encode(&mut bytes);
        assert_eq!(bytes.len(), 4 + 4 + 6 + 3 + 4 + 8);
        let mut r = PayloadReader::new(&bytes, 100, "X/DATA".into());
        assert_eq!(r.read::<Sample>().unwrap(), v);
        r.end().unwrap();
    }

    #[test]
    fn hostile_count_is_rejected_without_allocating() {
        let mut bytes = Vec::new();
        0x7fff_ffffi32.encode(&mut bytes);
        let mut r = PayloadReader::new(&bytes, 40, "X/DATA".into());
        let e = r.read::<Vec<Point2>>().unwrap_err();
        assert_eq!(e.offset, 44);
        assert!(e.message.contains("count"), "{e}");
    }

    #[test]
    fn unterminated_string_and_truncation() {
        let mut r = PayloadReader::new(b"abc", 0, "P".into());
        assert!(r.read::<String>().is_err());
        let mut r = PayloadReader::new(&[1, 2], 10, "P".into());
        let e = r.read::<f32>().unwrap_err();
        assert_eq!((e.offset, e.path.as_str()), (10, "P"));
    }

    #[test]
    fn bool32_json() {
        assert_eq!(serde_json::to_string(&Bool32(1)).unwrap(), "true");
        assert_eq!(serde_json::to_string(&Bool32(7)).unwrap(), "7");
        assert_eq!(serde_json::from_str::<Bool32>("false").unwrap(), Bool32(0));
        assert_eq!(serde_json::from_str::<Bool32>("7").unwrap(), Bool32(7));
    }
}
