//! Golden-image checks (`trnbake check`): re-bake every fixture of a golden folder, compare
//! each map with its expected image and report, or (`--bless`) rewrite the expected images.
//!
//! A golden folder holds `golden.json` (the [`Manifest`]), the fixtures' terrains (`.json`
//! compiled in memory, or `.trn`), the bitmaps they read under a data root, and one small
//! image per map and fixture: for heights a 16-bit greyscale PNG written like `bake`'s
//! `height.png`, whose encoding (`metres = raw · scale + offset`) the manifest records so
//! differences are reported in steps of the image (LSB) and in metres.
//!
//! Differences are counted per post in LSB, against a per-map tolerance: the CPU and GPU
//! backends agree bit for bit, so 0–1 LSB is right for trnbake's own corpus, while a user
//! comparing against another machine's goldens may allow more. Later maps (splat, flora) are
//! further entries in a fixture's `maps` list; adding one changes no existing golden.

pub mod compare;
pub mod coverage;
pub mod image;
pub mod lock;
pub mod report;

use crate::{backend_name, choose_gpu, heights_in_memory, post_count, Backend};
use crate::{Error, Progress, Reporter, Result};
use compare::{compare, height_raster, Comparison, Raster};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Instant;
use trnbake_gpu::GpuContext;
use trnbake_raster::bail;
use trnbake_raster::error::Context;
use trnbake_raster::fsutil::write_atomic;
use trnbake_raster::{u16_scale_offset, write_png16};
use trnbake_swg::eval::{Grid, HeightEvaluator};
use trnbake_swg::model::Terrain;
use trnbake_swg::plan::HeightOptions;

/// The manifest's file name inside a golden folder.
pub const MANIFEST_FILE: &str = "golden.json";
/// The manifest format this trnbake reads and writes.
pub const FORMAT: u32 = 1;

/// `golden.json`: the fixtures of a golden folder. Paths are relative to the folder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: u32,
    pub fixtures: Vec<Fixture>,
}

/// One terrain baked over one grid, with the maps checked for it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fixture {
    /// Names the fixture in reports and its images' default file names (letters, digits, `_-.`).
    pub name: String,
    /// The terrain: a JSON terrain (as `trnbake decompile` writes it; validated and compiled in
    /// memory) or a `.trn`.
    pub terrain: String,
    /// Where bitmap paths such as `terrain/x.tga` resolve (as `--data-root`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_root: Option<String>,
    /// Post spacing in metres. Keep fixtures small (a few hundred posts a side): a golden
    /// should show a change at a glance and check in seconds, on lavapipe too.
    pub spacing: f64,
    /// West, south, east, north posts in world metres; default: the whole map.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<[f64; 4]>,
    /// Bake with the road and river height model (`--roads on`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub roads: bool,
    /// The FBIT gain (`--bitmap-gain`), on unless set to false.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub bitmap_gain: bool,
    /// The maps checked; `[{"map": "height"}]` when absent.
    #[serde(default = "default_maps")]
    pub maps: Vec<MapGolden>,
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

fn default_maps() -> Vec<MapGolden> {
    vec![MapGolden::new(GoldenImage::Height)]
}

fn default_tolerance() -> u64 {
    1
}

/// The images a fixture can check, each an image of one map of the catalogue
/// ([`GoldenImage::map`]; `trnbake_swg::maps::MAPS`).
///
/// - `height`: 16-bit grey, the bake's height PNG encoding (scale/offset in the manifest).
/// - `splat`: 8-bit RGBA, the splat weights of the fixture's first four shader families by
///   id (ASCN families, ASRP destinations, road/river/ribbon shader families), as `bake`'s
///   `splat_0.png` when those are all its families.
/// - `flora_<class>`: 16-bit grey + alpha per post: the most likely family id of the class,
///   and its placement probability (0..65535 = 0..1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GoldenImage {
    Height,
    Splat,
    FloraCollidable,
    FloraNoncollidable,
    FloraRadialNear,
    FloraRadialFar,
}

