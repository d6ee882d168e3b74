//! trnbake-tiles: a bake as web map tiles. A [`TilesRequest`] runs the streamed bake
//! (`trnbake-bake`) into a work folder, reads its outputs back row by row (the exact Float32
//! heights, the map PNGs and id GeoTIFFs) and writes a Web Mercator XYZ pyramid of 512-px
//! PNG tiles per layer (`OUT/tiles/{layer}/{z}/{x}/{y}.png`), `OUT/tiles.json` (TileJSON 3.0
//! per layer, the legends and the metre ↔ longitude/latitude mapping), optionally one
//! PMTiles archive per layer, and the static viewer page `OUT/index.html` ([`viewer`]).
//!
//! The mapping ([`mercator`]): the map's centre at longitude/latitude 0,0, one world metre =
//! one Mercator metre, world x (east) = easting, world z (north) = northing. Heights are
//! Terrarium-encoded (height = R·256 + G + B/256 − 32768), resampled bilinearly from the
//! posts where MapLibre reads a DEM pixel: pixel (i, j) of a 512-px tile is the height at
//! (i/512, j/512) of the tile, its north-west corner (MapLibre's `getDEMElevation`), and
//! between those it interpolates bilinearly. So neighbouring tiles sample one continuous
//! surface and agree across their edges, and a renderer's height is the bake's. Map images
//! are sampled at pixel centres, as images are drawn. Memory is bounded by one band of the bake's rows and one strip of
//! tiles per zoom ([`pyramid`]).

pub mod mercator;
pub mod pyramid;
pub mod read;
pub mod viewer;

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use rayon::prelude::*;
use trnbake_bake::surface_maps::round_to_byte;
use trnbake_bake::{BakeRequest, MapKind, MapRequest, Progress};
use trnbake_raster::writers::set::{ExportChoice, Format};
use trnbake_raster::Grid;

use mercator::{pixel_metres, pixel_x, pixel_z, tile_range, TILE_PX};
use pyramid::{Encode, Pyramid, Written};
use read::{Band, PngRows, RawHeights, RowReader, Stacked, TiffRows};

/// Errors of a tiles run, each naming its file.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Bake(#[from] trnbake_bake::Error),
    #[error("{path}: {error}")]
    Io { path: PathBuf, error: std::io::Error },
    #[error("{0}")]
    Format(String),
    #[error("{0}")]
    Invalid(String),
}

impl Error {
    pub(crate) fn io(path: &Path, error: std::io::Error) -> Self {
        Error::Io { path: path.to_owned(), error }
    }
    pub(crate) fn format(path: &Path, e: impl std::fmt::Display) -> Self {
        Error::Format(format!("{}: {e}", path.display()))
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A tile layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Layer {
    /// Terrarium-encoded heights (bilinear from the exact Float32 heights).
    Height,
    /// The bake's shaded colour preview (`preview.png`).
    Color,
    /// The splat preview (`splat_preview.png`: legend colours weighted by the splat).
    Splat,
    /// Under water (`water_mask.png`), blue where wet.
    Water,
    /// The placement probability of one flora class's most likely family, as green opacity.
    Flora,
    /// The dominant shader family id, lossless: id = R·256 + G (alpha 0 off the map).
    Shader,
    /// The most likely flora family id of the collidable, non-collidable and radial-near
    /// classes in R, G and B, lossless (alpha 0 off the map).
    FloraId,
}

impl Layer {
    pub const ALL: [Layer; 7] = [Layer::Height, Layer::Color, Layer::Splat, Layer::Water, Layer::Flora, Layer::Shader, Layer::FloraId];

    pub fn name(self) -> &'static str {
        match self {
            Layer::Height => "height",
            Layer::Color => "color",
            Layer::Splat => "splat",
            Layer::Water => "water",
            Layer::Flora => "flora",
            Layer::Shader => "shader",
            Layer::FloraId => "flora_id",
        }
    }

    /// What the layer's pixels mean (tiles.json's `encoding`).
    pub fn encoding(self) -> &'static str {
        match self {
            Layer::Height => "terrarium",
            Layer::Color | Layer::Splat | Layer::Water | Layer::Flora => "rgba",
            Layer::Shader => "id16: shader family id = R*256 + G; alpha 0 off the map",
            Layer::FloraId => "id8x3: flora family ids of the collidable (R), noncollidable (G) and radial_near (B) classes; alpha 0 off the map",
        }
    }

