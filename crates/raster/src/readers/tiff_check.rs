//! The integrity of a TIFF's compressed tiles or strips, checked before the image is decoded:
//! `convert` must refuse a damaged file as GDAL does (`TIFFReadEncodedTile() failed`), never
//! read wrong heights from it with exit 0 (issue 37 item 3).
//!
//! Each tile or strip of the first image is decompressed on its own, its output bounded by the
//! size the file declares for it, and checked:
//!
//! - **Deflate** (TIFF 8 and 32946): the zlib header, the deflate stream, and the Adler-32 of
//!   the decompressed bytes against the stream's trailer (the `tiff` crate does not check it).
//! - **Zstandard** (50000): the frames, and their content checksum where the writer stored one
//!   (trnbake's writer does).
//! - **LZW** (5), which has no checksum: the codes, and the end-of-information code.
//!
//! For every codec the decompressed size must cover the block's samples and not exceed its
//! declared size. This also bounds what a small file may make the reader allocate: the image
//! buffer is only allocated once every block has decompressed to its declared size, so no
//! ratio of compression needs to be assumed (a Zstandard tile of flat ground compresses far
//! beyond 4096:1, issue 37 item 10).

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use rayon::prelude::*;

use crate::bail;
use crate::error::{Context, Result};

/// A compression whose blocks are checked here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Codec {
    Deflate,
    Zstd,
    Lzw,
}

impl Codec {
    /// The codec of a TIFF `Compression` value, or `None` for the ones not checked here
    /// (uncompressed and PackBits, whose size the file bounds).
    pub(crate) fn of(compression: u16) -> Option<Codec> {
        match compression {
            8 | 32946 => Some(Codec::Deflate),
            50000 => Some(Codec::Zstd),
            5 => Some(Codec::Lzw),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Codec::Deflate => "Deflate",
            Codec::Zstd => "Zstandard",
            Codec::Lzw => "LZW",
        }
    }
}

/// One tile or strip: where its bytes are, and how many bytes it must decompress to.
#[derive(Clone, Debug)]
pub(crate) struct Block {
    /// Its position for messages: `tile 5 (column 1, row 2 of 4x4 tiles)`.
    pub label: String,
    pub offset: u64,
    pub len: u64,
    /// The bytes of the image's samples it holds (a strip at the bottom holds fewer rows).
    pub needed: u64,
    /// The most it may decompress to (a full tile or strip).
    pub most: u64,
}

/// The blocks of the first image of the decoder (tiles or strips, chunky or planar).
pub(crate) fn blocks<R: Read + Seek>(d: &mut tiff::decoder::Decoder<R>, cols: u32, rows: u32, name: &str) -> Result<Vec<Block>> {
    use tiff::tags::Tag;
    let vec = |d: &mut tiff::decoder::Decoder<R>, tag: Tag| -> Option<Vec<u64>> { d.find_tag(tag).ok().flatten().and_then(|v| v.into_u64_vec().ok()) };
    let bits = d.find_tag_unsigned::<u32>(Tag::BitsPerSample).ok().flatten().unwrap_or(1);
    let spp = d.find_tag_unsigned::<u32>(Tag::SamplesPerPixel).ok().flatten().unwrap_or(1).max(1);
    let planar = d.find_tag_unsigned::<u16>(Tag::PlanarConfiguration).ok().flatten().unwrap_or(1) == 2;
    let (planes, px_bits) = if planar { (u64::from(spp), u64::from(bits)) } else { (1, u64::from(spp) * u64::from(bits)) };
    // Bytes of `w` pixels of one row (rows of a block are padded to whole bytes).
    let row_bytes = |w: u64| (w * px_bits).div_ceil(8);
    let (cols64, rows64) = (u64::from(cols), u64::from(rows));
    let mut out = Vec::new();
    if let Some(tw) = d.find_tag_unsigned::<u32>(Tag::TileWidth).ok().flatten() {
        let th = d.find_tag_unsigned::<u32>(Tag::TileLength).ok().flatten().unwrap_or(0);
        let (Some(offsets), Some(counts)) = (vec(d, Tag::TileOffsets), vec(d, Tag::TileByteCounts)) else {
            bail!("{name}: a tiled TIFF without TileOffsets/TileByteCounts");
        };
        if tw == 0 || th == 0 {
            bail!("{name}: tiles of {tw}x{th} pixels");
        }
        let (across, down) = (cols64.div_ceil(u64::from(tw)), rows64.div_ceil(u64::from(th)));
        let per_plane = across * down;
        if offsets.len() as u64 != per_plane * planes || counts.len() != offsets.len() {
            bail!(
                "{name}: {} tile offsets and {} byte counts for {across}x{down} tiles{}",
                offsets.len(),
                counts.len(),
                if planes > 1 { " per plane" } else { "" }
            );
        }
        let full = row_bytes(u64::from(tw)) * u64::from(th);
        for (i, (&offset, &len)) in offsets.iter().zip(&counts).enumerate() {
            let k = i as u64 % per_plane;
            let (c, r) = (k % across, k / across);
            let label = format!("tile {i} (column {c}, row {r} of {across}x{down} tiles)");
            out.push(Block { label, offset, len, needed: full, most: full });
        }
    } else {
        let rps = d.find_tag_unsigned::<u32>(Tag::RowsPerStrip).ok().flatten().map_or(rows64, u64::from).clamp(1, rows64.max(1));
        let (Some(offsets), Some(counts)) = (vec(d, Tag::StripOffsets), vec(d, Tag::StripByteCounts)) else {
            bail!("{name}: a TIFF without StripOffsets/StripByteCounts");
        };
        let per_plane = rows64.div_ceil(rps);
        if offsets.len() as u64 != per_plane * planes || counts.len() != offsets.len() {
            bail!("{name}: {} strip offsets and {} byte counts for {per_plane} strips of {rps} rows", offsets.len(), counts.len());
        }
        for (i, (&offset, &len)) in offsets.iter().zip(&counts).enumerate() {
            let k = i as u64 % per_plane;
            let r0 = k * rps;
            let r1 = (r0 + rps).min(rows64);
            let label = format!("strip {i} (rows {r0}..{r1})");
            out.push(Block { label, offset, len, needed: row_bytes(cols64) * (r1 - r0), most: row_bytes(cols64) * rps });
        }
    }
    Ok(out)
}

