//! 16-bit greyscale PNG height export (`docs/src/spec/exports.md` §4.1).
//!
//! Hand-written over the `png` crate, not `image`: it streams a full planet row by row (8193² ×
//! 2 bytes), which `image`'s encoder would need whole in memory, and it writes tEXt chunks.
//!
//! IHDR colour type 0, bit depth 16, samples big-endian, north row first. No gAMA/sRGB/iCCP/
//! cHRM chunks (colour management would bend heights). `raw = round((h − offset) / scale)`
//! clamped to `0..=65535` (PNG has no nodata; NaN is written as 0). The decoding numbers and
//! the georeferencing go into tEXt chunks with `trnbake:` keys, since PNG has no other place
//! for them (the bake manifest carries the same numbers).
//!
//! Compression: zlib level 2 with the `Up` row filter ([`DEFLATE`], [`FILTER`]), a "fast"
//! setting chosen by measurement on a smooth 1025² grid (2.1 MB of samples; CPU time per
//! write, one core, zlib-rs backend):
//!
//! | setting                              | file      | ratio | speed        |
//! |--------------------------------------|-----------|-------|--------------|
//! | `Compression::Fast` (fdeflate, adaptive) | 1.60 MB | 1.31 | ~300 MB/s |
//! | `Compression::Fastest` (fdeflate, Up)    | 1.76 MB | 1.19 | ~350 MB/s |
//! | zlib 3 + Up                          | 0.76 MB   | 2.75  | ~75 MB/s     |
//! | zlib 6 + Up                          | 0.74 MB   | 2.85  | ~58 MB/s     |
//! | `Compression::Balanced` (zlib 6, adaptive) | 0.98 MB | 2.15 | ~35 MB/s |
//!
//! and on tatooine's planet at 2 m (first 2048 rows): zlib 2 + Up (used) 60 MB/s, 2.5 % larger
//! than zlib 3 (46 MB/s); zlib 1 is 2× faster again but 38 % larger.
//!
//! fdeflate is tuned for 8-bit images and compresses 16-bit heights poorly (the interleaved
//! low bytes defeat it); zlib 3 + Up gives files 2× smaller than `Fast` at a quarter of its
//! speed, close to the best ratio of any setting. The `png` crate deflates on one thread, so
//! the image data is deflated here in parallel jobs of ~256 KiB of scanlines joined into one
//! zlib stream (`write_idat_parallel`); the whole image is never held. The SHA-256 is
//! computed on the bytes as they are written.

use std::io::{self, Write};
use std::path::Path;

use sha2::Digest;

use crate::fsutil::{write_atomic, write_atomic_with};
use crate::source::scan_min_max;
use crate::{check_scale_offset, encode_u16, finite_min_max, hex, Grid, HashingWriter, HeightSource, MemSource, RowOrder, WrittenFile};

/// Deflate setting of [`write_png16`] (see the module docs for the measurements).
pub const DEFLATE: png::DeflateCompression = png::DeflateCompression::Level(2);
/// Row filter of [`write_png16`]: `Up` (vertical difference) suits smooth heights.
pub const FILTER: png::Filter = png::Filter::Up;

/// tEXt keys written by [`write_png16`].
pub const KEY_SCALE: &str = "trnbake:height_scale";
pub const KEY_OFFSET: &str = "trnbake:height_offset";
pub const KEY_MIN: &str = "trnbake:height_min";
pub const KEY_MAX: &str = "trnbake:height_max";
pub const KEY_SPACING: &str = "trnbake:spacing";
pub const KEY_WEST_X: &str = "trnbake:west_x";
pub const KEY_SOUTH_Z: &str = "trnbake:south_z";
pub const KEY_NORTH_Z: &str = "trnbake:north_z";
pub const KEY_LAYOUT: &str = "trnbake:layout";

/// Knobs of [`write_png16_from`].
#[derive(Clone, Copy, Debug)]
pub struct Png16Options {
    /// zlib setting; [`DEFLATE`] by default, `NoCompression` for the fastest write.
    pub compression: png::DeflateCompression,
    /// Finite min/max of the source when the caller already knows them (recorded in tEXt);
    /// `None` scans the source first.
    pub min_max: Option<(f32, f32)>,
}

