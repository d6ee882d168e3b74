//! Reading heightmaps back for `trnbake convert`: Terragen `.ter`, GeoTIFF (Float32/64 or
//! integer samples with GDAL scale/offset/nodata), 16-bit PNG and RAW (R16/R32), always as
//! heights in metres on a georeferenced post grid.
//!
//! Where a format does not describe itself, the missing facts come from, in order: the
//! command line (`--dims`, `--spacing`, `--origin`, `--height-range`, `--row-order`), a
//! sidecar `IN.json` written by `convert`, or the `manifest.json` of the bake folder holding
//! the file (its `outputs` entry for that file name); a `.ter`'s origin comes from there too. Missing facts that matter are an error
//! naming the file and the option to give. Default origin: the grid centred on world (0, 0),
//! the SWG convention (the map centre is the origin; spec §3.3).
//!
//! Bad input is an error, never a panic: every size is checked against the file before any
//! allocation, and the decoders' own errors are reported with the file name.

mod tiff_check;

use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use crate::bail;
use crate::error::{Context, Result};

use super::source::{check_block, RawFileSource, RawSample};
use crate::writers::png16;
use crate::writers::ter::TerSource;
use crate::{Grid, HeightSource, Limits, MemSource, RowOrder, WrittenFile};

/// An input format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum InputFormat {
    Ter,
    Tif,
    Png,
    /// 16-bit little-endian RAW (`.raw`, `.r16`).
    R16,
    /// Float32 little-endian RAW (`.r32`).
    R32,
}

/// What the command line says about the input (all optional).
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    pub format: Option<InputFormat>,
    /// Columns × rows (RAW).
    pub dims: Option<(u32, u32)>,
    /// Metres between posts.
    pub spacing: Option<f64>,
    /// World position of the south-west post.
    pub origin: Option<(f64, f64)>,
    /// Heights of raw 0 and raw 65535 (PNG, R16).
    pub height_range: Option<(f64, f64)>,
    pub row_order: Option<RowOrder>,
    /// Size limits against hostile files.
    pub limits: Limits,
}

/// A decoded input.
pub struct Imported {
    pub source: Box<dyn HeightSource>,
    pub format: InputFormat,
    /// The CRS name of the input: a GeoTIFF's GTCitation, else the `crs` its sidecar or bake
    /// manifest recorded (for `.ter`, PNG and RAW, which cannot state one); kept for the
    /// outputs.
    pub citation: Option<String>,
}

/// Open `path` as a height source (see the module docs).
pub fn open(path: &Path, opts: &ImportOptions) -> Result<Imported> {
    let format = match opts.format {
        Some(f) => f,
        None => detect(path)?,
    };
    let sidecar = find_sidecar(path)?;
    let mut citation = None;
    let source: Box<dyn HeightSource> = match format {
        InputFormat::Ter => {
            let t = TerSource::open(path)?;
            // A .ter stores its size and spacing, not where it lies: the origin comes from the
            // sidecar or manifest that describes this very grid (same posts, the same spacing
            // as the file's single-precision SCAL), else the grid is centred on (0, 0).
            let g = t.grid();
            let known = sidecar.as_ref().and_then(|w| w.grid).filter(|s| (s.cols, s.rows) == (g.cols, g.rows) && s.spacing as f32 == g.spacing as f32);
            relabel(Box::new(t), opts, known)?
        }
        InputFormat::Tif => {
            let (s, c) = open_tiff(path, opts)?;
            citation = c;
            s
        }
        InputFormat::Png => open_png(path, opts, sidecar.as_ref())?,
        InputFormat::R16 | InputFormat::R32 => open_raw(path, format, opts, sidecar.as_ref())?,
    };
    let citation = citation.or_else(|| sidecar.and_then(|s| s.crs)).filter(|c| !c.trim().is_empty());
    Ok(Imported { source, format, citation })
}