impl GoldenImage {
    /// The map of the catalogue this image checks.
    pub fn map(self) -> trnbake_swg::maps::MapKind {
        use trnbake_swg::maps::MapKind;
        match self {
            GoldenImage::Height => MapKind::Height,
            GoldenImage::Splat => MapKind::Splat,
            GoldenImage::FloraCollidable | GoldenImage::FloraNoncollidable | GoldenImage::FloraRadialNear | GoldenImage::FloraRadialFar => MapKind::Flora,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            GoldenImage::Height => "height",
            GoldenImage::Splat => "splat",
            GoldenImage::FloraCollidable => "flora_collidable",
            GoldenImage::FloraNoncollidable => "flora_noncollidable",
            GoldenImage::FloraRadialNear => "flora_radial_near",
            GoldenImage::FloraRadialFar => "flora_radial_far",
        }
    }

    /// The flora class index (`trnbake_swg::plan::FLORA_CLASSES`) of a flora map.
    fn flora_class(self) -> Option<usize> {
        match self {
            GoldenImage::FloraCollidable => Some(0),
            GoldenImage::FloraNoncollidable => Some(1),
            GoldenImage::FloraRadialNear => Some(2),
            GoldenImage::FloraRadialFar => Some(3),
            _ => None,
        }
    }

    /// (channels, bits per sample) of the map's image.
    fn image_shape(self) -> (u32, u8) {
        match self {
            GoldenImage::Height => (1, 16),
            GoldenImage::Splat => (4, 8),
            _ => (2, 16),
        }
    }
}

/// One expected image and how far a bake may stray from it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MapGolden {
    pub map: GoldenImage,
    /// The expected image; default `<fixture>.<map>.png`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Largest difference of one sample that passes, in steps (LSB) of the image.
    #[serde(default = "default_tolerance")]
    pub tolerance_lsb: u64,
    /// How many posts may exceed the tolerance before the map fails.
    #[serde(default)]
    pub max_posts_over: u64,
    /// Height images: metres per raw step (`metres = raw · height_scale + height_offset`),
    /// written by `--bless` (and into the PNG's tEXt chunks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height_scale: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height_offset: Option<f64>,
}

impl MapGolden {
    pub fn new(map: GoldenImage) -> Self {
        MapGolden { map, file: None, tolerance_lsb: default_tolerance(), max_posts_over: 0, height_scale: None, height_offset: None }
    }

    /// The image's file name inside the golden folder.
    pub fn file_name(&self, fixture: &str) -> String {
        self.file.clone().unwrap_or_else(|| format!("{fixture}.{}.png", self.map.name()))
    }
}

impl Manifest {
    /// Read and check `DIR/golden.json`; errors name the file and the JSON path.
    pub fn load(dir: &Path) -> Result<Manifest> {
        let path = dir.join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {} (a golden folder needs one; see README, \"Golden checks in CI\")", path.display()))?;
        let de = &mut serde_json::Deserializer::from_str(&text);
        let m: Manifest = serde_path_to_error::deserialize(de).map_err(|e| Error::Invalid(format!("{}: at `{}`: {}", path.display(), e.path(), e.inner())))?;
        if m.format != FORMAT {
            bail!("{}: format {} is not one this trnbake reads ({FORMAT})", path.display(), m.format);
        }
        let mut names = HashSet::new();
        for (i, f) in m.fixtures.iter().enumerate() {
            let at = format!("{}: fixtures[{i}]", path.display());
            if f.name.is_empty() || !f.name.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)) {
                bail!("{at}.name: `{}` must be letters, digits, `_`, `-` or `.` (it names files)", f.name);
            }
            if !names.insert(f.name.as_str()) {
                bail!("{at}.name: fixture `{}` is listed twice", f.name);
            }
            if f.maps.is_empty() {
                bail!("{at}.maps: fixture `{}` checks no map", f.name);
            }
            let mut kinds = HashSet::new();
            for (j, m) in f.maps.iter().enumerate() {
                if !kinds.insert(m.map) {
                    bail!("{at}.maps[{j}]: the {} map of `{}` is listed twice", m.map.name(), f.name);
                }
            }
        }
        Ok(m)
    }

    fn save(&self, dir: &Path) -> Result<()> {
        let path = dir.join(MANIFEST_FILE);
        let mut text = serde_json::to_string_pretty(self)?;
        text.push('\n');
        Ok(write_atomic(&path, text.as_bytes()).with_context(|| format!("cannot write {}", path.display()))?)
    }
}

/// Load a fixture's terrain: `.json` is validated and compiled in memory, anything else read
/// as a `.trn`.
pub fn load_terrain(path: &Path) -> Result<Terrain> {
    if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json")) {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        Ok(trnbake_swg::model::json::terrain_from_json(&text, &path.display().to_string())?)
    } else {
        Ok(Terrain::load(path)?)
    }
}

