//! Byte-level reader and writer for the sector files (`.base`/`.aux`/`.snd`, scs §B.2), their
//! nodes (§B.3), the k-DOP item header (§B.4), the Terrain item (§B.5, with the older layouts),
//! `quad_info` (§B.6) and the Bezier Patch item (§B.8).
//!
//! Every read names the file, the field and the byte offset when it fails, and every count is
//! checked against the bytes left (count × smallest element size) before anything is
//! allocated, so a hostile count of 2^31 is an error, not an allocation. The reader keeps raw
//! values (tokens as u64, floats bit for bit) so that `write(read(b)) == b`.

use super::token::Token;

/// Core map version written by the writer (scs §B.2).
pub const MAP_VERSION: u32 = 907;
/// Game map version (scs §B.2).
pub const GAME_MAP_VERSION: u32 = 3;
/// Item type codes (scs §B.5, §B.8; 0x05 inferred, see `Model`).
pub const ITEM_TERRAIN: u32 = 0x01;
pub const ITEM_MODEL: u32 = 0x05;
pub const ITEM_BEZIER_PATCH: u32 = 0x27;

/// Bytes of a node (scs §B.3).
pub const NODE_BYTES: usize = 56;
/// Bytes of the k-DOP item header after the item type (scs §B.4).
pub const KDOP_BYTES: usize = 53;

/// A reading failure: what, where (file, field, offset).
#[derive(Debug, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum CodecError {
    #[error("{file}: {field} at offset {offset}: need {need} bytes, only {have} left")]
    Truncated { file: String, field: String, offset: usize, need: usize, have: usize },
    #[error("{file}: {field} at offset {offset}: count {count} needs at least {need} bytes, only {have} left")]
    Count { file: String, field: String, offset: usize, count: u64, need: u64, have: usize },
    #[error("{file}: item type 0x{item_type:02x} at offset {offset} is not modelled (only Terrain 0x01, Model 0x05 and Bezier Patch 0x27 are), and the framing gives no length to skip it")]
    UnknownItem { file: String, item_type: u32, offset: usize },
    #[error("{file}: {extra} bytes left over at offset {offset} after the last field")]
    Trailing { file: String, offset: usize, extra: usize },
    #[error("{file}: {field} at offset {offset}: {message}")]
    Invalid { file: String, field: String, offset: usize, message: String },
}

/// A cursor over one file's bytes, with the file's name for errors.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    file: &'a str,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8], file: &'a str) -> Self {
        Reader { buf, pos: 0, file }
    }

    pub fn pos(&self) -> usize {
        self.pos
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn take(&mut self, n: usize, field: &str) -> Result<&'a [u8], CodecError> {
        if self.remaining() < n {
            return Err(CodecError::Truncated { file: self.file.to_string(), field: field.to_string(), offset: self.pos, need: n, have: self.remaining() });
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub fn bytes<const N: usize>(&mut self, field: &str) -> Result<[u8; N], CodecError> {
        Ok(self.take(N, field)?.try_into().expect("take returned N bytes"))
    }

    pub fn u8(&mut self, field: &str) -> Result<u8, CodecError> {
        Ok(self.bytes::<1>(field)?[0])
    }
    pub fn u16(&mut self, field: &str) -> Result<u16, CodecError> {
        Ok(u16::from_le_bytes(self.bytes(field)?))
    }
    pub fn i16(&mut self, field: &str) -> Result<i16, CodecError> {
        Ok(i16::from_le_bytes(self.bytes(field)?))
    }
    pub fn u32(&mut self, field: &str) -> Result<u32, CodecError> {
        Ok(u32::from_le_bytes(self.bytes(field)?))
    }
    pub fn i32(&mut self, field: &str) -> Result<i32, CodecError> {
        Ok(i32::from_le_bytes(self.bytes(field)?))
    }
    pub fn u64(&mut self, field: &str) -> Result<u64, CodecError> {
        Ok(u64::from_le_bytes(self.bytes(field)?))
    }
    pub fn f32(&mut self, field: &str) -> Result<f32, CodecError> {
        Ok(f32::from_le_bytes(self.bytes(field)?))
    }
    pub fn token(&mut self, field: &str) -> Result<Token, CodecError> {
        Ok(Token(self.u64(field)?))
    }
    pub fn float3(&mut self, field: &str) -> Result<[f32; 3], CodecError> {
        Ok([self.f32(field)?, self.f32(field)?, self.f32(field)?])
    }

    /// A count read as u64 at the current offset, checked against the bytes left
    /// (`count × min_elem`) so that no allocation is sized from an unchecked value.
    pub fn count(&mut self, count: u64, min_elem: usize, field: &str, at: usize) -> Result<usize, CodecError> {
        let need = count.saturating_mul(min_elem as u64);
        if need > self.remaining() as u64 {
            return Err(CodecError::Count { file: self.file.to_string(), field: field.to_string(), offset: at, count, need, have: self.remaining() });
        }
        Ok(count as usize)
    }

    /// Everything left (for the raw tails of files the project does not model).
    pub fn rest(&mut self) -> &'a [u8] {
        let s = &self.buf[self.pos..];
        self.pos = self.buf.len();
        s
    }

    /// Error unless every byte was consumed (scs §B.9: "each file consumed exactly").
    pub fn finish(&self) -> Result<(), CodecError> {
        if self.remaining() != 0 {
            return Err(CodecError::Trailing { file: self.file.to_string(), offset: self.pos, extra: self.remaining() });
        }
        Ok(())
    }

    pub fn invalid(&self, field: &str, offset: usize, message: String) -> CodecError {
        CodecError::Invalid { file: self.file.to_string(), field: field.to_string(), offset, message }
    }
}

