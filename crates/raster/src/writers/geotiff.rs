//! GeoTIFF height export (`docs/src/spec/exports.md` §3), striped or Cloud-Optimized.
//!
//! Samples: Float32 metres, or UInt16 with GDAL scale/offset (65535 = nodata). Compression
//! ([`Compression`], `--compress`): Deflate (zlib, TIFF 8; the default), Zstandard (50000), LZW
//! (5) or none (1), with the predictor that fits the samples: floating-point (3) for Float32,
//! horizontal (2) for UInt16, none without compression. Georeferencing is GeoKey variant A
//! (user-defined model type 32767, `PixelIsPoint`, citation, metre linear and vertical units),
//! a tiepoint that puts raster (0,0) on the north-west post and a pixel scale of
//! (spacing, spacing, 0). GDAL reports this as origin (west_x − s/2, north_z + s/2), pixel size
//! (s, −s) and `AREA_OR_POINT=Point`.
//!
//! Two layouts ([`TiffLayout`]):
//! * **Striped** (default): strips of about 256 KiB, written as they are encoded, the IFD
//!   after the data (the bytes of earlier versions, which used the `tiff` crate's encoder;
//!   `tiff_ifd` holds a test that the structure is still byte for byte the crate's).
//! * **Cloud-Optimized GeoTIFF** (`--cog`): 512² tiles; overviews halving the grid until it
//!   fits one tile (a 2048² grid has three levels: 2048, 1024 and 512; a 2049² one four),
//!   averaged for heights and picked (nearest) for id maps ([`Resampling`]); the GDAL
//!   structural metadata ("ghost area": `LAYOUT=IFDS_BEFORE_DATA`, `BLOCK_ORDER=ROW_MAJOR`, a
//!   4-byte size leader and a 4-byte trailer around each tile); the IFDs of every level at the
//!   start; then the tiles from the smallest overview to full resolution, each level row-major;
//!   `STATISTICS_MINIMUM/MAXIMUM/MEAN/STDDEV/VALID_PERCENT` in the GDAL metadata (of the stored
//!   values: raw values for UInt16, as GDAL computes them).
//!
//! Both layouts are written streaming by a [`GeoTiffStreamWriter`], which takes rows north
//! first or south first, band by band, and holds one band of blocks per level: the
//! striped layout writes each batch of strips straight into the output (in arrival order;
//! TIFF does not mind strips out of order); the COG writes each level's tiles into a scratch
//! file beside the output as their band completes (the overviews are computed from the bands
//! on the way, never from the whole grid) and copies them into place behind the IFDs at the
//! end. A 16385² grid holds 33.5 MB of band at full resolution, 17 MB at the first overview, …
//! [`write_geotiff_from`] drives it from any [`HeightSource`]. Each band's blocks are encoded
//! in parallel on rayon.
//!
//! Deflate is `flate2` with its `zlib-rs` backend (about twice miniz_oxide's speed at level 6
//! here). trnbake writes level 2 ([`GeoTiffOptions::deflate_level`], zlib-rs `deflate_fast`):
//! on tatooine's planet at 2 m (first 2048 rows, float predictor, one core) it compresses
//! 84 MB/s of samples against 67 MB/s at level 3 and 52 MB/s at GDAL's default 6, for files
//! 0.9 % and 2 % larger; level 1 (`deflate_quick`) is 2.2× faster than 3 but 9 % larger. The
//! full planet bake's GeoTIFF is 166.5 MB at level 2 (165.0 MB at 3); every reader decodes
//! any level. Zstandard is the `zstd` crate (libzstd) at [`GeoTiffOptions::zstd_level`], LZW
//! is `weezl` with TIFF's early code-size switch.
//!
//! The file's byte order is the host's, so UInt16 samples are serialised with `to_ne_bytes`;
//! the float predictor's byte planes are most-significant first regardless of byte order, as
//! libtiff defines it.

use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::tiff_ifd::{header, header_ifd_field, header_len, Ifd, Value};
use crate::error::Result;
use crate::fsutil::{AtomicFile, ScratchFile};
use crate::{check_scale_offset, encode_u16, invalid, Grid, HeightSource, MemSource, RowOrder, WrittenFile, U16_MAX_DATA, U16_NODATA};
use trnbake_swg::rounding::round_clamped;

/// Whether to write BigTIFF (64-bit offsets).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum BigTiff {
    /// BigTIFF when the worst-case file size (uncompressed samples, the overviews of a COG,
    /// the compression's worst-case expansion and the directory) could pass 4 GiB; classic
    /// TIFF otherwise. The compressed size is unknown in advance, so this decides on the
    /// uncompressed size (GDAL's `IF_SAFER` idea): 16385² Float32 (1.07 GB) stays classic,
    /// 32769² Float32 (4.3 GB) is BigTIFF.
    #[default]
    Auto,
    Always,
    Never,
}

/// How GeoTIFF blocks are compressed (`--compress`); each with the predictor that fits the
/// samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    /// zlib Deflate (TIFF 8): what every TIFF reader decodes.
    #[default]
    Deflate,
    /// Zstandard (TIFF 50000): smaller and faster; GDAL ≥ 2.3, QGIS, rasterio read it, older
    /// libtiff builds may not.
    Zstd,
    /// LZW (TIFF 5): the oldest TIFF compression, for old readers.
    Lzw,
    /// Uncompressed: the fastest write, the largest file.
    None,
}

impl Compression {
    /// TIFF `Compression` tag value.
    pub fn tiff_code(self) -> u16 {
        match self {
            Compression::None => 1,
            Compression::Lzw => 5,
            Compression::Deflate => 8,
            Compression::Zstd => 50000,
        }
    }

    /// TIFF `Predictor` for these samples: floating point (3) for Float32, horizontal (2) for
    /// UInt16 and UInt8, none (1) without compression (libtiff applies one only with compression).
    pub fn predictor(self, sample: TiffSample) -> u16 {
        match (self, sample) {
            (Compression::None, _) => 1,
            (_, TiffSample::F32) => 3,
            (_, TiffSample::U16 { .. } | TiffSample::U8) => 2,
        }
    }

    /// The compressed size's worst case relative to the input, as `raw / divisor` extra bytes
    /// (Deflate: about 5 bytes a 64 KiB stored block; Zstandard: less; LZW: up to 12 bits a
    /// byte).
    fn worst_extra(self, raw: u64) -> u64 {
        match self {
            Compression::None => 0,
            Compression::Deflate => raw / 64,
            Compression::Zstd => raw / 128,
            Compression::Lzw => raw / 2,
        }
    }
}

