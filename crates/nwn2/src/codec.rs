//! Reading and writing the container and its packets (nwn2 §A.2–A.6).
//!
//! Hostile input: every count is checked against the bytes that remain before anything is
//! allocated, and the ASWM's `uncompressed_size` is capped at [`MAX_ASWM_BYTES`] (Skywing's
//! 128 MiB, nwn2 §A.6) and must also be reachable from the compressed size (zlib expands at
//! most ~1032:1), so a 4 GiB claim is an error, not an allocation.

use std::io::{Read, Write};

use sha2::{Digest, Sha256};

use super::model::*;
use super::ParseError;

/// Largest decompressed ASWM accepted (Skywing caps both sizes below 128 MiB).
pub const MAX_ASWM_BYTES: u64 = 128 << 20;
/// zlib's worst-case expansion is about 1032:1; a claim beyond this cannot be honest.
const MAX_INFLATE_RATIO: u64 = 1100;

/// A little-endian cursor over a byte slice that knows its absolute position and context.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Absolute offset of `buf[0]` (in the file, or in the decompressed ASWM).
    base: u64,
    pub ctx: String,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8], base: u64, ctx: impl Into<String>) -> Self {
        Reader { buf, pos: 0, base, ctx: ctx.into() }
    }
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }
    pub fn err(&self, field: &str, msg: impl Into<String>) -> ParseError {
        ParseError { offset: self.offset(), context: format!("{} {field}", self.ctx), message: msg.into() }
    }
    pub fn bytes(&mut self, n: usize, field: &str) -> Result<&'a [u8], ParseError> {
        if n > self.remaining() {
            return Err(self.err(field, format!("needs {n} bytes, only {} remain", self.remaining())));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    pub fn arr<const N: usize>(&mut self, field: &str) -> Result<[u8; N], ParseError> {
        Ok(self.bytes(N, field)?.try_into().expect("length checked"))
    }
    pub fn u8(&mut self, field: &str) -> Result<u8, ParseError> {
        Ok(self.bytes(1, field)?[0])
    }
    pub fn u16(&mut self, field: &str) -> Result<u16, ParseError> {
        Ok(u16::from_le_bytes(self.arr(field)?))
    }
    pub fn u32(&mut self, field: &str) -> Result<u32, ParseError> {
        Ok(u32::from_le_bytes(self.arr(field)?))
    }
    pub fn f32(&mut self, field: &str) -> Result<f32, ParseError> {
        Ok(f32::from_le_bytes(self.arr(field)?))
    }
    pub fn f32s<const N: usize>(&mut self, field: &str) -> Result<[f32; N], ParseError> {
        let mut out = [0.0; N];
        for v in &mut out {
            *v = self.f32(field)?;
        }
        Ok(out)
    }
    /// `count` Pod records, checked against the remaining bytes before allocating.
    pub fn pods<T: bytemuck::Pod>(&mut self, count: u64, field: &str) -> Result<Vec<T>, ParseError> {
        let size = std::mem::size_of::<T>() as u64;
        let need = count.checked_mul(size).filter(|&n| n <= self.remaining() as u64);
        let Some(need) = need else {
            return Err(self.err(field, format!("{count} records of {size} bytes do not fit the {} bytes that remain", self.remaining())));
        };
        Ok(bytemuck::pod_collect_to_vec(self.bytes(need as usize, field)?))
    }
    /// A u32 length followed by that many bytes.
    pub fn blob(&mut self, field: &str) -> Result<Vec<u8>, ParseError> {
        let n = self.u32(field)?;
        Ok(self.bytes(n as usize, field)?.to_vec())
    }
    pub fn end(&self, what: &str) -> Result<(), ParseError> {
        if self.remaining() != 0 {
            return Err(self.err(what, format!("{} trailing bytes (the packet must be consumed exactly)", self.remaining())));
        }
        Ok(())
    }
}

