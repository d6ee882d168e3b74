//! trnbake-raster: height grids and their files.
//!
//! [`readers`] open any supported file as a [`HeightSource`]; [`writers`] write one (one module a
//! format, and [`writers::set`] for a set of formats, engine presets and tiles). Every reader
//! and writer reports failures as one [`Error`] type.
//!
//! # Example
//!
//! ```
//! use trnbake_raster::{readers, write_geotiff_f32, Grid, HeightSource};
//!
//! let dir = std::env::temp_dir().join(format!("trnbake-raster-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let grid = Grid { cols: 3, rows: 2, x0: -2.0, z0: -1.0, spacing: 2.0 };
//! let heights = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]; // row 0 = south
//! let written = write_geotiff_f32(&dir.join("h.tif"), &grid, &heights, "doc local metres")?;
//! assert_eq!(written.path, "h.tif");
//!
//! let back = readers::open(&dir.join("h.tif"), &Default::default())?;
//! let mut out = [0.0f32; 6];
//! back.source.read_block(0, 0, 3, 2, &mut out)?;
//! assert_eq!(out, heights);
//! assert_eq!(back.source.grid(), grid);
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Height exports and imports: GeoTIFF (Float32, or UInt16 with GDAL scale/offset), Terragen
//! `.ter`, 16-bit PNG, RAW/R16/R32, engine presets, tiles with a GDAL VRT mosaic.
//!
//! See `docs/src/spec/exports.md` §1, §3, §4 and §5. Conventions shared by every writer here:
//!
//! * The input is a [`HeightSource`] (or a slice wrapped in one) of height *posts* (samples at
//!   grid points, not texel centres) described by a [`Grid`], **row 0 = south** (as the
//!   evaluator produces them). Each writer streams it in blocks and writes its own row order:
//!   north row first for GeoTIFF, PNG and (by default) RAW; south row first for `.ter`.
//! * Files are written atomically (temp file beside the target, fsync, rename) through
//!   [`crate::fsutil::write_atomic_with`]; a failed write leaves neither the target nor a temp
//!   file behind.
//! * Each writer returns a [`WrittenFile`] (file name, size, SHA-256 of the bytes on disk, and
//!   the scale/offset needed to decode integer samples) for the bake manifest.
//!
//! Integer encodings use `raw = round((h − offset) / scale)` and decode with
//! `h = raw · scale + offset`; [`u16_scale_offset`] picks scale/offset for a height range.

use std::io::{self, Read, Write};
use std::path::Path;

use sha2::{Digest, Sha256};
use trnbake_swg::rounding::round_clamped_f64;

pub mod error;
pub mod fsutil;
pub mod limits;
pub mod readers;
pub mod source;
pub mod writers;

pub use error::{Error, Result};
pub use limits::Limits;
pub use source::{HeightSource, MemSource};
pub use trnbake_swg::grid::Grid;
pub use writers::geotiff::{write_geotiff_f32, write_geotiff_u16, GeoTiffOptions, GeoTiffStreamWriter};
pub use writers::png16::write_png16;

/// Row order of a file: which edge of the map its first row is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RowOrder {
    /// First row = north edge (images, GeoTIFF, PNG; RAW by default and for Unreal/Godot).
    NorthFirst,
    /// First row = south edge (`.ter`, spec §1.5; RAW for Unity, spec §4.2).
    SouthFirst,
}

/// What was written, for the manifest (and, read back, what `convert` needs to decode a file
/// that does not describe itself, such as RAW).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WrittenFile {
    /// File name only (no directory).
    pub path: String,
    /// Size of the file on disk.
    pub bytes: u64,
    /// SHA-256 of the file's bytes, lower-case hex.
    pub sha256: String,
    /// `"geotiff-f32"`, `"geotiff-u16"`, `"terragen"`, `"png16"`, `"r16"`, `"r32"`, `"vrt"`,
    /// `"world-file"` or `"aux-xml"` (an id GeoTIFF's category names).
    pub format: String,
    /// For integer encodings: metres per raw step (`h = raw · scale + offset`).
    pub height_scale: Option<f64>,
    /// For integer encodings: metres at raw 0.
    pub height_offset: Option<f64>,
    /// For integer encodings: the height range in metres the raw range was fitted to
    /// (`[min, max]` of the heights this encoding covers; PNG/RAW map it onto 0..=65535).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height_range: Option<[f64; 2]>,
    /// The posts this file holds (a tile's own grid for tiles; the resampled grid for presets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid: Option<Grid>,
    /// Which edge the first row of samples is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_order: Option<RowOrder>,
    /// `[x, y]` index of a tile in a tiled export (see the manifest's `tiles.origin`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tile: Option<[u32; 2]>,
    /// The CRS name of the heights (`SWG naboo local metres`): what a GeoTIFF or VRT states
    /// itself, kept here for the formats that cannot (`.ter`, PNG, RAW), so that `convert`
    /// carries it on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crs: Option<String>,
}