/// Block layout of a GeoTIFF.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TiffLayout {
    /// Strips, the IFD after the data.
    #[default]
    Striped,
    /// Cloud-Optimized GeoTIFF: 512² tiles, overviews, IFDs first (see the module docs).
    Cog,
}

/// How a COG's overviews are computed from the level above.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Resampling {
    /// The mean of the finite values of each 2×2 block (heights).
    #[default]
    Average,
    /// The north-west post of each 2×2 block (ids, classes: a mean of ids means nothing).
    Nearest,
}

/// Tile side of a COG, in samples (GDAL's COG default).
pub const COG_TILE: u32 = 512;

/// How a GeoTIFF is written; [`write_geotiff_f32`] and [`write_geotiff_u16`] use
/// [`GeoTiffOptions::default`] (striped, Deflate).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GeoTiffOptions {
    pub bigtiff: BigTiff,
    pub layout: TiffLayout,
    pub compression: Compression,
    /// zlib level 1..=9 for Deflate. Default 2 (GDAL's default `ZLEVEL` is 6; see the module
    /// notes).
    pub deflate_level: u32,
    /// Zstandard level 1..=22. Default 3, zstd's own default (GDAL's `ZSTD_LEVEL` default is
    /// 9, slower to write; any level decodes at the same speed).
    pub zstd_level: i32,
    /// Target uncompressed bytes per strip (at least one row per strip; striped layout).
    /// Default 256 KiB: small enough to spread a 1025² grid over both cores, large enough
    /// that the per-strip compressor restart costs nothing measurable.
    pub strip_bytes: usize,
    /// How a COG's overviews are computed; [`GeoTiffOptions::for_ids`] sets `Nearest`.
    pub overview_resampling: Resampling,
    /// The band's unit (GDAL's `UNITTYPE`, "Unit Type" in `gdalinfo`) and the vertical unit
    /// GeoKey: `Some("m")` for heights (the default), `None` for ids and classes, which have
    /// no unit ([`GeoTiffOptions::for_ids`]). Not serialised: an option set records the
    /// heights' choice, and the id maps drop the unit as they are written.
    #[serde(skip, default = "metres")]
    pub unit: Option<&'static str>,
}

/// The unit of heights, for [`GeoTiffOptions::unit`].
fn metres() -> Option<&'static str> {
    Some("m")
}

impl Default for GeoTiffOptions {
    fn default() -> Self {
        Self {
            bigtiff: BigTiff::Auto,
            layout: TiffLayout::Striped,
            compression: Compression::Deflate,
            deflate_level: 2,
            zstd_level: 3,
            strip_bytes: 256 * 1024,
            overview_resampling: Resampling::Average,
            unit: Some("m"),
        }
    }
}

impl GeoTiffOptions {
    /// The same options for a map of ids or classes (`shader_id.tif`, `env_id.tif`, …): the
    /// overviews pick a value instead of averaging, and the band has no unit (an id is not in
    /// metres). Name the ids with [`write_category_names`](super::categories::write_category_names).
    pub fn for_ids(self) -> Self {
        Self { overview_resampling: Resampling::Nearest, unit: None, ..self }
    }

    fn check(&self) -> io::Result<()> {
        if !(1..=9).contains(&self.deflate_level) {
            return Err(invalid(format!("deflate level must be 1..=9, got {}", self.deflate_level)));
        }
        if !(1..=22).contains(&self.zstd_level) {
            return Err(invalid(format!("zstd level must be 1..=22, got {}", self.zstd_level)));
        }
        Ok(())
    }
}

/// Sample encoding of a GeoTIFF.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TiffSample {
    /// Float32 metres.
    F32,
    /// UInt16, `h = raw · scale + offset`, raw 65535 = nodata.
    U16 { scale: f64, offset: f64 },
    /// UInt8 codes or classes (`spawnable.tif`): each value rounded to 0..=255 (NaN → 0), no
    /// scale, no nodata.
    U8,
}

impl TiffSample {
    fn bytes(self) -> usize {
        match self {
            TiffSample::F32 => 4,
            TiffSample::U16 { .. } => 2,
            TiffSample::U8 => 1,
        }
    }

    fn format_name(self) -> &'static str {
        match self {
            TiffSample::F32 => "geotiff-f32",
            TiffSample::U16 { .. } => "geotiff-u16",
            TiffSample::U8 => "geotiff-u8",
        }
    }
}

/// Write Float32 heights (metres) as a GeoTIFF: Deflate + floating-point predictor, no nodata
/// unless the heights contain NaN (then `GDAL_NODATA` = `nan`).
pub fn write_geotiff_f32(path: &Path, grid: &Grid, heights: &[f32], citation: &str) -> Result<WrittenFile> {
    write_geotiff_f32_with(path, grid, heights, citation, &GeoTiffOptions::default())
}

/// [`write_geotiff_f32`] with explicit options.
pub fn write_geotiff_f32_with(path: &Path, grid: &Grid, heights: &[f32], citation: &str, opts: &GeoTiffOptions) -> Result<WrittenFile> {
    let src = MemSource::south_first(*grid, heights)?;
    write_geotiff_from(path, &src, citation, TiffSample::F32, opts)
}

/// Write heights as UInt16 GeoTIFF: `raw = round((h − offset) / scale)` clamped to
/// `0..=65534`, NaN → 65535. `GDAL_METADATA` carries SCALE/OFFSET/UNITTYPE (so GDAL readers see
/// metres after unscaling) and `GDAL_NODATA` is 65535. Deflate + horizontal predictor.
pub fn write_geotiff_u16(path: &Path, grid: &Grid, heights: &[f32], citation: &str, scale: f64, offset: f64) -> Result<WrittenFile> {
    write_geotiff_u16_with(path, grid, heights, citation, scale, offset, &GeoTiffOptions::default())
}

/// [`write_geotiff_u16`] with explicit options (for an id map, `&opts.for_ids()`).
pub fn write_geotiff_u16_with(
    path: &Path,
    grid: &Grid,
    heights: &[f32],
    citation: &str,
    scale: f64,
    offset: f64,
    opts: &GeoTiffOptions,
) -> Result<WrittenFile> {
    let src = MemSource::south_first(*grid, heights)?;
    write_geotiff_from(path, &src, citation, TiffSample::U16 { scale, offset }, opts)
}

/// Whether `bigtiff` resolves to BigTIFF for this grid and sample size (striped, Deflate).
pub fn needs_bigtiff(grid: &Grid, sample_bytes: usize, bigtiff: BigTiff) -> bool {
    let opts = GeoTiffOptions { bigtiff, ..Default::default() };
    needs_bigtiff_with(grid, sample_bytes, &opts)
}