/// Parse a whole file (nwn2 §A.2). Errors name the packet, field and absolute byte offset.
pub fn read(bytes: &[u8]) -> Result<Nwn2File, ParseError> {
    let mut r = Reader::new(bytes, 0, "header");
    let magic = r.arr::<4>("magic")?;
    if &magic != b"NWN2" {
        return Err(ParseError { offset: 0, context: "header magic".into(), message: format!("{magic:?} is not `NWN2`") });
    }
    let version_major = r.u16("version_major")?;
    let version_minor = r.u16("version_minor")?;
    let count = r.u32("packet_count")?;
    if u64::from(count) * 8 > r.remaining() as u64 {
        return Err(r.err("packet_count", format!("{count} table entries do not fit the file")));
    }
    let mut table = Vec::with_capacity(count as usize);
    for _ in 0..count {
        table.push((r.arr::<4>("packet table type")?, r.u32("packet table offset")?));
    }
    let mut packets = Vec::with_capacity(table.len());
    for (k, (tag, off)) in table.into_iter().enumerate() {
        let name = format!("packet #{k} {}", String::from_utf8_lossy(&tag));
        let mut h = Reader::new(bytes, 0, name.clone());
        if off as usize > bytes.len() {
            return Err(ParseError {
                offset: 12 + 8 * k as u64,
                context: name,
                message: format!("offset {off} is past the end of the file ({} bytes)", bytes.len()),
            });
        }
        h.pos = off as usize;
        let own = h.arr::<4>("type")?;
        if own != tag {
            return Err(h.err("type", format!("the table says {:?} but the packet says {:?}", String::from_utf8_lossy(&tag), String::from_utf8_lossy(&own))));
        }
        let size = h.u32("payload_size")?;
        let start = h.offset();
        let payload = h.bytes(size as usize, "payload")?;
        let mut p = Reader::new(payload, start, name);
        packets.push(match &tag {
            b"TRWH" => {
                if size != 12 {
                    return Err(p.err("size", format!("TRWH is {size} bytes, must be 12 (nwn2 §A.3)")));
                }
                Packet::Trwh(Trwh { width: p.u32("width")?, height: p.u32("height")?, id: p.u32("id")? })
            }
            b"TRRN" => Packet::Trrn(Box::new(read_trrn(&mut p)?)),
            b"WATR" => Packet::Watr(Box::new(read_watr(&mut p)?)),
            b"ASWM" => Packet::Aswm(Box::new(read_aswm_packet(&mut p)?)),
            _ => Packet::Unknown { tag, data: payload.to_vec() },
        });
    }
    Ok(Nwn2File { version_major, version_minor, packets })
}

fn read_trrn(r: &mut Reader) -> Result<Trrn, ParseError> {
    let name = r.arr::<128>("name")?;
    let mut textures = [[0u8; 32]; 6];
    for t in &mut textures {
        *t = r.arr::<32>("texture name")?;
    }
    let mut colors = [[0f32; 3]; 6];
    for c in &mut colors {
        *c = r.f32s::<3>("texture color")?;
    }
    let vc = r.u32("vertex_count")?;
    let tc = r.u32("triangle_count")?;
    let vertices = r.pods(u64::from(vc), "vertices")?;
    let triangles = r.pods(u64::from(tc), "triangles")?;
    let dds_a = r.blob("dds_a")?;
    let dds_b = r.blob("dds_b")?;
    let gc = r.u32("grass_count")?;
    // Each grass entry is at least 68 bytes: bound the count by what remains.
    if u64::from(gc) * 68 > r.remaining() as u64 {
        return Err(r.err("grass_count", format!("{gc} grass entries do not fit")));
    }
    let mut grass = Vec::with_capacity(gc as usize);
    for _ in 0..gc {
        let name = r.arr::<32>("grass name")?;
        let texture = r.arr::<32>("grass texture")?;
        let n = r.u32("blade_count")?;
        grass.push(Grass { name, texture, blades: r.pods(u64::from(n), "grass blades")? });
    }
    r.end("end")?;
    Ok(Trrn { name, textures, colors, vertices, triangles, dds_a, dds_b, grass })
}

