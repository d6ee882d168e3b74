//! The typed model of an NWN2 `.trn` / `.trx` file (nwn2 §A.2–A.6): lossless, so an
//! unmodified file rewrites byte for byte. Fixed-size records whose bytes are plain
//! little-endian fields are `Pod` structs (read and written as bytes, base64 in JSON); names
//! keep their garbage after the NUL (nwn2 §A.4: "NUL, then uninitialized garbage").

use bytemuck::{Pod, Zeroable};
use serde::{Deserialize, Serialize};

use super::serde_util::{b64, b64pod, fixed, fixed_arr};

/// A whole file: container version and packets in file order (nwn2 §A.2).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Nwn2File {
    pub version_major: u16,
    pub version_minor: u16,
    pub packets: Vec<Packet>,
}

/// One packet of the container. Tags this crate does not model are kept raw.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum Packet {
    #[serde(rename = "TRWH")]
    Trwh(Trwh),
    #[serde(rename = "TRRN")]
    Trrn(Box<Trrn>),
    #[serde(rename = "WATR")]
    Watr(Box<Watr>),
    #[serde(rename = "ASWM")]
    Aswm(Box<AswmPacket>),
    Unknown {
        #[serde(with = "fixed")]
        tag: [u8; 4],
        #[serde(with = "b64")]
        data: Vec<u8>,
    },
}

impl Packet {
    pub fn tag(&self) -> [u8; 4] {
        match self {
            Packet::Trwh(_) => *b"TRWH",
            Packet::Trrn(_) => *b"TRRN",
            Packet::Watr(_) => *b"WATR",
            Packet::Aswm(_) => *b"ASWM",
            Packet::Unknown { tag, .. } => *tag,
        }
    }
}

/// nwn2 §A.3: area size in megatiles (exteriors) and an opaque id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trwh {
    pub width: u32,
    pub height: u32,
    pub id: u32,
}

/// A TRRN vertex, 44 bytes (nwn2 §A.4). Tint is stored B, G, R, A.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct TrrnVertex {
    pub position: [f32; 3],
    pub normal: [f32; 3],
    pub tint: [u8; 4],
    pub uv: [f32; 2],
    pub weights: [f32; 2],
}

/// A grass blade, 36 bytes (nwn2 §A.4).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct GrassBlade {
    pub position: [f32; 3],
    pub direction: [f32; 3],
    pub dimension: [f32; 3],
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Grass {
    #[serde(with = "fixed")]
    pub name: [u8; 32],
    #[serde(with = "fixed")]
    pub texture: [u8; 32],
    #[serde(with = "b64pod")]
    pub blades: Vec<GrassBlade>,
}

/// One megatile of terrain (nwn2 §A.4).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Trrn {
    #[serde(with = "fixed")]
    pub name: [u8; 128],
    #[serde(with = "fixed_arr")]
    pub textures: [[u8; 32]; 6],
    pub colors: [[f32; 3]; 6],
    #[serde(with = "b64pod")]
    pub vertices: Vec<TrrnVertex>,
    #[serde(with = "b64pod")]
    pub triangles: Vec<[u16; 3]>,
    /// Complete DDS file: textures 0–3 in R, G, B, A.
    #[serde(with = "b64")]
    pub dds_a: Vec<u8>,
    /// Complete DDS file: textures 4–5 in R, G.
    #[serde(with = "b64")]
    pub dds_b: Vec<u8>,
    pub grass: Vec<Grass>,
}

/// A WATR vertex, 28 bytes (nwn2 §A.5).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct WatrVertex {
    pub position: [f32; 3],
    pub uv5: [f32; 2],
    pub uv: [f32; 2],
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WaterTexture {
    #[serde(with = "fixed")]
    pub name: [u8; 32],
    pub direction: [f32; 2],
    pub rate: f32,
    pub angle: f32,
}

/// Water of one megatile (nwn2 §A.5).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Watr {
    #[serde(with = "fixed")]
    pub name: [u8; 32],
    #[serde(with = "fixed")]
    pub unknown: [u8; 96],
    pub color: [f32; 3],
    pub ripple: [f32; 2],
    pub smoothness: f32,
    pub reflect_bias: f32,
    pub reflect_power: f32,
    pub specular_power: f32,
    pub specular_coefficient: f32,
    pub textures: [WaterTexture; 3],
    pub uv_offset: [f32; 2],
    #[serde(with = "b64pod")]
    pub vertices: Vec<WatrVertex>,
    #[serde(with = "b64pod")]
    pub triangles: Vec<[u16; 3]>,
    /// 0 = water, 1 = no water; one per triangle.
    #[serde(with = "b64pod")]
    pub triangle_flags: Vec<u32>,
    #[serde(with = "b64")]
    pub dds: Vec<u8>,
    pub megatile: [u32; 2],
}