/// Checks every block of `path` (see the module docs). Blocks are read a batch of up to
/// 64 MB at a time and checked in parallel.
pub(crate) fn check_blocks(path: &Path, codec: Codec, blocks: &[Block]) -> Result<()> {
    let name = path.display().to_string();
    let mut file = std::fs::File::open(path).with_context(|| format!("cannot open {name}"))?;
    let file_len = file.metadata().with_context(|| format!("cannot read {name}"))?.len();
    for b in blocks {
        if b.offset.checked_add(b.len).is_none_or(|end| end > file_len) {
            bail!("{name}: {} lies past the end of the {file_len}-byte file (offset {}, {} bytes); the file is truncated or damaged", b.label, b.offset, b.len);
        }
    }
    const BATCH: u64 = 64 << 20;
    let mut i = 0;
    while i < blocks.len() {
        let mut j = i;
        let mut bytes = 0u64;
        while j < blocks.len() && (j == i || bytes + blocks[j].len <= BATCH) {
            bytes += blocks[j].len;
            j += 1;
        }
        let mut data = Vec::with_capacity(j - i);
        for b in &blocks[i..j] {
            let mut buf = vec![0u8; b.len as usize];
            file.seek(SeekFrom::Start(b.offset)).and_then(|_| file.read_exact(&mut buf)).with_context(|| format!("{name}: cannot read {}", b.label))?;
            data.push(buf);
        }
        blocks[i..j]
            .par_iter()
            .zip(data.par_iter())
            .try_for_each(|(b, bytes)| check_block(codec, b, bytes).map_err(|why| format!("{name}: {} is damaged: {why}", b.label)))
            .map_err(crate::error::Error::Invalid)?;
        i = j;
    }
    Ok(())
}

/// One block: the decompressed size, bounded by `b.most`, and the codec's own checks.
pub(crate) fn check_block(codec: Codec, b: &Block, data: &[u8]) -> std::result::Result<(), String> {
    let size = match codec {
        Codec::Deflate => inflate_checked(data, b.most)?,
        Codec::Zstd => unzstd_checked(data, b.most)?,
        Codec::Lzw => unlzw_checked(data, b.most)?,
    };
    if size < b.needed {
        return Err(format!("its {} data decompresses to {size} bytes, the block holds {} (cut short)", codec.name(), b.needed));
    }
    Ok(())
}

const TOO_LONG: &str = "decompresses to more bytes than the block holds";

