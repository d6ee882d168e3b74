//! One export: a height source written in every requested format, optionally resampled for
//! an engine preset and cut into tiles with a VRT mosaic (`docs/src/spec/exports.md` §4–§6).
//! Both `bake`/`merge` (source: the tile checkpoints) and `convert` (source: a decoded file)
//! end here, so every format, preset and tiling rule lives in one place.
//!
//! * Formats: `tif` (Float32 GeoTIFF), `tif16` (UInt16 GeoTIFF, scale/offset in GDAL
//!   metadata, 65535 = nodata), `ter` (Terragen), `png` (16-bit PNG + `.pgw` world file),
//!   `raw`/`r16` (16-bit little-endian RAW, same bytes, two customary extensions), `r32`
//!   (float32 little-endian RAW).
//! * One height encoding per format for the whole export: every tile of a set shares the
//!   scale/offset (or `.ter` HeightScale/BaseHeight) of the global range, so the shared edge
//!   posts of neighbouring tiles decode to the same metres (§5 "neighbours must share identical
//!   edge heights").
//! * Tiles share their edge posts (§5 "Tile conventions", the engine/vertex convention): a
//!   tile of T posts has stride T − 1. Names `<stem>_x<i>_y<j>.<ext>`, x from the west; y from
//!   the south by default (L3DT, `.ter`), from the north for presets whose heightmaps run in
//!   image order (Unreal, Godot).

use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::bail;
use crate::error::{Context, Result};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::geotiff::{write_geotiff_from, GeoTiffOptions, TiffSample};
use super::png16::{write_png16_from, write_world_file, Png16Options};
use super::preset::Preset;
use super::raw::write_raw_from;
use super::ter::{write_ter_from, TerEncoding};
use super::vrt::{write_vrt, VrtTile};
use crate::source::{scan_min_max, RawSample, Resampled, Window};
use crate::{u16_full_scale_offset, u16_scale_offset, Grid, HeightSource, RowOrder, WrittenFile};

/// An output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Tif,
    Tif16,
    Ter,
    Png,
    Raw,
    R16,
    R32,
}

/// The names `--format` accepts, for messages.
pub const FORMAT_NAMES: &str = "tif, tif16, ter, png, raw, r16, r32";

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Tif => "tif",
            Format::Tif16 => "tif16",
            Format::Ter => "ter",
            Format::Png => "png",
            Format::Raw => "raw",
            Format::R16 => "r16",
            Format::R32 => "r32",
        }
    }

    /// File extension (without the dot).
    pub fn extension(self) -> &'static str {
        match self {
            Format::Tif | Format::Tif16 => "tif",
            f => f.name(),
        }
    }

    /// File stem in a bake folder: `height`, or `height_u16` for the UInt16 GeoTIFF (so it
    /// does not collide with the Float32 one).
    pub fn bake_stem(self) -> &'static str {
        match self {
            Format::Tif16 => "height_u16",
            _ => "height",
        }
    }

    /// Whether its encoding depends on the grid's height range (integer samples map the
    /// range; `.ter` stores a scale for it). Float32 formats can be written before the range
    /// is known, which lets a bake stream them while it computes.
    pub fn needs_range(self) -> bool {
        !matches!(self, Format::Tif | Format::R32)
    }

    /// The format a file name's extension implies (`.tif`/`.tiff` → Float32 GeoTIFF).
    pub fn from_extension(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "tiff" => Some(Format::Tif),
            e => Format::from_str(e).ok(),
        }
    }
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "tif" | "tiff" | "geotiff" => Format::Tif,
            "tif16" => Format::Tif16,
            "ter" => Format::Ter,
            "png" => Format::Png,
            "raw" => Format::Raw,
            "r16" => Format::R16,
            "r32" => Format::R32,
            other => return Err(format!("unknown format `{other}` (one of {FORMAT_NAMES})")),
        })
    }
}

/// `--tiles N|SIZE`: N ≤ 32 tiles a side, or tiles of SIZE ≥ 33 posts a side (33 is the
/// smallest engine heightmap, Unity's; no one tiles a map 33 ways).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Tiles {
    Count(u32),
    Size(u32),
}