impl WrittenFile {
    /// The entry of a finished file: name, size and checksum, no encoding details yet.
    pub fn new(path: &Path, bytes: u64, sha256: String, format: &str) -> Self {
        Self {
            path: file_name_of(path),
            bytes,
            sha256,
            format: format.to_string(),
            height_scale: None,
            height_offset: None,
            height_range: None,
            grid: None,
            row_order: None,
            tile: None,
            crs: None,
        }
    }

    /// The entry of `path` as it is on disk now (size and SHA-256 read back).
    pub fn of_file(path: &Path, format: &str) -> io::Result<Self> {
        let (bytes, sha) = sha256_file(path)?;
        Ok(Self::new(path, bytes, sha, format))
    }
}

/// Largest raw value a UInt16 GeoTIFF may hold; 65535 is reserved as nodata.
pub const U16_MAX_DATA: u16 = 65534;
/// UInt16 GeoTIFF nodata value (also written for NaN heights).
pub const U16_NODATA: u16 = 65535;

/// Scale and offset that map `[min, max]` onto raw `0..=65534` (65535 stays free for nodata):
/// returns `(scale, offset)` with `offset = min`, `scale = (max − min) / 65534`.
///
/// Degenerate ranges: `min == max` (flat terrain) gives scale 1 (everything encodes as raw 0);
/// swapped bounds are reordered; a non-finite bound gives `(1.0, finite bound or 0)`.
pub fn u16_scale_offset(min: f32, max: f32) -> (f64, f64) {
    scale_offset_onto(min, max, U16_MAX_DATA)
}

/// Scale and offset that map `[min, max]` onto the full raw range `0..=65535`, the mapping of
/// 16-bit PNG and RAW heightmaps (spec §4.1–4.2: `v = round((h − min)/(max − min) · 65535)`;
/// engines normalise by 65535). Degenerate ranges as [`u16_scale_offset`].
pub fn u16_full_scale_offset(min: f32, max: f32) -> (f64, f64) {
    scale_offset_onto(min, max, u16::MAX)
}

fn scale_offset_onto(min: f32, max: f32, max_raw: u16) -> (f64, f64) {
    let (a, b) = (f64::from(min), f64::from(max));
    match (a.is_finite(), b.is_finite()) {
        (true, true) => {}
        (true, false) => return (1.0, a),
        (false, true) => return (1.0, b),
        (false, false) => return (1.0, 0.0),
    }
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    let span = hi - lo;
    let scale = span / f64::from(max_raw);
    if !(scale.is_normal() && scale > 0.0) {
        return (1.0, lo);
    }
    (scale, lo)
}

/// `round((h − offset) / scale)` clamped to `0..=max_raw`; NaN gives `nan_raw`.
#[inline]
pub fn encode_u16(h: f32, scale: f64, offset: f64, max_raw: u16, nan_raw: u16) -> u16 {
    if h.is_nan() {
        return nan_raw;
    }
    // Clamped to `max_raw`, which keeps the nodata value free; rounded without libm's
    // `round` call (a call a post on the x86-64 baseline).
    round_clamped_f64((f64::from(h) - offset) / scale, u32::from(max_raw)) as u16
}

pub(crate) fn check_scale_offset(scale: f64, offset: f64) -> io::Result<()> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(invalid(format!("height scale must be finite and > 0, got {scale}")));
    }
    if !offset.is_finite() {
        return Err(invalid(format!("height offset must be finite, got {offset}")));
    }
    Ok(())
}

pub(crate) fn invalid(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg.into())
}