fn read_watr(r: &mut Reader) -> Result<Watr, ParseError> {
    let name = r.arr::<32>("name")?;
    let unknown = r.arr::<96>("unknown")?;
    let color = r.f32s::<3>("color")?;
    let ripple = r.f32s::<2>("ripple")?;
    let smoothness = r.f32("smoothness")?;
    let reflect_bias = r.f32("reflect_bias")?;
    let reflect_power = r.f32("reflect_power")?;
    let specular_power = r.f32("specular_power")?;
    let specular_coefficient = r.f32("specular_coefficient")?;
    let mut tex = Vec::with_capacity(3);
    for _ in 0..3 {
        tex.push(WaterTexture {
            name: r.arr::<32>("texture name")?,
            direction: r.f32s::<2>("texture direction")?,
            rate: r.f32("texture rate")?,
            angle: r.f32("texture angle")?,
        });
    }
    let textures: [WaterTexture; 3] = tex.try_into().expect("three");
    let uv_offset = r.f32s::<2>("uv_offset")?;
    let vc = r.u32("vertex_count")?;
    let tc = r.u32("triangle_count")?;
    let vertices = r.pods(u64::from(vc), "vertices")?;
    let triangles = r.pods(u64::from(tc), "triangles")?;
    let triangle_flags = r.pods(u64::from(tc), "triangle flags")?;
    let dds = r.blob("dds")?;
    let megatile = [r.u32("megatile x")?, r.u32("megatile y")?];
    r.end("end")?;
    Ok(Watr {
        name,
        unknown,
        color,
        ripple,
        smoothness,
        reflect_bias,
        reflect_power,
        specular_power,
        specular_coefficient,
        textures,
        uv_offset,
        vertices,
        triangles,
        triangle_flags,
        dds,
        megatile,
    })
}

fn read_aswm_packet(r: &mut Reader) -> Result<AswmPacket, ParseError> {
    if r.remaining() >= 4 && &r.buf[r.pos..r.pos + 4] == b"COMP" {
        r.bytes(4, "COMP")?;
        let csize = r.u32("compressed_size")?;
        let usize_ = r.u32("uncompressed_size")?;
        if u64::from(usize_) > MAX_ASWM_BYTES {
            return Err(r.err("uncompressed_size", format!("{usize_} bytes is over the {MAX_ASWM_BYTES}-byte limit (nwn2 §A.6)")));
        }
        if u64::from(usize_) > u64::from(csize).max(1) * MAX_INFLATE_RATIO {
            return Err(r.err("uncompressed_size", format!("{usize_} bytes cannot come from a {csize}-byte zlib stream")));
        }
        let stream_off = r.offset();
        let stream = r.bytes(csize as usize, "compressed stream")?;
        r.end("after the compressed stream")?;
        let data =
            inflate_exact(stream, usize_ as usize).map_err(|m| ParseError { offset: stream_off, context: format!("{} zlib stream", r.ctx), message: m })?;
        let aswm = read_aswm(&data, &r.ctx)?;
        let sha256: [u8; 32] = Sha256::digest(&data).into();
        Ok(AswmPacket { compressed: true, original: Some(OriginalStream { stream: stream.to_vec(), sha256 }), aswm })
    } else {
        let data = r.bytes(r.remaining(), "payload")?;
        Ok(AswmPacket { compressed: false, original: None, aswm: read_aswm(data, &r.ctx)? })
    }
}

/// zlib-decompress into exactly `size` bytes (nwn2 §A.8: "must decompress to exactly").
fn inflate_exact(stream: &[u8], size: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(size);
    let mut d = flate2::read::ZlibDecoder::new(stream).take(size as u64 + 1);
    d.read_to_end(&mut out).map_err(|e| format!("bad zlib stream: {e}"))?;
    if out.len() != size {
        return Err(format!("decompresses to {}{} bytes, uncompressed_size says {size}", out.len(), if out.len() > size { " or more" } else { "" }));
    }
    Ok(out)
}

