//! GeoTIFF height export (`shared/spec/exports.md` §3).
//!
//! Layout: one band, strips, Deflate (zlib, TIFF compression 8) with the floating-point
//! predictor (3) for Float32 or the horizontal predictor (2) for UInt16. Georeferencing is
//! GeoKey variant A (user-defined model type 32767, `PixelIsPoint`, citation, metre linear and
//! vertical units), a tiepoint that puts raster (0,0) on the north-west post and a pixel scale
//! of (spacing, spacing, 0). GDAL reports this as origin (west_x − s/2, north_z + s/2), pixel
//! size (s, −s) and `AREA_OR_POINT=Point`.
//!
//! Encoding is streamed strip by strip: each strip's rows are read from the [`HeightSource`],
//! and the predictor and zlib run in parallel on rayon over a batch of strips while the
//! previous batch is being written, so memory stays at two batches of strips (a few MiB)
//! whatever the grid size. The strips go into the file
//! through the `tiff` crate's low-level [`DirectoryEncoder::write_data`] (raw bytes, no
//! compression by the crate) and the IFD with `StripOffsets`/`StripByteCounts` is written after
//! the data. We do not use `ImageEncoder::write_strip` with compression: in `tiff` 0.11.3 it
//! writes uncompressed bytes into a file tagged as compressed (spec/gpu.md §0 item 7); and the
//! crate refuses predictor 3 anyway.
//!
//! Deflate is `flate2` with its `zlib-rs` backend (about twice miniz_oxide's speed at level 6
//! here). trnbake writes level 2 ([`GeoTiffOptions::deflate_level`], zlib-rs `deflate_fast`):
//! on tatooine's planet at 2 m (first 2048 rows, float predictor, one core) it compresses
//! 84 MB/s of samples against 67 MB/s at level 3 and 52 MB/s at GDAL's default 6, for files
//! 0.9 % and 2 % larger; level 1 (`deflate_quick`) is 2.2× faster than 3 but 9 % larger. The
//! full planet bake's GeoTIFF is 166.5 MB at level 2 (165.0 MB at 3); every reader decodes
//! any level.
//!
//! The file's byte order is the host's (that is what the `tiff` crate's header declares), so
//! UInt16 samples are serialised with `to_ne_bytes`; the float predictor's byte planes are
//! most-significant first regardless of byte order, as libtiff defines it.

use std::fs::File;
use std::io::{self, BufWriter};
use std::ops::Range;
use std::path::Path;

use rayon::prelude::*;
use tiff::encoder::{DirectoryEncoder, TiffEncoder, TiffKind, TiffKindBig, TiffKindStandard};
use tiff::tags::Tag;

use crate::{
    check_scale_offset, encode_u16, invalid, HeightSource, MemSource, Grid, RowOrder,
    WrittenFile, U16_MAX_DATA, U16_NODATA,
};
use crate::fsutil::write_atomic_with;

/// Whether to write BigTIFF (64-bit offsets).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BigTiff {
    /// BigTIFF when the worst-case file size (uncompressed samples plus Deflate's worst-case
    /// expansion and the directory) could pass 4 GiB; classic TIFF otherwise. The compressed
    /// size is unknown in advance, so this decides on the uncompressed size (GDAL's `IF_SAFER`
    /// idea): 16385² Float32 (1.07 GB) stays classic, 32769² Float32 (4.3 GB) is BigTIFF.
    #[default]
    Auto,
    Always,
    Never,
}

/// Tuning knobs; [`write_geotiff_f32`] and [`write_geotiff_u16`] use [`GeoTiffOptions::default`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GeoTiffOptions {
    pub bigtiff: BigTiff,
    /// Deflate with the predictor (default), or uncompressed strips (compression 1, no
    /// predictor) — the fastest write, for scratch files and the writer benchmark.
    pub compress: bool,
    /// zlib level 1..=9. Default 2 (GDAL's default `ZLEVEL` is 6; see the module notes).
    pub deflate_level: u32,
    /// Target uncompressed bytes per strip (at least one row per strip). Default 256 KiB:
    /// small enough to spread a 1025² grid over both cores, large enough that the per-strip
    /// zlib restart costs nothing measurable.
    pub strip_bytes: usize,
}

impl Default for GeoTiffOptions {
    fn default() -> Self {
        Self {
            bigtiff: BigTiff::Auto,
            compress: true,
            deflate_level: 2,
            strip_bytes: 256 * 1024,
        }
    }
}