/// Little-endian writer.
#[derive(Default)]
pub struct Writer {
    pub buf: Vec<u8>,
}

impl Writer {
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    pub fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn i16(&mut self, v: i16) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn f32(&mut self, v: f32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn token(&mut self, t: Token) {
        self.u64(t.0);
    }
    pub fn float3(&mut self, v: [f32; 3]) {
        v.iter().for_each(|&x| self.f32(x));
    }
    pub fn len_u32(&mut self, n: usize) {
        self.u32(u32::try_from(n).expect("count fits u32 (checked by the model builder)"));
    }
}

/// The framing header shared by `.base`/`.aux`/`.snd`/`.data`/`.layer` and the `.mbd`
/// (scs §B.2): u32 core version, token game id, u32 game map version.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Header {
    pub version: u32,
    pub game_id: Token,
    pub game_map_version: u32,
}

impl Default for Header {
    fn default() -> Self {
        Header { version: MAP_VERSION, game_id: Token(0x750461), game_map_version: GAME_MAP_VERSION }
    }
}

impl Header {
    pub fn read(r: &mut Reader) -> Result<Header, CodecError> {
        let at = r.pos();
        let version = r.u32("header.version")?;
        // The layouts this reader knows (scs §B.5 goes back to the ≤ 874 layout); a version
        // far outside is not an SCS sector file.
        if !(800..=999).contains(&version) {
            return Err(r.invalid("header.version", at, format!("map version {version} is not an SCS map version (800..=999)")));
        }
        Ok(Header { version, game_id: r.token("header.game_id")?, game_map_version: r.u32("header.game_map_version")? })
    }
    pub fn write(&self, w: &mut Writer) {
        w.u32(self.version);
        w.token(self.game_id);
        w.u32(self.game_map_version);
    }
}

/// A node (scs §B.3, 56 bytes).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Node {
    pub uid: u64,
    /// fixed3: i32 × 3 in 1/256 m (X, Y = height, Z).
    pub position: [i32; 3],
    /// W, X, Y, Z.
    pub rotation: [f32; 4],
    pub backward_item: u64,
    pub forward_item: u64,
    pub flags: u32,
}

impl Node {
    pub fn read(r: &mut Reader) -> Result<Node, CodecError> {
        Ok(Node {
            uid: r.u64("node.uid")?,
            position: [r.i32("node.position")?, r.i32("node.position")?, r.i32("node.position")?],
            rotation: [r.f32("node.rotation")?, r.f32("node.rotation")?, r.f32("node.rotation")?, r.f32("node.rotation")?],
            backward_item: r.u64("node.backward_item")?,
            forward_item: r.u64("node.forward_item")?,
            flags: r.u32("node.flags")?,
        })
    }
    pub fn write(&self, w: &mut Writer) {
        w.u64(self.uid);
        self.position.iter().for_each(|&p| w.i32(p));
        self.rotation.iter().for_each(|&q| w.f32(q));
        w.u64(self.backward_item);
        w.u64(self.forward_item);
        w.u32(self.flags);
    }
    /// Position in metres.
    pub fn position_m(&self) -> [f64; 3] {
        self.position.map(|p| f64::from(p) / 256.0)
    }
}

/// The k-DOP item header (scs §B.4).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Kdop {
    pub uid: u64,
    pub min: [f32; 5],
    pub max: [f32; 5],
    pub flags: u32,
    /// View distance ÷ 10.
    pub view_distance: u8,
}

impl Kdop {
    pub fn read(r: &mut Reader) -> Result<Kdop, CodecError> {
        let uid = r.u64("kdop.uid")?;
        let mut min = [0f32; 5];
        let mut max = [0f32; 5];
        for m in &mut min {
            *m = r.f32("kdop.min")?;
        }
        for m in &mut max {
            *m = r.f32("kdop.max")?;
        }
        Ok(Kdop { uid, min, max, flags: r.u32("kdop.flags")?, view_distance: r.u8("kdop.view_distance")? })
    }
    pub fn write(&self, w: &mut Writer) {
        w.u64(self.uid);
        self.min.iter().for_each(|&v| w.f32(v));
        self.max.iter().for_each(|&v| w.f32(v));
        w.u32(self.flags);
        w.u8(self.view_distance);
    }
}