impl Default for Png16Options {
    fn default() -> Self {
        Self { compression: DEFLATE, min_max: None }
    }
}

/// Write heights as a 16-bit greyscale PNG (see the module docs for the encoding).
pub fn write_png16(path: &Path, grid: &Grid, heights: &[f32], scale: f64, offset: f64) -> io::Result<WrittenFile> {
    let src = MemSource::south_first(*grid, heights)?;
    let opts = Png16Options { min_max: Some(finite_min_max(heights).unwrap_or((f32::NAN, f32::NAN))), ..Default::default() };
    write_png16_from(path, &src, scale, offset, &opts)
}

/// Write a 16-bit greyscale PNG from any [`HeightSource`], streaming blocks of rows.
pub fn write_png16_from(path: &Path, src: &dyn HeightSource, scale: f64, offset: f64, opts: &Png16Options) -> io::Result<WrittenFile> {
    let grid = src.grid();
    grid.check_dims()?;
    check_scale_offset(scale, offset)?;
    let (hmin, hmax) = match opts.min_max {
        Some(m) => m,
        None => scan_min_max(src)?.unwrap_or((f32::NAN, f32::NAN)),
    };
    let (hmin, hmax) = (f64::from(hmin), f64::from(hmax));

    let mut result: Option<(u64, String)> = None;
    write_atomic_with(path, |w| {
        let mut hw = HashingWriter::new(w);
        {
            let mut enc = png::Encoder::new(&mut hw, grid.cols, grid.rows);
            enc.set_color(png::ColorType::Grayscale);
            enc.set_depth(png::BitDepth::Sixteen);
            enc.set_deflate_compression(opts.compression);
            enc.set_filter(FILTER);
            let text = [
                (KEY_SCALE, format!("{scale:?}")),
                (KEY_OFFSET, format!("{offset:?}")),
                (KEY_MIN, format!("{hmin:?}")),
                (KEY_MAX, format!("{hmax:?}")),
                (KEY_SPACING, format!("{:?}", grid.spacing)),
                (KEY_WEST_X, format!("{:?}", grid.x0)),
                (KEY_SOUTH_Z, format!("{:?}", grid.z0)),
                (KEY_NORTH_Z, format!("{:?}", grid.north_z())),
                (
                    KEY_LAYOUT,
                    "height_m = raw * height_scale + height_offset; row 0 = north (z = north_z), \
                     column 0 = west (x = west_x); samples are posts spacing metres apart"
                        .to_string(),
                ),
            ];
            for (k, v) in text {
                enc.add_text_chunk(k.to_string(), v).map_err(png_err)?;
            }
            enc.add_text_chunk("Software".to_string(), concat!("trnbake ", env!("CARGO_PKG_VERSION")).to_string()).map_err(png_err)?;
            let mut writer = enc.write_header().map_err(png_err)?;
            write_idat_parallel(&mut writer, src, scale, offset, opts.compression)?;
            writer.finish().map_err(png_err)?;
        }
        hw.flush()?;
        result = Some((hw.bytes, hex(&hw.hasher.finalize())));
        Ok(())
    })?;
    let (bytes, sha256) = result.ok_or_else(|| io::Error::other("png writer produced no result"))?;
    let mut wf = WrittenFile::new(path, bytes, sha256, "png16");
    wf.height_scale = Some(scale);
    wf.height_offset = Some(offset);
    wf.height_range = Some([offset, offset + scale * f64::from(u16::MAX)]);
    wf.grid = Some(grid);
    wf.row_order = Some(RowOrder::NorthFirst);
    Ok(wf)
}

/// Target filtered bytes per parallel deflate job: big enough that restarting the deflate
/// window costs nothing measurable (its window is 32 KiB), small enough to spread a 1025²
/// grid over the cores.
const IDAT_JOB_BYTES: usize = 256 * 1024;