/// Parse decompressed ASWM data (nwn2 §A.6.1–A.6.3); offsets are within the data.
pub fn read_aswm(data: &[u8], ctx: &str) -> Result<Aswm, ParseError> {
    let mut r = Reader::new(data, 0, format!("{ctx} (decompressed)"));
    let version = r.u32("version")?;
    if !(0x69..=0x6C).contains(&version) {
        return Err(ParseError { offset: 0, context: r.ctx.clone() + " version", message: format!("{version:#x} is not one of 0x69–0x6C") });
    }
    let name = r.arr::<32>("name")?;
    let owns_data = r.u8("owns_data")?;
    if owns_data != 1 {
        return Err(ParseError { offset: 36, context: r.ctx.clone() + " owns_data", message: format!("{owns_data}, must be 1") });
    }
    let vc = r.u32("vertex_count")?;
    let ec = r.u32("edge_count")?;
    let tc = r.u32("triangle_count")?;
    let unknown = r.u32("face offset")?;
    let vertices = r.pods(u64::from(vc), "vertices")?;
    let edges = r.pods(u64::from(ec), "edges")?;
    let triangles = r.pods(u64::from(tc), "triangles")?;
    let tiles_flags = r.u32("tiles_flags")?;
    let tile_width = r.f32("tile_width")?;
    let grid_height = r.u32("grid_height")?;
    let grid_width = r.u32("grid_width")?;
    let ntiles = u64::from(grid_width) * u64::from(grid_height);
    // A tile record is at least 57 + 10 + 4 bytes.
    if ntiles * 71 > r.remaining() as u64 {
        return Err(r.err("grid size", format!("{grid_width}x{grid_height} tiles do not fit the {} bytes that remain", r.remaining())));
    }
    let mut tiles = Vec::with_capacity(ntiles as usize);
    for k in 0..ntiles {
        let f = |s: &str| format!("tile {k} {s}");
        let name = r.arr::<32>(&f("name"))?;
        let owns = r.u8(&f("owns_data"))?;
        if owns != 0 {
            return Err(r.err(&f("owns_data"), format!("{owns}: tile-local vertex arrays are not supported (the game never writes them)")));
        }
        let vertex_count = r.u32(&f("vertex_count"))?;
        let edge_count = r.u32(&f("edge_count"))?;
        let triangle_count = r.u32(&f("triangle_count"))?;
        let size_x = r.f32(&f("size_x"))?;
        let size_y = r.f32(&f("size_y"))?;
        let triangles_offset = r.u32(&f("triangles_offset"))?;
        let path_flags = r.u32(&f("path table flags"))?;
        if path_flags & 3 != 0 {
            return Err(r.err(&f("path table flags"), format!("{path_flags:#x}: RLE/zlib path tables are refused (nwn2 §A.6.3)")));
        }
        let (ltn, nc) = if version >= 0x6C {
            (r.u32(&f("local_to_node_count"))?, r.u8(&f("node_count"))?)
        } else {
            (u32::from(r.u8(&f("local_to_node_count"))?), r.u8(&f("node_count"))?)
        };
        let rle_table_size = r.u32(&f("rle_table_size"))?;
        let local_to_node = r.bytes(ltn as usize, &f("local_to_node"))?.to_vec();
        let node_to_local = if version >= 0x6C {
            r.pods::<u32>(u64::from(nc), &f("node_to_local"))?
        } else {
            r.bytes(nc as usize, &f("node_to_local"))?.iter().map(|&b| u32::from(b)).collect()
        };
        let nodes = r.bytes(nc as usize * nc as usize, &f("nodes"))?.to_vec();
        let tile_flags = r.u32(&f("tile flags"))?;
        tiles.push(Tile {
            name,
            owns_data: owns,
            vertex_count,
            edge_count,
            triangle_count,
            size_x,
            size_y,
            triangles_offset,
            path_flags,
            rle_table_size,
            local_to_node,
            node_to_local,
            nodes,
            tile_flags,
        });
    }
    let border_size = r.u32("border_size")?;
    let ni = r.u32("island_count")?;
    if u64::from(ni) * 36 > r.remaining() as u64 {
        return Err(r.err("island_count", format!("{ni} islands do not fit")));
    }
    let mut islands = Vec::with_capacity(ni as usize);
    for k in 0..ni {
        let f = |s: &str| format!("island {k} {s}");
        let index = r.u32(&f("index"))?;
        let tile = r.u32(&f("tile"))?;
        let center = r.f32s::<3>(&f("center"))?;
        let triangle_count = r.u32(&f("triangle_count"))?;
        let n = r.u32(&f("adjacent count"))?;
        let adjacent = r.pods::<u32>(u64::from(n), &f("adjacent"))?;
        let n = r.u32(&f("distance count"))?;
        let distances = r.pods::<f32>(u64::from(n), &f("distances"))?;
        let n = r.u32(&f("exit count"))?;
        let exits = r.pods::<u32>(u64::from(n), &f("exits"))?;
        islands.push(Island { index, tile, center, triangle_count, adjacent, distances, exits });
    }
    let island_paths = r.pods(u64::from(ni) * u64::from(ni), "island path table")?;
    r.end("end of walkmesh")?;
    Ok(Aswm {
        version,
        name,
        owns_data,
        unknown,
        vertices,
        edges,
        triangles,
        tiles_flags,
        tile_width,
        grid_height,
        grid_width,
        tiles,
        border_size,
        islands,
        island_paths,
    })
}

/// Serialization failed: a count does not fit its field.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {value} does not fit its {bits}-bit field")]
pub struct WriteError {
    pub what: String,
    pub value: u64,
    pub bits: u32,
}