/// What `trnbake check` was asked to do.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    pub golden: PathBuf,
    pub backend: Backend,
    /// Rewrite the goldens instead of comparing.
    pub bless: bool,
    /// Where the reports (`report.html`, `report.md`, `summary.md`, `junit.xml`) and the images
    /// of failing maps go (check only); nothing is written without one.
    pub report: Option<PathBuf>,
    /// Only these fixtures (all when empty).
    pub only: Vec<String>,
}

/// How one map (or a fixture that could not be baked) came out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    Pass,
    Fail,
    /// The fixture could not be baked (bad terrain, missing bitmap, ...).
    Error,
    /// `--bless`: the image did not exist and was written.
    Created,
    /// `--bless`: the image differed and was rewritten.
    Updated,
    /// `--bless`: the image already matched exactly and was left alone.
    Unchanged,
}

impl Status {
    pub fn label(&self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Error => "ERROR",
            Status::Created => "CREATED",
            Status::Updated => "UPDATED",
            Status::Unchanged => "UNCHANGED",
        }
    }

    pub fn is_failure(&self) -> bool {
        matches!(self, Status::Fail | Status::Error)
    }
}

/// The result for one map of one fixture.
#[derive(Clone, Debug)]
pub struct MapOutcome {
    pub fixture: String,
    /// The map's name, or `bake` when the fixture itself failed.
    pub map: String,
    /// The golden image (relative to the golden folder).
    pub file: String,
    pub status: Status,
    /// One line: why it failed, or what changed.
    pub message: String,
    /// Posts (columns, rows) of the fixture's grid.
    pub size: Option<(u32, u32)>,
    pub grid: Option<Grid>,
    pub tolerance_lsb: u64,
    pub max_posts_over: u64,
    /// Metres per LSB (height maps).
    pub lsb_metres: Option<f64>,
    pub comparison: Option<Comparison>,
    /// Seconds the fixture took to bake.
    pub bake_seconds: f64,
    /// Images written for this map, relative to the report folder.
    pub images: Vec<String>,
    /// A failing map's pictures for the HTML report (when a report folder is asked for).
    pub pictures: Option<image::Pictures>,
}

impl MapOutcome {
    /// World box (west, south, east, north, metres) of the posts that differ.
    pub fn changed_area(&self) -> Option<[f64; 4]> {
        let (b, g) = (self.comparison.as_ref()?.changed_box?, self.grid?);
        // Image row 0 is the north edge (grid row rows−1).
        let z = |row: u32| g.z0 + f64::from(g.rows - 1 - row) * g.spacing;
        let x = |col: u32| g.x0 + f64::from(col) * g.spacing;
        Some([x(b[0]), z(b[3]), x(b[2]), z(b[1])])
    }

    /// Numbers of a comparison in words: "max 3 LSB (0.012 m), 40 of 66049 posts changed, PSNR 80.1 dB".
    pub fn figures(&self) -> String {
        let Some(c) = &self.comparison else { return String::new() };
        if c.identical() {
            return "identical".into();
        }
        let metres = self.lsb_metres.map_or(String::new(), |s| format!(" ({} m)", fmt_metres(c.max_diff as f64 * s)));
        let mut s = format!("max {} LSB{metres}, {} of {} posts changed", c.max_diff, c.posts_changed, c.posts);
        if c.posts_over > 0 {
            s += &format!(", {} over {} LSB", c.posts_over, self.tolerance_lsb);
        }
        s += &format!(", PSNR {:.1} dB", c.psnr_db);
        if let Some(a) = self.changed_area_text() {
            s += &format!(", in {a} m");
        }
        s
    }

    /// [`Self::changed_area`] as `x W…E, z S…N`.
    pub fn changed_area_text(&self) -> Option<String> {
        self.changed_area().map(|a| format!("x {}…{}, z {}…{}", a[0], a[2], a[1], a[3]))
    }
}

/// Metres with enough digits to tell LSBs apart (a 16-bit step is a few mm on most maps).
pub fn fmt_metres(m: f64) -> String {
    match m.abs() {
        a if a == 0.0 || a >= 0.1 => format!("{m:.3}"),
        a if a >= 1e-4 => format!("{m:.4}"),
        _ => format!("{m:.2e}"),
    }
}