/// Largest value of `--tiles` read as a tile count.
pub const MAX_TILE_COUNT: u32 = 32;

impl FromStr for Tiles {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let n: u32 = s.trim().parse().map_err(|_| format!("`{s}` is not a number of tiles (N ≤ {MAX_TILE_COUNT}) or a tile size in posts"))?;
        match n {
            0 => Err("--tiles must be at least 1".into()),
            1..=MAX_TILE_COUNT => Ok(Tiles::Count(n)),
            _ => Ok(Tiles::Size(n)),
        }
    }
}

/// What the user asked for (the CLI's `--format/--preset/--size/--tiles/--cog/--compress`),
/// independent of where the heights come from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ExportChoice {
    pub formats: Vec<Format>,
    pub preset: Option<Preset>,
    /// Heightmap (or, with tiles, tile) size in posts a side for a preset.
    pub size: Option<u32>,
    pub tiles: Option<Tiles>,
    /// How every GeoTIFF is written (layout, compression); a bake's surface-map GeoTIFFs too.
    pub tiff: GeoTiffOptions,
}

/// One output: a format and the file stem and extension its files get.
#[derive(Clone, Debug)]
pub struct Output {
    pub format: Format,
    pub stem: String,
    /// Without the dot; usually [`Format::extension`] (`convert` keeps OUT's, e.g. `.tiff`).
    pub ext: String,
}

/// A fully specified export.
#[derive(Clone, Debug)]
pub struct ExportSpec {
    pub outputs: Vec<Output>,
    pub preset: Option<Preset>,
    pub size: Option<u32>,
    pub tiles: Option<Tiles>,
    /// GeoTIFF citation / CRS name, e.g. "SWG tatooine local metres".
    pub citation: String,
    pub tiff: GeoTiffOptions,
    pub png_compression: png::DeflateCompression,
}

impl ExportSpec {
    /// The outputs of a bake folder (`height.tif`, `height_u16.tif`, `height.png`, …).
    pub fn for_bake(choice: &ExportChoice, citation: String) -> Self {
        Self {
            outputs: choice.formats.iter().map(|&f| Output { format: f, stem: f.bake_stem().to_string(), ext: f.extension().to_string() }).collect(),
            preset: choice.preset,
            size: choice.size,
            tiles: choice.tiles,
            citation,
            tiff: choice.tiff,
            png_compression: super::png16::DEFLATE,
        }
    }
}

/// How the tiles of an export are laid out.
#[derive(Clone, Debug, Serialize)]
pub struct TileSummary {
    /// Tiles along x (east) and y.
    pub count: [u32; 2],
    /// Posts from one tile's west (south) edge to the next one's; tiles are stride + 1 posts
    /// wide, so neighbours share their edge posts.
    pub stride: [u32; 2],
    pub shared_edges: bool,
    /// Which edge tile y = 0 lies on: "south" or "north".
    pub y_origin: &'static str,
    /// File name pattern.
    pub naming: String,
}

/// The export part of a manifest.
#[derive(Clone, Debug, Serialize)]
pub struct ExportSummary {
    pub preset: Option<Preset>,
    /// The grid the heights came in.
    pub source_grid: Grid,
    /// The grid written (differs when a preset resampled it).
    pub grid: Grid,
    /// "bilinear" when the grid was resampled.
    pub resampling: Option<&'static str>,
    /// Finite height range of the written grid (metres); integer encodings map it.
    pub height_min: f32,
    pub height_max: f32,
    pub tiles: Option<TileSummary>,
    /// Import settings for the preset's engine (per heightmap: one tile, or the whole map).
    pub engine: Option<serde_json::Value>,
}

/// What an export wrote.
#[derive(Clone, Debug)]
pub struct ExportReport {
    pub summary: ExportSummary,
    pub files: Vec<WrittenFile>,
}

/// One tile of the written grid.
#[derive(Clone, Copy, Debug)]
struct Placement {
    /// Index in the file name.
    x: u32,
    y: u32,
    /// Posts (row 0 = south).
    c0: u32,
    r0: u32,
    cols: u32,
    rows: u32,
}