/// Whether `opts.bigtiff` resolves to BigTIFF for this grid, sample size, layout and
/// compression.
pub fn needs_bigtiff_with(grid: &Grid, sample_bytes: usize, opts: &GeoTiffOptions) -> bool {
    match opts.bigtiff {
        BigTiff::Always => true,
        BigTiff::Never => false,
        BigTiff::Auto => {
            // Saturating: a 2^31 × 2^31 × 4 grid (2^64 bytes) must not wrap to "small".
            let (cols, rows) = match opts.layout {
                TiffLayout::Striped => (u64::from(grid.cols), u64::from(grid.rows)),
                // Whole tiles; the overviews add a third at most (1/4 + 1/16 + …).
                TiffLayout::Cog => {
                    let t = u64::from(COG_TILE);
                    (u64::from(grid.cols).div_ceil(t) * t, u64::from(grid.rows).div_ceil(t) * t)
                }
            };
            let mut raw = cols.saturating_mul(rows).saturating_mul(sample_bytes as u64);
            if opts.layout == TiffLayout::Cog {
                raw = raw.saturating_add(raw / 3);
            }
            // 16 MiB covers the directories and block tables.
            raw.saturating_add(opts.compression.worst_extra(raw)).saturating_add(16 << 20) > u64::from(u32::MAX)
        }
    }
}

/// Write a GeoTIFF from any [`HeightSource`], streaming (the general form of
/// [`write_geotiff_f32`] and [`write_geotiff_u16`]): rows are read north first, a band of
/// blocks at a time, after [`HeightSource::wait_rows`] says they are there.
pub fn write_geotiff_from(path: &Path, src: &dyn HeightSource, citation: &str, sample: TiffSample, opts: &GeoTiffOptions) -> Result<WrittenFile> {
    let grid = src.grid();
    let mut w = GeoTiffStreamWriter::create(path, &grid, citation, sample, opts, RowOrder::NorthFirst)?;
    let cols = grid.cols as usize;
    // Chunks of about 8 MiB of f32 (whole bands of the writer when they are smaller).
    let chunk = (w.band_rows() as usize).min(((8 << 20) / (cols * 4)).max(1)) as u32;
    let mut buf = Vec::new();
    let mut done = 0u32; // rows from the north edge
    while done < grid.rows {
        let n = chunk.min(grid.rows - done);
        let r0 = grid.rows - done - n; // south-first index of the chunk's southern row
        src.wait_rows(r0, n)?;
        buf.resize(cols * n as usize, 0.0);
        src.read_rows(r0, n, &mut buf)?;
        for row in buf.chunks_exact(cols).rev() {
            w.push_row(row)?;
        }
        done += n;
    }
    w.finish()
}

/// A GeoTIFF written streaming: rows in, a band of blocks at a time, north first or south
/// first (as chosen at [`GeoTiffStreamWriter::create`]); [`GeoTiffStreamWriter::finish`]
/// writes the directories and renames the file into place. Memory: one band of blocks per
/// level (see the module docs). Dropped unfinished, it leaves no file behind.
///
/// ```
/// use trnbake_raster::writers::geotiff::{GeoTiffOptions, GeoTiffStreamWriter, TiffLayout, TiffSample};
/// use trnbake_raster::{Grid, RowOrder};
///
/// let dir = std::env::temp_dir().join(format!("trnbake-stream-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let grid = Grid { cols: 600, rows: 700, x0: 0.0, z0: 0.0, spacing: 1.0 };
/// let opts = GeoTiffOptions { layout: TiffLayout::Cog, ..Default::default() }.for_ids();
/// let mut w = GeoTiffStreamWriter::create(&dir.join("ids.tif"), &grid, "doc local metres",
///     TiffSample::U16 { scale: 1.0, offset: 0.0 }, &opts, RowOrder::SouthFirst)?;
/// for band in 0..7 {
///     // A producer's band of 100 rows, south row first.
///     let rows = vec![band as f32; 600 * 100];
///     w.push_rows(&rows)?;
/// }
/// let written = w.finish()?;
/// assert_eq!(written.format, "geotiff-u16");
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct GeoTiffStreamWriter {
    path: PathBuf,
    grid: Grid,
    citation: String,
    sample: TiffSample,
    opts: GeoTiffOptions,
    big: bool,
    order: RowOrder,
    /// Rows pushed so far.
    received: u32,
    levels: Vec<Level>,
    /// Taken by `finish`.
    sink: Option<Sink>,
    /// Of the full-resolution samples (COG only).
    stats: Option<Stats>,
    has_nan: bool,
}

/// Where encoded blocks go.
enum Sink {
    /// Striped: straight into the output, after its header.
    File { out: AtomicFile, pos: u64 },
    /// COG: every level's tiles into a scratch file, copied into place by `finish`.
    Scratch(ScratchFile),
}

impl Sink {
    fn append(&mut self, bytes: &[u8]) -> io::Result<u64> {
        match self {
            Sink::File { out, pos } => {
                let at = *pos;
                out.writer().write_all(bytes)?;
                *pos += bytes.len() as u64;
                Ok(at)
            }
            Sink::Scratch(s) => s.append(bytes),
        }
    }
}

/// One resolution level: its size, block shape, the band being filled and where its blocks
/// went.
struct Level {
    cols: u32,
    rows: u32,
    /// A tile (COG), or a strip: all columns × rows per strip.
    block_w: u32,
    block_h: u32,
    /// Whether blocks are padded to whole `block_w × block_h` (tiles are; strips are not).
    padded: bool,
    /// Rows encoded together: a multiple of `block_h`.
    band_h: u32,
    /// The current band's rows, north row first.
    band: Vec<f32>,
    filled: u32,
    /// (position in the sink, byte count) of each block, row-major.
    blocks: Vec<(u64, u64)>,
}

impl Level {
    fn new(cols: u32, rows: u32, block_w: u32, block_h: u32, padded: bool, band_h: u32) -> Self {
        let n = cols.div_ceil(block_w) as usize * rows.div_ceil(block_h) as usize;
        Self { cols, rows, block_w, block_h, padded, band_h, band: Vec::new(), filled: 0, blocks: vec![(0, 0); n] }
    }

    /// North-first rows `[start, end)` of band `b`.
    fn band_rows(&self, b: u32) -> (u32, u32) {
        let start = b * self.band_h;
        (start, (start + self.band_h).min(self.rows))
    }
}

