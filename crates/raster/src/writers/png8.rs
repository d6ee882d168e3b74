//! 8-bit PNG maps (grey, RGB, RGBA) streamed row by row from a [`ByteRows`] source: the
//! surface maps of a streamed bake (normals, splat weights, colour, masks, the preview), whose
//! rows arrive band by band while later bands compute. The image data is filtered per row
//! (the smallest of Sub, Up and Paeth by the sum of absolute differences, libpng's heuristic)
//! and deflated in parallel jobs joined into one zlib stream, as `png16` does; the whole image
//! is never held.
//!
//! Coding ([`Png8Coding`]): zlib level 2 finds repeats at any distance, which the smooth
//! and patchy maps are full of; the noisy maps (colour, normals, shaded relief) repeat little
//! beyond runs, and zlib's run-only strategy (`Z_RLE`) deflates them twice as fast for about
//! the same size. Measured on tatooine's full planet at 2 m (8193², zlib-rs, one core, the
//! maps' own filtered rows in 256 KiB jobs):
//!
//! | map (raw)                    | level 2            | runs only          |
//! |------------------------------|--------------------|--------------------|
//! | `color.png` (201 MB)         | 139.7 MB, 3.01 s   | 143.8 MB, 1.52 s   |
//! | `normals.png` (201 MB)       | 114.2 MB, 2.18 s   | 110.2 MB, 1.31 s   |
//! | `preview.png` (201 MB)       | 104.2 MB, 1.73 s   | 109.4 MB, 1.45 s   |
//! | `splat_1.png` (268 MB)       | 15.6 MB, 0.40 s    | 13.5 MB, 0.37 s    |
//! | `splat_preview.png` (201 MB) | 14.9 MB, 0.33 s    | 23.3 MB, 0.37 s    |
//! | `flora_noncollidable_density.png` (134 MB) | 26.4 MB, 0.51 s | 28.1 MB, 0.41 s |
//!
//! (Level 1, zlib-rs's `deflate_quick`, is as fast as runs only but made `color.png` 31 %
//! larger; Huffman coding alone is a little faster again and a little larger.)
//!
//! The noisy maps also take one row filter throughout instead of the best of three per row:
//! under runs only, the adaptive choice gave the normals and the preview exactly Paeth's
//! size (110.2 / 109.4 MB), `color.png` is smaller with Average (141.8 against 143.8 MB)
//! and the splat weights with Up (13.4 against 13.5 MB), for a third of the filtering work.

use std::io::{self, Write};
use std::ops::Range;
use std::path::Path;

use sha2::Digest;

use super::png16::{write_idat_rows, IdatDeflate};
use crate::fsutil::write_atomic_with;
use crate::{hex, HashingWriter, WrittenFile};

/// zlib level of the 8-bit maps: fast (see `png16` and the module docs for the measurements).
const LEVEL: u32 = 2;

/// How an 8-bit map is filtered and deflated (see the module docs for the measurements).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Png8Coding {
    /// Each row's best filter (Sub, Up or Paeth, libpng's heuristic) and zlib level 2, which
    /// finds repeats at any distance: maps with smooth areas and patterns (masks, the splat
    /// preview).
    Patterned,
    /// One filter for every row and runs only (zlib's `Z_RLE`): noisy maps, where it is about
    /// twice as fast for files within a few per cent (colour, normals, the shaded preview,
    /// splat weights).
    Noisy(RowFilter),
}

/// A PNG row filter (the filter type byte's values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowFilter {
    Sub = 1,
    Up = 2,
    Average = 3,
    Paeth = 4,
}

/// The rows of an 8-bit image, file row 0 being the north edge.
pub trait ByteRows: Sync {
    fn width(&self) -> u32;
    fn height(&self) -> u32;
    /// Samples per pixel: 1 grey, 3 RGB, 4 RGBA.
    fn channels(&self) -> u32;
    /// File rows `rows` into `out` (`rows.len() · width · channels` bytes, north row first).
    fn read_rows(&self, rows: Range<u32>, out: &mut [u8]) -> io::Result<()>;
    /// Block until file rows `0..bottom` can be read (sources a bake is still filling).
    fn wait_rows(&self, _bottom: u32) -> io::Result<()> {
        Ok(())
    }
}

/// An image held in memory, north row first.
pub struct MemRows<'a> {
    pub width: u32,
    pub height: u32,
    pub channels: u32,
    pub data: &'a [u8],
}