    /// The bake maps the layer reads.
    fn maps(self) -> &'static [MapKind] {
        match self {
            Layer::Height => &[MapKind::Height],
            Layer::Color => &[MapKind::Preview],
            Layer::Splat | Layer::Shader => &[MapKind::Splat],
            Layer::Water => &[MapKind::Water],
            Layer::Flora | Layer::FloraId => &[MapKind::Flora],
        }
    }
}

impl std::fmt::Display for Layer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Layer {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        Layer::ALL
            .into_iter()
            .find(|l| l.name() == s)
            .ok_or_else(|| format!("unknown layer `{s}` ({})", Layer::ALL.iter().map(|l| l.name()).collect::<Vec<_>>().join(", ")))
    }
}

/// The layers written by default: every one the terrain feeds (water only where it has
/// water; the bake decides which maps the file feeds).
pub const DEFAULT_LAYERS: [Layer; 7] = Layer::ALL;

/// What to tile. The bake's region, spacing, height options and reporter come from `bake`
/// (its maps, formats and output folder are set here).
pub struct TilesRequest {
    pub bake: BakeRequest,
    pub out: PathBuf,
    pub layers: Vec<Layer>,
    /// Default: the least zoom whose pixels are no wider than the post spacing.
    pub max_zoom: Option<u8>,
    /// Default: the greatest zoom at which the grid fits in a tile (at least 0).
    pub min_zoom: Option<u8>,
    /// The flora class of the `flora` layer (`collidable`, `noncollidable`, `radial_near`,
    /// `radial_far`).
    pub flora_class: String,
    /// Also write `OUT/{layer}.pmtiles`.
    pub pmtiles: bool,
    /// How the page loads its libraries.
    pub assets: viewer::Assets,
    /// Keep the bake's work folder (`OUT/bake`) instead of removing it at the end.
    pub keep_bake: bool,
}

/// What a tiles run wrote.
#[derive(Clone, Debug, serde::Serialize)]
pub struct TilesReport {
    pub layers: Vec<String>,
    pub min_zoom: u8,
    pub max_zoom: u8,
    pub tiles: u64,
    pub tile_bytes: u64,
    pub pmtiles: Vec<PathBuf>,
    pub bake_seconds: f64,
    pub tile_seconds: f64,
    pub grid: Grid,
}

/// Where one output pixel column (or row) reads the posts: the two posts around its sample
/// for bilinear (`lo`, `hi`, weight `f` of `hi`, the sample clamped to the grid) and the post
/// whose square holds it (`near`, none off the grid). Computed once per column and per row of
/// a strip, not per pixel: a pixel's sample is (its column's tap, its row's tap).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Tap {
    lo: u32,
    hi: u32,
    f: f32,
    near: Option<u32>,
}

impl Tap {
    /// The tap of fractional post index `u` on an axis of `n` ≥ 2 posts.
    fn new(u: f64, n: u32) -> Self {
        let max = f64::from(n - 1);
        let uc = u.clamp(0.0, max);
        let lo = uc.floor() as u32;
        let hi = (lo + 1).min(n - 1);
        let f = (uc - f64::from(lo)) as f32;
        let r = u.round();
        let near = (r >= 0.0 && r < f64::from(n)).then_some(r as u32);
        Self { lo, hi, f, near }
    }
}

/// The band's rows under one output pixel row: the two around its sample (`lo`, `hi`, weight
/// `f` of `hi`) and the nearest (`near`, none off the grid), each post after post with
/// `channels` samples a post.
struct Rows<'a> {
    lo: &'a [f32],
    hi: &'a [f32],
    f: f32,
    near: Option<&'a [f32]>,
    channels: usize,
}

impl<'a> Rows<'a> {
    fn new(band: &'a Band, rv: &Tap) -> Self {
        Self { lo: band.row(rv.lo), hi: band.row(rv.hi), f: rv.f, near: rv.near.map(|r| band.row(r)), channels: band.channels }
    }