/// Sample encoding of a GeoTIFF.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TiffSample {
    /// Float32 metres.
    F32,
    /// UInt16, `h = raw · scale + offset`, raw 65535 = nodata.
    U16 { scale: f64, offset: f64 },
}

impl TiffSample {
    fn bytes(self) -> usize {
        match self {
            TiffSample::F32 => 4,
            TiffSample::U16 { .. } => 2,
        }
    }
}

/// Write Float32 heights (metres) as a GeoTIFF: Deflate + floating-point predictor, no nodata
/// unless the heights contain NaN (then `GDAL_NODATA` = `nan`).
pub fn write_geotiff_f32(
    path: &Path,
    grid: &Grid,
    heights: &[f32],
    citation: &str,
) -> io::Result<WrittenFile> {
    write_geotiff_f32_with(path, grid, heights, citation, &GeoTiffOptions::default())
}

/// [`write_geotiff_f32`] with explicit options.
pub fn write_geotiff_f32_with(
    path: &Path,
    grid: &Grid,
    heights: &[f32],
    citation: &str,
    opts: &GeoTiffOptions,
) -> io::Result<WrittenFile> {
    let src = MemSource::south_first(*grid, heights)?;
    write_geotiff_from(path, &src, citation, TiffSample::F32, opts)
}

/// Write heights as UInt16 GeoTIFF: `raw = round((h − offset) / scale)` clamped to
/// `0..=65534`, NaN → 65535. `GDAL_METADATA` carries SCALE/OFFSET/UNITTYPE (so GDAL readers see
/// metres after unscaling) and `GDAL_NODATA` is 65535. Deflate + horizontal predictor.
pub fn write_geotiff_u16(
    path: &Path,
    grid: &Grid,
    heights: &[f32],
    citation: &str,
    scale: f64,
    offset: f64,
) -> io::Result<WrittenFile> {
    write_geotiff_u16_with(
        path,
        grid,
        heights,
        citation,
        scale,
        offset,
        &GeoTiffOptions::default(),
    )
}

/// [`write_geotiff_u16`] with explicit options.
pub fn write_geotiff_u16_with(
    path: &Path,
    grid: &Grid,
    heights: &[f32],
    citation: &str,
    scale: f64,
    offset: f64,
    opts: &GeoTiffOptions,
) -> io::Result<WrittenFile> {
    let src = MemSource::south_first(*grid, heights)?;
    write_geotiff_from(path, &src, citation, TiffSample::U16 { scale, offset }, opts)
}

/// Whether `opts.bigtiff` resolves to BigTIFF for this grid and sample size.
pub fn needs_bigtiff(grid: &Grid, sample_bytes: usize, bigtiff: BigTiff) -> bool {
    match bigtiff {
        BigTiff::Always => true,
        BigTiff::Never => false,
        BigTiff::Auto => {
            // Saturating: a 2^31 × 2^31 × 4 grid (2^64 bytes) must not wrap to "small".
            let raw = (grid.cols as u64).saturating_mul(grid.rows as u64).saturating_mul(sample_bytes as u64);
            // Deflate's worst case is ~5 bytes per 64 KiB stored block plus the zlib frame;
            // 1/64 is a generous bound. 16 MiB covers the directory and strip tables.
            raw.saturating_add(raw / 64 + (16 << 20)) > u64::from(u32::MAX)
        }
    }
}

/// Write a GeoTIFF from any [`HeightSource`], streaming strips (the general form of
/// [`write_geotiff_f32`] and [`write_geotiff_u16`]).
pub fn write_geotiff_from(
    path: &Path,
    src: &dyn HeightSource,
    citation: &str,
    sample: TiffSample,
    opts: &GeoTiffOptions,
) -> io::Result<WrittenFile> {
    let grid = src.grid();
    grid.check_dims()?;
    if let TiffSample::U16 { scale, offset } = sample {
        check_scale_offset(scale, offset)?;
    }
    if !(1..=9).contains(&opts.deflate_level) {
        return Err(invalid(format!(
            "deflate level must be 1..=9, got {}",
            opts.deflate_level
        )));
    }
    let big = needs_bigtiff(&grid, sample.bytes(), opts.bigtiff);
    let job = Job {
        grid: &grid,
        src,
        citation,
        sample,
        opts,
    };
    write_atomic_with(path, |w| {
        if big {
            job.write::<TiffKindBig>(w)
        } else {
            job.write::<TiffKindStandard>(w)
        }
    })?;
    let mut wf = WrittenFile::of_file(path, match sample {
        TiffSample::F32 => "geotiff-f32",
        TiffSample::U16 { .. } => "geotiff-u16",
    })?;
    if let TiffSample::U16 { scale, offset } = sample {
        wf.height_scale = Some(scale);
        wf.height_offset = Some(offset);
        wf.height_range = Some([offset, offset + f64::from(U16_MAX_DATA) * scale]);
    }
    wf.grid = Some(grid);
    wf.row_order = Some(RowOrder::NorthFirst);
    Ok(wf)
}