/// Start and length (posts) of each tile along an axis of `n` posts with `stride`.
fn axis(n: u32, stride: u32) -> Vec<(u32, u32)> {
    if n <= 1 || stride == 0 {
        return vec![(0, n)];
    }
    let mut v = Vec::new();
    let mut s = 0;
    while s < n - 1 {
        v.push((s, stride.min(n - 1 - s) + 1));
        s += stride;
    }
    v
}

/// For a preset: the square size to resample to and, when tiling, the tile size.
fn preset_sizes(p: Preset, n0: u32, size: Option<u32>, tiles: Option<Tiles>) -> Result<(u32, Option<u32>)> {
    let check = |n: u32| -> Result<u32> {
        if p.is_valid_size(n) {
            Ok(n)
        } else {
            let mut near = p.valid_sizes();
            near.sort_by_key(|s| s.abs_diff(n));
            near.truncate(6);
            near.sort_unstable();
            let near: Vec<String> = near.iter().map(u32::to_string).collect();
            bail!("{} does not accept {n} posts a side; the nearest sizes it accepts: {}", p.name(), near.join(", "))
        }
    };
    Ok(match tiles {
        None => (size.map(check).transpose()?.unwrap_or_else(|| p.fit_size(n0)), None),
        Some(Tiles::Count(k)) => {
            let t = match size {
                Some(s) => check(s)?,
                None => {
                    let v = p.valid_sizes();
                    v.iter().rev().copied().find(|&t| u64::from(k) * u64::from(t - 1) < u64::from(n0)).unwrap_or(v[0])
                }
            };
            (k * (t - 1) + 1, Some(t))
        }
        Some(Tiles::Size(t)) => {
            if size.is_some() {
                bail!("give the tile size either as --tiles {t} or as --size, not both");
            }
            let t = check(t)?;
            let m = ((n0.max(2) - 1) / (t - 1)).max(1);
            (m * (t - 1) + 1, Some(t))
        }
    })
}

/// The grid an export writes and its tile strides, from the source grid (preset resampling
/// and tiling rules; no file is touched). Returns (posts a side after the preset or `None`,
/// stride x, stride z).
fn plan(g0: &Grid, preset: Option<Preset>, size: Option<u32>, tiles: Option<Tiles>) -> Result<(Option<u32>, u32, u32)> {
    if size.is_some() && preset.is_none() {
        bail!("--size chooses an engine heightmap size and needs --preset");
    }
    let (n, tile_posts) = match preset {
        Some(p) => {
            if g0.cols != g0.rows {
                bail!("the {} preset needs a square grid, this one is {}x{} posts (bake a square --region)", p.name(), g0.cols, g0.rows);
            }
            let (n, t) = preset_sizes(p, g0.cols, size, tiles)?;
            (Some(n), t)
        }
        None => (None, None),
    };
    let (cols, rows) = n.map_or((g0.cols, g0.rows), |n| (n, n));
    let (sx, sz) = match (tiles, tile_posts) {
        (None, _) => (0, 0),
        (Some(_), Some(t)) => (t - 1, t - 1),
        (Some(Tiles::Size(t)), None) => (t - 1, t - 1),
        (Some(Tiles::Count(k)), None) => {
            if cols.min(rows) <= k {
                bail!("{k} tiles a side need more than {k} posts a side; the grid is {cols}x{rows}");
            }
            ((cols - 1).div_ceil(k), (rows - 1).div_ceil(k))
        }
    };
    let count = axis(cols, sx).len() * axis(rows, sz).len();
    if count > 4096 {
        bail!("{count} tiles is more than 4096 files per format; choose larger tiles");
    }
    Ok((n, sx, sz))
}

/// Check that `choice` can be exported from a `cols × rows` grid (before a long bake).
pub fn check_choice(choice: &ExportChoice, cols: u32, rows: u32) -> Result<()> {
    let g = Grid { cols, rows, x0: 0.0, z0: 0.0, spacing: 1.0 };
    plan(&g, choice.preset, choice.size, choice.tiles).map(|_| ())
}