/// The outcome of a whole check (or bless).
#[derive(Clone, Debug)]
pub struct CheckSummary {
    pub golden: PathBuf,
    pub bless: bool,
    /// `cpu` or `gpu`.
    pub backend: &'static str,
    pub adapter: Option<String>,
    pub outcomes: Vec<MapOutcome>,
    pub seconds: f64,
    /// Posts baked over all fixtures.
    pub posts: u64,
    /// The command that blesses the fixtures whose maps failed (their goldens exist or can be
    /// written), as it runs from the folder the check ran in; `None` when none failed.
    pub bless_command: Option<String>,
}

impl CheckSummary {
    pub fn failures(&self) -> usize {
        self.outcomes.iter().filter(|o| o.status.is_failure()).count()
    }
}

/// A fixture baked: its grid and heights (row 0 = south).
struct Baked {
    grid: Grid,
    heights: Vec<f32>,
    /// The surface passes (on the check's backend), when a map of the fixture needs them.
    surface: Option<trnbake_swg::surface::grid::SurfaceGrid>,
    /// The splat channels: the first four shader families by id.
    splat_families: Vec<i32>,
    seconds: f64,
}

fn bake_fixture(dir: &Path, f: &Fixture, gpu: Option<&GpuContext>, reporter: &dyn Reporter) -> Result<Baked> {
    let start = Instant::now();
    let path = dir.join(&f.terrain);
    let t = load_terrain(&path)?;
    let opts = HeightOptions { roads: f.roads, bitmap_gain: f.bitmap_gain, data_root: f.data_root.as_ref().map(|d| dir.join(d)), missing_bitmaps_zero: false };
    let e = HeightEvaluator::new(&t, &opts).with_context(|| path.display().to_string())?;
    let half = f64::from(t.header.map_width) / 2.0;
    let [x0, z0, x1, z1] = f.region.unwrap_or([-half, -half, half, half]);
    let cols = post_count(x0, x1, f.spacing).with_context(|| format!("fixture `{}`: region x", f.name))?;
    let rows = post_count(z0, z1, f.spacing).with_context(|| format!("fixture `{}`: region z", f.name))?;
    let grid = Grid { x0, z0, spacing: f.spacing, cols, rows };
    let heights = heights_in_memory(&e, &grid, gpu)?;
    let (mut surface, mut splat_families) = (None, Vec::new());
    if f.maps.iter().any(|m| m.map != GoldenImage::Height) {
        let se = trnbake_swg::surface::SurfaceEvaluator::new(&t, &opts, Default::default()).with_context(|| path.display().to_string())?;
        splat_families = se
            .plan
            .affectors
            .iter()
            .flat_map(|a| match a.kind {
                trnbake_swg::plan::AFFECTOR_SHADER_CONSTANT => vec![a.index as i32],
                trnbake_swg::plan::AFFECTOR_SHADER_REPLACE => vec![a.operation],
                trnbake_swg::plan::AFFECTOR_ROAD_SHADER if a._pad != 0 => vec![a.operation, a._pad as i32],
                trnbake_swg::plan::AFFECTOR_ROAD_SHADER => vec![a.operation],
                _ => Vec::new(),
            })
            .collect();
        splat_families.sort_unstable();
        splat_families.dedup();
        splat_families.truncate(4);
        // The surface passes on the backend that baked the heights; the CPU where the
        // kernels cannot compute the fixture exactly.
        let on = crate::surface_maps::surface_on_backend(gpu, &grid, &heights, &e, &se, Default::default())
            .map_err(|err| Error::Invalid(format!("fixture `{}`: surface passes on the GPU: {err}", f.name)))?;
        if let Some(why) = &on.cpu_because {
            reporter.note(format!("fixture `{}`: surface maps on the CPU: {why}", f.name));
        }
        surface = Some(on.surface);
    }
    Ok(Baked { grid, heights, surface, splat_families, seconds: start.elapsed().as_secs_f64() })
}

/// The raster a map's bake gives, encoded like its golden. Heights need the golden's scale
/// and offset (`None` when the manifest has none yet).
fn baked_raster(m: &MapGolden, b: &Baked) -> Option<Raster> {
    match m.map {
        GoldenImage::Height => Some(height_raster(&b.heights, b.grid.cols, b.grid.rows, m.height_scale?, m.height_offset?)),
        kind => Some(surface_raster(kind, b)),
    }
}