/// Format from the magic bytes, else from the extension.
fn detect(path: &Path) -> Result<InputFormat> {
    let mut head = [0u8; 16];
    let mut f = std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let n = read_up_to(&mut f, &mut head).with_context(|| format!("cannot read {}", path.display()))?;
    let head = &head[..n];
    if head.starts_with(b"TERRAGEN") {
        return Ok(InputFormat::Ter);
    }
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Ok(InputFormat::Png);
    }
    if [&b"II*\0"[..], b"MM\0*", b"II+\0", b"MM\0+"].iter().any(|m| head.starts_with(m)) {
        return Ok(InputFormat::Tif);
    }
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    match ext.as_str() {
        "raw" | "r16" => Ok(InputFormat::R16),
        "r32" => Ok(InputFormat::R32),
        "ter" => bail!("{}: not a Terragen terrain file (no `TERRAGENTERRAIN ` identifier)", path.display()),
        "png" => bail!("{}: not a PNG file (bad signature)", path.display()),
        "tif" | "tiff" => bail!("{}: not a TIFF file (bad header)", path.display()),
        _ => bail!("{}: cannot tell the format (not .ter, TIFF or PNG by content); give --input-format", path.display()),
    }
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// The manifest entry describing `path`: from `path.json` (a `convert` sidecar) or the
/// `manifest.json` beside it (a bake folder).
fn find_sidecar(path: &Path) -> Result<Option<WrittenFile>> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
    let mut side = path.as_os_str().to_owned();
    side.push(".json");
    let candidates = [PathBuf::from(side), path.with_file_name("manifest.json")];
    for c in candidates {
        let Ok(text) = std::fs::read_to_string(&c) else { continue };
        // A JSON file that is not ours (or is damaged) just does not describe the input; the
        // command line still can.
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else { continue };
        let Some(outputs) = v.get("outputs").and_then(|o| o.as_array()) else { continue };
        for o in outputs {
            if o.get("path").and_then(|p| p.as_str()) == Some(name.as_str()) {
                let wf: WrittenFile = serde_json::from_value(o.clone()).with_context(|| format!("{}: the entry of {name} is damaged", c.display()))?;
                return Ok(Some(wf));
            }
        }
    }
    Ok(None)
}

/// Apply `--spacing`/`--origin` (and a known grid) to a decoded source.
fn relabel(inner: Box<dyn HeightSource>, opts: &ImportOptions, known: Option<Grid>) -> Result<Box<dyn HeightSource>> {
    let mut g = known.unwrap_or_else(|| inner.grid());
    let (cols, rows) = (inner.grid().cols, inner.grid().rows);
    g.cols = cols;
    g.rows = rows;
    if let Some(s) = opts.spacing {
        g.spacing = s;
        if opts.origin.is_none() {
            g.x0 = -f64::from(cols - 1) * s / 2.0;
            g.z0 = -f64::from(rows - 1) * s / 2.0;
        }
    }
    if let Some((x, z)) = opts.origin {
        g.x0 = x;
        g.z0 = z;
    }
    g.check_dims()?;
    if g == inner.grid() {
        return Ok(inner);
    }
    Ok(Box::new(Relabelled { inner, grid: g }))
}

/// A source with the same posts and different georeferencing.
struct Relabelled {
    inner: Box<dyn HeightSource>,
    grid: Grid,
}

impl HeightSource for Relabelled {
    fn grid(&self) -> Grid {
        self.grid
    }
    fn read_block(&self, c0: u32, r0: u32, cols: u32, rows: u32, out: &mut [f32]) -> std::io::Result<()> {
        check_block(&self.grid, c0, r0, cols, rows, out)?;
        self.inner.read_block(c0, r0, cols, rows, out)
    }
    fn wait_rows(&self, r0: u32, rows: u32) -> std::io::Result<()> {
        self.inner.wait_rows(r0, rows)
    }
    fn may_block(&self) -> bool {
        self.inner.may_block()
    }
}

/// A grid of `cols × rows` posts at `spacing`, centred on world (0, 0). An empty grid stays
/// empty (`check_dims` rejects it) instead of overflowing.
fn centred(cols: u32, rows: u32, spacing: f64) -> Grid {
    let half = |n: u32| -f64::from(n.saturating_sub(1)) * spacing / 2.0;
    Grid { cols, rows, x0: half(cols), z0: half(rows), spacing }
}