fn u32_of(n: usize, what: &str) -> Result<u32, WriteError> {
    u32::try_from(n).map_err(|_| WriteError { what: what.into(), value: n as u64, bits: 32 })
}

/// Serialize a file: header, table, packets contiguous in order (the layout of every sample).
pub fn write(file: &Nwn2File) -> Result<Vec<u8>, WriteError> {
    let mut out = Vec::new();
    write_to(file, &mut out).map_err(|e| match e {
        WriteFail::Write(w) => w,
        WriteFail::Io(_) => unreachable!("writing to memory"),
    })?;
    Ok(out)
}

/// Why [`write_to`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteFail {
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Serialize into a writer: payloads are encoded first (the table needs their sizes), then
/// streamed out without a second whole-file copy.
pub fn write_to(file: &Nwn2File, out: &mut impl Write) -> Result<(), WriteFail> {
    let payloads: Vec<Vec<u8>> = file.packets.iter().map(write_payload).collect::<Result<_, _>>()?;
    let n = file.packets.len();
    out.write_all(b"NWN2")?;
    out.write_all(&file.version_major.to_le_bytes())?;
    out.write_all(&file.version_minor.to_le_bytes())?;
    out.write_all(&u32_of(n, "packet_count")?.to_le_bytes())?;
    let mut off = 12 + 8 * n;
    for (p, pl) in file.packets.iter().zip(&payloads) {
        out.write_all(&p.tag())?;
        out.write_all(&u32_of(off, "packet offset")?.to_le_bytes())?;
        off += 8 + pl.len();
    }
    for (p, pl) in file.packets.iter().zip(&payloads) {
        out.write_all(&p.tag())?;
        out.write_all(&u32_of(pl.len(), "payload_size")?.to_le_bytes())?;
        out.write_all(pl)?;
    }
    Ok(())
}

fn put_u32(o: &mut Vec<u8>, v: u32) {
    o.extend_from_slice(&v.to_le_bytes());
}
fn put_f32s(o: &mut Vec<u8>, v: &[f32]) {
    for x in v {
        o.extend_from_slice(&x.to_le_bytes());
    }
}
fn put_pods<T: bytemuck::Pod>(o: &mut Vec<u8>, v: &[T]) {
    o.extend_from_slice(bytemuck::cast_slice(v));
}
fn put_blob(o: &mut Vec<u8>, v: &[u8], what: &str) -> Result<(), WriteError> {
    put_u32(o, u32_of(v.len(), what)?);
    o.extend_from_slice(v);
    Ok(())
}

fn write_payload(p: &Packet) -> Result<Vec<u8>, WriteError> {
    let mut o = Vec::new();
    match p {
        Packet::Trwh(t) => {
            put_u32(&mut o, t.width);
            put_u32(&mut o, t.height);
            put_u32(&mut o, t.id);
        }
        Packet::Trrn(t) => {
            o.extend_from_slice(&t.name);
            for n in &t.textures {
                o.extend_from_slice(n);
            }
            for c in &t.colors {
                put_f32s(&mut o, c);
            }
            put_u32(&mut o, u32_of(t.vertices.len(), "TRRN vertex_count")?);
            put_u32(&mut o, u32_of(t.triangles.len(), "TRRN triangle_count")?);
            put_pods(&mut o, &t.vertices);
            put_pods(&mut o, &t.triangles);
            put_blob(&mut o, &t.dds_a, "TRRN dds_a")?;
            put_blob(&mut o, &t.dds_b, "TRRN dds_b")?;
            put_u32(&mut o, u32_of(t.grass.len(), "TRRN grass_count")?);
            for g in &t.grass {
                o.extend_from_slice(&g.name);
                o.extend_from_slice(&g.texture);
                put_u32(&mut o, u32_of(g.blades.len(), "TRRN blade_count")?);
                put_pods(&mut o, &g.blades);
            }
        }
        Packet::Watr(w) => {
            if w.triangle_flags.len() != w.triangles.len() {
                return Err(WriteError { what: "WATR triangle flags (one per triangle)".into(), value: w.triangle_flags.len() as u64, bits: 32 });
            }
            o.extend_from_slice(&w.name);
            o.extend_from_slice(&w.unknown);
            put_f32s(&mut o, &w.color);
            put_f32s(&mut o, &w.ripple);
            put_f32s(&mut o, &[w.smoothness, w.reflect_bias, w.reflect_power, w.specular_power, w.specular_coefficient]);
            for t in &w.textures {
                o.extend_from_slice(&t.name);
                put_f32s(&mut o, &t.direction);
                put_f32s(&mut o, &[t.rate, t.angle]);
            }
            put_f32s(&mut o, &w.uv_offset);
            put_u32(&mut o, u32_of(w.vertices.len(), "WATR vertex_count")?);
            put_u32(&mut o, u32_of(w.triangles.len(), "WATR triangle_count")?);
            put_pods(&mut o, &w.vertices);
            put_pods(&mut o, &w.triangles);
            put_pods(&mut o, &w.triangle_flags);
            put_blob(&mut o, &w.dds, "WATR dds")?;
            put_u32(&mut o, w.megatile[0]);
            put_u32(&mut o, w.megatile[1]);
        }
        Packet::Aswm(a) => {
            let data = write_aswm(&a.aswm)?;
            if a.compressed {
                let stream = match &a.original {
                    Some(orig) if <[u8; 32]>::from(Sha256::digest(&data)) == orig.sha256 => orig.stream.clone(),
                    _ => deflate(&data),
                };
                o.extend_from_slice(b"COMP");
                put_u32(&mut o, u32_of(stream.len(), "ASWM compressed_size")?);
                put_u32(&mut o, u32_of(data.len(), "ASWM uncompressed_size")?);
                o.extend_from_slice(&stream);
            } else {
                o = data;
            }
        }
        Packet::Unknown { data, .. } => o.extend_from_slice(data),
    }
    Ok(o)
}