/// A terrain material entry of `quad_info` (scs §B.6). Before 884 only the token is stored,
/// and `rotation` reads as 0.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct QuadMaterial {
    pub material: Token,
    /// Rotation × 10.
    pub rotation: u16,
}

/// A sparse vertex record of `quad_info` (offsets, normals): a quad corner and a float3.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct VertexData {
    pub x: u16,
    pub y: u16,
    pub data: [f32; 3],
}

/// `quad_info` (scs §B.6).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct QuadInfo {
    pub materials: Vec<QuadMaterial>,
    /// R, G, B, A.
    pub colors: Vec<[u8; 4]>,
    /// Rows (Terrain: across the strip; Bezier: x_tess + 1).
    pub size_x: u16,
    /// Columns (Terrain: along the strip; Bezier: z_tess + 1).
    pub size_y: u16,
    /// `quad_count` is this list's length; `scs check` compares it with size_x · size_y.
    pub quads: Vec<u32>,
    pub offsets: Vec<VertexData>,
    pub normals: Vec<VertexData>,
}

impl QuadInfo {
    /// A quad_info with one material, the default single white colour (alpha 0, as TruckLib
    /// writes it, scs §B.6) and `size_x × size_y` quads of material 0 / colour 0.
    pub fn uniform(material: Token, size_x: u16, size_y: u16) -> QuadInfo {
        QuadInfo {
            materials: vec![QuadMaterial { material, rotation: 0 }],
            colors: vec![[255, 255, 255, 0]],
            size_x,
            size_y,
            quads: vec![0; size_x as usize * size_y as usize],
            offsets: Vec::new(),
            normals: Vec::new(),
        }
    }

    pub fn read(r: &mut Reader, version: u32) -> Result<QuadInfo, CodecError> {
        let at = r.pos();
        let n = r.u16("quad_info.material_count")?;
        let mat_bytes = if version >= 884 { 10 } else { 8 };
        let n = r.count(n.into(), mat_bytes, "quad_info.material_count", at)?;
        let mut materials = Vec::with_capacity(n);
        for _ in 0..n {
            let material = r.token("quad_info.materials")?;
            let rotation = if version >= 884 { r.u16("quad_info.materials.rotation")? } else { 0 };
            materials.push(QuadMaterial { material, rotation });
        }
        let at = r.pos();
        let n = r.u16("quad_info.color_count")?;
        let n = r.count(n.into(), 4, "quad_info.color_count", at)?;
        let mut colors = Vec::with_capacity(n);
        for _ in 0..n {
            colors.push(r.bytes::<4>("quad_info.colors")?);
        }
        let size_x = r.u16("quad_info.size_x")?;
        let size_y = r.u16("quad_info.size_y")?;
        let at = r.pos();
        let n = r.u32("quad_info.quad_count")?;
        let n = r.count(n.into(), 4, "quad_info.quad_count", at)?;
        let mut quads = Vec::with_capacity(n);
        for _ in 0..n {
            quads.push(r.u32("quad_info.quads")?);
        }
        let offsets = Self::read_vertex_list(r, "quad_info.offset_count")?;
        let normals = Self::read_vertex_list(r, "quad_info.normal_count")?;
        Ok(QuadInfo { materials, colors, size_x, size_y, quads, offsets, normals })
    }

    fn read_vertex_list(r: &mut Reader, field: &str) -> Result<Vec<VertexData>, CodecError> {
        let at = r.pos();
        let n = r.u32(field)?;
        let n = r.count(n.into(), 16, field, at)?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(VertexData { x: r.u16(field)?, y: r.u16(field)?, data: r.float3(field)? });
        }
        Ok(v)
    }

    pub fn write(&self, w: &mut Writer, version: u32) {
        w.u16(self.materials.len() as u16);
        for m in &self.materials {
            w.token(m.material);
            if version >= 884 {
                w.u16(m.rotation);
            }
        }
        w.u16(self.colors.len() as u16);
        self.colors.iter().for_each(|c| w.buf.extend_from_slice(c));
        w.u16(self.size_x);
        w.u16(self.size_y);
        w.len_u32(self.quads.len());
        self.quads.iter().for_each(|&q| w.u32(q));
        for list in [&self.offsets, &self.normals] {
            w.len_u32(list.len());
            for v in list {
                w.u16(v.x);
                w.u16(v.y);
                w.float3(v.data);
            }
        }
    }

    /// Bytes from the start of a quad_info to its quad_count field.
    pub fn quad_count_offset(&self, version: u32) -> usize {
        let mat = if version >= 884 { 10 } else { 8 };
        2 + self.materials.len() * mat + 2 + self.colors.len() * 4 + 4
    }
}

/// A Terrain side's vegetation struct (16 bytes, scs §B.5).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct TerrainVegetation {
    pub vegetation: Token,
    /// Density × 10.
    pub density: u16,
    pub high_poly_distance: u8,
    pub scale_type: u8,
    /// × 10.
    pub start: u16,
    /// × 10.
    pub end: u16,
}

