//! The validation checks of nwn2 §A.8 (nwn-lib-d's `validate(strict)`, Skywing's loader and
//! xoreos), run on a parsed file. The parse-time checks (type tags, exact consumption, exact
//! decompression, owns_data, version, refused path-table compression) are errors of
//! [`super::codec::read`]. Every finding names the packet, the index and the rule, and all
//! of them are reported, not just the first.

use std::collections::HashSet;
use std::fmt;

use super::model::*;

/// One failed check.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Finding {
    /// `packet #k TRRN`, …
    pub packet: String,
    /// The item inside the packet (`triangle 12`, `tile 3`, …), empty for the packet itself.
    pub item: String,
    /// What rule failed, with the values.
    pub rule: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.item.is_empty() {
            write!(f, "{}: {}", self.packet, self.rule)
        } else {
            write!(f, "{}: {}: {}", self.packet, self.item, self.rule)
        }
    }
}

struct Sink<'a> {
    packet: &'a str,
    out: &'a mut Vec<Finding>,
}

impl Sink<'_> {
    fn fail(&mut self, item: impl Into<String>, rule: impl Into<String>) {
        // Cap per packet so a badly broken file does not print millions of lines.
        if self.out.iter().filter(|f| f.packet == self.packet).count() < 1000 {
            self.out.push(Finding { packet: self.packet.to_string(), item: item.into(), rule: rule.into() });
        }
    }
}

/// A DDS header's facts that the checks need.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DdsInfo {
    pub width: u32,
    pub height: u32,
    pub bits: u32,
}

/// Parse a DDS header and check the pixel format is one the readers support (uncompressed
/// RGB/RGBA/luminance 8–32 bit, or DXT1/3/5) and that the pixel data is all there.
pub fn parse_dds(b: &[u8]) -> Result<DdsInfo, String> {
    if b.len() < 128 || &b[..4] != b"DDS " {
        return Err(format!("not a DDS file ({} bytes, no `DDS ` header)", b.len()));
    }
    let u = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
    if u(4) != 124 || u(76) != 32 {
        return Err(format!("header size {} / pixel-format size {} (must be 124 / 32)", u(4), u(76)));
    }
    let (height, width, pf_flags, fourcc, bits) = (u(12), u(16), u(80), &b[84..88], u(88));
    let pixels = u64::from(width) * u64::from(height);
    let need = if pf_flags & 0x4 != 0 {
        let block = match fourcc {
            b"DXT1" => 8,
            b"DXT3" | b"DXT5" => 16,
            _ => return Err(format!("unsupported FourCC {:?}", String::from_utf8_lossy(fourcc))),
        };
        u64::from(width.div_ceil(4)) * u64::from(height.div_ceil(4)) * block
    } else if pf_flags & (0x40 | 0x20000 | 0x2) != 0 && matches!(bits, 8 | 16 | 24 | 32) {
        pixels * u64::from(bits / 8)
    } else {
        return Err(format!("unsupported pixel format (flags {pf_flags:#x}, {bits} bits)"));
    };
    if width == 0 || height == 0 || (b.len() as u64 - 128) < need {
        return Err(format!("{width}x{height} needs {need} bytes of pixels, the file has {}", b.len() - 128));
    }
    Ok(DdsInfo { width, height, bits: if pf_flags & 0x4 != 0 { 0 } else { bits } })
}

/// Run every check; an empty list means the file passes.
pub fn check(file: &Nwn2File, strict: bool) -> Vec<Finding> {
    let mut out = Vec::new();
    {
        let mut s = Sink { packet: "header", out: &mut out };
        if (file.version_major, file.version_minor) != (2, 3) {
            s.fail("", format!("version {}.{} (xoreos accepts only 2.3)", file.version_major, file.version_minor));
        }
    }
    for (k, p) in file.packets.iter().enumerate() {
        let name = format!("packet #{k} {}", String::from_utf8_lossy(&p.tag()));
        let mut s = Sink { packet: &name, out: &mut out };
        match p {
            Packet::Trrn(t) => check_trrn(t, &mut s),
            Packet::Watr(w) => check_watr(w, strict, &mut s),
            Packet::Aswm(a) => check_aswm(&a.aswm, strict, &mut s),
            Packet::Trwh(_) | Packet::Unknown { .. } => {}
        }
    }
    out
}