impl GeoTiffStreamWriter {
    /// Starts `path` (written under a temporary name until [`GeoTiffStreamWriter::finish`]);
    /// rows will come in `order`.
    pub fn create(path: &Path, grid: &Grid, citation: &str, sample: TiffSample, opts: &GeoTiffOptions, order: RowOrder) -> Result<Self> {
        grid.check_dims()?;
        if let TiffSample::U16 { scale, offset } = sample {
            check_scale_offset(scale, offset)?;
        }
        opts.check()?;
        let big = needs_bigtiff_with(grid, sample.bytes(), opts);
        let (levels, sink) = match opts.layout {
            TiffLayout::Striped => {
                let row_bytes = grid.cols as usize * sample.bytes();
                let rps = ((opts.strip_bytes / row_bytes.max(1)).max(1) as u64).min(u64::from(grid.rows)) as u32;
                // Strips encoded together: enough to keep every worker busy, few enough that
                // a band stays at a few MiB.
                let batch = (rayon::current_num_threads() * 4).max(1) as u32;
                let band_h = rps.saturating_mul(batch).min(grid.rows.div_ceil(rps) * rps);
                let level = Level::new(grid.cols, grid.rows, grid.cols, rps, false, band_h);
                let mut out = AtomicFile::create(path)?;
                out.writer().write_all(&header(big, 0))?;
                (vec![level], Sink::File { out, pos: header_len(big) })
            }
            TiffLayout::Cog => {
                let mut levels = vec![Level::new(grid.cols, grid.rows, COG_TILE, COG_TILE, true, COG_TILE)];
                let (mut c, mut r) = (grid.cols, grid.rows);
                while c > COG_TILE || r > COG_TILE {
                    (c, r) = (c.div_ceil(2), r.div_ceil(2));
                    levels.push(Level::new(c, r, COG_TILE, COG_TILE, true, COG_TILE));
                }
                (levels, Sink::Scratch(ScratchFile::create(path, "tiles")?))
            }
        };
        Ok(Self {
            path: path.to_path_buf(),
            grid: *grid,
            citation: citation.to_string(),
            sample,
            opts: *opts,
            big,
            order,
            received: 0,
            levels,
            sink: Some(sink),
            stats: (opts.layout == TiffLayout::Cog).then(Stats::default),
            has_nan: false,
        })
    }

    /// Rows the writer encodes together at full resolution (a producer that pushes bands of
    /// this height, aligned from the north edge, keeps no more than one band in flight).
    pub fn band_rows(&self) -> u32 {
        self.levels[0].band_h
    }

    /// Whole rows (`cols` samples each) in the order chosen at creation; any number of rows
    /// a call.
    pub fn push_rows(&mut self, rows: &[f32]) -> Result<()> {
        let cols = self.grid.cols as usize;
        if !rows.len().is_multiple_of(cols) {
            return Err(invalid(format!("{} samples are not whole rows of {cols}", rows.len())).into());
        }
        for row in rows.chunks_exact(cols) {
            self.push_row(row)?;
        }
        Ok(())
    }

    /// One row (`cols` samples), the next in the order chosen at creation.
    pub fn push_row(&mut self, row: &[f32]) -> Result<()> {
        if row.len() != self.grid.cols as usize {
            return Err(invalid(format!("a row of {} samples for a grid {} wide", row.len(), self.grid.cols)).into());
        }
        if self.received >= self.grid.rows {
            return Err(invalid(format!("more than the grid's {} rows", self.grid.rows)).into());
        }
        let r = match self.order {
            RowOrder::NorthFirst => self.received,
            RowOrder::SouthFirst => self.grid.rows - 1 - self.received,
        };
        self.received += 1;
        if let Some(s) = &mut self.stats {
            s.add_row(row, self.sample);
        }
        if self.sample == TiffSample::F32 {
            self.has_nan |= row.iter().any(|h| h.is_nan());
        }
        self.put(0, r, row)
    }

    /// Row `r` (north-first index) of level `k`; encodes the band when it is complete.
    fn put(&mut self, k: usize, r: u32, row: &[f32]) -> Result<()> {
        let lvl = &mut self.levels[k];
        let b = r / lvl.band_h;
        let (start, end) = lvl.band_rows(b);
        let cols = lvl.cols as usize;
        if lvl.band.len() < lvl.band_h as usize * cols {
            lvl.band.resize(lvl.band_h as usize * cols, 0.0);
        }
        let i = (r - start) as usize;
        lvl.band[i * cols..(i + 1) * cols].copy_from_slice(row);
        lvl.filled += 1;
        if lvl.filled == end - start {
            lvl.filled = 0;
            self.flush(k, b)?;
        }
        Ok(())
    }

    /// Encodes the blocks of level `k`'s complete band `b`, and hands its reduction to the
    /// next level.
    fn flush(&mut self, k: usize, b: u32) -> Result<()> {
        let lvl = &self.levels[k];
        let (start, end) = lvl.band_rows(b);
        let cols = lvl.cols as usize;
        let band = &lvl.band[..(end - start) as usize * cols];
        let across = lvl.cols.div_ceil(lvl.block_w);
        let (by0, by1) = (start / lvl.block_h, end.div_ceil(lvl.block_h));
        let ids: Vec<(u32, u32)> = (by0..by1).flat_map(|by| (0..across).map(move |bx| (bx, by))).collect();
        let (sample, opts) = (self.sample, &self.opts);
        let encoded: Vec<Vec<u8>> = ids
            .par_iter()
            .map_init(Vec::new, |scratch, &(bx, by)| {
                let c0 = bx * lvl.block_w;
                let w = lvl.block_w.min(lvl.cols - c0);
                let r0 = by * lvl.block_h;
                let h = lvl.block_h.min(lvl.rows - r0);
                let (pw, ph) = if lvl.padded { (lvl.block_w, lvl.block_h) } else { (w, h) };
                let rows = (0..ph).map(|i| (i < h).then(|| &band[(r0 - start + i) as usize * cols + c0 as usize..][..w as usize]));
                encode_block(rows, pw as usize, sample, opts, scratch)
            })
            .collect::<io::Result<_>>()?;
        let reduced = (k + 1 < self.levels.len()).then(|| reduce(band, lvl.cols, end - start, self.opts.overview_resampling));
        for (&(bx, by), data) in ids.iter().zip(&encoded) {
            let at = self.sink.as_mut().expect("written until finish").append(data)?;
            self.levels[k].blocks[(by * across + bx) as usize] = (at, data.len() as u64);
        }
        if let Some((next, next_cols)) = reduced {
            let rows: Vec<(u32, &[f32])> = next.chunks_exact(next_cols as usize).enumerate().map(|(i, row)| (start / 2 + i as u32, row)).collect();
            let feed = |this: &mut Self, (r, row): (u32, &[f32])| this.put(k + 1, r, row);
            match self.order {
                RowOrder::NorthFirst => rows.into_iter().try_for_each(|x| feed(self, x))?,
                RowOrder::SouthFirst => rows.into_iter().rev().try_for_each(|x| feed(self, x))?,
            }
        }
        Ok(())
    }