/// A vegetation sphere (20 bytes, scs §B.5).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct VegetationSphere {
    pub position: [f32; 3],
    pub radius: f32,
    /// 1 = no vegetation, 2 = low-poly only, 3 = high-poly.
    pub kind: u32,
}

fn read_spheres(r: &mut Reader, field: &str) -> Result<Vec<VegetationSphere>, CodecError> {
    let at = r.pos();
    let n = r.u32(field)?;
    let n = r.count(n.into(), 20, field, at)?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        v.push(VegetationSphere {
            position: r.float3("vegetation_sphere.position")?,
            radius: r.f32("vegetation_sphere.radius")?,
            kind: r.u32("vegetation_sphere.type")?,
        });
    }
    Ok(v)
}

fn write_spheres(w: &mut Writer, s: &[VegetationSphere]) {
    w.len_u32(s.len());
    for v in s {
        w.float3(v.position);
        w.f32(v.radius);
        w.u32(v.kind);
    }
}

/// One side block of a Terrain item (78 bytes, scs §B.5).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct TerrainSide {
    /// Size × 10 (0–6500 m).
    pub size: u16,
    pub profile: Token,
    pub coefficient: f32,
    pub prev_profile: Token,
    pub prev_coefficient: f32,
    pub vegetation: [TerrainVegetation; 3],
    /// × 10.
    pub no_detail_from: u16,
    /// × 10.
    pub no_detail_to: u16,
}

impl TerrainSide {
    fn read(r: &mut Reader) -> Result<TerrainSide, CodecError> {
        let size = r.u16("side.size")?;
        let profile = r.token("side.profile")?;
        let coefficient = r.f32("side.coefficient")?;
        let prev_profile = r.token("side.prev_profile")?;
        let prev_coefficient = r.f32("side.prev_coefficient")?;
        let mut vegetation = [TerrainVegetation::default(); 3];
        for v in &mut vegetation {
            *v = TerrainVegetation {
                vegetation: r.token("side.vegetation")?,
                density: r.u16("side.vegetation.density")?,
                high_poly_distance: r.u8("side.vegetation.high_poly_distance")?,
                scale_type: r.u8("side.vegetation.scale_type")?,
                start: r.u16("side.vegetation.start")?,
                end: r.u16("side.vegetation.end")?,
            };
        }
        Ok(TerrainSide {
            size,
            profile,
            coefficient,
            prev_profile,
            prev_coefficient,
            vegetation,
            no_detail_from: r.u16("side.no_detail_from")?,
            no_detail_to: r.u16("side.no_detail_to")?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.u16(self.size);
        w.token(self.profile);
        w.f32(self.coefficient);
        w.token(self.prev_profile);
        w.f32(self.prev_coefficient);
        for v in &self.vegetation {
            w.token(v.vegetation);
            w.u16(v.density);
            w.u8(v.high_poly_distance);
            w.u8(v.scale_type);
            w.u16(v.start);
            w.u16(v.end);
        }
        w.u16(self.no_detail_from);
        w.u16(self.no_detail_to);
    }
}

/// A railing slot of a Terrain item (10 bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Railing {
    pub model: Token,
    /// Offset × 100.
    pub offset: i16,
}

/// The Terrain item (type 0x01, scs §B.5). Version-dependent fields are `Option`s: present
/// exactly when the sector's map version has them, which the writer relies on.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TerrainItem {
    pub kdop: Kdop,
    pub node0: u64,
    pub node1: u64,
    pub node0_offset: [f32; 3],
    pub node1_offset: [f32; 3],
    pub length: f32,
    /// Map version ≥ 903 only.
    pub previous_length: Option<f32>,
    pub rnd_seed: u32,
    pub railings: [Railing; 3],
    pub right: TerrainSide,
    pub left: TerrainSide,
    pub spheres: Vec<VegetationSphere>,
    pub quad_right: QuadInfo,
    pub quad_left: QuadInfo,
    /// right_edge, right_edge_look, left_edge, left_edge_look.
    pub edges: [Token; 4],
    /// Right and left UV rotation: map versions 875–883 only.
    pub uv_rotation: Option<[f32; 2]>,
}

/// Where a Terrain item's fields lie (offsets from the item type), for `scs check` messages.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TerrainOffsets {
    pub quad_right: usize,
    pub quad_left: usize,
    pub edges: usize,
}

impl TerrainItem {
    /// Step size in metres from flag bits 4–5 (scs §B.5).
    pub fn step(&self) -> f32 {
        [4.0, 16.0, 12.0, 2.0][((self.kdop.flags >> 4) & 3) as usize]
    }