    /// The first `N` channels bilinear at column tap `cu` (one bounds check a post, not a
    /// channel).
    #[inline(always)]
    fn bilinear<const N: usize>(&self, cu: &Tap) -> [f32; N] {
        let (l, h) = (cu.lo as usize * self.channels, cu.hi as usize * self.channels);
        let (a0, a1, b0, b1) = (&self.lo[l..l + N], &self.lo[h..h + N], &self.hi[l..l + N], &self.hi[h..h + N]);
        // A loop, not `array::from_fn` (which the compiler left as a call a pixel).
        let mut out = [0.0; N];
        for (k, o) in out.iter_mut().enumerate() {
            let a = a0[k] * (1.0 - cu.f) + a1[k] * cu.f;
            let b = b0[k] * (1.0 - cu.f) + b1[k] * cu.f;
            *o = a * (1.0 - self.f) + b * self.f;
        }
        out
    }
}

/// Values of one layer's posts resampled at a pixel centre.
trait Sampler: Send + Sync {
    type P: Encode;
    /// Where in its pixel a sample lies, in pixels from the north-west corner: 0.5 (the
    /// centre) for images, 0 for heights (MapLibre reads DEM pixel i of a tile as the height
    /// at i/512 of the tile, and bilinear between those).
    const OFFSET: f64 = 0.5;
    /// The pixels of one output row (`rows`) at column taps `columns`.
    fn line(&self, rows: &Rows, columns: &[Tap], out: &mut [Self::P]);
}

struct HeightSampler;
impl Sampler for HeightSampler {
    type P = f32;
    const OFFSET: f64 = 0.0;
    fn line(&self, rows: &Rows, columns: &[Tap], out: &mut [f32]) {
        for (p, cu) in out.iter_mut().zip(columns) {
            *p = rows.bilinear::<1>(cu)[0];
        }
    }
}

/// What an RGBA layer makes of its posts.
#[derive(Clone, Copy)]
enum Paint {
    Rgb,
    Water,
    Density,
    Id16,
    Ids,
}

struct RgbaSampler(Paint);
impl Sampler for RgbaSampler {
    type P = [u8; 4];
    fn line(&self, rows: &Rows, columns: &[Tap], out: &mut [[u8; 4]]) {
        // Transparent off the grid: the whole row where its nearest post row is, else the
        // columns without a nearest post. `f` gets the column tap and the index of its
        // nearest post's first sample in a row.
        #[inline(always)]
        fn each(columns: &[Tap], ch: usize, out: &mut [[u8; 4]], f: impl Fn(&Tap, usize) -> [u8; 4]) {
            for (p, cu) in out.iter_mut().zip(columns) {
                *p = match cu.near {
                    Some(c) => f(cu, c as usize * ch),
                    None => [0; 4],
                };
            }
        }
        let Some(near) = rows.near else { return out.fill([0; 4]) };
        let ch = rows.channels;
        match self.0 {
            Paint::Rgb => each(columns, ch, out, |cu, _| {
                let [r, g, b] = rows.bilinear::<3>(cu);
                [round_to_byte(r), round_to_byte(g), round_to_byte(b), 255]
            }),
            Paint::Water => each(columns, ch, out, |_, i| if near[i] > 127.0 { [40, 110, 220, 160] } else { [0; 4] }),
            Paint::Density => each(columns, ch, out, |cu, _| [30, 160, 40, round_to_byte(rows.bilinear::<1>(cu)[0] / 65535.0 * 230.0)]),
            Paint::Id16 => each(columns, ch, out, |_, i| {
                let id = near[i] as u32;
                [(id >> 8) as u8, id as u8, 0, 255]
            }),
            Paint::Ids => each(columns, ch, out, |_, i| [round_to_byte(near[i]), round_to_byte(near[i + 1]), round_to_byte(near[i + 2]), 255]),
        }
    }
}

/// A layer in progress: its rows, sampler and pyramid.
struct Job<S: Sampler> {
    band: Band,
    sampler: S,
    pyramid: Pyramid<S::P>,
    strip: Vec<S::P>,
    /// The column taps of the max zoom's strips (the same for every strip).
    columns: Vec<Tap>,
}