/// A splat or flora map of the bake as image samples (row 0 = north).
fn surface_raster(kind: GoldenImage, b: &Baked) -> Raster {
    let s = b.surface.as_ref().expect("surface maps are evaluated when a fixture checks one");
    let (channels, bits) = kind.image_shape();
    let cols = b.grid.cols as usize;
    let mut samples = Vec::with_capacity(s.results.len() * channels as usize);
    for row in s.results.chunks_exact(cols).rev() {
        for r in row {
            match kind.flora_class() {
                Some(class) => {
                    let (id, p) = r.flora[class];
                    samples.push(id.clamp(0, 65535));
                    samples.push((f64::from(p) * 65535.0).round().clamp(0.0, 65535.0) as i32);
                }
                None => {
                    let w = crate::surface_maps::splat_bytes(r, &b.splat_families);
                    samples.extend((0..4).map(|k| i32::from(w.get(k).copied().unwrap_or(0))));
                }
            }
        }
    }
    Raster { width: b.grid.cols, height: b.grid.rows, channels, bits, samples }
}

/// Read a map's golden image and check it against the manifest and the grid; `Err` says why
/// it cannot be compared.
fn read_golden(dir: &Path, fixture: &str, m: &MapGolden, b: &Baked, bless: &str) -> Result<Raster, String> {
    let file = m.file_name(fixture);
    let path = dir.join(&file);
    let bless_hint = format!("run `{bless}` to write it");
    if !path.exists() {
        return Err(format!("no golden image {} yet; {bless_hint}", path.display()));
    }
    let png = image::read_png(&path)?;
    let num = |k| png.text(k).and_then(|v| v.parse::<f64>().ok());
    use trnbake_raster::writers::png16::{KEY_OFFSET, KEY_SCALE};
    let text_encoding = num(KEY_SCALE).zip(num(KEY_OFFSET));
    let r = png.raster;
    if (r.width, r.height) != (b.grid.cols, b.grid.rows) {
        return Err(format!(
            "{} is {}×{} but the fixture bakes {}×{} posts (its spacing or region changed?); {bless_hint} anew",
            path.display(),
            r.width,
            r.height,
            b.grid.cols,
            b.grid.rows
        ));
    }
    match m.map {
        kind if kind != GoldenImage::Height => {
            if (r.channels, r.bits) != kind.image_shape() {
                return Err(format!(
                    "{} is not a {}-channel {}-bit {} image; {bless_hint} anew",
                    path.display(),
                    kind.image_shape().0,
                    kind.image_shape().1,
                    kind.name()
                ));
            }
        }
        _ => {
            if (r.channels, r.bits) != (1, 16) {
                return Err(format!("{} is not a 16-bit greyscale height image", path.display()));
            }
            let (Some(scale), Some(offset)) = (m.height_scale, m.height_offset) else {
                return Err(format!("{MANIFEST_FILE} has no height_scale/height_offset for {file}; {bless_hint}"));
            };
            // The PNG carries the same numbers: a mismatch means the image and the manifest
            // come from different blesses (an interrupted one, or a hand edit).
            if let Some((s, o)) = text_encoding {
                if (s, o) != (scale, offset) {
                    return Err(format!(
                        "{} was written with scale {s} and offset {o} but {MANIFEST_FILE} says {scale} and {offset} (an interrupted --bless?); {bless_hint} again",
                        path.display()
                    ));
                }
            }
        }
    }
    Ok(r)
}