impl ByteRows for MemRows<'_> {
    fn width(&self) -> u32 {
        self.width
    }
    fn height(&self) -> u32 {
        self.height
    }
    fn channels(&self) -> u32 {
        self.channels
    }
    fn read_rows(&self, rows: Range<u32>, out: &mut [u8]) -> io::Result<()> {
        let stride = (self.width * self.channels) as usize;
        out.copy_from_slice(&self.data[rows.start as usize * stride..rows.end as usize * stride]);
        Ok(())
    }
}

/// Write `src` as an 8-bit PNG at `path` (atomically), coded as `coding` says; the manifest
/// names its format `png8`, `png-rgb8` or `png-rgba8`.
pub fn write_png8_from(path: &Path, src: &dyn ByteRows, coding: Png8Coding) -> io::Result<WrittenFile> {
    let (width, height, channels) = (src.width(), src.height(), src.channels());
    let color = match channels {
        1 => png::ColorType::Grayscale,
        2 => png::ColorType::GrayscaleAlpha,
        3 => png::ColorType::Rgb,
        4 => png::ColorType::Rgba,
        n => return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{n} channels: a PNG has 1 to 4"))),
    };
    if width == 0 || height == 0 {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "an image needs at least one pixel"));
    }
    let row_bytes = width as usize * channels as usize;
    let mut result: Option<(u64, String)> = None;
    write_atomic_with(path, |w| {
        let mut hw = HashingWriter::new(w);
        {
            let mut enc = png::Encoder::new(&mut hw, width, height);
            enc.set_color(color);
            enc.set_depth(png::BitDepth::Eight);
            enc.add_text_chunk("Software".to_string(), concat!("trnbake ", env!("CARGO_PKG_VERSION")).to_string()).map_err(io::Error::other)?;
            let mut writer = enc.write_header().map_err(io::Error::other)?;
            let filtered = |rows: Range<u32>| filtered_rows(src, rows, channels as usize, row_bytes, coding);
            let how = IdatDeflate { level: LEVEL, runs_only: matches!(coding, Png8Coding::Noisy(_)) };
            write_idat_rows(&mut writer, height, row_bytes, how, &|_, bottom| src.wait_rows(bottom), &filtered)?;
            writer.finish().map_err(io::Error::other)?;
        }
        hw.flush()?;
        result = Some((hw.bytes, hex(&hw.hasher.finalize())));
        Ok(())
    })?;
    let (bytes, sha256) = result.ok_or_else(|| io::Error::other("png writer produced no result"))?;
    Ok(WrittenFile::new(
        path,
        bytes,
        sha256,
        match channels {
            1 => "png8",
            3 => "png-rgb8",
            _ => "png-rgba8",
        },
    ))
}

/// The filtered scanlines of file rows `rows`: each row's filter byte, then the row filtered
/// against the row above it (zeros above the first row, as PNG defines) by the filter
/// `coding` names, or the best of three.
fn filtered_rows(src: &dyn ByteRows, rows: Range<u32>, bpp: usize, row_bytes: usize, coding: Png8Coding) -> io::Result<Vec<u8>> {
    let with_above = rows.start.saturating_sub(1)..rows.end;
    let mut block = vec![0u8; with_above.len() * row_bytes];
    src.read_rows(with_above.clone(), &mut block)?;
    let zeros = vec![0u8; row_bytes];
    let mut out = Vec::with_capacity(rows.len() * (row_bytes + 1));
    let mut candidates = [vec![0u8; row_bytes], vec![0u8; row_bytes], vec![0u8; row_bytes]];
    for r in rows.clone() {
        let at = (r - with_above.start) as usize * row_bytes;
        let cur = &block[at..at + row_bytes];
        let above = if r == 0 { &zeros[..] } else { &block[at - row_bytes..at] };
        let (kind, filtered) = match coding {
            Png8Coding::Patterned => {
                let best = filter_row(cur, above, bpp, &mut candidates);
                (FILTER_TYPES[best], &candidates[best])
            }
            Png8Coding::Noisy(filter) => {
                let [sub, up, other] = &mut candidates;
                match filter {
                    RowFilter::Sub => sub_row(cur, bpp, sub),
                    RowFilter::Up => up_row(cur, above, up),
                    RowFilter::Average => average_row(cur, above, bpp, other),
                    RowFilter::Paeth => paeth_row(cur, above, bpp, other),
                }
                (
                    filter as u8,
                    &candidates[match filter {
                        RowFilter::Sub => 0,
                        RowFilter::Up => 1,
                        _ => 2,
                    }],
                )
            }
        };
        out.push(kind);
        out.extend_from_slice(filtered);
    }
    Ok(out)
}