/// The image data of a 16-bit greyscale PNG as one zlib stream, deflated in parallel: the
/// rows are cut into jobs of about [`IDAT_JOB_BYTES`], each job encodes, `Up`-filters
/// (against the row above it, the last row of the previous job) and raw-deflates its rows on
/// its own, ending with a sync flush (byte-aligned, not final) or, for the last job, the final
/// block; the pieces concatenated are one valid deflate stream (what pigz does). The zlib
/// header goes before the first piece and the Adler-32 of all filtered bytes, combined from
/// the jobs', after the last; each piece is written as one IDAT chunk. (The `png` crate
/// deflates on one thread, which made the PNG the longest part of a planet bake.)
fn write_idat_parallel<W: Write>(
    writer: &mut png::Writer<W>,
    src: &dyn HeightSource,
    scale: f64,
    offset: f64,
    compression: png::DeflateCompression,
) -> io::Result<()> {
    let grid = src.grid();
    let level = match compression {
        png::DeflateCompression::Level(l) => u32::from(l).clamp(1, 9),
        png::DeflateCompression::NoCompression => 0,
        _ => 3,
    };
    let wait = |top: u32, bottom: u32| src.wait_rows(grid.rows - bottom, bottom - top);
    let how = IdatDeflate { level, runs_only: false };
    write_idat_rows(writer, grid.rows, grid.cols as usize * 2, how, &wait, &|rows| filtered_rows(src, rows, scale, offset))
}

/// How [`write_idat_rows`] deflates.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IdatDeflate {
    /// zlib level, 0 (stored) to 9.
    pub level: u32,
    /// Search only runs, matches at distance 1 (zlib's `Z_RLE` strategy) instead of the hash
    /// chains: about twice the speed on noisy filtered rows (colour, normals, shaded relief)
    /// for files within a few per cent of level 2's, smaller ones on the splat weights'
    /// (measurements in `png8`'s module docs).
    pub runs_only: bool,
}

/// The image data of a PNG of `height` rows of `row_bytes` bytes as one zlib stream,
/// deflated as `how` says in parallel jobs of about [`IDAT_JOB_BYTES`] (see
/// `write_idat_parallel`). `wait(top, bottom)` blocks until file rows `top..bottom` (0 =
/// north) can be read and is called from this thread only; `filtered(rows)` returns the
/// filtered scanlines of file rows `rows` (filter byte first), filtered against the row above
/// `rows.start` where a filter reads it.
pub(crate) fn write_idat_rows<W: Write>(
    writer: &mut png::Writer<W>,
    height: u32,
    row_bytes: usize,
    how: IdatDeflate,
    wait: &dyn Fn(u32, u32) -> io::Result<()>,
    filtered: &(dyn Fn(std::ops::Range<u32>) -> io::Result<Vec<u8>> + Sync),
) -> io::Result<()> {
    use rayon::prelude::*;
    let rows_per_job = (IDAT_JOB_BYTES / (row_bytes + 1)).max(1) as u32;
    let jobs = height.div_ceil(rows_per_job) as usize;
    let batch = (rayon::current_num_threads() * 2).max(1);
    let mut adler: Option<u32> = None;
    for first in (0..jobs).step_by(batch) {
        let range = first..(first + batch).min(jobs);
        // File rows (north first) of the batch, and the one above it for the filter.
        let top = range.start as u32 * rows_per_job;
        let bottom = (range.end as u32 * rows_per_job).min(height);
        wait(top.saturating_sub(1), bottom)?;
        let pieces: Vec<(Vec<u8>, u32, u64)> = range
            .into_par_iter()
            .map(|j| -> io::Result<(Vec<u8>, u32, u64)> {
                let r0 = j as u32 * rows_per_job;
                let r1 = (r0 + rows_per_job).min(height);
                let filtered = filtered(r0..r1)?;
                let mut a = simd_adler32::Adler32::new();
                a.write(&filtered);
                let piece = raw_deflate(&filtered, how, r1 == height)?;
                Ok((piece, a.finish(), filtered.len() as u64))
            })
            .collect::<io::Result<_>>()?;
        for (k, (mut piece, a, len)) in pieces.into_iter().enumerate() {
            let is_first = first + k == 0;
            let is_last = first + k == jobs - 1;
            adler = Some(adler.map_or(a, |prev| adler32_combine(prev, a, len)));
            if is_first {
                // CMF 0x78 (deflate, 32 KiB window), FLG with FLEVEL "fast" and the check bits.
                piece.splice(0..0, [0x78, 0x5e]);
            }
            if is_last {
                piece.extend_from_slice(&adler.expect("set above").to_be_bytes());
            }
            writer.write_chunk(png::chunk::IDAT, &piece).map_err(png_err)?;
        }
    }
    Ok(())
}