/// Run `trnbake check` (or `--bless`) over a golden folder. Each map's outcome goes to
/// `on_outcome` as it is known (the command line prints [`MapOutcome::line`]); notes and the
/// fixtures' progress to `reporter`.
pub fn run(opts: &CheckOptions, reporter: &dyn Reporter, on_outcome: &mut dyn FnMut(&MapOutcome)) -> Result<CheckSummary> {
    let start = Instant::now();
    let dir = &opts.golden;
    // Held to the end: a bless reads golden.json, rewrites images and writes it back as one
    // step, so a concurrent bless of other fixtures starts from what this one wrote.
    let _lock = lock::lock(dir, opts.bless, reporter)?;
    let mut manifest = Manifest::load(dir)?;
    for name in &opts.only {
        if !manifest.fixtures.iter().any(|f| &f.name == name) {
            let all: Vec<&str> = manifest.fixtures.iter().map(|f| f.name.as_str()).collect();
            bail!("{} has no fixture `{name}` (it has {})", dir.join(MANIFEST_FILE).display(), all.join(", "));
        }
    }
    let gpu = choose_gpu(opts.backend, None, reporter)?;
    let mut summary = CheckSummary {
        golden: dir.clone(),
        bless: opts.bless,
        backend: backend_name(gpu.as_ref()),
        adapter: gpu.as_ref().map(|c| c.adapter.name.clone()),
        outcomes: Vec::new(),
        seconds: 0.0,
        posts: 0,
        bless_command: None,
    };
    let report_dir = opts.report.as_deref().filter(|_| !opts.bless);
    if let Some(r) = report_dir {
        std::fs::create_dir_all(r).with_context(|| format!("cannot create {}", r.display()))?;
    }
    let mut manifest_changed = false;
    let chosen = manifest.fixtures.iter().filter(|f| opts.only.is_empty() || opts.only.contains(&f.name)).count();
    let pb = Progress::new(reporter, chosen as u64, "fixtures", if opts.bless { "bless" } else { "check" });
    for f in manifest.fixtures.iter_mut().filter(|f| opts.only.is_empty() || opts.only.contains(&f.name)) {
        pb.set_stage(&f.name);
        let baked = match bake_fixture(dir, f, gpu.as_ref(), reporter) {
            Ok(b) => b,
            Err(e) => {
                let o = MapOutcome {
                    fixture: f.name.clone(),
                    map: "bake".into(),
                    file: f.terrain.clone(),
                    status: Status::Error,
                    message: format!("{e:#}"),
                    size: None,
                    grid: None,
                    tolerance_lsb: 0,
                    max_posts_over: 0,
                    lsb_metres: None,
                    comparison: None,
                    bake_seconds: 0.0,
                    images: Vec::new(),
                    pictures: None,
                };
                on_outcome(&o);
                summary.outcomes.push(o);
                pb.inc(1);
                continue;
            }
        };
        summary.posts += baked.heights.len() as u64;
        for m in &mut f.maps {
            let mut o = MapOutcome {
                fixture: f.name.clone(),
                map: m.map.name().into(),
                file: m.file_name(&f.name),
                status: Status::Pass,
                message: String::new(),
                size: Some((baked.grid.cols, baked.grid.rows)),
                grid: Some(baked.grid),
                tolerance_lsb: m.tolerance_lsb,
                max_posts_over: m.max_posts_over,
                lsb_metres: m.height_scale,
                comparison: None,
                bake_seconds: baked.seconds,
                images: Vec::new(),
                pictures: None,
            };
            let hint = bless_command(dir, &[f.name.as_str()]);
            let golden = read_golden(dir, &o.fixture, m, &baked, &hint);
            if opts.bless {
                manifest_changed |= bless_map(dir, f.name.as_str(), m, &baked, golden.ok(), &mut o)?;
            } else {
                check_map(opts.report.as_deref(), m, &baked, golden, &mut o)?;
            }
            on_outcome(&o);
            summary.outcomes.push(o);
        }
        pb.inc(1);
    }
    pb.finish();
    if manifest_changed {
        // After the images, so a manifest never names numbers of images not yet written.
        manifest.save(dir)?;
    }
    summary.seconds = start.elapsed().as_secs_f64();
    if !opts.bless {
        let mut failing: Vec<&str> = summary.outcomes.iter().filter(|o| o.status == Status::Fail).map(|o| o.fixture.as_str()).collect();
        failing.dedup();
        summary.bless_command = (!failing.is_empty()).then(|| bless_command(dir, &failing));
    }
    if let Some(r) = report_dir {
        report::write_all(r, &summary)?;
    }
    Ok(summary)
}