struct Job<'a> {
    grid: &'a Grid,
    src: &'a dyn HeightSource,
    citation: &'a str,
    sample: TiffSample,
    opts: &'a GeoTiffOptions,
}

/// One compressed strip and whether its samples contained NaN.
struct Strip {
    data: Vec<u8>,
    has_nan: bool,
}

impl Job<'_> {
    fn rows_per_strip(&self) -> u32 {
        let row_bytes = self.grid.cols as usize * self.sample.bytes();
        ((self.opts.strip_bytes / row_bytes.max(1)).max(1) as u64).min(u64::from(self.grid.rows))
            as u32
    }

    fn write<K: TiffKind + Send>(&self, w: &mut BufWriter<File>) -> io::Result<()> {
        let mut enc = TiffEncoder::<_, K>::new_generic(w).map_err(tiff_err)?;
        let mut dir = enc.image_directory().map_err(tiff_err)?;

        let rows = self.grid.rows;
        let rps = self.rows_per_strip();
        let n_strips = rows.div_ceil(rps) as usize;
        // Strips compressed per batch: enough to keep every worker busy, small enough that two
        // batches of compressed output stay at a few MiB.
        let batch = (rayon::current_num_threads() * 4).max(1);

        let mut offsets: Vec<u64> = Vec::with_capacity(n_strips);
        let mut counts: Vec<u64> = Vec::with_capacity(n_strips);
        let mut has_nan = false;

        let compress = |range: Range<usize>| -> io::Result<Vec<Strip>> {
            range
                .into_par_iter()
                .map_init(Vec::new, |scratch, s| {
                    let first = s as u32 * rps;
                    let last = (first + rps).min(rows);
                    self.encode_strip(first..last, scratch)
                })
                .collect()
        };

        // Source rows of strips `range` (strip 0 is the north edge), waited for here in the
        // driver and never inside the parallel jobs (`HeightSource::wait_rows`).
        let wait = |range: &Range<usize>| -> io::Result<()> {
            if range.is_empty() {
                return Ok(());
            }
            let first = range.start as u32 * rps;
            let last = (range.end as u32 * rps).min(rows);
            self.src.wait_rows(rows - last, last - first)
        };
        let first_batch = 0..batch.min(n_strips);
        wait(&first_batch)?;
        let mut pending = compress(first_batch)?;
        let mut next = pending.len();
        while !pending.is_empty() {
            let this = std::mem::take(&mut pending);
            let upcoming = next..(next + batch).min(n_strips);
            next = upcoming.end;
            wait(&upcoming)?;
            let dir_ref = &mut dir;
            let (written, compressed) = rayon::join(
                || -> io::Result<bool> {
                    let mut nan = false;
                    for strip in &this {
                        let off = dir_ref.write_data(&strip.data[..]).map_err(tiff_err)?;
                        offsets.push(off);
                        counts.push(strip.data.len() as u64);
                        nan |= strip.has_nan;
                    }
                    Ok(nan)
                },
                || {
                    if upcoming.is_empty() {
                        Ok(Vec::new())
                    } else {
                        compress(upcoming)
                    }
                },
            );
            has_nan |= written?;
            pending = compressed?;
        }
        debug_assert_eq!(offsets.len(), n_strips);

        self.write_tags::<_, K>(&mut dir, rps, &offsets, &counts, has_nan)?;
        dir.finish().map_err(tiff_err)?;
        Ok(())
    }

    /// Predictor + zlib for output rows `rows` (output row 0 = north = source row `rows − 1`).
    fn encode_strip(&self, rows: Range<u32>, scratch: &mut Vec<u8>) -> io::Result<Strip> {
        let cols = self.grid.cols as usize;
        let nrows = self.grid.rows;
        let row_bytes = cols * self.sample.bytes();
        // The strip's rows are one contiguous block of the source (south-first there).
        let mut block = vec![0.0f32; cols * rows.len()];
        self.src.read_rows(nrows - rows.end, rows.len() as u32, &mut block)?;
        scratch.clear();
        scratch.resize(row_bytes * rows.len(), 0);
        let mut has_nan = false;
        for (k, src) in block.chunks_exact(cols).rev().enumerate() {
            let dst = &mut scratch[k * row_bytes..(k + 1) * row_bytes];
            match (self.sample, self.opts.compress) {
                (TiffSample::F32, true) => {
                    has_nan |= src.iter().any(|h| h.is_nan());
                    float_predict_row(src, dst);
                }
                (TiffSample::F32, false) => {
                    has_nan |= src.iter().any(|h| h.is_nan());
                    for (h, out) in src.iter().zip(dst.chunks_exact_mut(4)) {
                        out.copy_from_slice(&h.to_ne_bytes());
                    }
                }
                (TiffSample::U16 { scale, offset }, compress) => {
                    let raw = src
                        .iter()
                        .map(|&h| encode_u16(h, scale, offset, U16_MAX_DATA, U16_NODATA));
                    if compress {
                        horizontal_predict_row_u16(raw, dst);
                    } else {
                        for (v, out) in raw.zip(dst.chunks_exact_mut(2)) {
                            out.copy_from_slice(&v.to_ne_bytes());
                        }
                    }
                }
            }
        }
        if !self.opts.compress {
            return Ok(Strip {
                data: std::mem::take(scratch),
                has_nan,
            });
        }
        let level = flate2::Compression::new(self.opts.deflate_level);
        let mut z =
            flate2::write::ZlibEncoder::new(Vec::with_capacity(scratch.len() / 2 + 64), level);
        io::Write::write_all(&mut z, scratch)?;
        Ok(Strip {
            data: z.finish()?,
            has_nan,
        })
    }

    fn write_tags<W: io::Write + io::Seek, K: TiffKind>(
        &self,
        dir: &mut DirectoryEncoder<'_, W, K>,
        rows_per_strip: u32,
        offsets: &[u64],
        counts: &[u64],
        has_nan: bool,
    ) -> io::Result<()> {
        let g = self.grid;
        let big = std::mem::size_of::<K::OffsetType>() == 8;
        let (bits, sample_format, predictor) = match self.sample {
            TiffSample::F32 => (32u16, 3u16, 3u16),
            TiffSample::U16 { .. } => (16, 1, 2),
        };
        // Uncompressed strips carry no predictor (libtiff applies one only with compression).
        let (compression, predictor) = if self.opts.compress {
            (8u16, predictor) // Deflate (zlib stream), "ADOBE_DEFLATE"
        } else {
            (1, 1)
        };
        let t = |r: tiff::TiffResult<()>| r.map_err(tiff_err);
        t(dir.write_tag(Tag::ImageWidth, g.cols))?;
        t(dir.write_tag(Tag::ImageLength, g.rows))?;
        t(dir.write_tag(Tag::BitsPerSample, bits))?;
        t(dir.write_tag(Tag::Compression, compression))?;
        t(dir.write_tag(Tag::PhotometricInterpretation, 1u16))?; // BlackIsZero
        t(dir.write_tag(Tag::SamplesPerPixel, 1u16))?;
        t(dir.write_tag(Tag::RowsPerStrip, rows_per_strip))?;
        if big {
            t(dir.write_tag(Tag::StripOffsets, offsets))?; // LONG8
            t(dir.write_tag(Tag::StripByteCounts, counts))?;
        } else {
            t(dir.write_tag(Tag::StripOffsets, &to_u32(offsets)?[..]))?;
            t(dir.write_tag(Tag::StripByteCounts, &to_u32(counts)?[..]))?;
        }
        t(dir.write_tag(Tag::PlanarConfiguration, 1u16))?;
        t(dir.write_tag(
            Tag::Software,
            concat!("trnbake ", env!("CARGO_PKG_VERSION")),
        ))?;
        t(dir.write_tag(Tag::Predictor, predictor))?;
        t(dir.write_tag(Tag::SampleFormat, sample_format))?;

        // Georeferencing, spec §3.1–3.3 (PixelIsPoint: raster (0,0) is the north-west post).
        t(dir.write_tag(Tag::ModelPixelScaleTag, &[g.spacing, g.spacing, 0.0][..]))?;
        t(dir.write_tag(
            Tag::ModelTiepointTag,
            &[0.0, 0.0, 0.0, g.x0, g.north_z(), 0.0][..],
        ))?;
        let citation = geo_citation(self.citation);
        t(dir.write_tag(
            Tag::GeoKeyDirectoryTag,
            &geo_key_directory(citation.len())[..],
        ))?;
        t(dir.write_tag(Tag::GeoAsciiParamsTag, citation.as_str()))?;

        t(dir.write_tag(Tag::Unknown(42112), gdal_metadata(self.sample).as_str()))?;
        match self.sample {
            TiffSample::U16 { .. } => t(dir.write_tag(Tag::GdalNodata, "65535"))?,
            TiffSample::F32 if has_nan => t(dir.write_tag(Tag::GdalNodata, "nan"))?,
            TiffSample::F32 => {}
        }
        Ok(())
    }
}