/// PNG scanlines of file rows `rows` (0 = north): filter byte 2 (`Up`) and the big-endian
/// samples minus the row above's (zeros above the first row, as PNG defines).
fn filtered_rows(src: &dyn HeightSource, rows: std::ops::Range<u32>, scale: f64, offset: f64) -> io::Result<Vec<u8>> {
    let grid = src.grid();
    let cols = grid.cols as usize;
    let with_above = rows.start.saturating_sub(1)..rows.end;
    let n = with_above.len();
    let mut block = vec![0.0f32; cols * n];
    // Source rows are south first: file rows a..b are source rows rows−b .. rows−a.
    src.read_rows(grid.rows - with_above.end, n as u32, &mut block)?;
    let encode = |row: &[f32], out: &mut [u8]| {
        for (h, o) in row.iter().zip(out.chunks_exact_mut(2)) {
            o.copy_from_slice(&encode_u16(*h, scale, offset, u16::MAX, 0).to_be_bytes());
        }
    };
    let mut prev = vec![0u8; cols * 2];
    let mut cur = vec![0u8; cols * 2];
    // `block` rows from the top of the file: the last chunk row is the northmost.
    let mut file_rows = block.chunks_exact(cols).rev();
    if rows.start > 0 {
        encode(file_rows.next().expect("the row above"), &mut prev);
    }
    let mut out = Vec::with_capacity(rows.len() * (cols * 2 + 1));
    for row in file_rows {
        encode(row, &mut cur);
        out.push(2);
        out.extend(cur.iter().zip(&prev).map(|(c, p)| c.wrapping_sub(*p)));
        std::mem::swap(&mut prev, &mut cur);
    }
    Ok(out)
}

/// Raw deflate (no zlib header) of `data` as `how` says, ending with a sync flush, or with
/// the final block when `last`. (zlib-rs directly, the backend flate2 is built on here: flate2
/// has no way to choose a strategy.) Each thread keeps its streams and its output buffer from
/// one job to the next: a fresh stream allocates and clears ~300 KB and a fresh buffer the size
/// of the job (with the GeoTIFFs' blocks, 0.7 % of an every-map bake's instructions); a stream
/// reset is a fresh one (zlib's `deflateReset`), so the bytes are the same.
fn raw_deflate(data: &[u8], how: IdatDeflate, last: bool) -> io::Result<Vec<u8>> {
    use std::cell::RefCell;
    use zlib_rs::{Deflate, DeflateConfig, DeflateFlush, Status, Strategy};
    thread_local! {
        /// The thread's streams by (level, runs only), and its output buffer.
        static STREAMS: RefCell<Vec<((u32, bool), Deflate)>> = const { RefCell::new(Vec::new()) };
        static OUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }
    let key = (how.level, how.runs_only);
    // Taken out while in use (and put back only after a whole stream): a stream that failed
    // midway is dropped, not reused.
    let kept = STREAMS.with_borrow_mut(|streams| streams.iter().position(|(k, _)| *k == key).map(|at| streams.swap_remove(at).1));
    let mut c = kept.unwrap_or_else(|| {
        let strategy = if how.runs_only { Strategy::Rle } else { Strategy::Default };
        Deflate::new_with_config(DeflateConfig { level: how.level as i32, window_bits: -15, strategy, ..DeflateConfig::default() })
    });
    let flush = if last { DeflateFlush::Finish } else { DeflateFlush::SyncFlush };
    let piece = OUT.with_borrow_mut(|out| -> io::Result<Vec<u8>> {
        // The bound of one call over the whole input, and room for the sync flush's empty block.
        let bound = zlib_rs::compress_bound(data.len()) + 64;
        if out.len() < bound {
            out.resize(bound, 0);
        }
        loop {
            let (consumed, produced) = (c.total_in() as usize, c.total_out() as usize);
            let status = c.compress(&data[consumed..], &mut out[produced..], flush).map_err(|e| io::Error::other(e.as_str()))?;
            let (all_in, produced) = (c.total_in() as usize == data.len(), c.total_out() as usize);
            // Done when everything is in and the flush fitted (spare room left), or the stream ended.
            if status == Status::StreamEnd || (!last && all_in && produced < out.len()) {
                return Ok(out[..produced].to_vec());
            }
            out.resize(out.len() * 2, 0);
        }
    })?;
    c.reset();
    STREAMS.with_borrow_mut(|streams| streams.push((key, c)));
    Ok(piece)
}