/// PNG filter types of [`filter_row`]'s candidates: Sub, Up, Paeth.
const FILTER_TYPES: [u8; 3] = [1, 2, 4];

/// Fill `out` with the row filtered by each of [`FILTER_TYPES`] and return the index of the
/// one with the smallest sum of absolute values (the first on a tie). One loop a filter over
/// whole slices, so each vectorises.
fn filter_row(cur: &[u8], above: &[u8], bpp: usize, out: &mut [Vec<u8>; 3]) -> usize {
    let [sub, up, paeth] = out;
    sub_row(cur, bpp, sub);
    up_row(cur, above, up);
    paeth_row(cur, above, bpp, paeth);
    let cost = |row: &[u8]| row.iter().map(|&v| u64::from((v as i8).unsigned_abs())).sum::<u64>();
    let costs = [cost(sub), cost(up), cost(paeth)];
    (0..3).min_by_key(|&k| costs[k]).unwrap_or(0)
}

// The filters, each one loop over whole slices so that it vectorises. The first pixel has no
// left neighbour (a = c = 0): Sub keeps it, Average halves b, Paeth predicts b.

/// Sub: each byte minus the one `bpp` to its left.
fn sub_row(cur: &[u8], bpp: usize, out: &mut [u8]) {
    let (n, lead) = (cur.len(), bpp.min(cur.len()));
    out[..lead].copy_from_slice(&cur[..lead]);
    for ((o, &x), &a) in out[lead..].iter_mut().zip(&cur[lead..]).zip(&cur[..n - lead]) {
        *o = x.wrapping_sub(a);
    }
}

/// Up: each byte minus the one above it.
fn up_row(cur: &[u8], above: &[u8], out: &mut [u8]) {
    for ((o, &x), &b) in out.iter_mut().zip(cur).zip(above) {
        *o = x.wrapping_sub(b);
    }
}

/// Average: each byte minus the floor of the mean of its left and upper neighbours.
fn average_row(cur: &[u8], above: &[u8], bpp: usize, out: &mut [u8]) {
    let (n, lead) = (cur.len(), bpp.min(cur.len()));
    for ((o, &x), &b) in out[..lead].iter_mut().zip(cur).zip(above) {
        *o = x.wrapping_sub(b >> 1);
    }
    for (((o, &x), &a), &b) in out[lead..].iter_mut().zip(&cur[lead..]).zip(&cur[..n - lead]).zip(&above[lead..]) {
        *o = x.wrapping_sub(((u16::from(a) + u16::from(b)) >> 1) as u8);
    }
}

/// Paeth: each byte minus the one of left, upper and upper-left nearest to left + upper −
/// upper-left (ties in that order).
fn paeth_row(cur: &[u8], above: &[u8], bpp: usize, out: &mut [u8]) {
    let (n, lead) = (cur.len(), bpp.min(cur.len()));
    up_row(&cur[..lead], &above[..lead], &mut out[..lead]);
    for ((((o, &x), &a), &b), &c) in out[lead..].iter_mut().zip(&cur[lead..]).zip(&cur[..n - lead]).zip(&above[lead..]).zip(&above[..n - lead]) {
        let (ai, bi, ci) = (i16::from(a), i16::from(b), i16::from(c));
        // p = a + b − c; |p − a| = |b − c|, |p − b| = |a − c|, |p − c| = |a + b − 2c|.
        let (pa, pb, pc) = ((bi - ci).abs(), (ai - ci).abs(), (ai + bi - 2 * ci).abs());
        let pred = if pa <= pb && pa <= pc {
            a
        } else if pb <= pc {
            b
        } else {
            c
        };
        *o = x.wrapping_sub(pred);
    }
}

