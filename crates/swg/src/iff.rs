//! Generic IFF container: a tree of FORMs and chunks (swg-trn §1).
//!
//! Sizes and tags are big-endian, payloads are opaque here, and there is **no padding**
//! (odd chunks are not padded in SWG files). Parsing is bounded by [`Limits`]: a size that
//! runs past its parent, too deep a nesting or too many nodes is an error with the byte
//! offset and the chunk path, never a panic or a huge allocation (every payload is a copy
//! of bytes that exist in the input, so memory is bounded by the input length).

use serde::{Deserialize, Serialize};
use std::fmt;

/// A four-character code such as `FORM`, `PTAT` or `0015`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tag(pub [u8; 4]);

impl Tag {
    pub const FORM: Tag = Tag(*b"FORM");

    pub const fn new(s: &[u8; 4]) -> Tag {
        Tag(*s)
    }

    /// A version tag (`0000`…`9999`) as a number.
    pub fn version(self) -> Option<u16> {
        if self.0.iter().all(|b| b.is_ascii_digit()) {
            Some(self.0.iter().fold(0u16, |acc, b| acc * 10 + u16::from(b - b'0')))
        } else {
            None
        }
    }

    /// The tag of a version FORM, e.g. `Tag::from_version(15)` is `0015`.
    pub fn from_version(v: u16) -> Tag {
        let s = format!("{:04}", v.min(9999));
        let b = s.as_bytes();
        Tag([b[0], b[1], b[2], b[3]])
    }
}

impl fmt::Display for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for &b in &self.0 {
            if b.is_ascii_graphic() || b == b' ' {
                write!(f, "{}", b as char)?;
            } else {
                write!(f, "\\x{b:02x}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tag({self})")
    }
}

impl Serialize for Tag {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Tag {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        parse_tag_text(&s).ok_or_else(|| serde::de::Error::custom(format!("`{s}` is not a four-character IFF tag")))
    }
}

/// Parse the `Display` form of a tag back (printable ASCII, `\xNN` escapes).
fn parse_tag_text(s: &str) -> Option<Tag> {
    let mut out = Vec::with_capacity(4);
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && bytes.get(i + 1) == Some(&b'x') && i + 4 <= bytes.len() {
            out.push(u8::from_str_radix(s.get(i + 2..i + 4)?, 16).ok()?);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    let arr: [u8; 4] = out.try_into().ok()?;
    Some(Tag(arr))
}

/// One node of the tree. `offset` is the byte offset of the node's header in the file it
/// was read from (0 for nodes built in memory); it is not part of the node's identity.
#[derive(Clone, Debug)]
pub enum Node {
    Form(Form),
    Chunk(Chunk),
}

#[derive(Clone, Debug)]
pub struct Form {
    pub tag: Tag,
    pub children: Vec<Node>,
    pub offset: usize,
}

#[derive(Clone, Debug)]
pub struct Chunk {
    pub tag: Tag,
    pub data: Vec<u8>,
    pub offset: usize,
}

impl PartialEq for Form {
    fn eq(&self, o: &Self) -> bool {
        self.tag == o.tag && self.children == o.children
    }
}
impl PartialEq for Chunk {
    fn eq(&self, o: &Self) -> bool {
        self.tag == o.tag && self.data == o.data
    }
}
impl PartialEq for Node {
    fn eq(&self, o: &Self) -> bool {
        match (self, o) {
            (Node::Form(a), Node::Form(b)) => a == b,
            (Node::Chunk(a), Node::Chunk(b)) => a == b,
            _ => false,
        }
    }
}

impl Node {
    pub fn tag(&self) -> Tag {
        match self {
            Node::Form(f) => f.tag,
            Node::Chunk(c) => c.tag,
        }
    }
    pub fn offset(&self) -> usize {
        match self {
            Node::Form(f) => f.offset,
            Node::Chunk(c) => c.offset,
        }
    }
    /// Size of the node when written, header included.
    pub fn encoded_len(&self) -> usize {
        match self {
            Node::Form(f) => 12 + f.children.iter().map(Node::encoded_len).sum::<usize>(),
            Node::Chunk(c) => 8 + c.data.len(),
        }
    }
    /// Append the node's bytes to `out`.
    pub fn write(&self, out: &mut Vec<u8>) {
        match self {
            Node::Form(f) => {
                let size = self.encoded_len() - 8;
                out.extend_from_slice(b"FORM");
                out.extend_from_slice(&(size as u32).to_be_bytes());
                out.extend_from_slice(&f.tag.0);
                for c in &f.children {
                    c.write(out);
                }
            }
            Node::Chunk(c) => {
                out.extend_from_slice(&c.tag.0);
                out.extend_from_slice(&(c.data.len() as u32).to_be_bytes());
                out.extend_from_slice(&c.data);
            }
        }
    }
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.encoded_len());
        self.write(&mut out);
        out
    }
    /// Number of nodes in this subtree, this one included.
    pub fn count(&self) -> usize {
        match self {
            Node::Form(f) => 1 + f.children.iter().map(Node::count).sum::<usize>(),
            Node::Chunk(_) => 1,
        }
    }
}