/// The ASWM packet: its wrapper and the decoded walkmesh (nwn2 §A.6).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AswmPacket {
    /// The payload had the `COMP` wrapper (the toolset always compresses).
    pub compressed: bool,
    /// The original zlib stream and the SHA-256 of what it decompressed to: when the walkmesh
    /// still encodes to those bytes the stream is written back unchanged (byte-exact rewrite;
    /// another zlib would compress differently).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<OriginalStream>,
    pub aswm: Aswm,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OriginalStream {
    #[serde(with = "b64")]
    pub stream: Vec<u8>,
    #[serde(with = "fixed")]
    pub sha256: [u8; 32],
}

/// An ASWM edge, 16 bytes (nwn2 §A.6.2). `triangles[1]` is `NONE` on a boundary.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct Edge {
    pub vertices: [u32; 2],
    pub triangles: [u32; 2],
}

/// An ASWM triangle, 64 bytes (nwn2 §A.6.2).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct Triangle {
    pub vertices: [u32; 3],
    pub linked_edges: [u32; 3],
    pub linked_triangles: [u32; 3],
    pub centroid: [f32; 2],
    pub normal: [f32; 3],
    pub plane_d: f32,
    pub island: u16,
    pub flags: u16,
}

/// "No index" in u32 fields (−1).
pub const NONE: u32 = u32::MAX;
/// "No island" / "no next island".
pub const NO_ISLAND: u16 = 0xFFFF;
pub const FLAG_WALKABLE: u16 = 0x01;
pub const FLAG_CLOCKWISE: u16 = 0x04;
/// Footstep material bits (0x08 … 0x2000), nwn2 §A.6.2.
pub const MATERIAL_FLAGS: u16 = 0x3FF8;

/// The walkmesh (nwn2 §A.6.1–A.6.3).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Aswm {
    pub version: u32,
    #[serde(with = "fixed")]
    pub name: [u8; 32],
    pub owns_data: u8,
    /// The header's last field ("face offset"), 0 in every sample.
    pub unknown: u32,
    #[serde(with = "b64pod")]
    pub vertices: Vec<[f32; 3]>,
    #[serde(with = "b64pod")]
    pub edges: Vec<Edge>,
    #[serde(with = "b64pod")]
    pub triangles: Vec<Triangle>,
    pub tiles_flags: u32,
    pub tile_width: f32,
    pub grid_height: u32,
    pub grid_width: u32,
    pub tiles: Vec<Tile>,
    pub border_size: u32,
    pub islands: Vec<Island>,
    #[serde(with = "b64pod")]
    pub island_paths: Vec<IslandPath>,
}

/// One pathing tile (nwn2 §A.6.3).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Tile {
    #[serde(with = "fixed")]
    pub name: [u8; 32],
    pub owns_data: u8,
    pub vertex_count: u32,
    pub edge_count: u32,
    pub triangle_count: u32,
    pub size_x: f32,
    pub size_y: f32,
    pub triangles_offset: u32,
    pub path_flags: u32,
    pub rle_table_size: u32,
    /// Node of each local triangle, 0xFF when not walkable (empty when not stored).
    #[serde(with = "b64")]
    pub local_to_node: Vec<u8>,
    /// Local triangle of each node.
    pub node_to_local: Vec<u32>,
    /// node_count² next-hop bytes: low 7 bits the next node, 0x80 line of sight, 0xFF none.
    #[serde(with = "b64")]
    pub nodes: Vec<u8>,
    pub tile_flags: u32,
}

impl Tile {
    pub fn node_count(&self) -> usize {
        self.node_to_local.len()
    }
}

/// A connected walkable part of a tile (nwn2 §A.6.3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Island {
    pub index: u32,
    pub tile: u32,
    pub center: [f32; 3],
    pub triangle_count: u32,
    pub adjacent: Vec<u32>,
    pub distances: Vec<f32>,
    pub exits: Vec<u32>,
}

/// One entry of the island path table, 8 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct IslandPath {
    pub next: u16,
    pub padding: u16,
    pub weight: f32,
}

impl Nwn2File {
    pub fn trwh(&self) -> Option<&Trwh> {
        self.packets.iter().find_map(|p| if let Packet::Trwh(t) = p { Some(t) } else { None })
    }
    pub fn trrns(&self) -> impl Iterator<Item = &Trrn> {
        self.packets.iter().filter_map(|p| if let Packet::Trrn(t) = p { Some(&**t) } else { None })
    }
    pub fn watrs(&self) -> impl Iterator<Item = &Watr> {
        self.packets.iter().filter_map(|p| if let Packet::Watr(t) = p { Some(&**t) } else { None })
    }
    pub fn aswm(&self) -> Option<&Aswm> {
        self.packets.iter().find_map(|p| if let Packet::Aswm(a) = p { Some(&a.aswm) } else { None })
    }
    pub fn aswm_mut(&mut self) -> Option<&mut Aswm> {
        self.packets.iter_mut().find_map(|p| if let Packet::Aswm(a) = p { Some(&mut a.aswm) } else { None })
    }
}

/// Text up to the first NUL of a fixed-size name.
pub fn name_str(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// A zero-padded fixed-size name (truncated to leave a NUL).
pub fn fixed_name<const N: usize>(s: &str) -> [u8; N] {
    let mut out = [0u8; N];
    let n = s.len().min(N - 1);
    out[..n].copy_from_slice(&s.as_bytes()[..n]);
    out
}