/// Write `src` as `spec` says into `dir`. `min_max` is the source's finite height range when
/// the caller knows it (a bake does); `on_file(total)` is called after each height file with
/// the number of height files the export writes.
pub fn export(src: &dyn HeightSource, min_max: Option<(f32, f32)>, spec: &ExportSpec, dir: &Path, on_file: &(dyn Fn(u64) + Sync)) -> Result<ExportReport> {
    let g0 = src.grid();
    g0.check_dims()?;
    if spec.outputs.is_empty() {
        bail!("no output format chosen (one of {FORMAT_NAMES})");
    }
    let (n, stride_x, stride_z) = plan(&g0, spec.preset, spec.size, spec.tiles)?;

    // 1. Preset: resample to a size the engine accepts.
    let resampled;
    let src: &dyn HeightSource = match n {
        Some(n) if n != g0.cols => {
            resampled = Resampled::new(src, n, n)?;
            &resampled
        }
        _ => src,
    };
    let g = src.grid();
    let was_resampled = g != g0;
    // The range: known, scanned, or (no output and no preset needs it, and the source is still
    // being computed) left unknown (NaN in the summary) so that it is not read ahead of its
    // writers; the bake, which streams such outputs, fills in the range it computed.
    let needs_range = spec.preset.is_some() || spec.outputs.iter().any(|o| o.format.needs_range());
    // A finished source is scanned even then (it costs one read), so the summary (the
    // manifest, `convert`'s sidecar and message) states the real range.
    let (hmin, hmax) = match min_max {
        Some(m) if !was_resampled => m,
        _ if !needs_range && src.may_block() => (f32::NAN, f32::NAN),
        _ if !needs_range => scan_min_max(src)?.unwrap_or((f32::NAN, f32::NAN)),
        _ => scan_min_max(src)?.context("the grid has no finite height")?,
    };

    // 2. Tiles.
    let y_from_north = spec.preset.is_some_and(Preset::tile_y_from_north);
    let (xs, zs) = (axis(g.cols, stride_x), axis(g.rows, stride_z));
    let mut placements = Vec::new();
    for (j, &(r0, rows)) in zs.iter().enumerate() {
        for (i, &(c0, cols)) in xs.iter().enumerate() {
            let y = if y_from_north { zs.len() - 1 - j } else { j };
            placements.push(Placement { x: i as u32, y: y as u32, c0, r0, cols, rows });
        }
    }
    placements.sort_by_key(|p| (p.y, p.x));
    let tiled = spec.tiles.is_some();

    // 3. One encoding per format for the whole export (shared tile edges decode identically).
    let u16_tif = u16_scale_offset(hmin, hmax);
    let u16_full = u16_full_scale_offset(hmin, hmax);
    let ter = if spec.outputs.iter().any(|o| o.format == Format::Ter) { Some(TerEncoding::for_range(hmin, hmax, g.spacing)?) } else { None };
    let raw_order = spec.preset.map_or(RowOrder::NorthFirst, Preset::raw_row_order);

    // 4. Write every (output, tile) pair; tiles of one format in parallel (the PNG encoder is
    //    single-threaded; GeoTIFF strips are compressed in parallel inside each file anyway).
    let jobs: Vec<(&Output, &Placement)> = spec.outputs.iter().flat_map(|o| placements.iter().map(move |p| (o, p))).collect();
    //    A source that may block (a bake still computing) is written job after job on this
    //    thread: a job on a rayon worker waiting for rows would hold a worker the compute needs.
    let write_job = |&(out, p): &(&Output, &Placement)| -> Result<Vec<WrittenFile>> {
        let win = Window::new(src, p.c0, p.r0, p.cols, p.rows)?;
        let name = match tiled {
            true => format!("{}_x{}_y{}", out.stem, p.x, p.y),
            false => out.stem.clone(),
        };
        let path = dir.join(format!("{name}.{}", out.ext));
        let ctx = || format!("cannot write {}", path.display());
        let mut files = Vec::new();
        let written: std::io::Result<WrittenFile> = match out.format {
            Format::Tif | Format::Tif16 => {
                let sample = match out.format {
                    Format::Tif16 => TiffSample::U16 { scale: u16_tif.0, offset: u16_tif.1 },
                    _ => TiffSample::F32,
                };
                let wf = write_geotiff_from(&path, &win, &spec.citation, sample, &spec.tiff).with_context(ctx)?;
                Ok(wf)
            }
            Format::Ter => write_ter_from(&path, &win, ter.as_ref().expect("chosen above")),
            Format::Png => {
                let opts = Png16Options { compression: spec.png_compression, min_max: (!tiled).then_some((hmin, hmax)) };
                write_png16_from(&path, &win, u16_full.0, u16_full.1, &opts)
            }
            Format::Raw | Format::R16 => {
                let (scale, offset) = u16_full;
                write_raw_from(&path, &win, RawSample::U16 { scale, offset }, raw_order)
            }
            Format::R32 => write_raw_from(&path, &win, RawSample::F32, raw_order),
        };
        let mut wf = written.with_context(ctx)?;
        if tiled {
            wf.tile = Some([p.x, p.y]);
        }
        wf.crs = Some(spec.citation.clone());
        files.push(wf);
        on_file(jobs.len() as u64);
        // A world file georeferences the PNG for GIS tools; engine exports skip it.
        if out.format == Format::Png && spec.preset.is_none() {
            let pgw = path.with_extension("pgw");
            let mut wf = write_world_file(&pgw, &win.grid()).with_context(|| format!("cannot write {}", pgw.display()))?;
            wf.tile = files[0].tile;
            wf.crs = Some(spec.citation.clone());
            files.push(wf);
        }
        Ok(files)
    };
    let written: Vec<Vec<WrittenFile>> =
        if src.may_block() { jobs.iter().map(write_job).collect::<Result<_>>()? } else { jobs.par_iter().map(write_job).collect::<Result<_>>()? };
    let mut files: Vec<WrittenFile> = written.into_iter().flatten().collect();

    // 5. A VRT mosaic over each set of GeoTIFF tiles.
    if tiled {
        for out in spec.outputs.iter().filter(|o| matches!(o.format, Format::Tif | Format::Tif16)) {
            let names: Vec<String> = placements.iter().map(|p| format!("{}_x{}_y{}.{}", out.stem, p.x, p.y, out.ext)).collect();
            let vt: Vec<VrtTile> = placements
                .iter()
                .zip(&names)
                .map(|(p, n)| VrtTile { file: n, col: p.c0, row_from_north: g.rows - p.r0 - p.rows, cols: p.cols, rows: p.rows })
                .collect();
            let sample = match out.format {
                Format::Tif16 => TiffSample::U16 { scale: u16_tif.0, offset: u16_tif.1 },
                _ => TiffSample::F32,
            };
            let path = dir.join(format!("{}.vrt", out.stem));
            let mut wf = write_vrt(&path, &g, &vt, sample, &spec.citation).with_context(|| format!("cannot write {}", path.display()))?;
            wf.crs = Some(spec.citation.clone());
            files.push(wf);
        }
    }

    let first = placements[0];
    let heightmap = Window::new(src, first.c0, first.r0, first.cols, first.rows)?.grid();
    let summary = ExportSummary {
        preset: spec.preset,
        source_grid: g0,
        grid: g,
        resampling: was_resampled.then_some("bilinear"),
        height_min: hmin,
        height_max: hmax,
        tiles: tiled.then(|| TileSummary {
            count: [xs.len() as u32, zs.len() as u32],
            stride: [stride_x, stride_z],
            shared_edges: true,
            y_origin: if y_from_north { "north" } else { "south" },
            naming: "<stem>_x<i>_y<j>.<ext>, x from the west edge".to_string(),
        }),
        engine: spec.preset.map(|p| p.engine_settings(&heightmap, f64::from(hmin), f64::from(hmax))),
    };
    Ok(ExportReport { summary, files })
}