/// Adler-32 of the concatenation of two byte strings from their checksums and the second's
/// length (the running sums A and B of RFC 1950 §9: the second part's B grows by len2·(A1 − 1)).
fn adler32_combine(first: u32, second: u32, len2: u64) -> u32 {
    const MOD: u64 = 65521;
    let (a1, b1) = (u64::from(first & 0xffff), u64::from(first >> 16));
    let (a2, b2) = (u64::from(second & 0xffff), u64::from(second >> 16));
    let rem = len2 % MOD;
    let a = (a1 + a2 + MOD - 1) % MOD;
    let b = (b1 + b2 + rem * ((a1 + MOD - 1) % MOD)) % MOD;
    ((b as u32) << 16) | a as u32
}

/// Write the ESRI world file (`.pgw`) of a north-up image of posts: six lines, pixel size x,
/// two rotation terms, negative pixel size y, then the world position of the **centre** of
/// the upper-left pixel — for a post grid, exactly the north-west post. GDAL's PNG driver
/// reads it and then reports the same geotransform as the GeoTIFF (origin half a spacing
/// beyond the corner post; spec §3.3). PNG has no CRS; the manifest names it.
pub fn write_world_file(path: &Path, grid: &Grid) -> io::Result<WrittenFile> {
    grid.check_dims()?;
    let s = grid.spacing;
    let text = format!("{s:?}\n0.0\n0.0\n{:?}\n{:?}\n{:?}\n", -s, grid.x0, grid.north_z());
    write_atomic(path, text.as_bytes())?;
    let mut wf = WrittenFile::of_file(path, "world-file")?;
    wf.grid = Some(*grid);
    Ok(wf)
}