/// One max-zoom strip of a layer: `ty`'s 512 pixel rows over the columns of `range`.
trait AnyJob: Send {
    fn row(&mut self, grid: &Grid, z: u8, range: [u32; 4], ty: u32, written: &Written) -> Result<()>;
    fn finish(&mut self, written: &Written) -> Result<()>;
}

impl<S: Sampler> AnyJob for Job<S> {
    fn row(&mut self, grid: &Grid, z: u8, range: [u32; 4], ty: u32, written: &Written) -> Result<()> {
        let t = TILE_PX as usize;
        let w = (range[2] - range[0] + 1) as usize * t;
        let rows = f64::from(grid.rows - 1);
        // Fractional north-first row of a world z, fractional column of a world x.
        let v_of = |zz: f64| rows - (zz - grid.z0) / grid.spacing;
        let u_of = |x: f64| (x - grid.x0) / grid.spacing;
        let py0 = f64::from(ty * TILE_PX);
        let off = S::OFFSET - 0.5;
        let v_top = v_of(pixel_z(z, py0 + off));
        let v_bottom = v_of(pixel_z(z, py0 + off + f64::from(TILE_PX - 1)));
        let r0 = (v_top.floor() - 1.0).clamp(0.0, rows) as u32;
        let r1 = (v_bottom.ceil() + 1.0).clamp(0.0, rows) as u32;
        self.band.load(r0, r1)?;
        self.strip.resize(w * t, <S::P as pyramid::Pixel>::MISSING);
        if self.columns.len() != w {
            let px0 = f64::from(range[0] * TILE_PX);
            self.columns = (0..w).map(|px| Tap::new(u_of(pixel_x(z, px0 + off + px as f64)), grid.cols)).collect();
        }
        let (band, sampler, columns) = (&self.band, &self.sampler, &self.columns);
        self.strip.par_chunks_mut(w).enumerate().for_each(|(py, line)| {
            let rv = Tap::new(v_of(pixel_z(z, py0 + off + py as f64)), grid.rows);
            sampler.line(&Rows::new(band, &rv), columns, line);
        });
        self.pyramid.push_top(ty, &self.strip, written)
    }
    fn finish(&mut self, written: &Written) -> Result<()> {
        self.pyramid.finish(written)
    }
}

/// The default max zoom of a spacing (see [`mercator::max_zoom_for`]).
pub fn default_max_zoom(spacing: f64) -> u8 {
    mercator::max_zoom_for(spacing)
}