    /// Writes the directories (and, for a COG, copies the tiles into place) and renames the
    /// file onto its name.
    pub fn finish(mut self) -> Result<WrittenFile> {
        if self.received != self.grid.rows {
            return Err(invalid(format!("{}: {} of {} rows were written", self.path.display(), self.received, self.grid.rows)).into());
        }
        for lvl in &mut self.levels {
            lvl.band = Vec::new();
        }
        match self.sink.take().expect("finished once") {
            Sink::File { mut out, pos } => {
                let ifd = self.main_ifd()?;
                let (bytes, dir_at) = ifd.encode_values_first(pos, self.big);
                let w = out.writer();
                w.write_all(&bytes)?;
                w.seek(SeekFrom::Start(header_ifd_field(self.big)))?;
                let field = header(self.big, dir_at);
                w.write_all(&field[header_ifd_field(self.big) as usize..])?;
                out.commit(true)?;
            }
            Sink::Scratch(scratch) => self.write_cog(scratch)?,
        }
        let mut wf = WrittenFile::of_file(&self.path, self.sample.format_name())?;
        if let TiffSample::U16 { scale, offset } = self.sample {
            wf.height_scale = Some(scale);
            wf.height_offset = Some(offset);
            wf.height_range = Some([offset, offset + f64::from(U16_MAX_DATA) * scale]);
        }
        wf.grid = Some(self.grid);
        wf.row_order = Some(RowOrder::NorthFirst);
        Ok(wf)
    }

    /// The tags of the full-resolution image (in the order the striped layout has always
    /// written them), with its block offsets as they are in the sink.
    fn main_ifd(&self) -> io::Result<Ifd> {
        let g = &self.grid;
        let (bits, sample_format) = match self.sample {
            TiffSample::F32 => (32u16, 3u16),
            TiffSample::U16 { .. } => (16, 1),
            TiffSample::U8 => (8, 1),
        };
        let mut ifd = Ifd::default();
        ifd.push(256, Value::Long(vec![g.cols])); // ImageWidth
        ifd.push(257, Value::Long(vec![g.rows])); // ImageLength
        ifd.push(258, Value::Short(vec![bits]));
        ifd.push(259, Value::Short(vec![self.opts.compression.tiff_code()]));
        ifd.push(262, Value::Short(vec![1])); // BlackIsZero
        ifd.push(277, Value::Short(vec![1])); // SamplesPerPixel
        self.push_blocks(&mut ifd, 0)?;
        ifd.push(284, Value::Short(vec![1])); // PlanarConfiguration: contiguous
        ifd.push(305, Value::Ascii(concat!("trnbake ", env!("CARGO_PKG_VERSION")).to_string()));
        ifd.push(317, Value::Short(vec![self.opts.compression.predictor(self.sample)]));
        ifd.push(339, Value::Short(vec![sample_format]));
        // Georeferencing, spec §3.1–3.3 (PixelIsPoint: raster (0,0) is the north-west post).
        ifd.push(33550, Value::Double(vec![g.spacing, g.spacing, 0.0])); // ModelPixelScale
        ifd.push(33922, Value::Double(vec![0.0, 0.0, 0.0, g.x0, g.north_z(), 0.0])); // ModelTiepoint
        let citation = geo_citation(&self.citation);
        ifd.push(34735, Value::Short(geo_key_directory(citation.len(), self.opts.unit.is_some())));
        ifd.push(34737, Value::Ascii(citation));
        let stats = self.stats.as_ref().and_then(Stats::summary);
        ifd.push(42112, Value::Ascii(gdal_metadata(self.sample, stats.as_ref(), self.opts.unit)));
        if let Some(nd) = self.nodata() {
            ifd.push(42113, Value::Ascii(nd.into()));
        }
        Ok(ifd)
    }

    /// `GDAL_NODATA`: 65535 for UInt16, `nan` for Float32 holding NaN, none for UInt8.
    fn nodata(&self) -> Option<&'static str> {
        match self.sample {
            TiffSample::U16 { .. } => Some("65535"),
            TiffSample::F32 if self.has_nan => Some("nan"),
            TiffSample::F32 | TiffSample::U8 => None,
        }
    }

    /// The block tags of level `k`: strips (RowsPerStrip, StripOffsets, StripByteCounts) or
    /// tiles (TileWidth, TileLength, TileOffsets, TileByteCounts).
    fn push_blocks(&self, ifd: &mut Ifd, k: usize) -> io::Result<()> {
        let lvl = &self.levels[k];
        let offsets: Vec<u64> = lvl.blocks.iter().map(|b| b.0).collect();
        let counts: Vec<u64> = lvl.blocks.iter().map(|b| b.1).collect();
        match self.opts.layout {
            TiffLayout::Striped => {
                ifd.push(278, Value::Long(vec![lvl.block_h])); // RowsPerStrip
                ifd.push(273, Value::offsets(&offsets, self.big)?);
                ifd.push(279, Value::offsets(&counts, self.big)?);
            }
            TiffLayout::Cog => {
                // Offsets in the scratch file here; `write_cog` sets the final ones.
                ifd.push(322, Value::Long(vec![lvl.block_w])); // TileWidth
                ifd.push(323, Value::Long(vec![lvl.block_h])); // TileLength
                ifd.push(324, Value::offsets(&offsets, self.big)?);
                ifd.push(325, Value::offsets(&counts, self.big)?);
            }
        }
        Ok(())
    }

    /// The IFD of overview level `k` ≥ 1: a reduced-resolution image of the same samples.
    fn overview_ifd(&self, k: usize) -> io::Result<Ifd> {
        let main = self.main_ifd()?;
        let lvl = &self.levels[k];
        let mut ifd = Ifd::default();
        ifd.push(254, Value::Long(vec![1])); // NewSubfileType: reduced resolution
        ifd.push(256, Value::Long(vec![lvl.cols]));
        ifd.push(257, Value::Long(vec![lvl.rows]));
        for tag in [258, 259, 262, 277, 284, 317, 339, 42113] {
            if let Some(v) = main.get(tag) {
                ifd.push(tag, v.clone());
            }
        }
        self.push_blocks(&mut ifd, k)?;
        Ok(ifd)
    }

    /// The COG: header, ghost area, every level's IFD, then the tiles from the smallest
    /// overview to full resolution, each with GDAL's size leader and trailer.
    fn write_cog(&self, mut scratch: ScratchFile) -> Result<()> {
        let big = self.big;
        let ghost = ghost_area();
        let mut ifds: Vec<Ifd> = (0..self.levels.len()).map(|k| if k == 0 { self.main_ifd() } else { self.overview_ifd(k) }).collect::<io::Result<_>>()?;
        let mut ifd_at = Vec::with_capacity(ifds.len());
        let mut pos = header_len(big) + ghost.len() as u64;
        for ifd in &ifds {
            ifd_at.push(pos);
            pos += ifd.dir_first_len(big);
        }
        // Tile positions in the file: smallest level first, row-major, each between a 4-byte
        // leader and a 4-byte trailer.
        let mut placed: Vec<Vec<u64>> = self.levels.iter().map(|l| vec![0; l.blocks.len()]).collect();
        for (k, lvl) in self.levels.iter().enumerate().rev() {
            for (i, &(_, len)) in lvl.blocks.iter().enumerate() {
                placed[k][i] = pos + 4;
                pos += 4 + len.max(4) + 4;
            }
        }
        for (k, ifd) in ifds.iter_mut().enumerate() {
            ifd.set(324, Value::offsets(&placed[k], big)?);
        }
        let mut out = AtomicFile::create(&self.path)?;
        let w = out.writer();
        w.write_all(&header(big, ifd_at[0]))?;
        w.write_all(&ghost)?;
        for (k, ifd) in ifds.iter().enumerate() {
            w.write_all(&ifd.encode_dir_first(ifd_at[k], big, ifd_at.get(k + 1).copied().unwrap_or(0)))?;
        }
        let mut buf = Vec::new();
        for lvl in self.levels.iter().rev() {
            for &(at, len) in &lvl.blocks {
                buf.resize(len as usize, 0);
                scratch.read_at(at, &mut buf)?;
                let len = u32::try_from(len).map_err(|_| invalid("a tile of more than 4 GiB"))?;
                w.write_all(&len.to_le_bytes())?;
                w.write_all(&buf)?;
                // GDAL's trailer: the block's last 4 bytes again (a block shorter than 4
                // bytes is padded first; no encoder here makes one).
                buf.resize(buf.len().max(4), 0);
                if len < 4 {
                    w.write_all(&buf[len as usize..])?;
                }
                w.write_all(&buf[buf.len() - 4..])?;
            }
        }
        out.commit(true)?;
        Ok(())
    }
}