    fn read(r: &mut Reader, version: u32) -> Result<TerrainItem, CodecError> {
        let kdop = Kdop::read(r)?;
        let node0 = r.u64("terrain.node0_uid")?;
        let node1 = r.u64("terrain.node1_uid")?;
        let node0_offset = r.float3("terrain.node0_offset")?;
        let node1_offset = r.float3("terrain.node1_offset")?;
        let length = r.f32("terrain.length")?;
        let previous_length = if version >= 903 { Some(r.f32("terrain.previous_length")?) } else { None };
        let rnd_seed = r.u32("terrain.rnd_seed")?;
        let mut railings = [Railing::default(); 3];
        for rl in &mut railings {
            *rl = Railing { model: r.token("terrain.railing.model")?, offset: r.i16("terrain.railing.offset")? };
        }
        let right = TerrainSide::read(r)?;
        let left = TerrainSide::read(r)?;
        let spheres = read_spheres(r, "terrain.veg_sphere_count")?;
        let quad_right = QuadInfo::read(r, version)?;
        let quad_left = QuadInfo::read(r, version)?;
        let mut edges = [Token(0); 4];
        for e in &mut edges {
            *e = r.token("terrain.edge")?;
        }
        let uv_rotation = if (875..=883).contains(&version) { Some([r.f32("terrain.uv_rotation")?, r.f32("terrain.uv_rotation")?]) } else { None };
        Ok(TerrainItem {
            kdop,
            node0,
            node1,
            node0_offset,
            node1_offset,
            length,
            previous_length,
            rnd_seed,
            railings,
            right,
            left,
            spheres,
            quad_right,
            quad_left,
            edges,
            uv_rotation,
        })
    }

    fn write(&self, w: &mut Writer, version: u32) {
        self.kdop.write(w);
        w.u64(self.node0);
        w.u64(self.node1);
        w.float3(self.node0_offset);
        w.float3(self.node1_offset);
        w.f32(self.length);
        if version >= 903 {
            w.f32(self.previous_length.unwrap_or(0.0));
        }
        w.u32(self.rnd_seed);
        for rl in &self.railings {
            w.token(rl.model);
            w.i16(rl.offset);
        }
        self.right.write(w);
        self.left.write(w);
        write_spheres(w, &self.spheres);
        self.quad_right.write(w, version);
        self.quad_left.write(w, version);
        self.edges.iter().for_each(|&e| w.token(e));
        if (875..=883).contains(&version) {
            let uv = self.uv_rotation.unwrap_or([0.0; 2]);
            w.f32(uv[0]);
            w.f32(uv[1]);
        }
    }

    /// Field offsets from the start of the item (its u32 type) at `version`.
    pub fn offsets(&self, version: u32) -> TerrainOffsets {
        let fixed = 4 + KDOP_BYTES + 16 + 24 + 4 + if version >= 903 { 4 } else { 0 } + 4 + 30 + 78 * 2;
        let quad_right = fixed + 4 + 20 * self.spheres.len();
        let mut w = Writer::default();
        self.quad_right.write(&mut w, version);
        let quad_left = quad_right + w.buf.len();
        let mut w = Writer::default();
        self.quad_left.write(&mut w, version);
        TerrainOffsets { quad_right, quad_left, edges: quad_left + w.buf.len() }
    }
}

/// The Bezier Patch item's short vegetation struct (11 bytes, scs §B.5).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct PatchVegetation {
    pub vegetation: Token,
    /// Density × 10.
    pub density: u16,
    pub scale_type: u8,
}

/// The Bezier Patch item (type 0x27, scs §B.8).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct BezierPatchItem {
    pub kdop: Kdop,
    /// 16 control points relative to the node, in the on-disk order of
    /// [`super::patch::CONTROL_POINT_ORDER`].
    pub control: [[f32; 3]; 16],
    pub x_tess: u16,
    pub z_tess: u16,
    pub node: u64,
    pub rnd_seed: u32,
    pub vegetation: [PatchVegetation; 3],
    pub spheres: Vec<VegetationSphere>,
    pub quad: QuadInfo,
}

impl BezierPatchItem {
    fn read(r: &mut Reader, version: u32) -> Result<BezierPatchItem, CodecError> {
        let kdop = Kdop::read(r)?;
        let mut control = [[0f32; 3]; 16];
        for c in &mut control {
            *c = r.float3("bezier.control_points")?;
        }
        let x_tess = r.u16("bezier.x_tess")?;
        let z_tess = r.u16("bezier.z_tess")?;
        let node = r.u64("bezier.node_uid")?;
        let rnd_seed = r.u32("bezier.rnd_seed")?;
        let mut vegetation = [PatchVegetation::default(); 3];
        for v in &mut vegetation {
            *v = PatchVegetation {
                vegetation: r.token("bezier.vegetation")?,
                density: r.u16("bezier.vegetation.density")?,
                scale_type: r.u8("bezier.vegetation.scale")?,
            };
        }
        let spheres = read_spheres(r, "bezier.veg_sphere_count")?;
        let quad = QuadInfo::read(r, version)?;
        Ok(BezierPatchItem { kdop, control, x_tess, z_tess, node, rnd_seed, vegetation, spheres, quad })
    }