/// Runs the bake, then writes the tiles, tiles.json, the PMTiles archives and the page.
pub fn run(req: TilesRequest) -> Result<TilesReport> {
    let TilesRequest { mut bake, out, layers, max_zoom, min_zoom, flora_class, pmtiles, assets, keep_bake } = req;
    if layers.is_empty() {
        return Err(Error::Invalid("no layers to write".into()));
    }
    if !trnbake_swg::plan::FLORA_CLASSES.contains(&flora_class.as_str()) {
        return Err(Error::Invalid(format!("unknown flora class `{flora_class}` ({})", trnbake_swg::plan::FLORA_CLASSES.join(", "))));
    }
    let reporter = bake.reporter.clone();
    let work = out.join("bake");
    bake.outdir = work.clone();
    let mut maps: Vec<MapKind> = layers.iter().flat_map(|l| l.maps().iter().copied()).collect();
    maps.sort();
    maps.dedup();
    bake.maps = maps.into_iter().map(MapRequest::Map).collect();
    // The heights as raw Float32 (exact, and read back by rows at random).
    bake.export = ExportChoice { formats: vec![Format::R32], ..ExportChoice::default() };
    let name = bake.name.clone();
    let t0 = std::time::Instant::now();
    let pipeline = bake.pipeline()?;
    let grid = pipeline.job.grid;
    if grid.cols < 2 || grid.rows < 2 {
        return Err(Error::Invalid(format!("the grid has {}x{} posts; tiles need at least 2x2", grid.cols, grid.rows)));
    }
    pipeline.run()?;
    let bake_seconds = t0.elapsed().as_secs_f64();
    drop(pipeline);

    let t1 = std::time::Instant::now();
    let max_zoom = max_zoom.unwrap_or_else(|| default_max_zoom(grid.spacing));
    if max_zoom > 24 {
        return Err(Error::Invalid(format!("the max zoom is {max_zoom}; at most 24")));
    }
    let (west, south) = (grid.x0, grid.z0);
    let (east, north) = (grid.x0 + f64::from(grid.cols - 1) * grid.spacing, grid.z0 + f64::from(grid.rows - 1) * grid.spacing);
    let extent = (east - west).max(north - south);
    let fit = (0..=max_zoom).rev().find(|&z| mercator::tile_metres(z) >= extent).unwrap_or(0);
    let min_zoom = min_zoom.unwrap_or(fit).min(max_zoom);
    let ranges: Vec<[u32; 4]> = (min_zoom..=max_zoom).map(|z| tile_range(z, west, south, east, north)).collect();
    let top = *ranges.last().expect("one zoom at least");

    // Each layer whose bake files exist; the others are said and left out.
    let tiles_dir = out.join("tiles");
    let mut jobs: Vec<(Layer, Box<dyn AnyJob>)> = Vec::new();
    for &layer in &layers {
        match open_layer(layer, &work, &grid, &flora_class, &tiles_dir.join(layer.name()), min_zoom, &ranges)? {
            Some(j) => jobs.push((layer, j)),
            None => reporter.note(format!("layer `{layer}`: the terrain feeds no such map; left out")),
        }
    }
    let written = Written::default();
    {
        let progress = Progress::new(&*reporter, u64::from(top[3] - top[1] + 1), "tile rows", "tiles");
        // The layers side by side: each reads its own files (a PNG's rows decode serially),
        // so one layer's reading overlaps the others' resampling and encoding.
        for ty in top[1]..=top[3] {
            jobs.par_iter_mut().try_for_each(|(_, j)| j.row(&grid, max_zoom, top, ty, &written))?;
            progress.inc(1);
        }
        progress.set_stage("lower zooms");
        jobs.par_iter_mut().try_for_each(|(_, j)| j.finish(&written))?;
        progress.finish();
    }
    let written_layers: Vec<Layer> = jobs.iter().map(|(l, _)| *l).collect();
    drop(jobs);

    let meta = tiles_json(&name, &grid, &written_layers, min_zoom, max_zoom, &work, &flora_class, pmtiles)?;
    trnbake_raster::fsutil::write_atomic(&out.join("tiles.json"), serde_json::to_string_pretty(&meta).expect("JSON").as_bytes())
        .map_err(|e| Error::io(&out.join("tiles.json"), e))?;
    // The layers' archives side by side (each reads its tiles back, hashes and writes them:
    // one's reading overlaps another's writing).
    let archives: Vec<PathBuf> =
        if pmtiles { written_layers.par_iter().map(|l| write_pmtiles(&out, *l, &ranges, min_zoom, &meta)).collect::<Result<_>>()? } else { Vec::new() };
    viewer::write_page(&out, &meta, &assets, &*reporter)?;
    if !keep_bake {
        std::fs::remove_dir_all(&work).map_err(|e| Error::io(&work, e))?;
    }
    Ok(TilesReport {
        layers: written_layers.iter().map(|l| l.name().to_string()).collect(),
        min_zoom,
        max_zoom,
        tiles: written.tiles.load(Ordering::Relaxed),
        tile_bytes: written.bytes.load(Ordering::Relaxed),
        pmtiles: archives,
        bake_seconds,
        tile_seconds: t1.elapsed().as_secs_f64(),
        grid,
    })
}