/// GDAL's structural metadata at the start of a COG (its "ghost area"), padded so that the
/// first IFD starts on a word boundary.
fn ghost_area() -> Vec<u8> {
    let body =
        "LAYOUT=IFDS_BEFORE_DATA\nBLOCK_ORDER=ROW_MAJOR\nBLOCK_LEADER=SIZE_AS_UINT4\nBLOCK_TRAILER=LAST_4_BYTES_REPEATED\nKNOWN_INCOMPATIBLE_EDITION=NO\n";
    let mut g = format!("GDAL_STRUCTURAL_METADATA_SIZE={:06} bytes\n{body}", body.len()).into_bytes();
    if g.len() % 2 == 1 {
        g.push(b' ');
    }
    g
}

/// One block: `rows` (`None` past the grid's edge: padding) of up to `width` samples each
/// (shorter rows are padded), predicted and compressed as `opts` says.
fn encode_block<'a>(
    rows: impl Iterator<Item = Option<&'a [f32]>>,
    width: usize,
    sample: TiffSample,
    opts: &GeoTiffOptions,
    scratch: &mut Vec<u8>,
) -> io::Result<Vec<u8>> {
    let row_bytes = width * sample.bytes();
    let predict = opts.compression != Compression::None;
    scratch.clear();
    let mut padded = vec![0.0f32; width];
    for row in rows {
        let src: &[f32] = match row {
            Some(r) if r.len() == width => r,
            Some(r) => {
                padded[..r.len()].copy_from_slice(r);
                padded[r.len()..].fill(0.0);
                &padded
            }
            None => {
                padded.fill(0.0);
                &padded
            }
        };
        let at = scratch.len();
        scratch.resize(at + row_bytes, 0);
        let dst = &mut scratch[at..];
        match sample {
            TiffSample::F32 if predict => float_predict_row(src, dst),
            TiffSample::F32 => {
                for (h, out) in src.iter().zip(dst.chunks_exact_mut(4)) {
                    out.copy_from_slice(&h.to_ne_bytes());
                }
            }
            TiffSample::U16 { scale, offset } => {
                let encode = |h: f32| encode_u16(h, scale, offset, U16_MAX_DATA, U16_NODATA);
                if predict {
                    horizontal_predict_row_u16(src, encode, dst);
                } else {
                    for (&h, out) in src.iter().zip(dst.chunks_exact_mut(2)) {
                        out.copy_from_slice(&encode(h).to_ne_bytes());
                    }
                }
            }
            TiffSample::U8 => {
                let mut prev = 0u8;
                for (&v, out) in src.iter().zip(dst.iter_mut()) {
                    let v = encode_u8(v);
                    *out = if predict { v.wrapping_sub(prev) } else { v };
                    prev = v;
                }
            }
        }
    }
    match opts.compression {
        Compression::None => Ok(std::mem::take(scratch)),
        Compression::Deflate => zlib_compress(scratch, opts.deflate_level),
        Compression::Zstd => zstd_compress(scratch, opts.zstd_level),
        Compression::Lzw => weezl::encode::Encoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8).encode(scratch).map_err(io::Error::other),
    }
}

/// A zlib stream of `data` at `level`. The encoder is kept per thread and reset between
/// blocks (zlib's `deflateReset`: the same bytes as a fresh one), since a fresh one allocates
/// and clears ~300 KB, as much as a block's data.
fn zlib_compress(data: &[u8], level: u32) -> io::Result<Vec<u8>> {
    use flate2::write::ZlibEncoder;
    use std::cell::RefCell;
    thread_local! {
        static ENCODER: RefCell<Option<(u32, ZlibEncoder<Vec<u8>>)>> = const { RefCell::new(None) };
    }
    // Taken out while in use: an encoder that failed midway is dropped, not reused.
    let kept = ENCODER.with_borrow_mut(Option::take).filter(|(l, _)| *l == level);
    let mut z = kept.map_or_else(|| ZlibEncoder::new(Vec::new(), flate2::Compression::new(level)), |(_, z)| z);
    z.get_mut().reserve(data.len() / 2 + 64);
    z.write_all(data)?;
    // Finishes the stream, returns its bytes and starts the next one (into an empty buffer).
    let out = z.reset(Vec::new())?;
    ENCODER.with_borrow_mut(|slot| *slot = Some((level, z)));
    Ok(out)
}