/// Write an 8-bit PNG of `channels` (1 = grey, 3 = RGB, 4 = RGBA) from row-major-from-south
/// samples held in memory (a grid's rows, row 0 the south edge): image row 0 is the north edge,
/// as every image viewer expects.
pub fn write_png8_south_first(path: &Path, cols: u32, rows: u32, channels: usize, data: &[u8]) -> io::Result<WrittenFile> {
    assert_eq!(data.len(), cols as usize * rows as usize * channels);
    let stride = cols as usize * channels;
    let north_first: Vec<u8> = data.chunks_exact(stride.max(1)).rev().flatten().copied().collect();
    write_png8_from(path, &MemRows { width: cols, height: rows, channels: channels as u32, data: &north_first }, Png8Coding::Patterned)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The per-byte reading of the filters `filter_row` must equal.
    fn filter_row_reference(cur: &[u8], above: &[u8], bpp: usize, out: &mut [Vec<u8>; 3]) -> usize {
        let left = |i: usize, row: &[u8]| if i >= bpp { row[i - bpp] } else { 0 };
        let mut cost = [0u64; 3];
        for i in 0..cur.len() {
            let (a, b, c) = (left(i, cur), above[i], left(i, above));
            let paeth = {
                let p = i16::from(a) + i16::from(b) - i16::from(c);
                let (pa, pb, pc) = ((p - i16::from(a)).abs(), (p - i16::from(b)).abs(), (p - i16::from(c)).abs());
                if pa <= pb && pa <= pc {
                    a
                } else if pb <= pc {
                    b
                } else {
                    c
                }
            };
            for (k, pred) in [a, b, paeth].into_iter().enumerate() {
                let v = cur[i].wrapping_sub(pred);
                out[k][i] = v;
                cost[k] += u64::from((v as i8).unsigned_abs());
            }
        }
        (0..3).min_by_key(|&k| cost[k]).unwrap_or(0)
    }

    #[test]
    fn filter_row_equals_the_per_byte_reading() {
        let mut seed = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for len in [0usize, 1, 2, 3, 4, 5, 17, 64, 301] {
            for bpp in [1usize, 3, 4] {
                for smooth in [false, true] {
                    let byte = |k: usize, r: u64| if smooth { (k / 5) as u8 ^ (r % 3) as u8 } else { r as u8 };
                    let cur: Vec<u8> = (0..len).map(|k| byte(k, next())).collect();
                    let above: Vec<u8> = (0..len).map(|k| byte(k + 1, next())).collect();
                    let mut got = [vec![0u8; len], vec![0u8; len], vec![0u8; len]];
                    let mut want = got.clone();
                    assert_eq!(filter_row(&cur, &above, bpp, &mut got), filter_row_reference(&cur, &above, bpp, &mut want));
                    assert_eq!(got, want, "len {len} bpp {bpp}");
                    // Average, which the adaptive choice leaves out, by the per-byte reading.
                    let left = |i: usize, row: &[u8]| if i >= bpp { row[i - bpp] } else { 0 };
                    let average: Vec<u8> = (0..len).map(|i| cur[i].wrapping_sub(((u16::from(left(i, &cur)) + u16::from(above[i])) / 2) as u8)).collect();
                    let mut got_average = vec![0u8; len];
                    average_row(&cur, &above, bpp, &mut got_average);
                    assert_eq!(got_average, average, "average, len {len} bpp {bpp}");
                }
            }
        }
    }

    #[test]
    fn every_channel_count_reads_back_as_written() {
        let dir = std::env::temp_dir().join(format!("trnbake-png8-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let codings = [
            Png8Coding::Patterned,
            Png8Coding::Noisy(RowFilter::Sub),
            Png8Coding::Noisy(RowFilter::Up),
            Png8Coding::Noisy(RowFilter::Average),
            Png8Coding::Noisy(RowFilter::Paeth),
        ];
        for (channels, coding) in [1u32, 3, 4].into_iter().flat_map(|c| codings.map(|k| (c, k))) {
            // 300 × 700 pixels: several parallel deflate jobs; noise and smooth runs mixed.
            let (w, h) = (300u32, 700u32);
            let data: Vec<u8> = (0..w * h * channels).map(|i| if i % 7 < 3 { (i.wrapping_mul(2654435761u32) >> 24) as u8 } else { (i / 97) as u8 }).collect();
            let path = dir.join(format!("c{channels}.png"));
            let wf = write_png8_from(&path, &MemRows { width: w, height: h, channels, data: &data }, coding).unwrap();
            let img = image::open(&path).unwrap();
            let back = match channels {
                1 => img.into_luma8().into_raw(),
                3 => img.into_rgb8().into_raw(),
                _ => img.into_rgba8().into_raw(),
            };
            assert_eq!(back, data, "{channels} channels, {coding:?}");
            assert_eq!(wf.bytes, std::fs::metadata(&path).unwrap().len());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