/// zlib (RFC 1950) at the default level, as the toolset writes (header 0x78 0x9C).
pub fn deflate(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::with_capacity(data.len() / 3), flate2::Compression::default());
    e.write_all(data).expect("writing to memory");
    e.finish().expect("writing to memory")
}

/// Serialize decompressed ASWM data (nwn2 §A.6.1–A.6.3), in the layout of `aswm.version`.
pub fn write_aswm(a: &Aswm) -> Result<Vec<u8>, WriteError> {
    let mut o = Vec::with_capacity(53 + a.vertices.len() * 12 + a.edges.len() * 16 + a.triangles.len() * 64 + a.tiles.len() * 200);
    put_u32(&mut o, a.version);
    o.extend_from_slice(&a.name);
    o.push(a.owns_data);
    put_u32(&mut o, u32_of(a.vertices.len(), "ASWM vertex_count")?);
    put_u32(&mut o, u32_of(a.edges.len(), "ASWM edge_count")?);
    put_u32(&mut o, u32_of(a.triangles.len(), "ASWM triangle_count")?);
    put_u32(&mut o, a.unknown);
    put_pods(&mut o, &a.vertices);
    put_pods(&mut o, &a.edges);
    put_pods(&mut o, &a.triangles);
    put_u32(&mut o, a.tiles_flags);
    put_f32s(&mut o, &[a.tile_width]);
    put_u32(&mut o, a.grid_height);
    put_u32(&mut o, a.grid_width);
    let small = a.version < 0x6C;
    for (k, t) in a.tiles.iter().enumerate() {
        o.extend_from_slice(&t.name);
        o.push(t.owns_data);
        for v in [t.vertex_count, t.edge_count, t.triangle_count] {
            put_u32(&mut o, v);
        }
        put_f32s(&mut o, &[t.size_x, t.size_y]);
        put_u32(&mut o, t.triangles_offset);
        put_u32(&mut o, t.path_flags);
        let nc = u8::try_from(t.node_count()).map_err(|_| WriteError { what: format!("tile {k} node_count"), value: t.node_count() as u64, bits: 8 })?;
        if t.nodes.len() != t.node_count() * t.node_count() {
            return Err(WriteError {
                what: format!("tile {k} nodes (node_count² = {})", t.node_count() * t.node_count()),
                value: t.nodes.len() as u64,
                bits: 32,
            });
        }
        if small {
            let l = u8::try_from(t.local_to_node.len()).map_err(|_| WriteError {
                what: format!("tile {k} local_to_node_count"),
                value: t.local_to_node.len() as u64,
                bits: 8,
            })?;
            o.push(l);
        } else {
            put_u32(&mut o, u32_of(t.local_to_node.len(), "local_to_node_count")?);
        }
        o.push(nc);
        put_u32(&mut o, t.rle_table_size);
        o.extend_from_slice(&t.local_to_node);
        if small {
            for &n in &t.node_to_local {
                o.push(u8::try_from(n).map_err(|_| WriteError { what: format!("tile {k} node_to_local (u8 before 0x6C)"), value: u64::from(n), bits: 8 })?);
            }
        } else {
            put_pods(&mut o, &t.node_to_local);
        }
        o.extend_from_slice(&t.nodes);
        put_u32(&mut o, t.tile_flags);
    }
    put_u32(&mut o, a.border_size);
    put_u32(&mut o, u32_of(a.islands.len(), "island_count")?);
    for i in &a.islands {
        put_u32(&mut o, i.index);
        put_u32(&mut o, i.tile);
        put_f32s(&mut o, &i.center);
        put_u32(&mut o, i.triangle_count);
        put_u32(&mut o, u32_of(i.adjacent.len(), "island adjacent count")?);
        put_pods(&mut o, &i.adjacent);
        put_u32(&mut o, u32_of(i.distances.len(), "island distance count")?);
        put_pods(&mut o, &i.distances);
        put_u32(&mut o, u32_of(i.exits.len(), "island exit count")?);
        put_pods(&mut o, &i.exits);
    }
    if a.island_paths.len() != a.islands.len() * a.islands.len() {
        return Err(WriteError {
            what: format!("island path table (island_count² = {})", a.islands.len() * a.islands.len()),
            value: a.island_paths.len() as u64,
            bits: 32,
        });
    }
    put_pods(&mut o, &a.island_paths);
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny_aswm() -> Aswm {
        Aswm {
            version: 0x6C,
            name: [0; 32],
            owns_data: 1,
            unknown: 0,
            vertices: vec![],
            edges: vec![],
            triangles: vec![],
            tiles_flags: 31,
            tile_width: 10.0,
            grid_height: 0,
            grid_width: 0,
            tiles: vec![],
            border_size: 8,
            islands: vec![],
            island_paths: vec![],
        }
    }

    fn file_with(a: AswmPacket) -> Nwn2File {
        Nwn2File { version_major: 2, version_minor: 3, packets: vec![Packet::Trwh(Trwh { width: 0, height: 0, id: 1 }), Packet::Aswm(Box::new(a))] }
    }

    #[test]
    fn huge_uncompressed_length_is_an_error_not_an_allocation() {
        let f = file_with(AswmPacket { compressed: true, original: None, aswm: tiny_aswm() });
        let mut bytes = write(&f).unwrap();
        // The ASWM payload starts after header (12), table (16), TRWH (8 + 12) and its own tag + size (8).
        let at = 12 + 16 + 20 + 8;
        assert_eq!(&bytes[at..at + 4], b"COMP");
        bytes[at + 8..at + 12].copy_from_slice(&u32::MAX.to_le_bytes());
        let e = read(&bytes).unwrap_err();
        assert!(e.to_string().contains("uncompressed_size") && e.to_string().contains("limit"), "{e}");
        // Under the cap but beyond what the stream can expand to: also refused up front.
        bytes[at + 8..at + 12].copy_from_slice(&(100u32 << 20).to_le_bytes());
        let e = read(&bytes).unwrap_err();
        assert!(e.to_string().contains("cannot come from"), "{e}");
    }

    #[test]
    fn hostile_counts_are_errors() {
        let mut data = write_aswm(&tiny_aswm()).unwrap();
        // vertex_count = 2^32 - 1 at byte 37.
        data[37..41].copy_from_slice(&u32::MAX.to_le_bytes());
        let e = read_aswm(&data, "ASWM").unwrap_err();
        assert_eq!(e.offset, 53);
        assert!(e.to_string().contains("vertices"), "{e}");
        // Grid 65536 x 65536 tiles (grid_height at 61, grid_width at 65).
        let mut data = write_aswm(&tiny_aswm()).unwrap();
        data[61..65].copy_from_slice(&65536u32.to_le_bytes());
        data[65..69].copy_from_slice(&65536u32.to_le_bytes());
        assert!(read_aswm(&data, "ASWM").unwrap_err().to_string().contains("do not fit"));
    }

    #[test]
    fn uncompressed_and_compressed_round_trip() {
        for compressed in [false, true] {
            let f = file_with(AswmPacket { compressed, original: None, aswm: tiny_aswm() });
            let bytes = write(&f).unwrap();
            let back = read(&bytes).unwrap();
            assert_eq!(write(&back).unwrap(), bytes);
        }
    }
}