/// One Zstandard frame with its content checksum (XXH64), so a reader (trnbake's, libzstd's)
/// can tell a damaged tile from a good one. The compression context is kept per thread.
fn zstd_compress(data: &[u8], level: i32) -> io::Result<Vec<u8>> {
    use std::cell::RefCell;
    thread_local! {
        static CONTEXT: RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> = const { RefCell::new(None) };
    }
    CONTEXT.with(|slot| {
        let mut slot = slot.borrow_mut();
        if slot.as_ref().is_none_or(|(l, _)| *l != level) {
            let mut c = zstd::bulk::Compressor::new(level)?;
            c.set_parameter(zstd::stream::raw::CParameter::ChecksumFlag(true))?;
            *slot = Some((level, c));
        }
        let (_, c) = slot.as_mut().expect("set above");
        c.compress(data)
    })
}

/// The next overview level's rows from a band of `nrows` rows (`cols` wide) whose first row
/// has an even index: each output post from the 2×2 block at twice its index (clipped at the
/// edges). Returns the rows, north first, and their width.
fn reduce(band: &[f32], cols: u32, nrows: u32, how: Resampling) -> (Vec<f32>, u32) {
    let (oc, or) = (cols.div_ceil(2), nrows.div_ceil(2));
    let cols = cols as usize;
    let mut out = Vec::with_capacity(oc as usize * or as usize);
    for j in 0..or as usize {
        let r0 = &band[2 * j * cols..][..cols];
        let r1 = (2 * j + 1 < nrows as usize).then(|| &band[(2 * j + 1) * cols..][..cols]);
        for i in 0..oc as usize {
            out.push(match how {
                Resampling::Nearest => r0[2 * i],
                Resampling::Average => {
                    let mut sum = 0.0f64;
                    let mut n = 0u32;
                    for row in [Some(r0), r1].into_iter().flatten() {
                        for &v in &row[2 * i..(2 * i + 2).min(cols)] {
                            if v.is_finite() {
                                sum += f64::from(v);
                                n += 1;
                            }
                        }
                    }
                    if n == 0 {
                        f32::NAN
                    } else {
                        (sum / f64::from(n)) as f32
                    }
                }
            });
        }
    }
    (out, oc)
}

/// Running statistics of the stored values (the value GDAL sees: the height for Float32, the
/// raw value for UInt16), nodata excluded; merged row by row (Chan et al.), so the mean and
/// standard deviation stay exact to f64 rounding whatever the grid size.
#[derive(Clone, Debug, Default)]
struct Stats {
    n: u64,
    total: u64,
    mean: f64,
    m2: f64,
    min: f64,
    max: f64,
}

/// Minimum, maximum, mean, population standard deviation, valid percentage.
#[derive(Clone, Copy, Debug, PartialEq)]
struct StatsSummary {
    min: f64,
    max: f64,
    mean: f64,
    stddev: f64,
    valid_percent: f64,
}