    fn write(&self, w: &mut Writer, version: u32) {
        self.kdop.write(w);
        self.control.iter().for_each(|&c| w.float3(c));
        w.u16(self.x_tess);
        w.u16(self.z_tess);
        w.u64(self.node);
        w.u32(self.rnd_seed);
        for v in &self.vegetation {
            w.token(v.vegetation);
            w.u16(v.density);
            w.u8(v.scale_type);
        }
        write_spheres(w, &self.spheres);
        self.quad.write(w, version);
    }

    /// Offset of the quad_info from the start of the item (its u32 type).
    pub fn quad_offset(&self) -> usize {
        4 + KDOP_BYTES + 16 * 12 + 4 + 8 + 4 + 33 + 4 + 20 * self.spheres.len()
    }
}

/// The Model item (type 0x05). Not in the spec: its layout at map version 907 is inferred
/// from the one Model in TruckLib's `modeltest` map (ships with the project's test data) so
/// that the map round-trips: k-DOP, token model, token look, token variant, u32 count +
/// tokens of additional parts, u64 node, float3 scale, token terrain material, RGBA terrain
/// colour, f32 terrain rotation. (The tokens there decode to `ar_5e001`, `rusty_white`,
/// `small`, `cdej_b`/`_part04`, which fits this naming.)
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ModelItem {
    pub kdop: Kdop,
    pub model: Token,
    pub look: Token,
    pub variant: Token,
    pub additional_parts: Vec<Token>,
    pub node: u64,
    pub scale: [f32; 3],
    pub terrain_material: Token,
    pub terrain_color: [u8; 4],
    pub terrain_rotation: f32,
}

impl ModelItem {
    fn read(r: &mut Reader) -> Result<ModelItem, CodecError> {
        let kdop = Kdop::read(r)?;
        let model = r.token("model.model")?;
        let look = r.token("model.look")?;
        let variant = r.token("model.variant")?;
        let at = r.pos();
        let n = r.u32("model.additional_part_count")?;
        let n = r.count(n.into(), 8, "model.additional_part_count", at)?;
        let mut additional_parts = Vec::with_capacity(n);
        for _ in 0..n {
            additional_parts.push(r.token("model.additional_parts")?);
        }
        Ok(ModelItem {
            kdop,
            model,
            look,
            variant,
            additional_parts,
            node: r.u64("model.node_uid")?,
            scale: r.float3("model.scale")?,
            terrain_material: r.token("model.terrain_material")?,
            terrain_color: r.bytes("model.terrain_color")?,
            terrain_rotation: r.f32("model.terrain_rotation")?,
        })
    }
    fn write(&self, w: &mut Writer) {
        self.kdop.write(w);
        w.token(self.model);
        w.token(self.look);
        w.token(self.variant);
        w.len_u32(self.additional_parts.len());
        self.additional_parts.iter().for_each(|&t| w.token(t));
        w.u64(self.node);
        w.float3(self.scale);
        w.token(self.terrain_material);
        w.buf.extend_from_slice(&self.terrain_color);
        w.f32(self.terrain_rotation);
    }
}

/// An item of a sector file.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(tag = "type")]
pub enum Item {
    Terrain(TerrainItem),
    Model(ModelItem),
    BezierPatch(BezierPatchItem),
}

impl Item {
    pub fn type_code(&self) -> u32 {
        match self {
            Item::Terrain(_) => ITEM_TERRAIN,
            Item::Model(_) => ITEM_MODEL,
            Item::BezierPatch(_) => ITEM_BEZIER_PATCH,
        }
    }
    pub fn type_name(&self) -> &'static str {
        match self {
            Item::Terrain(_) => "terrain",
            Item::Model(_) => "model",
            Item::BezierPatch(_) => "bezier_patch",
        }
    }
    pub fn kdop(&self) -> &Kdop {
        match self {
            Item::Terrain(t) => &t.kdop,
            Item::Model(m) => &m.kdop,
            Item::BezierPatch(b) => &b.kdop,
        }
    }
    /// Node uids the item refers to.
    pub fn node_refs(&self) -> Vec<u64> {
        match self {
            Item::Terrain(t) => vec![t.node0, t.node1],
            Item::Model(m) => vec![m.node],
            Item::BezierPatch(b) => vec![b.node],
        }
    }
    pub fn write(&self, w: &mut Writer, version: u32) {
        w.u32(self.type_code());
        match self {
            Item::Terrain(t) => t.write(w, version),
            Item::Model(m) => m.write(w),
            Item::BezierPatch(b) => b.write(w, version),
        }
    }
}

/// A `.base`/`.aux`/`.snd` file (scs §B.2).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SectorFile {
    pub header: Header,
    pub items: Vec<Item>,
    pub nodes: Vec<Node>,
    pub visibility: Vec<u64>,
}