/// Bounds against hostile input.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Maximum FORM nesting depth. Real files nest about 20 deep.
    pub max_depth: usize,
    /// Maximum number of nodes in one file. Real planets have about 100,000.
    pub max_nodes: usize,
    /// Maximum input length in bytes.
    pub max_input_len: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_depth: 64, max_nodes: 4_000_000, max_input_len: 1 << 30 }
    }
}

/// A problem at a place in a file: the chunk path (e.g.
/// `PTAT/0015/TGEN/0000/LYRS/LAYR[12]/0003/BPOL/0007/DATA`) and a byte offset.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{} at byte offset {offset}: {message}", if path.is_empty() { "start of file" } else { path })]
pub struct FormatError {
    pub path: String,
    pub offset: usize,
    pub message: String,
}

impl FormatError {
    pub fn new(path: impl Into<String>, offset: usize, message: impl Into<String>) -> Self {
        FormatError { path: path.into(), offset, message: message.into() }
    }
}

/// Parse a whole file: exactly one root FORM spanning every byte.
pub fn parse(bytes: &[u8], limits: &Limits) -> Result<Node, FormatError> {
    if bytes.len() > limits.max_input_len {
        return Err(FormatError::new("", 0, format!("input is {} bytes, over the limit of {}", bytes.len(), limits.max_input_len)));
    }
    // A file that is not IFF at all (text, an image, another game's format) says so, rather
    // than reading its first bytes as a tag and a size.
    if bytes.get(..4) != Some(b"FORM".as_slice()) {
        let head = Tag(std::array::from_fn(|i| bytes.get(i).copied().unwrap_or(b' ')));
        let found = if bytes.len() < 4 { format!("a {}-byte file", bytes.len()) } else { format!("`{head}`") };
        return Err(FormatError::new("", 0, format!("not an IFF file (expected FORM, found {found})")));
    }
    let mut p = Parser { bytes, limits, nodes: 0 };
    let (root, end) = p.node(0, bytes.len(), "", 0)?;
    if end != bytes.len() {
        return Err(FormatError::new(path_of(&root), end, format!("{} unexpected bytes after the root FORM", bytes.len() - end)));
    }
    Ok(root)
}

fn path_of(n: &Node) -> String {
    match n {
        Node::Form(f) => f.tag.to_string(),
        Node::Chunk(c) => c.tag.to_string(),
    }
}

struct Parser<'a> {
    bytes: &'a [u8],
    limits: &'a Limits,
    nodes: usize,
}

impl Parser<'_> {
    /// Parse the node at `at`, which must end by `limit`. Returns the node and its end offset.
    fn node(&mut self, at: usize, limit: usize, parent_path: &str, depth: usize) -> Result<(Node, usize), FormatError> {
        self.nodes += 1;
        if self.nodes > self.limits.max_nodes {
            return Err(FormatError::new(parent_path, at, format!("more than {} IFF nodes", self.limits.max_nodes)));
        }
        if limit - at < 8 {
            return Err(FormatError::new(parent_path, at, format!("truncated node header: {} bytes left, 8 needed", limit - at)));
        }
        let tag = Tag([self.bytes[at], self.bytes[at + 1], self.bytes[at + 2], self.bytes[at + 3]]);
        let size = u32::from_be_bytes(self.bytes[at + 4..at + 8].try_into().unwrap()) as usize;
        // A FORM is named by its type (`PTAT`, `LAYR`) when the bytes are there to read it.
        let name = if tag == Tag::FORM && limit - at >= 12 { Tag(self.bytes[at + 8..at + 12].try_into().unwrap()) } else { tag };
        let here = if parent_path.is_empty() { name.to_string() } else { format!("{parent_path}/{name}") };
        let body = at + 8;
        if size > limit - body {
            let err = FormatError::new(here.clone(), at, format!("size {size} runs past the end of its parent ({} bytes left)", limit - body));
            // A truncated FORM: the useful place is the first child the cut runs through,
            // so walk the children that are there and report the deepest one that is cut.
            if tag == Tag::FORM && limit - at >= 12 && depth < self.limits.max_depth {
                let mut pos = body + 4;
                while pos < limit {
                    match self.node(pos, limit, &here, depth + 1) {
                        Ok((_, next)) => pos = next,
                        Err(inner) => return Err(inner),
                    }
                }
            }
            return Err(err);
        }
        let end = body + size;
        if tag != Tag::FORM {
            let data = self.bytes[body..end].to_vec();
            return Ok((Node::Chunk(Chunk { tag, data, offset: at }), end));
        }
        if size < 4 {
            return Err(FormatError::new(here, at, format!("FORM size {size} is smaller than its 4-byte type")));
        }
        if depth >= self.limits.max_depth {
            return Err(FormatError::new(here, at, format!("nesting deeper than {}", self.limits.max_depth)));
        }
        let ftag = Tag(self.bytes[body..body + 4].try_into().unwrap());
        let fpath = if parent_path.is_empty() { ftag.to_string() } else { format!("{parent_path}/{ftag}") };
        let mut children = Vec::new();
        let mut pos = body + 4;
        while pos < end {
            // The path of a child is refined with sibling indices once all siblings are known;
            // during parsing the plain tag path is precise enough to find the byte offset.
            let (child, next) = self.node(pos, end, &fpath, depth + 1)?;
            children.push(child);
            pos = next;
        }
        Ok((Node::Form(Form { tag: ftag, children, offset: at }), end))
    }
}