impl Stats {
    fn add_row(&mut self, row: &[f32], sample: TiffSample) {
        self.total += row.len() as u64;
        let value = |h: f32| -> Option<f64> {
            match sample {
                TiffSample::F32 => h.is_finite().then_some(f64::from(h)),
                TiffSample::U16 { scale, offset } => {
                    let raw = encode_u16(h, scale, offset, U16_MAX_DATA, U16_NODATA);
                    (raw != U16_NODATA).then_some(f64::from(raw))
                }
                TiffSample::U8 => Some(f64::from(encode_u8(h))),
            }
        };
        // Each sample's value once (the UInt16 encoding is the costly part), for both passes.
        let values: Vec<f64> = row.iter().filter_map(|&h| value(h)).collect();
        let (mut n, mut sum, mut lo, mut hi) = (0u64, 0.0f64, f64::INFINITY, f64::NEG_INFINITY);
        for &v in &values {
            n += 1;
            sum += v;
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if n == 0 {
            return;
        }
        let mean = sum / n as f64;
        let m2: f64 = values.iter().map(|&v| (v - mean) * (v - mean)).sum();
        if self.n == 0 {
            (self.min, self.max) = (lo, hi);
        } else {
            self.min = self.min.min(lo);
            self.max = self.max.max(hi);
        }
        let (na, nb) = (self.n as f64, n as f64);
        let d = mean - self.mean;
        let nt = na + nb;
        self.mean += d * nb / nt;
        self.m2 += m2 + d * d * na * nb / nt;
        self.n += n;
    }

    fn summary(&self) -> Option<StatsSummary> {
        (self.n > 0).then(|| StatsSummary {
            min: self.min,
            max: self.max,
            mean: self.mean,
            stddev: (self.m2 / self.n as f64).sqrt(),
            valid_percent: 100.0 * self.n as f64 / self.total as f64,
        })
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
    difference_bytes(dst);
}

/// Byte-wise horizontal differencing in place: each byte less its original predecessor (the
/// first less 0). Written forwards with the predecessor carried, a loop LLVM vectorises (as a
/// first-order recurrence); the backward form with indices it kept scalar, with bounds checks.
fn difference_bytes(bytes: &mut [u8]) {
    let mut prev = 0u8;
    for b in bytes {
        let v = *b;
        *b = v.wrapping_sub(prev);
        prev = v;
    }
}

/// A UInt8 sample of `v`: rounded, clamped to 0..=255, NaN → 0.
fn encode_u8(v: f32) -> u8 {
    round_clamped(v, 255) as u8
}

/// Horizontal predictor (TIFF predictor 2) for one row of samples `src` encoded as u16 by
/// `encode`, in the file's (= host) byte order. A run of samples at a time is encoded into a
/// buffer and then differenced: two loops without a dependence between posts, where one loop
/// doing both carried the previous sample through the encoding and stayed scalar.
fn horizontal_predict_row_u16(src: &[f32], encode: impl Fn(f32) -> u16, dst: &mut [u8]) {
    const RUN: usize = 256;
    let mut raw = [0u16; RUN + 1];
    for (src, dst) in src.chunks(RUN).zip(dst.chunks_mut(2 * RUN)) {
        // raw[0] is the sample before the run (0 before the row's first).
        for (r, &h) in raw[1..].iter_mut().zip(src) {
            *r = encode(h);
        }
        for (out, pair) in dst.chunks_exact_mut(2).zip(raw.windows(2)) {
            out.copy_from_slice(&pair[1].wrapping_sub(pair[0]).to_ne_bytes());
        }
        raw[0] = raw[src.len()];
    }
}

/// GeoKey variant A: user-defined model, PixelIsPoint, citation, metre linear units, and
/// metre vertical units when the samples are heights (`vertical`). `citation_len` includes
/// the terminating '|'.
fn geo_key_directory(citation_len: usize, vertical: bool) -> Vec<u16> {
    let mut keys = vec![
        1,
        1,
        0,
        4 + u16::from(vertical), // version 1.1.0, four or five keys
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
    ];
    if vertical {
        keys.extend([4099, 0, 1, 9001]); // VerticalUnitsGeoKey = metre
    }
    keys
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

/// GDAL's band metadata XML (tag 42112), as GDAL itself writes it; with the statistics of a
/// COG.
fn gdal_metadata(sample: TiffSample, stats: Option<&StatsSummary>, unit: Option<&str>) -> String {
    let mut x = String::from("<GDALMetadata>\n");
    if let TiffSample::U16 { scale, offset } = sample {
        x.push_str(&format!("  <Item name=\"OFFSET\" sample=\"0\" role=\"offset\">{}</Item>\n", fmt_f64(offset)));
        x.push_str(&format!("  <Item name=\"SCALE\" sample=\"0\" role=\"scale\">{}</Item>\n", fmt_f64(scale)));
    }
    if let Some(s) = stats {
        for (name, v) in [("MAXIMUM", s.max), ("MEAN", s.mean), ("MINIMUM", s.min), ("STDDEV", s.stddev), ("VALID_PERCENT", s.valid_percent)] {
            x.push_str(&format!("  <Item name=\"STATISTICS_{name}\" sample=\"0\">{}</Item>\n", fmt_f64(v)));
        }
    }
    if let Some(unit) = unit {
        x.push_str(&format!("  <Item name=\"UNITTYPE\" sample=\"0\" role=\"unittype\">{}</Item>\n", super::vrt::xml_escape(unit)));
    }
    x.push_str("</GDALMetadata>");
    x
}

/// Shortest round-trip decimal (Rust's `{:?}` uses exponent notation for very small/large
/// values, which GDAL's `CPLAtof` reads).
fn fmt_f64(v: f64) -> String {
    format!("{v:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The encoder kept from the block before (reset) writes the bytes of a fresh one.
    #[test]
    fn a_kept_zlib_encoder_compresses_as_a_fresh_one() {
        let block = |seed: u32| -> Vec<u8> { (0..200_000u32).map(|i| ((i / 5) ^ (i.wrapping_mul(seed) >> 12)) as u8).collect() };
        for level in [1, 6, 6, 1] {
            let (first, second) = (block(2_654_435_761), block(40_503));
            zlib_compress(&first, level).unwrap();
            let kept = zlib_compress(&second, level).unwrap();
            let mut fresh = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(level));
            fresh.write_all(&second).unwrap();
            assert_eq!(kept, fresh.finish().unwrap(), "level {level}");
        }
    }

    /// Inverse of [`float_predict_row`] (what libtiff's `fpAcc` does).
    fn float_unpredict_row(src: &mut [u8]) -> Vec<f32> {
        for j in 1..src.len() {
            src[j] = src[j].wrapping_add(src[j - 1]);
        }
        let w = src.len() / 4;
        (0..w).map(|i| f32::from_bits(u32::from_be_bytes([src[i], src[w + i], src[2 * w + i], src[3 * w + i]]))).collect()
    }

    #[test]
    fn float_predictor_round_trips() {
        let row: Vec<f32> = (0..37).map(|i| (i as f32 * 0.37).sin() * 1000.0 - 12.5).collect();
        let mut buf = vec![0; row.len() * 4];
        float_predict_row(&row, &mut buf);
        assert_eq!(float_unpredict_row(&mut buf), row);
    }

    #[test]
    fn horizontal_predictor_wraps() {
        let mut buf = vec![0; 6];
        horizontal_predict_row_u16(&[10.0, 5.0, 65534.0], |h| h as u16, &mut buf);
        let d: Vec<u16> = buf.chunks(2).map(|c| u16::from_ne_bytes([c[0], c[1]])).collect();
        assert_eq!(d, vec![10, 65531, 65529]);
        // Across the runs the encoding works in: each sample less the one before, wrapping.
        let row: Vec<f32> = (0..1000).map(|i| ((i * 7919) % 65536) as f32).collect();
        let mut buf = vec![0; 2 * row.len()];
        horizontal_predict_row_u16(&row, |h| h as u16, &mut buf);
        let mut prev = 0u16;
        for (&h, c) in row.iter().zip(buf.chunks(2)) {
            assert_eq!(u16::from_ne_bytes([c[0], c[1]]), (h as u16).wrapping_sub(prev));
            prev = h as u16;
        }
    }

    #[test]
    fn byte_differencing_is_each_byte_less_its_original_predecessor() {
        let orig: Vec<u8> = (0..1000u32).map(|i| (i * i % 251) as u8).collect();
        let mut bytes = orig.clone();
        difference_bytes(&mut bytes);
        assert_eq!(bytes[0], orig[0]);
        for j in 1..orig.len() {
            assert_eq!(bytes[j], orig[j].wrapping_sub(orig[j - 1]), "byte {j}");
        }
    }

    #[test]
    fn citation_is_sanitised() {
        assert_eq!(geo_citation("SWG tatooine local metres"), "SWG tatooine local metres|");
        assert_eq!(geo_citation("a|b\u{e9}\n"), "a/b??|");
        assert_eq!(geo_citation(""), "trnbake local metres|");
        let keys = geo_key_directory(29, true);
        assert_eq!(keys.len(), 4 + 4 * 5);
        assert_eq!(&keys[12..16], &[1026, 34737, 29, 0]);
        // Ids and classes: no vertical unit.
        let keys = geo_key_directory(29, false);
        assert_eq!((keys.len(), keys[3]), (4 + 4 * 4, 4));
        assert!(!keys.contains(&4099));
    }

    #[test]
    fn bigtiff_choice_by_size() {
        let g = |n: u32| Grid { cols: n, rows: n, x0: 0.0, z0: 0.0, spacing: 1.0 };
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
        let x = gdal_metadata(TiffSample::U16 { scale: 0.5, offset: -10.0 }, None, Some("m"));
        assert!(!x.contains("STATISTICS"));
        assert!(x.contains("<Item name=\"SCALE\" sample=\"0\" role=\"scale\">0.5</Item>"));
        assert!(x.contains("<Item name=\"OFFSET\" sample=\"0\" role=\"offset\">-10.0</Item>"));
        assert!(x.contains("role=\"unittype\">m</Item>"));
        assert_eq!(fmt_f64(1e-7), "1e-7");
    }
}