fn png_err(e: png::EncodingError) -> io::Error {
    match e {
        png::EncodingError::IoError(e) => e,
        e => io::Error::other(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adler32_combine_equals_the_whole() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let whole = simd_adler32::adler32(&data.as_slice());
        for cut in [0, 1, 5552, 65521, 65522, 100_000, 199_999, 200_000] {
            let (a, b) = data.split_at(cut);
            let combined = adler32_combine(simd_adler32::adler32(&a), simd_adler32::adler32(&b), b.len() as u64);
            assert_eq!(combined, whole, "cut at {cut}");
        }
    }

    /// A stream kept from the job before (reset) writes the bytes of a fresh one, for each
    /// setting and either ending.
    #[test]
    fn a_kept_stream_deflates_as_a_fresh_one() {
        use zlib_rs::{Deflate, DeflateConfig, DeflateFlush, Strategy};
        let job = |seed: u32| -> Vec<u8> { (0..300_000u32).map(|i| ((i / 7) ^ (i.wrapping_mul(seed) >> 11)) as u8).collect() };
        for how in [IdatDeflate { level: 2, runs_only: false }, IdatDeflate { level: 2, runs_only: true }, IdatDeflate { level: 6, runs_only: false }] {
            for last in [false, true] {
                let (first, second) = (job(2_654_435_761), job(40_503));
                raw_deflate(&first, how, last).unwrap();
                let kept = raw_deflate(&second, how, last).unwrap();
                let strategy = if how.runs_only { Strategy::Rle } else { Strategy::Default };
                let mut fresh = Deflate::new_with_config(DeflateConfig { level: how.level as i32, window_bits: -15, strategy, ..DeflateConfig::default() });
                let mut out = vec![0u8; zlib_rs::compress_bound(second.len()) + 64];
                fresh.compress(&second, &mut out, if last { DeflateFlush::Finish } else { DeflateFlush::SyncFlush }).unwrap();
                out.truncate(fresh.total_out() as usize);
                assert_eq!(kept, out, "{how:?}, last: {last}");
            }
        }
    }

    // Several deflate jobs (a job is ~256 KiB of scanlines): the pieces must decode as one
    // stream, each job's first row filtered against the previous job's last, with the right
    // Adler-32 (the decoder checks it), for every compression setting.
    #[test]
    fn parallel_idat_decodes_to_the_samples() {
        let dir = std::env::temp_dir().join(format!("trnbake-png16-par-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let grid = Grid { cols: 1003, rows: 777, x0: 0.0, z0: 0.0, spacing: 2.0 };
        let heights: Vec<f32> = (0..grid.cols * grid.rows)
            .map(|i| {
                let (c, r) = ((i % grid.cols) as f32, (i / grid.cols) as f32);
                (c * 0.013).sin() * 40.0 + (r * 0.021).cos() * 25.0 + (i.wrapping_mul(7919) % 13) as f32 * 0.01
            })
            .collect();
        let (lo, hi) = finite_min_max(&heights).unwrap();
        let (scale, offset) = crate::u16_full_scale_offset(lo, hi);
        for compression in [png::DeflateCompression::Level(1), DEFLATE, png::DeflateCompression::NoCompression] {
            let path = dir.join("par.png");
            let src = MemSource::south_first(grid, &heights[..]).unwrap();
            let opts = Png16Options { compression, min_max: Some((lo, hi)) };
            write_png16_from(&path, &src, scale, offset, &opts).unwrap();
            let bytes = std::fs::read(&path).unwrap();
            let idats = bytes.windows(4).filter(|w| w == b"IDAT").count();
            assert!(idats >= 4, "{idats} IDAT chunks: the test needs several jobs");
            let mut reader = png::Decoder::new(std::io::Cursor::new(&bytes)).read_info().unwrap();
            let mut buf = vec![0; reader.output_buffer_size().unwrap()];
            reader.next_frame(&mut buf).unwrap();
            for (k, px) in buf.chunks_exact(2).enumerate() {
                let (row_from_north, c) = (k / grid.cols as usize, k % grid.cols as usize);
                let h = heights[(grid.rows as usize - 1 - row_from_north) * grid.cols as usize + c];
                assert_eq!(u16::from_be_bytes([px[0], px[1]]), encode_u16(h, scale, offset, u16::MAX, 0), "{compression:?} post {k}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn writes_big_endian_north_first_and_text() {
        let dir = std::env::temp_dir().join(format!("trnbake-png16-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.png");
        let grid = Grid { cols: 3, rows: 2, x0: -1.0, z0: -1.0, spacing: 1.0 };
        // south row 0..2, north row 3..5 (metres with scale 1/256 → raw h*256)
        let heights = [0.0, 1.0, 2.0, 3.0, 4.0, 255.0];
        let wf = write_png16(&path, &grid, &heights, 1.0 / 256.0, 0.0).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(wf.bytes, bytes.len() as u64);
        assert_eq!(wf.sha256, hex(&sha2::Sha256::digest(&bytes)));
        assert_eq!(wf.path, "t.png");
        let dec = png::Decoder::new(std::io::Cursor::new(&bytes));
        let mut reader = dec.read_info().unwrap();
        let info = reader.info();
        assert_eq!((info.color_type, info.bit_depth), (png::ColorType::Grayscale, png::BitDepth::Sixteen));
        assert!(info.gamma().is_none() && info.srgb.is_none());
        let text: Vec<(String, String)> = info.uncompressed_latin1_text.iter().map(|t| (t.keyword.clone(), t.text.clone())).collect();
        assert!(text.contains(&(KEY_MAX.to_string(), "255.0".to_string())));
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        reader.next_frame(&mut buf).unwrap();
        // First sample = north-west post = heights[3] = 3 m = raw 768 = 0x0300 big-endian.
        assert_eq!(&buf[..2], &[0x03, 0x00]);
        // Last sample of the file = south-east post = 2 m = raw 512.
        assert_eq!(&buf[10..12], &[0x02, 0x00]);
        // 255 m → raw 65280
        assert_eq!(&buf[4..6], &65280u16.to_be_bytes());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