/// Split `OUT` into its folder and stem (`out/map.ter` → (`out`, `map`)).
pub fn dir_and_stem(path: &Path) -> Result<(PathBuf, String)> {
    let stem = path.file_stem().and_then(|s| s.to_str()).filter(|s| !s.is_empty()).with_context(|| format!("{} has no file name", path.display()))?.to_string();
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((dir, stem))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemSource;

    #[test]
    fn axis_shares_edges() {
        assert_eq!(axis(9, 4), vec![(0, 5), (4, 5)]);
        assert_eq!(axis(10, 4), vec![(0, 5), (4, 5), (8, 2)]);
        assert_eq!(axis(1, 4), vec![(0, 1)]);
        assert_eq!(axis(5, 0), vec![(0, 5)]);
    }

    #[test]
    fn tiles_argument() {
        assert_eq!("4".parse::<Tiles>(), Ok(Tiles::Count(4)));
        assert_eq!("1025".parse::<Tiles>(), Ok(Tiles::Size(1025)));
        assert!("0".parse::<Tiles>().is_err() && "x".parse::<Tiles>().is_err());
    }

    #[test]
    fn preset_sizes_for_a_16384_m_planet() {
        // 2 m spacing: 8193 posts.
        assert_eq!(preset_sizes(Preset::Unreal, 8193, None, None).unwrap(), (8161, None));
        assert_eq!(preset_sizes(Preset::Unreal, 8193, Some(8129), None).unwrap(), (8129, None));
        assert!(preset_sizes(Preset::Unreal, 8193, Some(8193), None).unwrap_err().to_string().contains("8161"));
        assert_eq!(preset_sizes(Preset::Unity, 8193, None, None).unwrap(), (4097, None));
        assert_eq!(preset_sizes(Preset::Unity, 8193, None, Some(Tiles::Count(2))).unwrap(), (8193, Some(4097)));
        assert_eq!(preset_sizes(Preset::Unity, 8193, None, Some(Tiles::Size(1025))).unwrap(), (8193, Some(1025)));
        assert_eq!(preset_sizes(Preset::Unity, 8193, None, Some(Tiles::Count(3))).unwrap(), (6145, Some(2049)));
        assert!(preset_sizes(Preset::Unity, 8193, None, Some(Tiles::Size(1000))).is_err());
    }

    #[test]
    fn tiled_export_names_encoding_and_shared_edges() {
        let dir = std::env::temp_dir().join(format!("trnbake-set-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let g = Grid { cols: 9, rows: 5, x0: -8.0, z0: -4.0, spacing: 2.0 };
        let h: Vec<f32> = (0..45).map(|i| (i % 9) as f32 * 1.5 - (i / 9) as f32).collect();
        let src = MemSource::south_first(g, h).unwrap();
        let choice = ExportChoice { formats: vec![Format::R32, Format::Tif16], tiles: Some(Tiles::Count(2)), ..Default::default() };
        let spec = ExportSpec::for_bake(&choice, "t".into());
        let r = export(&src, None, &spec, &dir, &|_| {}).unwrap();
        let names: Vec<&str> = r.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            names,
            [
                "height_x0_y0.r32",
                "height_x1_y0.r32",
                "height_x0_y1.r32",
                "height_x1_y1.r32",
                "height_u16_x0_y0.tif",
                "height_u16_x1_y0.tif",
                "height_u16_x0_y1.tif",
                "height_u16_x1_y1.tif",
                "height_u16.vrt"
            ]
        );
        // x0_y0 is the south-west tile: posts 0..=4 × rows 0..=2; its east column is x1's west.
        let t00 = r.files[0].grid.unwrap();
        assert_eq!((t00.cols, t00.rows, t00.x0, t00.z0), (5, 3, -8.0, -4.0));
        let t10 = r.files[1].grid.unwrap();
        assert_eq!(t10.x0, t00.east_x());
        // One UInt16 encoding for all tiles.
        let scales: Vec<_> = r.files[4..8].iter().map(|f| (f.height_scale, f.height_offset)).collect();
        assert!(scales.windows(2).all(|w| w[0] == w[1]));
        let s = r.summary.tiles.as_ref().unwrap();
        assert_eq!((s.count, s.stride, s.y_origin), ([2, 2], [4, 2], "south"));
        // Files are really there and match their manifest entries.
        for f in &r.files {
            let (bytes, sha) = crate::sha256_file(&dir.join(&f.path)).unwrap();
            assert_eq!((bytes, &sha), (f.bytes, &f.sha256));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