fn open_layer(layer: Layer, work: &Path, grid: &Grid, flora_class: &str, dir: &Path, min_zoom: u8, ranges: &[[u32; 4]]) -> Result<Option<Box<dyn AnyJob>>> {
    let (cols, rows) = (grid.cols, grid.rows);
    let file = |n: &str| Some(work.join(n)).filter(|p| p.is_file());
    let png = |n: &str| -> Result<Option<Box<dyn RowReader>>> {
        file(n).map(|p| PngRows::open(&p, cols, rows).map(|r| Box::new(r) as Box<dyn RowReader>)).transpose()
    };
    let tif = |n: &str| -> Result<Option<Box<dyn RowReader>>> {
        file(n).map(|p| TiffRows::open(&p, cols, rows).map(|r| Box::new(r) as Box<dyn RowReader>)).transpose()
    };
    let rgba = |reader: Option<Box<dyn RowReader>>, paint: Paint, pick: bool| -> Option<Box<dyn AnyJob>> {
        reader.map(|r| {
            Box::new(Job {
                band: Band::new(r, cols, rows),
                sampler: RgbaSampler(paint),
                pyramid: Pyramid::new(dir, min_zoom, ranges, pick),
                strip: Vec::new(),
                columns: Vec::new(),
            }) as Box<dyn AnyJob>
        })
    };
    Ok(match layer {
        Layer::Height => {
            let Some(p) = file("height.r32") else { return Err(Error::Format(format!("{}: the bake wrote no height.r32", work.display()))) };
            let r: Box<dyn RowReader> = Box::new(RawHeights::open(&p, *grid)?);
            Some(Box::new(Job {
                band: Band::new(r, cols, rows),
                sampler: HeightSampler,
                pyramid: Pyramid::new(dir, min_zoom, ranges, false),
                strip: Vec::new(),
                columns: Vec::new(),
            }))
        }
        Layer::Color => rgba(png("preview.png")?, Paint::Rgb, false),
        Layer::Splat => rgba(png("splat_preview.png")?, Paint::Rgb, false),
        Layer::Water => rgba(png("water_mask.png")?, Paint::Water, false),
        Layer::Flora => rgba(png(&format!("flora_{flora_class}_density.png"))?, Paint::Density, false),
        Layer::Shader => rgba(tif("shader_id.tif")?, Paint::Id16, true),
        Layer::FloraId => {
            let mut parts = Vec::new();
            for class in ["collidable", "noncollidable", "radial_near"] {
                match tif(&format!("flora_{class}_id.tif"))? {
                    Some(r) => parts.push(r),
                    None => return Ok(None),
                }
            }
            rgba(Some(Box::new(Stacked::new(parts, cols))), Paint::Ids, true)
        }
    })
}

/// `OUT/tiles.json`: the mapping, the grid, the legends and a TileJSON 3.0 object per layer.
#[allow(clippy::too_many_arguments)]
fn tiles_json(
    name: &str,
    grid: &Grid,
    layers: &[Layer],
    min_zoom: u8,
    max_zoom: u8,
    work: &Path,
    flora_class: &str,
    pmtiles: bool,
) -> Result<serde_json::Value> {
    use serde_json::json;
    let (west, south) = (grid.x0, grid.z0);
    let (east, north) = (grid.x0 + f64::from(grid.cols - 1) * grid.spacing, grid.z0 + f64::from(grid.rows - 1) * grid.spacing);
    let (lon0, lat0) = mercator::to_lon_lat(west, south);
    let (lon1, lat1) = mercator::to_lon_lat(east, north);
    let (clon, clat) = mercator::to_lon_lat((west + east) / 2.0, (south + north) / 2.0);
    let legend = |f: &str| -> Result<serde_json::Value> {
        let p = work.join(f);
        if !p.is_file() {
            return Ok(serde_json::Value::Null);
        }
        let text = std::fs::read_to_string(&p).map_err(|e| Error::io(&p, e))?;
        serde_json::from_str(&text).map_err(|e| Error::format(&p, e))
    };
    let mut tilesets = serde_json::Map::new();
    for l in layers {
        let mut tj = json!({
            "tilejson": "3.0.0",
            "name": format!("{name} {}", l.name()),
            "scheme": "xyz",
            "tiles": [format!("tiles/{}/{{z}}/{{x}}/{{y}}.png", l.name())],
            "tileSize": TILE_PX,
            "minzoom": min_zoom,
            "maxzoom": max_zoom,
            "bounds": [lon0, lat0, lon1, lat1],
            "center": [clon, clat, max_zoom.saturating_sub(3).max(min_zoom)],
            "encoding": l.encoding(),
        });
        if *l == Layer::Height {
            tj["sample_position"] = json!("pixel (i, j) of tile (x, y) at zoom z is the height at easting -H + (512 x + i) p, northing H - (512 y + j) p (H = pi * 6378137, p = 2 H / (512 * 2^z)): its north-west corner, where MapLibre reads it; bilinear in between");
        }
        if *l == Layer::Flora {
            tj["flora_class"] = json!(flora_class);
        }
        if pmtiles {
            tj["pmtiles"] = json!(format!("{}.pmtiles", l.name()));
        }
        tilesets.insert(l.name().to_string(), tj);
    }
    Ok(json!({
        "trnbake_version": env!("CARGO_PKG_VERSION"),
        "name": name,
        "mapping": {
            "projection": "EPSG:3857 (spherical Web Mercator, radius 6378137 m)",
            "origin": "the map centre, world (0, 0), is longitude 0, latitude 0",
            "scale": "one world metre is one Mercator metre: easting = x (east), northing = z (north)",
            "to_lon_lat": "lon = degrees(x / 6378137); lat = degrees(2 * atan(exp(z / 6378137)) - pi / 2)",
            "radius": mercator::RADIUS,
        },
        "grid": { "x0": grid.x0, "z0": grid.z0, "spacing": grid.spacing, "cols": grid.cols, "rows": grid.rows,
                  "extent": [west, south, east, north] },
        "pixel_metres_at_maxzoom": pixel_metres(max_zoom),
        "legends": { "splat": legend("splat_legend.json")?, "flora": legend("flora_legend.json")? },
        "layers": tilesets,
    }))
}