/// The path segment of `children[index]`: its tag, with `[k]` when several siblings share
/// the tag (k counts siblings with that tag), as in `LAYR[12]`.
pub fn child_segment(children: &[Node], index: usize) -> String {
    let tag = children[index].tag();
    let same = children.iter().filter(|c| c.tag() == tag).count();
    if same > 1 {
        let k = children[..index].iter().filter(|c| c.tag() == tag).count();
        format!("{tag}[{k}]")
    } else {
        tag.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(tag: &[u8; 4], data: &[u8]) -> Vec<u8> {
        let mut v = tag.to_vec();
        v.extend_from_slice(&(data.len() as u32).to_be_bytes());
        v.extend_from_slice(data);
        v
    }
    fn form(tag: &[u8; 4], body: &[u8]) -> Vec<u8> {
        let mut v = b"FORM".to_vec();
        v.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
        v.extend_from_slice(tag);
        v.extend_from_slice(body);
        v
    }

    #[test]
    fn odd_chunks_are_not_padded() {
        let mut body = chunk(b"DATA", &[1, 2, 3]);
        body.extend(chunk(b"NEXT", &[9]));
        let bytes = form(b"TEST", &body);
        let root = parse(&bytes, &Limits::default()).unwrap();
        let Node::Form(f) = &root else { panic!() };
        assert_eq!(f.children.len(), 2);
        assert_eq!(f.children[1].tag(), Tag(*b"NEXT"));
        assert_eq!(f.children[1].offset(), 12 + 11);
        assert_eq!(root.to_bytes(), bytes);
    }

    #[test]
    fn oversized_child_is_an_error_with_path_and_offset() {
        let mut bytes = form(b"PTAT", &form(b"0015", &chunk(b"DATA", &[0; 4])));
        // DATA (header at byte 24, size field at 28) says 4 GB.
        let at = 28;
        bytes[at..at + 4].copy_from_slice(&u32::MAX.to_be_bytes());
        let err = parse(&bytes, &Limits::default()).unwrap_err();
        assert_eq!(err.path, "PTAT/0015/DATA");
        assert_eq!(err.offset, 24);
        assert!(err.message.contains("runs past"), "{err}");
    }

    #[test]
    fn depth_limit() {
        let mut bytes = chunk(b"DATA", &[]);
        for _ in 0..100 {
            bytes = form(b"DEEP", &bytes);
        }
        let err = parse(&bytes, &Limits::default()).unwrap_err();
        assert!(err.message.contains("nesting"), "{err}");
    }

    #[test]
    fn trailing_bytes_and_short_input() {
        let mut bytes = form(b"TEST", &[]);
        bytes.push(0);
        assert!(parse(&bytes, &Limits::default()).unwrap_err().message.contains("after the root"));
        assert!(parse(b"FO", &Limits::default()).unwrap_err().message.contains("not an IFF file (expected FORM, found a 2-byte file)"));
        assert!(parse(&chunk(b"DATA", &[]), &Limits::default()).is_err());
    }

    #[test]
    fn a_file_that_is_not_iff_says_so() {
        // A text file renamed .trn: its first bytes are not read as a tag and a size.
        let err = parse(b"hello world, this is text\n", &Limits::default()).unwrap_err();
        assert_eq!((err.path.as_str(), err.offset), ("", 0));
        assert_eq!(err.message, "not an IFF file (expected FORM, found `hell`)");
        assert_eq!(err.to_string(), "start of file at byte offset 0: not an IFF file (expected FORM, found `hell`)");
    }

    #[test]
    fn sibling_indices_in_paths() {
        let kids = vec![
            Node::Chunk(Chunk { tag: Tag(*b"A   "), data: vec![], offset: 0 }),
            Node::Chunk(Chunk { tag: Tag(*b"LAYR"), data: vec![], offset: 0 }),
            Node::Chunk(Chunk { tag: Tag(*b"LAYR"), data: vec![], offset: 0 }),
        ];
        assert_eq!(child_segment(&kids, 0), "A   ");
        assert_eq!(child_segment(&kids, 2), "LAYR[1]");
    }

    #[test]
    fn tag_text_round_trip() {
        let t = Tag([b'A', 0, 0xff, b' ']);
        assert_eq!(parse_tag_text(&t.to_string()), Some(t));
        assert_eq!(Tag(*b"0015").version(), Some(15));
        assert_eq!(Tag::from_version(7), Tag(*b"0007"));
    }
}