/// A word for a POSIX shell, quoted only when it needs it.
pub fn shell_word(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "_-./:@%+=,".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// `--flag VALUE`, or `--flag=VALUE` where the value would read as a flag.
fn flag(name: &str, value: &str) -> String {
    let v = shell_word(value);
    if value.starts_with('-') {
        format!(" --{name}={v}")
    } else {
        format!(" --{name} {v}")
    }
}

/// The `trnbake check --bless` command for some fixtures of the golden folder `dir` (as the
/// user named it, so it runs as written from where the check ran).
pub fn bless_command(dir: &Path, fixtures: &[&str]) -> String {
    let mut c = format!("trnbake check{} --bless", flag("golden", &dir.to_string_lossy()));
    for f in fixtures {
        c += &flag("fixture", f);
    }
    c
}

fn check_map(report_dir: Option<&Path>, m: &MapGolden, b: &Baked, golden: Result<Raster, String>, o: &mut MapOutcome) -> Result<()> {
    // Images of an earlier failing run must not outlive a pass.
    let images = [format!("{}.{}.diff.png", o.fixture, o.map), format!("{}.{}.side-by-side.png", o.fixture, o.map)];
    for i in report_dir.iter().flat_map(|d| images.iter().map(|i| d.join(i))) {
        let _ = std::fs::remove_file(i);
    }
    let expected = match golden {
        Ok(r) => r,
        Err(why) => {
            o.status = Status::Fail;
            o.message = why;
            return Ok(());
        }
    };
    let actual = baked_raster(m, b).expect("read_golden checked the encoding");
    let c = compare(&expected, &actual, m.tolerance_lsb);
    o.status = if c.posts_over > m.max_posts_over { Status::Fail } else { Status::Pass };
    if let (Status::Fail, Some(report_dir)) = (&o.status, report_dir) {
        let heat = image::heat_map(&expected, &actual, &c, m.tolerance_lsb);
        o.pictures = Some(image::Pictures::new(&expected, &actual, &heat).with_context(|| format!("{}/{}: cannot encode its pictures", o.fixture, o.map))?);
        let diff_path = report_dir.join(&images[0]);
        image::write_rgb_png(&diff_path, expected.width, expected.height, &heat).with_context(|| format!("cannot write {}", diff_path.display()))?;
        let (w, h, rgb) = image::side_by_side(&expected, &actual, &heat);
        let sbs_path = report_dir.join(&images[1]);
        image::write_rgb_png(&sbs_path, w, h, &rgb).with_context(|| format!("cannot write {}", sbs_path.display()))?;
        o.images = images.to_vec();
    }
    o.comparison = Some(c);
    o.message = o.figures();
    Ok(())
}

/// Rewrite one golden image when the bake differs from it (or it is missing); returns whether
/// the manifest entry changed.
fn bless_map(dir: &Path, fixture: &str, m: &mut MapGolden, b: &Baked, old: Option<Raster>, o: &mut MapOutcome) -> Result<bool> {
    if let (Some(old), Some(actual)) = (&old, baked_raster(m, b)) {
        let c = compare(old, &actual, m.tolerance_lsb);
        if c.identical() {
            o.status = Status::Unchanged;
            o.comparison = Some(c);
            o.message = "identical; left as it is".into();
            return Ok(false);
        }
        o.comparison = Some(c);
    }
    let file = m.file_name(fixture);
    let path = dir.join(&file);
    let existed = path.exists();
    // What changed, in the old image's encoding, before the new one replaces it.
    o.message = match (&o.comparison, existed) {
        (Some(_), _) => format!("was {}; rewritten", o.figures()),
        (None, true) => "rewritten (the old image could not be compared: other size or encoding)".into(),
        (None, false) => "written".into(),
    };
    match m.map {
        GoldenImage::Height => {
            let (min, max) = trnbake_raster::finite_min_max(&b.heights).unwrap_or((0.0, 0.0));
            let (scale, offset) = u16_scale_offset(min, max);
            let g = &b.grid;
            let pg = Grid { cols: g.cols, rows: g.rows, x0: g.x0, z0: g.z0, spacing: g.spacing };
            write_png16(&path, &pg, &b.heights, scale, offset).with_context(|| format!("cannot write {}", path.display()))?;
            m.height_scale = Some(scale);
            m.height_offset = Some(offset);
            o.lsb_metres = Some(scale);
        }
        kind => {
            let r = surface_raster(kind, b);
            image::write_raster_png(&path, &r).with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    m.file = Some(file);
    o.status = if existed { Status::Updated } else { Status::Created };
    Ok(true)
}

impl MapOutcome {
    /// The outcome as one line, as `trnbake check` prints it: `PASS      demo/height 65×65: …`.
    pub fn line(&self) -> String {
        let size = self.size.map_or(String::new(), |(c, r)| format!(" {c}×{r}"));
        let images = if self.images.is_empty() { String::new() } else { format!(" → {}", self.images.join(", ")) };
        format!("{:<9} {}/{}{size}: {}{images}", self.status.label(), self.fixture, self.map, self.message)
    }
}