/// Floating-point predictor (TIFF predictor 3) for one row: byte planes, most significant byte
/// first, then byte-wise horizontal differencing over the whole row.
fn float_predict_row(src: &[f32], dst: &mut [u8]) {
    let w = src.len();
    debug_assert_eq!(dst.len(), 4 * w);
    let (p0, rest) = dst.split_at_mut(w);
    let (p1, rest) = rest.split_at_mut(w);
    let (p2, p3) = rest.split_at_mut(w);
    for (i, h) in src.iter().enumerate() {
        let b = h.to_bits().to_be_bytes();
        p0[i] = b[0];
        p1[i] = b[1];
        p2[i] = b[2];
        p3[i] = b[3];
    }
    for j in (1..dst.len()).rev() {
        dst[j] = dst[j].wrapping_sub(dst[j - 1]);
    }
}

/// Horizontal predictor (TIFF predictor 2) for one row of u16 samples, in the file's
/// (= host) byte order.
fn horizontal_predict_row_u16(src: impl Iterator<Item = u16>, dst: &mut [u8]) {
    let mut prev = 0u16;
    for (v, out) in src.zip(dst.chunks_exact_mut(2)) {
        out.copy_from_slice(&v.wrapping_sub(prev).to_ne_bytes());
        prev = v;
    }
}