/// Where each item and the node list start in a file that was read (for `scs check`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Layout {
    pub items: Vec<usize>,
    pub nodes: usize,
}

/// Smallest item on disk: type + k-DOP + the smallest payload (a Model with no parts).
const MIN_ITEM_BYTES: usize = 4 + KDOP_BYTES;

impl SectorFile {
    pub fn empty() -> SectorFile {
        SectorFile { header: Header::default(), items: Vec::new(), nodes: Vec::new(), visibility: Vec::new() }
    }

    /// Parse a whole file; `file` names it in errors. Every byte must be consumed.
    pub fn read(bytes: &[u8], file: &str) -> Result<SectorFile, CodecError> {
        Self::read_with_layout(bytes, file).map(|(f, _)| f)
    }

    pub fn read_with_layout(bytes: &[u8], file: &str) -> Result<(SectorFile, Layout), CodecError> {
        let mut r = Reader::new(bytes, file);
        let header = Header::read(&mut r)?;
        let at = r.pos();
        let n = r.u32("item_count")?;
        let n = r.count(n.into(), MIN_ITEM_BYTES, "item_count", at)?;
        let mut items = Vec::with_capacity(n);
        let mut layout = Layout::default();
        for _ in 0..n {
            let at = r.pos();
            layout.items.push(at);
            let t = r.u32("item_type")?;
            items.push(match t {
                ITEM_TERRAIN => Item::Terrain(TerrainItem::read(&mut r, header.version)?),
                ITEM_MODEL => Item::Model(ModelItem::read(&mut r)?),
                ITEM_BEZIER_PATCH => Item::BezierPatch(BezierPatchItem::read(&mut r, header.version)?),
                other => return Err(CodecError::UnknownItem { file: file.to_string(), item_type: other, offset: at }),
            });
        }
        layout.nodes = r.pos();
        let at = r.pos();
        let n = r.u32("node_count")?;
        let n = r.count(n.into(), NODE_BYTES, "node_count", at)?;
        let mut nodes = Vec::with_capacity(n);
        for _ in 0..n {
            nodes.push(Node::read(&mut r)?);
        }
        let at = r.pos();
        let n = r.u32("visibility_count")?;
        let n = r.count(n.into(), 8, "visibility_count", at)?;
        let mut visibility = Vec::with_capacity(n);
        for _ in 0..n {
            visibility.push(r.u64("visibility")?);
        }
        r.finish()?;
        Ok((SectorFile { header, items, nodes, visibility }, layout))
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::default();
        self.header.write(&mut w);
        w.len_u32(self.items.len());
        for it in &self.items {
            it.write(&mut w, self.header.version);
        }
        w.len_u32(self.nodes.len());
        self.nodes.iter().for_each(|n| n.write(&mut w));
        w.len_u32(self.visibility.len());
        self.visibility.iter().for_each(|&v| w.u64(v));
        w.buf
    }
}

/// A sector file whose body this project does not model (`.data`, `.layer`): the framing
/// header and the raw rest, kept byte for byte.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RawSectorFile {
    pub header: Header,
    pub body: Vec<u8>,
}

impl RawSectorFile {
    /// What the writer emits for a new map: the header and the 8 bytes of 0xff that
    /// TruckLib's `modeltest` has in both files (meaning not documented, scs §B.2).
    pub fn default_empty() -> Self {
        RawSectorFile { header: Header::default(), body: vec![0xff; 8] }
    }
    pub fn read(bytes: &[u8], file: &str) -> Result<Self, CodecError> {
        let mut r = Reader::new(bytes, file);
        let header = Header::read(&mut r)?;
        Ok(RawSectorFile { header, body: r.rest().to_vec() })
    }
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::default();
        self.header.write(&mut w);
        w.buf.extend_from_slice(&self.body);
        w.buf
    }
}

/// A sector's `.desc` (32 bytes). Not laid out in the spec; inferred from `modeltest`:
/// u32 version (2), the sector's bounds as i32 min X, min Z, max X, max Z in 1/256 m
/// ((0,0)–(4000,4000) m for sector +0000+0000), u32 flags, and a token (`default` there; a
/// climate profile is the likely meaning).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Desc {
    pub version: u32,
    pub min: [i32; 2],
    pub max: [i32; 2],
    pub flags: u32,
    pub climate: Token,
}

pub const DESC_BYTES: usize = 32;

/// Sector edge in metres (scs §B.2): the `.desc` bounds are in 1/256 m of it, and
/// [`crate::map`] names sector files by it.
pub const SECTOR_SIZE: f64 = 4000.0;