pub(crate) fn file_name_of(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

pub fn hex(digest: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(digest.len() * 2);
    for b in digest {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Size and SHA-256 (hex) of a file, read back in 1 MiB chunks.
pub fn sha256_file(path: &Path) -> io::Result<(u64, String)> {
    let mut f = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        total += n as u64;
    }
    Ok((total, hex(&hasher.finalize())))
}

/// A `Write` adapter that hashes and counts everything passing through (for sequential formats).
pub(crate) struct HashingWriter<W: Write> {
    pub inner: W,
    pub hasher: Sha256,
    pub bytes: u64,
}

impl<W: Write> HashingWriter<W> {
    pub fn new(inner: W) -> Self {
        Self { inner, hasher: Sha256::new(), bytes: 0 }
    }
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Finite minimum and maximum of `heights` (NaN and ±inf ignored); `None` if there is none.
pub fn finite_min_max(heights: &[f32]) -> Option<(f32, f32)> {
    use rayon::prelude::*;
    let (lo, hi) = heights
        .par_chunks(1 << 16)
        .map(|c| {
            let mut lo = f32::INFINITY;
            let mut hi = f32::NEG_INFINITY;
            for &h in c {
                if h.is_finite() {
                    lo = lo.min(h);
                    hi = hi.max(h);
                }
            }
            (lo, hi)
        })
        .reduce(|| (f32::INFINITY, f32::NEG_INFINITY), |a, b| (a.0.min(b.0), a.1.max(b.1)));
    (lo <= hi).then_some((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_offset_maps_range_onto_0_65534() {
        let (s, o) = u16_scale_offset(-120.5, 873.25);
        assert_eq!(o, -120.5);
        assert_eq!(encode_u16(-120.5, s, o, U16_MAX_DATA, U16_NODATA), 0);
        assert_eq!(encode_u16(873.25, s, o, U16_MAX_DATA, U16_NODATA), 65534);
        assert_eq!(encode_u16(1e9, s, o, U16_MAX_DATA, U16_NODATA), 65534);
        assert_eq!(encode_u16(-1e9, s, o, U16_MAX_DATA, U16_NODATA), 0);
        assert_eq!(encode_u16(f32::NAN, s, o, U16_MAX_DATA, U16_NODATA), U16_NODATA);
        // Round trip within half a step.
        for i in 0..1000 {
            let h = -120.5 + (873.25 + 120.5) * i as f32 / 999.0;
            let raw = encode_u16(h, s, o, U16_MAX_DATA, U16_NODATA);
            assert!((f64::from(raw) * s + o - f64::from(h)).abs() <= s / 2.0 + 1e-9);
        }
    }

    #[test]
    fn scale_offset_degenerate() {
        assert_eq!(u16_scale_offset(5.0, 5.0), (1.0, 5.0));
        assert_eq!(u16_scale_offset(0.0, 0.0), (1.0, 0.0));
        let (s, o) = u16_scale_offset(10.0, -10.0);
        assert_eq!(o, -10.0);
        assert!((s - 20.0 / 65534.0).abs() < 1e-15);
        assert_eq!(u16_scale_offset(f32::NAN, 3.0), (1.0, 3.0));
        assert_eq!(u16_scale_offset(f32::NEG_INFINITY, f32::INFINITY), (1.0, 0.0));
        assert_eq!(encode_u16(5.0, 1.0, 5.0, U16_MAX_DATA, U16_NODATA), 0);
    }

    #[test]
    fn grid_checks() {
        let g = Grid { cols: 3, rows: 2, x0: -1.0, z0: -1.0, spacing: 1.0 };
        assert!(g.check(&[0.0; 6]).is_ok());
        assert!(g.check(&[0.0; 5]).is_err());
        assert_eq!(g.north_z(), 0.0);
        assert_eq!(g.east_x(), 1.0);
        let bad = Grid { spacing: 0.0, ..g };
        assert!(bad.check(&[0.0; 6]).is_err());
        let empty = Grid { cols: 0, ..g };
        assert!(empty.check(&[]).is_err());
    }

    #[test]
    fn min_max_ignores_nan() {
        assert_eq!(finite_min_max(&[f32::NAN, 2.0, -3.0, f32::INFINITY]), Some((-3.0, 2.0)));
        assert_eq!(finite_min_max(&[f32::NAN]), None);
    }
}