fn check_trrn(t: &Trrn, s: &mut Sink) {
    let a = parse_dds(&t.dds_a).map_err(|e| s.fail("dds_a", e)).ok();
    let b = parse_dds(&t.dds_b).map_err(|e| s.fail("dds_b", e)).ok();
    if let (Some(a), Some(b)) = (a, b) {
        // Skywing: both blend maps of equal size and 32-bit pixels.
        if (a.width, a.height) != (b.width, b.height) || a.bits != 32 || b.bits != 32 {
            s.fail(
                "dds",
                format!(
                    "blend maps {}x{} {}-bit and {}x{} {}-bit: both must be 32-bit and the same size",
                    a.width, a.height, a.bits, b.width, b.height, b.bits
                ),
            );
        }
    }
    for (i, v) in t.vertices.iter().enumerate() {
        if v.position.iter().any(|c| c.is_nan()) {
            s.fail(format!("vertex {i}"), "position is NaN");
        }
    }
    for (i, tri) in t.triangles.iter().enumerate() {
        if let Some(&v) = tri.iter().find(|&&v| usize::from(v) >= t.vertices.len()) {
            s.fail(format!("triangle {i}"), format!("vertex index {v} is not below the vertex count {}", t.vertices.len()));
        }
    }
}

fn check_watr(w: &Watr, strict: bool, s: &mut Sink) {
    if let Err(e) = parse_dds(&w.dds) {
        s.fail("dds", e);
    }
    if w.triangle_flags.len() != w.triangles.len() {
        s.fail("triangle flags", format!("{} flags for {} triangles (one per triangle)", w.triangle_flags.len(), w.triangles.len()));
    }
    for (i, v) in w.vertices.iter().enumerate() {
        if v.position.iter().any(|c| c.is_nan()) {
            s.fail(format!("vertex {i}"), "position is NaN");
        }
    }
    for (i, tri) in w.triangles.iter().enumerate() {
        if let Some(&v) = tri.iter().find(|&&v| usize::from(v) >= w.vertices.len()) {
            s.fail(format!("triangle {i}"), format!("vertex index {v} is not below the vertex count {}", w.vertices.len()));
        }
    }
    if strict {
        for (i, &f) in w.triangle_flags.iter().enumerate() {
            if f > 1 {
                s.fail(format!("triangle flag {i}"), format!("{f} (strict: must be 0 or 1)"));
            }
        }
    }
}

fn ok_tri(t: u32, n: usize) -> bool {
    t == NONE || (t as usize) < n
}