impl Desc {
    /// The `.desc` the writer emits for sector (sx, sz).
    pub fn for_sector(sx: i32, sz: i32) -> Desc {
        let s = SECTOR_SIZE as i32 * 256;
        Desc {
            version: 2,
            min: [sx.saturating_mul(s), sz.saturating_mul(s)],
            max: [(sx.saturating_add(1)).saturating_mul(s), (sz.saturating_add(1)).saturating_mul(s)],
            flags: 0,
            climate: Token::new("default").expect("valid token"),
        }
    }
    pub fn read(bytes: &[u8], file: &str) -> Result<Desc, CodecError> {
        let mut r = Reader::new(bytes, file);
        let d = Desc {
            version: r.u32("desc.version")?,
            min: [r.i32("desc.min_x")?, r.i32("desc.min_z")?],
            max: [r.i32("desc.max_x")?, r.i32("desc.max_z")?],
            flags: r.u32("desc.flags")?,
            climate: r.token("desc.climate")?,
        };
        r.finish()?;
        Ok(d)
    }
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.u32(self.version);
        self.min.iter().chain(self.max.iter()).for_each(|&v| w.i32(v));
        w.u32(self.flags);
        w.token(self.climate);
        w.buf
    }
}

/// The map's `.mbd` (69 bytes at version 907). The spec points to TruckLib for it; this layout
/// is inferred from `modeltest`: header, u64 map uid, 16 bytes not understood (kept raw),
/// quaternion W X Y Z (identity there), f32 not understood, f32 normal scale (19: ETS2's
/// 1:19 world scale), f32 city scale (3), u8 flags.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Mbd {
    pub header: Header,
    pub uid: u64,
    pub unknown_18: [u8; 16],
    pub rotation: [f32; 4],
    pub unknown_38: f32,
    pub normal_scale: f32,
    pub city_scale: f32,
    pub flags: u8,
}

pub const MBD_BYTES: usize = 69;

impl Mbd {
    /// What the writer emits for a new map: `modeltest`'s values (the ones TruckLib writes for
    /// an empty map) with the given uid.
    pub fn new(uid: u64) -> Mbd {
        Mbd {
            header: Header::default(),
            uid,
            unknown_18: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x08, 0, 0x4b],
            rotation: [1.0, 0.0, 0.0, 0.0],
            unknown_38: 0.0,
            normal_scale: 19.0,
            city_scale: 3.0,
            flags: 0,
        }
    }
    pub fn read(bytes: &[u8], file: &str) -> Result<Mbd, CodecError> {
        let mut r = Reader::new(bytes, file);
        let header = Header::read(&mut r)?;
        let m = Mbd {
            header,
            uid: r.u64("mbd.uid")?,
            unknown_18: r.bytes("mbd.unknown_18")?,
            rotation: [r.f32("mbd.rotation")?, r.f32("mbd.rotation")?, r.f32("mbd.rotation")?, r.f32("mbd.rotation")?],
            unknown_38: r.f32("mbd.unknown_38")?,
            normal_scale: r.f32("mbd.normal_scale")?,
            city_scale: r.f32("mbd.city_scale")?,
            flags: r.u8("mbd.flags")?,
        };
        r.finish()?;
        Ok(m)
    }
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::default();
        self.header.write(&mut w);
        w.u64(self.uid);
        w.buf.extend_from_slice(&self.unknown_18);
        self.rotation.iter().for_each(|&q| w.f32(q));
        w.f32(self.unknown_38);
        w.f32(self.normal_scale);
        w.f32(self.city_scale);
        w.u8(self.flags);
        w.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_item_count_is_an_error_not_an_allocation() {
        let mut w = Writer::default();
        Header::default().write(&mut w);
        w.u32(1 << 31);
        let e = SectorFile::read(&w.buf, "x.aux").unwrap_err();
        assert!(matches!(e, CodecError::Count { count, offset: 16, .. } if count == 1 << 31), "{e}");
        // The same for a node count and a quad count deep inside an item.
        let mut w = Writer::default();
        Header::default().write(&mut w);
        w.u32(0);
        w.u32(u32::MAX);
        assert!(matches!(SectorFile::read(&w.buf, "x.aux").unwrap_err(), CodecError::Count { offset: 20, .. }));
    }

    #[test]
    fn unknown_item_names_type_file_and_offset() {
        let mut w = Writer::default();
        Header::default().write(&mut w);
        w.u32(1);
        w.u32(0x22);
        w.buf.extend_from_slice(&[0; 100]);
        let e = SectorFile::read(&w.buf, "sec+0000+0000.aux").unwrap_err();
        assert_eq!(e, CodecError::UnknownItem { file: "sec+0000+0000.aux".into(), item_type: 0x22, offset: 20 });
        assert!(e.to_string().contains("0x22") && e.to_string().contains("offset 20"));
    }

    #[test]
    fn empty_base_is_28_bytes() {
        // scs §B.2: "An empty .base is 28 bytes."
        let b = SectorFile::empty().to_bytes();
        assert_eq!(b.len(), 28);
        assert_eq!(SectorFile::read(&b, "e.base").unwrap(), SectorFile::empty());
        let mut t = b.clone();
        t.push(0);
        assert!(matches!(SectorFile::read(&t, "e.base").unwrap_err(), CodecError::Trailing { offset: 28, extra: 1, .. }));
    }
}