/// A zlib stream (RFC 1950): header, deflate data, Adler-32 trailer. Returns the size.
fn inflate_checked(data: &[u8], most: u64) -> std::result::Result<u64, String> {
    use flate2::{Decompress, FlushDecompress, Status};
    if data.len() < 6 {
        return Err(format!("a {}-byte Deflate stream is too short for a zlib header and checksum", data.len()));
    }
    let (cmf, flg) = (data[0], data[1]);
    if cmf & 0x0f != 8 || (u16::from(cmf) << 8 | u16::from(flg)) % 31 != 0 || flg & 0x20 != 0 {
        return Err(format!("bad zlib header {cmf:02x} {flg:02x}"));
    }
    let body = &data[2..];
    let mut z = Decompress::new(false);
    let mut buf = vec![0u8; 256 << 10];
    let mut adler = simd_adler32::Adler32::new();
    loop {
        let (in0, out0) = (z.total_in(), z.total_out());
        let status = z.decompress(&body[in0 as usize..], &mut buf, FlushDecompress::None).map_err(|e| format!("bad Deflate data: {e}"))?;
        let produced = (z.total_out() - out0) as usize;
        adler.write(&buf[..produced]);
        if z.total_out() > most {
            return Err(TOO_LONG.into());
        }
        match status {
            Status::StreamEnd => break,
            _ if produced == 0 && z.total_in() == in0 => return Err("the Deflate stream is cut short (no final block)".into()),
            _ => {}
        }
    }
    let end = z.total_in() as usize;
    let Some(trailer) = body.get(end..end + 4) else {
        return Err("the Deflate stream has no Adler-32 checksum (cut short)".into());
    };
    let stored = u32::from_be_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
    let computed = adler.finish();
    if stored != computed {
        return Err(format!("the Deflate checksum (Adler-32) does not match: stored {stored:08x}, computed {computed:08x}"));
    }
    Ok(z.total_out())
}

/// Zstandard frames; libzstd verifies each frame's content checksum when it has one.
fn unzstd_checked(data: &[u8], most: u64) -> std::result::Result<u64, String> {
    let mut d = zstd::stream::read::Decoder::with_buffer(data).map_err(|e| format!("bad Zstandard data: {e}"))?;
    let mut buf = vec![0u8; 256 << 10];
    let mut total = 0u64;
    loop {
        let n = d.read(&mut buf).map_err(|e| format!("bad Zstandard data: {e}"))?;
        if n == 0 {
            break;
        }
        total += n as u64;
        if total > most {
            return Err(TOO_LONG.into());
        }
    }
    Ok(total)
}

/// TIFF LZW (MSB first, the early size switch): the codes, and the end-of-information code.
fn unlzw_checked(data: &[u8], most: u64) -> std::result::Result<u64, String> {
    use weezl::LzwStatus;
    let mut d = weezl::decode::Decoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8);
    let mut buf = vec![0u8; 256 << 10];
    let (mut input, mut total) = (data, 0u64);
    loop {
        let r = d.decode_bytes(input, &mut buf);
        input = &input[r.consumed_in..];
        total += r.consumed_out as u64;
        if total > most {
            return Err(TOO_LONG.into());
        }
        match r.status.map_err(|e| format!("bad LZW data: {e}"))? {
            LzwStatus::Done => return Ok(total),
            LzwStatus::NoProgress => return Err("the LZW stream is cut short (no end-of-information code)".into()),
            LzwStatus::Ok if input.is_empty() && r.consumed_out == 0 => {
                return Err("the LZW stream is cut short (no end-of-information code)".into());
            }
            LzwStatus::Ok => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(n: u64) -> Block {
        Block { label: "tile 0".into(), offset: 0, len: 0, needed: n, most: n }
    }

    #[test]
    fn deflate_checksums_are_checked() {
        use std::io::Write;
        let raw: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(&raw).unwrap();
        let good = e.finish().unwrap();
        assert_eq!(check_block(Codec::Deflate, &block(10_000), &good), Ok(()));
        let mut bad = good.clone();
        let n = bad.len();
        bad[n - 1] ^= 1; // the trailer
        assert!(check_block(Codec::Deflate, &block(10_000), &bad).unwrap_err().contains("Adler-32"));
        assert!(check_block(Codec::Deflate, &block(10_000), &good[..n - 2]).unwrap_err().contains("cut short"));
        assert!(check_block(Codec::Deflate, &block(9_999), &good).unwrap_err().contains("more bytes"));
        assert!(check_block(Codec::Deflate, &block(10_001), &good).unwrap_err().contains("cut short"));
    }

    #[test]
    fn zstd_and_lzw_are_checked() {
        let raw = vec![7u8; 100_000];
        let z = zstd::bulk::compress(&raw, 3).unwrap();
        assert_eq!(check_block(Codec::Zstd, &block(100_000), &z), Ok(()));
        assert!(check_block(Codec::Zstd, &block(100_000), &z[..z.len() - 1]).is_err());
        let mut c = zstd::bulk::Compressor::new(3).unwrap();
        c.set_parameter(zstd::stream::raw::CParameter::ChecksumFlag(true)).unwrap();
        let mut z = c.compress(&raw).unwrap();
        let n = z.len();
        z[n - 1] ^= 0x10; // the content checksum
        assert!(check_block(Codec::Zstd, &block(100_000), &z).unwrap_err().contains("checksum"));

        let l = weezl::encode::Encoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8).encode(&raw).unwrap();
        assert_eq!(check_block(Codec::Lzw, &block(100_000), &l), Ok(()));
        assert!(check_block(Codec::Lzw, &block(100_000), &l[..l.len() / 2]).is_err());
    }
}