/// GeoKey variant A: user-defined model, PixelIsPoint, citation, metre linear/vertical units.
/// `citation_len` includes the terminating '|'.
fn geo_key_directory(citation_len: usize) -> Vec<u16> {
    vec![
        1,
        1,
        0,
        5, // version 1.1.0, five keys
        1024,
        0,
        1,
        32767, // GTModelTypeGeoKey = user-defined
        1025,
        0,
        1,
        2, // GTRasterTypeGeoKey = PixelIsPoint
        1026,
        34737,
        citation_len as u16,
        0, // GTCitationGeoKey → GeoAsciiParams[0..]
        3076,
        0,
        1,
        9001, // ProjLinearUnitsGeoKey = metre
        4099,
        0,
        1,
        9001, // VerticalUnitsGeoKey = metre
    ]
}

/// The citation as GeoAsciiParams content: printable ASCII only, '|' replaced, '|'-terminated,
/// at most a few hundred characters.
fn geo_citation(citation: &str) -> String {
    let mut s: String = citation
        .chars()
        .map(|c| match c {
            '|' => '/',
            ' '..='~' => c,
            _ => '?',
        })
        .take(1000)
        .collect();
    if s.is_empty() {
        s.push_str("trnbake local metres");
    }
    s.push('|');
    s
}

/// GDAL's band metadata XML (tag 42112), as GDAL itself writes it.
fn gdal_metadata(sample: TiffSample) -> String {
    let mut x = String::from("<GDALMetadata>\n");
    if let TiffSample::U16 { scale, offset } = sample {
        x.push_str(&format!(
            "  <Item name=\"OFFSET\" sample=\"0\" role=\"offset\">{}</Item>\n",
            fmt_f64(offset)
        ));
        x.push_str(&format!(
            "  <Item name=\"SCALE\" sample=\"0\" role=\"scale\">{}</Item>\n",
            fmt_f64(scale)
        ));
    }
    x.push_str("  <Item name=\"UNITTYPE\" sample=\"0\" role=\"unittype\">m</Item>\n");
    x.push_str("</GDALMetadata>");
    x
}