fn check_decoded_size(path: &Path, cols: u32, rows: u32, limits: &Limits) -> Result<()> {
    if cols == 0 || rows == 0 {
        bail!("{}: empty image {cols}x{rows}", path.display());
    }
    // Checked: TIFF dimensions are u32, and 2^31 × 2^31 × 4 wraps to 0 in u64.
    let bytes = u64::from(cols).checked_mul(u64::from(rows)).and_then(|n| n.checked_mul(4));
    if bytes.is_none_or(|b| b > limits.decoded_bytes) {
        bail!("{}: {cols}x{rows} is larger than the readers' limit ({} bytes of Float32 posts; 32769² posts by default)", path.display(), limits.decoded_bytes);
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// GeoTIFF

fn open_tiff(path: &Path, opts: &ImportOptions) -> Result<(Box<dyn HeightSource>, Option<String>)> {
    use tiff::decoder::{Decoder, DecodingResult, Limits};
    use tiff::tags::Tag;
    let name = path.display().to_string();
    check_tiff_tag_sizes(path)?;
    let file = std::fs::File::open(path).with_context(|| format!("cannot open {name}"))?;
    let mut limits = Limits::default();
    limits.decoding_buffer_size = usize::try_from(opts.limits.decoded_bytes).unwrap_or(usize::MAX).saturating_mul(2); // Float64 input
    let mut d = Decoder::new(BufReader::new(file)).with_context(|| format!("{name}: not a readable TIFF"))?.with_limits(limits);
    let (cols, rows) = d.dimensions().with_context(|| format!("{name}: no image dimensions"))?;
    check_decoded_size(path, cols, rows, &opts.limits)?;
    check_tiff_data_fits(path, &mut d, cols, rows)?;
    let spp = d.find_tag_unsigned::<u32>(Tag::SamplesPerPixel).ok().flatten().unwrap_or(1);
    if spp != 1 {
        bail!("{name}: {spp} samples per pixel; convert reads single-band height rasters");
    }
    // GDAL band metadata (tag 42112) and nodata (42113), spec §3.1 and §3.4.
    let gdal_md = d.find_tag(Tag::Unknown(42112)).ok().flatten().and_then(|v| v.into_string().ok()).unwrap_or_default();
    let scale = gdal_item(&gdal_md, "scale").unwrap_or(1.0);
    let offset = gdal_item(&gdal_md, "offset").unwrap_or(0.0);
    let nodata =
        d.find_tag(Tag::GdalNodata).ok().flatten().and_then(|v| v.into_string().ok()).and_then(|s| s.trim().trim_end_matches('\0').parse::<f64>().ok());
    let grid = tiff_grid(&mut d, cols, rows, &name)?;
    let citation = d
        .find_tag(Tag::GeoAsciiParamsTag)
        .ok()
        .flatten()
        .and_then(|v| v.into_string().ok())
        .and_then(|s| s.split('|').next().map(str::to_string))
        .filter(|s| !s.trim().is_empty());

    let image = d.read_image().with_context(|| format!("{name}: cannot decode the image (damaged or unsupported TIFF)"))?;
    let conv = |v: f64| -> f32 {
        if nodata.is_some_and(|nd| v == nd || (nd.is_nan() && v.is_nan())) {
            f32::NAN
        } else {
            (v * scale + offset) as f32
        }
    };
    let heights: Vec<f32> = match image {
        DecodingResult::F32(v) => v.into_iter().map(|x| conv(f64::from(x))).collect(),
        DecodingResult::F64(v) => v.into_iter().map(conv).collect(),
        DecodingResult::U8(v) => v.into_iter().map(|x| conv(f64::from(x))).collect(),
        DecodingResult::U16(v) => v.into_iter().map(|x| conv(f64::from(x))).collect(),
        DecodingResult::U32(v) => v.into_iter().map(|x| conv(f64::from(x))).collect(),
        DecodingResult::I8(v) => v.into_iter().map(|x| conv(f64::from(x))).collect(),
        DecodingResult::I16(v) => v.into_iter().map(|x| conv(f64::from(x))).collect(),
        DecodingResult::I32(v) => v.into_iter().map(|x| conv(f64::from(x))).collect(),
        _ => bail!("{name}: unsupported sample type (convert reads 8/16/32-bit integer and 32/64-bit float samples)"),
    };
    if heights.len() as u64 != u64::from(cols) * u64::from(rows) {
        bail!("{name}: decoded {} samples for a {cols}x{rows} image", heights.len());
    }
    let g = match grid {
        Some(g) => g,
        None => centred(cols, rows, opts.spacing.with_context(|| format!("{name} has no georeferencing (ModelPixelScale/ModelTiepoint); give --spacing"))?),
    };
    Ok((relabel(Box::new(MemSource::north_first(g, heights)?), opts, Some(g))?, citation))
}

/// The image a TIFF declares must be in the file before the decoder allocates the decoded
/// buffer: a 198-byte file declaring 32769² Float32 samples would otherwise cost 4.3 GB first
/// (issue #26). Uncompressed data must fit in the file (1:1) and PackBits data within 64:1 (a
/// 2-byte run packet gives at most 128 bytes). Deflate, Zstandard and LZW blocks are each
/// decompressed and checked first ([`tiff_check`]: checksums, and output bounded by the
/// block's declared size), so no compression ratio is assumed for them (a Zstandard tile of
/// flat ground compresses beyond 4096:1); any other compression is held to 4096:1.
fn check_tiff_data_fits<R: std::io::Read + std::io::Seek>(path: &Path, d: &mut tiff::decoder::Decoder<R>, cols: u32, rows: u32) -> Result<()> {
    use tiff::tags::Tag;
    let name = path.display().to_string();
    let len = std::fs::metadata(path).with_context(|| format!("cannot read {name}"))?.len();
    let bits = d.find_tag_unsigned::<u32>(Tag::BitsPerSample).ok().flatten().unwrap_or(8);
    let spp = d.find_tag_unsigned::<u32>(Tag::SamplesPerPixel).ok().flatten().unwrap_or(1);
    let compression = d.find_tag_unsigned::<u16>(Tag::Compression).ok().flatten().unwrap_or(1);
    if let Some(codec) = tiff_check::Codec::of(compression) {
        let blocks = tiff_check::blocks(d, cols, rows, &name)?;
        return tiff_check::check_blocks(path, codec, &blocks);
    }
    let (ratio, what) = match compression {
        1 => (1u64, "uncompressed"),
        32773 => (64, "PackBits-compressed"),
        _ => (4096, "compressed"),
    };
    let declared = u64::from(cols).saturating_mul(u64::from(rows)).saturating_mul(u64::from(spp.max(1))).saturating_mul(u64::from(bits.max(1)).div_ceil(8));
    if declared > len.saturating_mul(ratio) {
        bail!("{name}: declares {cols}x{rows} samples ({declared} bytes) but the {len}-byte file cannot hold them {what}; the file is truncated or damaged");
    }
    Ok(())
}

/// Every tag of the first IFD must declare no more value bytes than the file holds. The
/// `tiff` decoder allocates a tag's values from its declared count before reading them, so a
/// 783-byte file could make it allocate 190 MB (fuzz finding, convert_readers); the image
/// itself is bounded by [`Limits::decoded_bytes`], tag arrays by the file length.
fn check_tiff_tag_sizes(path: &Path) -> Result<()> {
    use std::io::{Seek, SeekFrom};
    let name = path.display().to_string();
    let mut f = std::fs::File::open(path).with_context(|| format!("cannot open {name}"))?;
    let len = f.metadata().with_context(|| format!("cannot read {name}"))?.len();
    let mut head = [0u8; 16];
    let n = read_up_to(&mut f, &mut head).with_context(|| format!("cannot read {name}"))?;
    if n < 8 {
        return Ok(()); // the decoder reports the short header
    }
    let le = &head[..2] == b"II";
    let u16_at = |b: &[u8]| if le { u16::from_le_bytes([b[0], b[1]]) } else { u16::from_be_bytes([b[0], b[1]]) };
    let u32_at = |b: &[u8]| {
        let a = [b[0], b[1], b[2], b[3]];
        if le {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        }
    };
    let u64_at = |b: &[u8]| {
        let a: [u8; 8] = b[..8].try_into().unwrap_or_default();
        if le {
            u64::from_le_bytes(a)
        } else {
            u64::from_be_bytes(a)
        }
    };
    let big = u16_at(&head[2..4]) == 43;
    let (ifd, count_len, entry_len) = if big {
        if n < 16 {
            return Ok(());
        }
        (u64_at(&head[8..16]), 8u64, 20u64)
    } else {
        (u64::from(u32_at(&head[4..8])), 2, 12)
    };
    if ifd.checked_add(count_len).is_none_or(|e| e > len) {
        return Ok(()); // the decoder reports the bad IFD offset
    }
    f.seek(SeekFrom::Start(ifd))?;
    let mut cnt = [0u8; 8];
    f.read_exact(&mut cnt[..count_len as usize])?;
    let entries = if big { u64_at(&cnt) } else { u64::from(u16_at(&cnt)) };
    if entries > 1 << 16 || entries * entry_len > len - ifd - count_len {
        bail!("{name}: the first TIFF directory declares {entries} entries, more than the file holds");
    }
    let mut table = vec![0u8; (entries * entry_len) as usize];
    f.read_exact(&mut table)?;
    for e in table.chunks_exact(entry_len as usize) {
        let (tag, ty) = (u16_at(&e[0..2]), u16_at(&e[2..4]));
        let count = if big { u64_at(&e[4..12]) } else { u64::from(u32_at(&e[4..8])) };
        // TIFF 6.0 §2 field types (+ BigTIFF 16–18); unknown types count as 1 byte.
        let size: u64 = match ty {
            3 | 8 => 2,
            4 | 9 | 11 | 13 => 4,
            5 | 10 | 12 | 16 | 17 | 18 => 8,
            _ => 1,
        };
        if count.checked_mul(size).is_none_or(|b| b > len) {
            bail!("{name}: TIFF tag {tag} declares {count} values of {size} bytes, more than the {len}-byte file holds");
        }
    }
    Ok(())
}

/// Value of the GDAL metadata item with `role` for band 0 (`<Item … role="scale">0.5</Item>`).
fn gdal_item(xml: &str, role: &str) -> Option<f64> {
    let key = format!("role=\"{role}\">");
    let start = xml.find(&key)? + key.len();
    let end = xml[start..].find('<')? + start;
    xml[start..end].trim().parse().ok()
}

/// The post grid of a GeoTIFF from ModelPixelScale + ModelTiepoint and GTRasterType (spec
/// §3.1–3.3); `None` without georeferencing.
fn tiff_grid<R: std::io::Read + std::io::Seek>(d: &mut tiff::decoder::Decoder<R>, cols: u32, rows: u32, name: &str) -> Result<Option<Grid>> {
    use tiff::tags::Tag;
    let scale = d.find_tag(Tag::ModelPixelScaleTag).ok().flatten().and_then(|v| v.into_f64_vec().ok());
    let tie = d.find_tag(Tag::ModelTiepointTag).ok().flatten().and_then(|v| v.into_f64_vec().ok());
    let (Some(scale), Some(tie)) = (scale, tie) else {
        if d.find_tag(Tag::ModelTransformationTag).ok().flatten().is_some() {
            bail!("{name}: georeferenced by a transformation matrix; convert reads north-up pixel scale + tiepoint GeoTIFFs");
        }
        return Ok(None);
    };
    if scale.len() < 2 || tie.len() < 6 {
        bail!("{name}: malformed ModelPixelScale/ModelTiepoint tags");
    }
    let (sx, sy) = (scale[0], scale[1]);
    if !(sx.is_finite() && sx > 0.0 && sy.is_finite() && sy > 0.0) || (sx - sy).abs() > 1e-9 * sx {
        bail!("{name}: pixel size {sx} x {sy}; convert reads square, north-up post grids");
    }
    // GTRasterTypeGeoKey (1025): 1 PixelIsArea (default), 2 PixelIsPoint.
    let keys = d.find_tag(Tag::GeoKeyDirectoryTag).ok().flatten().and_then(|v| v.into_u16_vec().ok()).unwrap_or_default();
    let raster_type = keys.get(4..).unwrap_or_default().chunks_exact(4).find(|k| k[0] == 1025 && k[1] == 0).map_or(1, |k| k[3]);
    let (i, j, x, y) = (tie[0], tie[1], tie[3], tie[4]);
    // Model position of raster (0,0) as a point, then the centre of pixel (0,0) for areas.
    let mut west = x - i * sx;
    let mut north = y + j * sy;
    if raster_type != 2 {
        west += sx / 2.0;
        north -= sy / 2.0;
    }
    let g = Grid { cols, rows, x0: west, z0: north - f64::from(rows - 1) * sy, spacing: sx };
    g.check_dims().with_context(|| format!("{name}: bad georeferencing"))?;
    Ok(Some(g))
}

// ---------------------------------------------------------------------------------------------
// PNG

fn open_png(path: &Path, opts: &ImportOptions, side: Option<&WrittenFile>) -> Result<Box<dyn HeightSource>> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).with_context(|| format!("cannot open {name}"))?;
    let mut dec = png::Decoder::new_with_limits(BufReader::new(file), png::Limits { bytes: usize::try_from(opts.limits.decoded_bytes).unwrap_or(usize::MAX) });
    dec.set_transformations(png::Transformations::IDENTITY);
    let mut reader = dec.read_info().with_context(|| format!("{name}: not a readable PNG"))?;
    let info = reader.info();
    let (cols, rows) = (info.width, info.height);
    if (info.color_type, info.bit_depth) != (png::ColorType::Grayscale, png::BitDepth::Sixteen) {
        bail!("{name}: {:?} {:?}-bit PNG; convert reads 16-bit greyscale heightmaps", info.color_type, info.bit_depth as u8);
    }
    check_decoded_size(path, cols, rows, &opts.limits)?;
    // IDAT is one zlib stream, which expands at most 1032:1: a small file declaring a huge
    // image is refused before the buffers are allocated (as for TIFF).
    let len = std::fs::metadata(path).with_context(|| format!("cannot read {name}"))?.len();
    let declared = u64::from(cols) * u64::from(rows) * 2;
    if declared > len.saturating_mul(1032) {
        bail!("{name}: declares {cols}x{rows} 16-bit samples ({declared} bytes) but the {len}-byte file cannot hold them deflated; the file is truncated or damaged");
    }
    let text = |k: &str| -> Option<f64> { info.uncompressed_latin1_text.iter().find(|t| t.keyword == k).and_then(|t| t.text.trim().parse().ok()) };
    let (t_scale, t_offset) = (text(png16::KEY_SCALE), text(png16::KEY_OFFSET));
    let t_grid = match (text(png16::KEY_SPACING), text(png16::KEY_WEST_X), text(png16::KEY_SOUTH_Z)) {
        (Some(s), Some(x), Some(z)) => Some(Grid { cols, rows, x0: x, z0: z, spacing: s }),
        _ => None,
    };
    // Heights: --height-range, else the tEXt chunks, else the sidecar/manifest.
    let (scale, offset) = match (opts.height_range, t_scale.zip(t_offset), side.and_then(|w| w.height_scale.zip(w.height_offset))) {
        (Some((lo, hi)), _, _) => ((hi - lo) / 65535.0, lo),
        (None, Some(so), _) => so,
        (None, None, Some(so)) => so,
        _ => bail!("{name} does not say which heights its 0..65535 span (no trnbake tEXt chunks or manifest); give --height-range MIN,MAX"),
    };
    let grid = t_grid.or_else(|| world_file_grid(path, cols, rows)).or_else(|| side.and_then(|w| w.grid).filter(|g| (g.cols, g.rows) == (cols, rows)));
    let grid = match (grid, opts.spacing) {
        (Some(g), _) => g,
        (None, Some(s)) => centred(cols, rows, s),
        (None, None) => bail!("{name} has no georeferencing (tEXt, .pgw world file or manifest); give --spacing"),
    };
    let mut heights = Vec::new();
    heights.try_reserve_exact(cols as usize * rows as usize).context("not enough memory for the image")?;
    let mut buf = vec![0u8; reader.output_buffer_size().with_context(|| format!("{name}: image too large"))?];
    let frame = reader.next_frame(&mut buf).with_context(|| format!("{name}: cannot decode the image (damaged or truncated PNG)"))?;
    let data = &buf[..frame.buffer_size()];
    for row in data.chunks_exact(frame.line_size).take(rows as usize) {
        heights.extend(row[..cols as usize * 2].chunks_exact(2).map(|c| (f64::from(u16::from_be_bytes([c[0], c[1]])) * scale + offset) as f32));
    }
    relabel(Box::new(MemSource::north_first(grid, heights)?), opts, Some(grid))
}