/// `OUT/{layer}.pmtiles`: the layer's tiles (read back from the folder) in one archive.
fn write_pmtiles(out: &Path, layer: Layer, ranges: &[[u32; 4]], min_zoom: u8, meta: &serde_json::Value) -> Result<PathBuf> {
    use pmtiles::{PmTilesWriter, TileCoord, TileType};
    let path = out.join(format!("{}.pmtiles", layer.name()));
    let max_zoom = min_zoom + ranges.len() as u8 - 1;
    let tj = &meta["layers"][layer.name()];
    let b = |i: usize| tj["bounds"][i].as_f64().unwrap_or(0.0);
    let c = |i: usize| tj["center"][i].as_f64().unwrap_or(0.0);
    let pm = |e: pmtiles::PmtError| Error::Format(format!("{}: {e}", path.display()));
    let mut file = trnbake_raster::fsutil::AtomicFile::create(&path).map_err(|e| Error::io(&path, e))?;
    {
        let mut w = PmTilesWriter::new(TileType::Png)
            .min_zoom(min_zoom)
            .max_zoom(max_zoom)
            .bounds(b(0), b(1), b(2), b(3))
            .center(c(0), c(1))
            .center_zoom(c(2) as u8)
            .metadata(serde_json::to_string(tj).expect("JSON"))
            .create(file.writer())
            .map_err(pm)?;
        // In tile-id order (zoom, then the Hilbert curve), as readers fetch best.
        let mut coords: Vec<(u64, u8, u32, u32)> = Vec::new();
        for (i, r) in ranges.iter().enumerate() {
            let z = min_zoom + i as u8;
            for y in r[1]..=r[3] {
                for x in r[0]..=r[2] {
                    coords.push((pmtiles::TileId::from(TileCoord::new(z, x, y).map_err(pm)?).value(), z, x, y));
                }
            }
        }
        coords.sort_unstable();
        for (_, z, x, y) in coords {
            let p = out.join("tiles").join(layer.name()).join(z.to_string()).join(x.to_string()).join(format!("{y}.png"));
            let bytes = std::fs::read(&p).map_err(|e| Error::io(&p, e))?;
            w.add_tile(TileCoord::new(z, x, y).map_err(pm)?, &bytes).map_err(pm)?;
        }
        w.finalize().map_err(pm)?;
    }
    file.commit(true).map_err(|e| Error::io(&path, e))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tap on the grid and off either end: the bilinear posts clamp, the nearest post
    /// is none off the grid.
    #[test]
    fn taps() {
        assert_eq!(Tap::new(2.25, 10), Tap { lo: 2, hi: 3, f: 0.25, near: Some(2) });
        assert_eq!(Tap::new(2.5, 10), Tap { lo: 2, hi: 3, f: 0.5, near: Some(3) });
        assert_eq!(Tap::new(-0.75, 10), Tap { lo: 0, hi: 1, f: 0.0, near: None });
        assert_eq!(Tap::new(-0.25, 10), Tap { lo: 0, hi: 1, f: 0.0, near: Some(0) });
        assert_eq!(Tap::new(9.4, 10), Tap { lo: 9, hi: 9, f: 0.0, near: Some(9) });
        assert_eq!(Tap::new(9.5, 10), Tap { lo: 9, hi: 9, f: 0.0, near: None });
    }

    /// Decoded RGBA pixels of a PNG tile.
    fn pixels(path: &Path) -> Vec<u8> {
        let mut r = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap())).read_info().unwrap();
        let mut buf = vec![0; r.output_buffer_size().unwrap()];
        let info = r.next_frame(&mut buf).unwrap();
        buf.truncate(info.buffer_size());
        buf
    }

    #[test]
    fn demo_tiles_hold_the_bilinear_heights_where_maplibre_reads_them() {
        let out = std::env::temp_dir().join(format!("trnbake-tiles-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        let mut bake = BakeRequest::demo(&out);
        bake.spacing = Some(32.0);
        bake.backend = trnbake_bake::Backend::Cpu;
        let heights = trnbake_swg::eval::HeightEvaluator::new(&bake.terrain, &bake.height).unwrap();
        let r = run(TilesRequest {
            bake,
            out: out.clone(),
            layers: vec![Layer::Height, Layer::Color, Layer::Shader],
            max_zoom: None,
            min_zoom: None,
            flora_class: "collidable".into(),
            pmtiles: true,
            assets: viewer::Assets::Cdn,
            keep_bake: false,
        })
        .unwrap();
        assert_eq!(r.max_zoom, mercator::max_zoom_for(32.0));
        assert!(r.tiles > 0 && r.pmtiles.len() == 3 && r.pmtiles.iter().all(|p| p.is_file()));
        let meta: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("tiles.json")).unwrap()).unwrap();
        assert_eq!(meta["layers"]["height"]["encoding"], "terrarium");
        assert!(std::fs::read_to_string(out.join("index.html")).unwrap().contains("integrity=\"sha384-"));
        // Every pixel of a max-zoom tile inside the map: the bilinear of the four posts
        // around its north-west corner, to the Terrarium step.
        let g = r.grid;
        let z = r.max_zoom;
        let p = mercator::pixel_metres(z);
        let [x0, y0, x1, y1] = tile_range(z, g.x0, g.z0, g.x0 + f64::from(g.cols - 1) * g.spacing, g.z0 + f64::from(g.rows - 1) * g.spacing);
        let post = |c: u32, row: u32| f64::from(heights.height_at((g.x0 + f64::from(c) * g.spacing) as f32, (g.z0 + f64::from(row) * g.spacing) as f32));
        let mut checked = 0;
        for (tx, ty) in [(x0, y0), (x1, y1), ((x0 + x1) / 2, (y0 + y1) / 2)] {
            let px = pixels(&out.join(format!("tiles/height/{z}/{tx}/{ty}.png")));
            for j in (0..512).step_by(13) {
                for i in (0..512).step_by(11) {
                    let x = -mercator::HALF_WORLD + f64::from(tx * 512 + i) * p;
                    let zz = mercator::HALF_WORLD - f64::from(ty * 512 + j) * p;
                    let (u, v) = ((x - g.x0) / g.spacing, (zz - g.z0) / g.spacing);
                    if u < 0.0 || v < 0.0 || u >= f64::from(g.cols - 1) || v >= f64::from(g.rows - 1) {
                        continue;
                    }
                    let (c, row) = (u.floor() as u32, v.floor() as u32);
                    let (fu, fv) = (u - f64::from(c), v - f64::from(row));
                    let want =
                        (post(c, row) * (1.0 - fu) + post(c + 1, row) * fu) * (1.0 - fv) + (post(c, row + 1) * (1.0 - fu) + post(c + 1, row + 1) * fu) * fv;
                    let k = ((j * 512 + i) * 3) as usize;
                    let got = mercator::terrarium_decode([px[k], px[k + 1], px[k + 2]]);
                    assert!((got - want).abs() <= 0.5 / 256.0 + 1e-3, "tile {z}/{tx}/{ty} pixel {i},{j}: {got} m, the posts give {want} m");
                    checked += 1;
                }
            }
        }
        assert!(checked > 200, "{checked} pixels checked");
        std::fs::remove_dir_all(&out).unwrap();
    }
}