/// Shortest round-trip decimal (Rust's `{:?}` uses exponent notation for very small/large
/// values, which GDAL's `CPLAtof` reads).
fn fmt_f64(v: f64) -> String {
    format!("{v:?}")
}

fn to_u32(v: &[u64]) -> io::Result<Vec<u32>> {
    v.iter()
        .map(|&x| {
            u32::try_from(x).map_err(|_| {
                io::Error::other("file passed 4 GiB; classic TIFF cannot address it (use BigTIFF)")
            })
        })
        .collect()
}

fn tiff_err(e: tiff::TiffError) -> io::Error {
    match e {
        tiff::TiffError::IoError(e) => e,
        e => io::Error::other(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inverse of [`float_predict_row`] (what libtiff's `fpAcc` does).
    fn float_unpredict_row(src: &mut [u8]) -> Vec<f32> {
        for j in 1..src.len() {
            src[j] = src[j].wrapping_add(src[j - 1]);
        }
        let w = src.len() / 4;
        (0..w)
            .map(|i| {
                f32::from_bits(u32::from_be_bytes([
                    src[i],
                    src[w + i],
                    src[2 * w + i],
                    src[3 * w + i],
                ]))
            })
            .collect()
    }

    #[test]
    fn float_predictor_round_trips() {
        let row: Vec<f32> = (0..37)
            .map(|i| (i as f32 * 0.37).sin() * 1000.0 - 12.5)
            .collect();
        let mut buf = vec![0; row.len() * 4];
        float_predict_row(&row, &mut buf);
        assert_eq!(float_unpredict_row(&mut buf), row);
    }

    #[test]
    fn horizontal_predictor_wraps() {
        let mut buf = vec![0; 6];
        horizontal_predict_row_u16([10u16, 5, 65534].into_iter(), &mut buf);
        let d: Vec<u16> = buf
            .chunks(2)
            .map(|c| u16::from_ne_bytes([c[0], c[1]]))
            .collect();
        assert_eq!(d, vec![10, 65531, 65529]);
    }

    #[test]
    fn citation_is_sanitised() {
        assert_eq!(
            geo_citation("SWG tatooine local metres"),
            "SWG tatooine local metres|"
        );
        assert_eq!(geo_citation("a|b\u{e9}\n"), "a/b??|");
        assert_eq!(geo_citation(""), "trnbake local metres|");
        let keys = geo_key_directory(29);
        assert_eq!(keys.len(), 4 + 4 * 5);
        assert_eq!(&keys[12..16], &[1026, 34737, 29, 0]);
    }

    #[test]
    fn bigtiff_choice_by_size() {
        let g = |n: u32| Grid {
            cols: n,
            rows: n,
            x0: 0.0,
            z0: 0.0,
            spacing: 1.0,
        };
        assert!(!needs_bigtiff(&g(16385), 4, BigTiff::Auto));
        assert!(!needs_bigtiff(&g(32769), 2, BigTiff::Auto));
        assert!(needs_bigtiff(&g(32769), 4, BigTiff::Auto));
        assert!(needs_bigtiff(&g(3), 4, BigTiff::Always));
        assert!(!needs_bigtiff(&g(32769), 4, BigTiff::Never));
        // 2^31 × 2^31 × 4 bytes is 2^64: wrapped it would be 0 bytes and a classic TIFF.
        assert!(needs_bigtiff(&g(1 << 31), 4, BigTiff::Auto));
        assert!(needs_bigtiff(&g(u32::MAX), 8, BigTiff::Auto));
    }

    #[test]
    fn metadata_xml() {
        let x = gdal_metadata(TiffSample::U16 {
            scale: 0.5,
            offset: -10.0,
        });
        assert!(x.contains("<Item name=\"SCALE\" sample=\"0\" role=\"scale\">0.5</Item>"));
        assert!(x.contains("<Item name=\"OFFSET\" sample=\"0\" role=\"offset\">-10.0</Item>"));
        assert!(x.contains("role=\"unittype\">m</Item>"));
        assert_eq!(fmt_f64(1e-7), "1e-7");
    }
}