/// The grid a `.pgw`/`.wld` world file beside the image describes (north-up, square pixels;
/// the world file gives the centre of the upper-left pixel, the north-west post).
fn world_file_grid(path: &Path, cols: u32, rows: u32) -> Option<Grid> {
    for ext in ["pgw", "pngw", "wld"] {
        let Ok(text) = std::fs::read_to_string(path.with_extension(ext)) else { continue };
        let v: Vec<f64> = text.split_whitespace().filter_map(|t| t.parse().ok()).collect();
        if v.len() == 6 && v[1] == 0.0 && v[2] == 0.0 && v[0] > 0.0 && (v[0] + v[3]).abs() <= 1e-9 * v[0] {
            return Some(Grid { cols, rows, x0: v[4], z0: v[5] - f64::from(rows - 1) * v[0], spacing: v[0] });
        }
    }
    None
}

// ---------------------------------------------------------------------------------------------
// RAW

fn open_raw(path: &Path, format: InputFormat, opts: &ImportOptions, side: Option<&WrittenFile>) -> Result<Box<dyn HeightSource>> {
    let name = path.display().to_string();
    let side_grid = side.and_then(|w| w.grid);
    let (cols, rows) = match (opts.dims, side_grid) {
        (Some(d), _) => d,
        (None, Some(g)) => (g.cols, g.rows),
        (None, None) => bail!("{name}: a RAW file does not store its size; give --dims COLSxROWS"),
    };
    // Before anything computes `cols − 1` (fuzz finding, convert_readers: `--dims 31233x0`
    // overflowed in `centred`).
    if cols == 0 || rows == 0 {
        bail!("{name}: --dims {cols}x{rows} is empty; a RAW grid has at least 1x1 posts");
    }
    let sample = match format {
        InputFormat::R32 => RawSample::F32,
        _ => match (opts.height_range, side.and_then(|w| w.height_scale.zip(w.height_offset))) {
            (Some((lo, hi)), _) => RawSample::U16 { scale: (hi - lo) / 65535.0, offset: lo },
            (None, Some((scale, offset))) => RawSample::U16 { scale, offset },
            (None, None) => bail!("{name}: a 16-bit RAW does not store its height range; give --height-range MIN,MAX"),
        },
    };
    let order = opts.row_order.or(side.and_then(|w| w.row_order)).unwrap_or(RowOrder::NorthFirst);
    let grid = match (side_grid.filter(|g| (g.cols, g.rows) == (cols, rows)), opts.spacing) {
        (Some(g), _) => g,
        (None, Some(s)) => centred(cols, rows, s),
        (None, None) => bail!("{name}: a RAW file is not georeferenced; give --spacing (and --origin)"),
    };
    let src = RawFileSource::open(path, grid, sample, order == RowOrder::NorthFirst)?;
    relabel(Box::new(src), opts, Some(grid))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gdal_metadata_items() {
        let x = "<GDALMetadata>\n  <Item name=\"OFFSET\" sample=\"0\" role=\"offset\">-10.5</Item>\n  <Item name=\"SCALE\" sample=\"0\" role=\"scale\">0.25</Item>\n</GDALMetadata>";
        assert_eq!(gdal_item(x, "scale"), Some(0.25));
        assert_eq!(gdal_item(x, "offset"), Some(-10.5));
        assert_eq!(gdal_item(x, "unittype"), None);
        assert_eq!(gdal_item("role=\"scale\">", "scale"), None);
    }

    /// convert_readers fuzz finding: `--dims 31233x0` on a RAW file computed `rows − 1` in
    /// `centred` (a panic with overflow checks). Now a clear error naming the file and dims.
    #[test]
    fn raw_with_empty_dims_is_an_error() {
        let dir = std::env::temp_dir().join(format!("trnbake-import-dims-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("x.r16");
        std::fs::write(&p, [0x54]).unwrap();
        for dims in [(31233, 0), (0, 5), (0, 0)] {
            let opts =
                ImportOptions { format: Some(InputFormat::R16), dims: Some(dims), spacing: Some(1.0), height_range: Some((0.0, 1.0)), ..Default::default() };
            let e = open(&p, &opts).err().expect("empty dims must be an error").to_string();
            assert!(e.contains("x.r16") && e.contains("is empty"), "{dims:?}: {e}");
        }
        assert_eq!(centred(0, 0, 1.0).x0, 0.0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// convert_readers fuzz finding: a tiny TIFF whose tag declares 200,000,000 values made the
    /// decoder allocate for them. Built here: a 1x1 8-bit TIFF with a GDAL metadata (42112)
    /// ASCII tag of that count. Now an error before the decoder runs.
    #[test]
    fn tiff_tag_counts_beyond_the_file_are_an_error() {
        let mut b = b"II*\0".to_vec();
        b.extend_from_slice(&8u32.to_le_bytes());
        let entries: [(u16, u16, u32, u32); 8] = [
            (256, 3, 1, 1),
            (257, 3, 1, 1),
            (258, 3, 1, 8),
            (259, 3, 1, 1),
            (262, 3, 1, 1),
            (273, 4, 1, 8 + 2 + 8 * 12 + 4),
            (279, 4, 1, 1),
            (42112, 2, 200_000_000, 0),
        ];
        b.extend_from_slice(&(entries.len() as u16).to_le_bytes());
        for (tag, ty, count, value) in entries {
            b.extend_from_slice(&tag.to_le_bytes());
            b.extend_from_slice(&ty.to_le_bytes());
            b.extend_from_slice(&count.to_le_bytes());
            b.extend_from_slice(&value.to_le_bytes());
        }
        b.extend_from_slice(&0u32.to_le_bytes());
        b.push(42); // the one pixel
        let dir = std::env::temp_dir().join(format!("trnbake-import-tiff-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("tags.tif");
        std::fs::write(&p, &b).unwrap();
        let opts = ImportOptions { format: Some(InputFormat::Tif), spacing: Some(1.0), ..Default::default() };
        let e = open(&p, &opts).err().expect("a tag count past the file must be an error").to_string();
        assert!(e.contains("tags.tif") && e.contains("tag 42112 declares 200000000 values"), "{e}");
        // The same file with a sane count reads.
        let at = 8 + 2 + 7 * 12 + 4;
        b[at..at + 4].copy_from_slice(&1u32.to_le_bytes());
        std::fs::write(&p, &b).unwrap();
        let imp = open(&p, &opts).expect("a well-formed 1x1 TIFF reads");
        assert_eq!((imp.source.grid().cols, imp.source.grid().rows), (1, 1));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A TIFF may declare 2^31 × 2^31 pixels; × 4 bytes that is 2^64, which wraps to 0 in u64
    /// and would pass a plain `>` check.
    #[test]
    fn decoded_size_check_does_not_wrap() {
        let p = Path::new("big.tif");
        assert!(check_decoded_size(p, 4097, 4097, &Limits::DEFAULT).is_ok());
        for (c, r) in [(1u32 << 31, 1u32 << 31), (u32::MAX, u32::MAX), (u32::MAX, 1 << 30), (32770, 32770)] {
            let e = check_decoded_size(p, c, r, &Limits::DEFAULT).unwrap_err().to_string();
            assert!(e.contains("larger than the readers' limit") && e.contains("big.tif"), "{c}x{r}: {e}");
        }
        // A caller's lower limit holds too.
        let small = Limits { decoded_bytes: 1024 * 1024 * 4 };
        assert!(check_decoded_size(p, 1024, 1024, &small).is_ok());
        assert!(check_decoded_size(p, 1025, 1024, &small).is_err());
    }
}