fn check_aswm(a: &Aswm, strict: bool, s: &mut Sink) {
    let (nv, ne, nt, ni) = (a.vertices.len(), a.edges.len(), a.triangles.len(), a.islands.len());
    if a.version != 0x6C {
        s.fail("header", format!("version {:#x}: the game (Skywing's loader) accepts only 0x6C", a.version));
    }
    for (i, v) in a.vertices.iter().enumerate() {
        if v.iter().any(|c| c.is_nan()) {
            s.fail(format!("vertex {i}"), "coordinate is NaN");
        }
    }
    for (i, e) in a.edges.iter().enumerate() {
        if e.vertices.iter().any(|&v| v as usize >= nv) {
            s.fail(format!("edge {i}"), format!("vertices {:?}: each must be below the vertex count {nv}", e.vertices));
        }
        if !e.triangles.iter().all(|&t| ok_tri(t, nt)) {
            s.fail(format!("edge {i}"), format!("triangles {:?}: each must be -1 or below the triangle count {nt}", e.triangles.map(|t| t as i32)));
        }
    }
    for (i, t) in a.triangles.iter().enumerate() {
        let item = format!("triangle {i}");
        if t.vertices.iter().any(|&v| v as usize >= nv) {
            s.fail(&item, format!("vertices {:?}: each must be below the vertex count {nv}", t.vertices));
        }
        if t.linked_edges.iter().any(|&e| e as usize >= ne) {
            s.fail(&item, format!("linked_edges {:?}: each must be below the edge count {ne} (-1 is not allowed)", t.linked_edges.map(|e| e as i32)));
        }
        if !t.linked_triangles.iter().all(|&n| ok_tri(n, nt)) {
            s.fail(&item, format!("linked_triangles {:?}: each must be -1 or below the triangle count {nt}", t.linked_triangles.map(|n| n as i32)));
        }
        for k in 0..3 {
            let Some(e) = a.edges.get(t.linked_edges[k] as usize) else { continue };
            let mut want = [i as u32, t.linked_triangles[k]];
            let mut got = e.triangles;
            want.sort_unstable();
            got.sort_unstable();
            if want != got {
                s.fail(
                    &item,
                    format!(
                        "linked slot {k}: edge {} holds triangles {:?}, not this triangle and {}",
                        t.linked_edges[k],
                        e.triangles.map(|x| x as i32),
                        t.linked_triangles[k] as i32
                    ),
                );
            }
        }
        if ni == 0 {
            if strict && t.island != NO_ISLAND {
                s.fail(&item, format!("island {}: with no islands it must be 0xFFFF (strict)", t.island));
            }
        } else if t.island != NO_ISLAND && usize::from(t.island) >= ni {
            s.fail(&item, format!("island {} is not 0xFFFF or below the island count {ni}", t.island));
        }
    }
    let ntiles = u64::from(a.grid_width) * u64::from(a.grid_height);
    if a.tiles.len() as u64 != ntiles {
        s.fail("tiles", format!("{} tiles for a {}x{} grid", a.tiles.len(), a.grid_width, a.grid_height));
    }
    if !(a.tile_width > 0.0) {
        s.fail("tiles", format!("tile_width {} must be > 0", a.tile_width));
    }
    let sum: u64 = a.tiles.iter().map(|t| u64::from(t.triangle_count)).sum();
    if sum != nt as u64 {
        s.fail("tiles", format!("tile triangle counts add up to {sum}, the mesh has {nt} (Skywing: unclaimed faces)"));
    }
    let mut owner = vec![u32::MAX; nt];
    for (k, t) in a.tiles.iter().enumerate() {
        let item = format!("tile {k}");
        let off = t.triangles_offset as usize;
        let ltn = t.local_to_node.len();
        let nc = t.node_count();
        if ltn != 0 && ltn != t.triangle_count as usize {
            s.fail(&item, format!("local_to_node has {ltn} entries: must be 0 or the triangle count {}", t.triangle_count));
        }
        if off > nt || (off == nt && ltn != 0) {
            s.fail(&item, format!("triangles_offset {off} must be below the triangle count {nt} (or equal with an empty table)"));
        }
        if off.saturating_add(ltn) > nt {
            s.fail(&item, format!("triangles_offset {off} + local_to_node length {ltn} exceeds the triangle count {nt}"));
        }
        let range = off.min(nt)..off.saturating_add(t.triangle_count as usize).min(nt);
        for i in range.clone() {
            if owner[i] != u32::MAX {
                s.fail(&item, format!("triangle {i} also belongs to tile {}", owner[i]));
                break;
            }
            owner[i] = k as u32;
        }
        if strict {
            let mut vs = HashSet::new();
            let mut es = HashSet::new();
            for tri in &a.triangles[range.clone()] {
                vs.extend(tri.vertices);
                es.extend(tri.linked_edges);
            }
            if (t.vertex_count as usize, t.edge_count as usize) != (vs.len(), es.len()) {
                s.fail(
                    &item,
                    format!(
                        "vertex/edge counts {}/{} differ from the unique {}/{} of its triangles (strict)",
                        t.vertex_count,
                        t.edge_count,
                        vs.len(),
                        es.len()
                    ),
                );
            }
            let (tx, ty) = ((k as u64 % u64::from(a.grid_width.max(1))) as f32, (k as u64 / u64::from(a.grid_width.max(1))) as f32);
            let w = a.tile_width;
            for i in range.clone() {
                let c = a.triangles[i].centroid;
                if !(c[0] >= tx * w && c[0] <= (tx + 1.0) * w && c[1] >= ty * w && c[1] <= (ty + 1.0) * w) {
                    s.fail(&item, format!("triangle {i}: centroid ({}, {}) is outside the tile's square (strict)", c[0], c[1]));
                    break;
                }
            }
        }
        if t.nodes.len() != nc * nc {
            s.fail(&item, format!("{} node entries, must be node_count² = {}", t.nodes.len(), nc * nc));
        }
        if nc >= 0x7F {
            s.fail(&item, format!("node_count {nc} does not fit 7 bits"));
        }
        if let Some((j, &v)) = t.nodes.iter().enumerate().find(|&(_, &v)| v != 0xFF && usize::from(v & 0x7F) >= nc) {
            s.fail(&item, format!("node entry {j} = {v:#x}: must be 0xFF or name a node below {nc}"));
        }
        // The toolset's TRN stores local_to_node = 0..n with no nodes (nwn2 §A.6.4); the game
        // loads only the TRX, so that layout is reported under --strict only.
        if nc > 0 || strict {
            if let Some((j, &v)) = t.local_to_node.iter().enumerate().find(|&(_, &v)| v != 0xFF && usize::from(v) >= nc) {
                s.fail(&item, format!("local_to_node[{j}] = {v}: must be 0xFF or below the node count {nc}"));
            }
        }
        if let Some((j, &v)) = t.node_to_local.iter().enumerate().find(|&(_, &v)| v >= t.triangle_count || off.saturating_add(v as usize) >= nt) {
            s.fail(&item, format!("node_to_local[{j}] = {v}: must be below the tile's triangle count {}", t.triangle_count));
        }
    }
    for (k, isl) in a.islands.iter().enumerate() {
        let item = format!("island {k}");
        if isl.index as usize != k {
            s.fail(&item, format!("index {} differs from its position {k}", isl.index));
        }
        if isl.adjacent.len() != isl.distances.len() || isl.adjacent.len() != isl.exits.len() {
            s.fail(&item, format!("{} adjacent islands, {} distances, {} exits: must be equal", isl.adjacent.len(), isl.distances.len(), isl.exits.len()));
        }
        for (j, (&adj, &exit)) in isl.adjacent.iter().zip(&isl.exits).enumerate() {
            if adj as usize >= ni {
                s.fail(&item, format!("adjacent island {j} = {adj} is not below the island count {ni}"));
                continue;
            }
            let Some(t) = a.triangles.get(exit as usize) else {
                s.fail(&item, format!("exit triangle {j} = {exit} is not below the triangle count {nt}"));
                continue;
            };
            if usize::from(t.island) != k {
                s.fail(&item, format!("exit triangle {exit} belongs to island {}, not this one", t.island as i16));
            } else if !t.linked_triangles.iter().any(|&n| a.triangles.get(n as usize).is_some_and(|o| u32::from(o.island) == adj)) {
                s.fail(&item, format!("exit triangle {exit} has no neighbour in adjacent island {adj}"));
            }
        }
    }
    if a.island_paths.len() != ni * ni {
        s.fail("island path table", format!("{} entries, must be island_count² = {}", a.island_paths.len(), ni * ni));
    }
    if let Some((j, p)) = a.island_paths.iter().enumerate().find(|(_, p)| p.next != NO_ISLAND && usize::from(p.next) >= ni) {
        s.fail("island path table", format!("entry {j}: next {} is not 0xFFFF or below the island count {ni}", p.next));
    }
}
