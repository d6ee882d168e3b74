//! A bake in the library's terms: a [`BakeRequest`] (plain fields, sensible defaults) is
//! validated into a [`Pipeline`] (the [`BakeJob`] and its height evaluator), which runs the
//! whole bake: tiles, backend choice with the GPU→CPU fallback, checkpoints, streaming writers,
//! the surface maps and the manifest. The command line only fills a request from its flags.

use std::path::{Path, PathBuf};

use sha2::Digest;
use trnbake_raster::hex;
use trnbake_raster::writers::set::{check_choice, ExportChoice, Format};
use trnbake_swg::eval::{Grid, HeightEvaluator};
use trnbake_swg::model::json::DEMO_TERRAIN_JSON;
use trnbake_swg::model::Terrain;
use trnbake_swg::plan::HeightOptions;
use trnbake_swg::surface::normals::NormalMethod;
use trnbake_swg::surface::{SurfaceEvaluator, SurfaceOptions};

use crate::engine::run_bake;
use crate::params::{BakeRecipe, MapRequest};
use crate::surface_maps::SurfaceMapsJob;
use crate::{post_count, Backend, BakeJob, BakeParams, BakeReport, Error, Result, Shard};
use trnbake_swg::maps::{default_maps, MapKind};
use trnbake_swg::spawn::SpawnRule;

/// What to bake. [`BakeRequest::from_file`], [`BakeRequest::demo`] or [`BakeRequest::new`] fill
/// the defaults (the whole map at the file's own post spacing, `auto` maps, GeoTIFF + PNG
/// heights, the `auto` backend); change any field, then [`BakeRequest::pipeline`].
#[derive(Clone, Debug)]
pub struct BakeRequest {
    pub terrain: Terrain,
    /// How the manifest names the input (a path, or what the terrain is).
    pub input: String,
    /// SHA-256 (hex) of the input's bytes: part of the resume/merge fingerprint.
    pub input_sha256: String,
    /// Where the terrain was read from, when it is a file (what `merge` reads it again from).
    pub input_path: Option<PathBuf>,
    /// The short name in the outputs' CRS (`SWG NAME local metres`).
    pub name: String,
    pub height: HeightOptions,
    pub surface: SurfaceOptions,
    pub normals: NormalMethod,
    /// Flora maps from the mean over N × N sub-posts of each post's square (1: the post
    /// alone); see [`SurfaceMapsJob::flora_supersample`].
    pub flora_supersample: u32,
    /// The `spawnable` map's limits (`--max-slope`, `--water-depth`; the navmesh's defaults).
    pub spawn: SpawnRule,
    /// West, south, east, north (world metres); `None`: the whole map.
    pub region: Option<[f64; 4]>,
    /// Metres between posts; `None`: the file's pole spacing.
    pub spacing: Option<f64>,
    /// Posts a tile side; `None`: 512 on the CPU backend, 2048 otherwise.
    pub tile: Option<u32>,
    /// Rows of posts a surface-map band (rounded up to a multiple of 128); `None`: about 2 M
    /// posts a band. The surface maps stream band by band: this bounds their memory.
    pub band_rows: Option<u32>,
    /// Maps to write: [`MapRequest::Auto`] (height plus every map the file feeds) and any
    /// [`MapKind`]s (the catalogue `trnbake_swg::maps::MAPS`).
    /// map the file feeds, and the preview).
    pub maps: Vec<MapRequest>,
    pub export: ExportChoice,
    pub backend: Backend,
    /// Use the first adapter whose name contains this text.
    pub adapter_filter: Option<String>,
    pub shard: Option<Shard>,
    pub outdir: PathBuf,
    /// Where notes, warnings and progress go; silent ([`crate::NullReporter`]) by default.
    pub reporter: std::sync::Arc<dyn crate::Reporter>,
}

impl BakeRequest {
    /// A request for a terrain already in memory; the fingerprint hashes its encoded bytes.
    pub fn new(terrain: Terrain, outdir: impl Into<PathBuf>) -> Self {
        let sha = hex(&sha2::Sha256::digest(terrain.to_bytes()));
        Self::with_input(terrain, "(terrain in memory)".into(), sha, "terrain".into(), outdir.into())
    }

    /// The built-in demo terrain (a 4 km map that exercises every rule kind).
    pub fn demo(outdir: impl Into<PathBuf>) -> Self {
        let sha = hex(&sha2::Sha256::digest(DEMO_TERRAIN_JSON.as_bytes()));
        let terrain = trnbake_swg::model::json::demo_terrain();
        Self::with_input(terrain, DEMO_INPUT.into(), sha, "terrain".into(), outdir.into())
    }

    /// A `.trn` file; bitmaps resolve under the folder above its `terrain/` folder (the client
    /// data layout) unless `height.data_root` is changed.
    pub fn from_file(path: &Path, outdir: impl Into<PathBuf>) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| Error::Invalid(format!("cannot read {}: {e}", path.display())))?;
        let terrain = Terrain::from_bytes(&bytes).map_err(|error| trnbake_swg::model::LoadError::Format { path: path.to_owned(), error })?;
        let name = path.file_stem().map_or("terrain".into(), |s| s.to_string_lossy().into_owned());
        let mut r = Self::with_input(terrain, path.display().to_string(), hex(&sha2::Sha256::digest(&bytes)), name, outdir.into());
        r.height.data_root = trnbake_swg::model::default_data_root(path);
        r.input_path = std::fs::canonicalize(path).ok();
        Ok(r)
    }

    fn with_input(terrain: Terrain, input: String, input_sha256: String, name: String, outdir: PathBuf) -> Self {
        BakeRequest {
            terrain,
            input,
            input_sha256,
            input_path: None,
            name,
            height: HeightOptions::default(),
            surface: SurfaceOptions::default(),
            normals: NormalMethod::default(),
            flora_supersample: 1,
            spawn: SpawnRule::default(),
            region: None,
            spacing: None,
            tile: None,
            band_rows: None,
            maps: vec![MapRequest::Auto],
            export: ExportChoice { formats: vec![Format::Tif, Format::Png], ..Default::default() },
            backend: Backend::Auto,
            adapter_filter: None,
            shard: None,
            outdir,
            reporter: crate::report::null(),
        }
    }

    /// Validates the request and builds the plans: the grid, the tiles, the export choice, the
    /// height evaluator and, when any surface map is wanted, the surface evaluator.
    pub fn pipeline(self) -> Result<Pipeline> {
        let recipe = self.recipe();
        let t = &self.terrain;
        let half = t.header.half_width();
        let spacing = self.spacing.unwrap_or(f64::from(t.header.pole_spacing()));
        let region = self.region.unwrap_or([-half, -half, half, half]);
        if !(spacing.is_finite() && spacing > 0.0) {
            return Err(Error::Invalid(format!("the post spacing must be a positive number of metres, not {spacing}")));
        }
        if let Some(r) = self.region {
            // A region off the map bakes what the rules give outside it (mostly their
            // defaults): refused when nothing of the map is in it, said when part is.
            let outside = r[0] > half || r[2] < -half || r[1] > half || r[3] < -half;
            let shown = format!("{},{},{},{}", r[0], r[1], r[2], r[3]);
            if outside {
                return Err(Error::OffMap { region: r, extent: t.header.extent_text() });
            }
            if !(t.header.on_map(r[0], r[1]) && t.header.on_map(r[2], r[3])) {
                self.reporter.warn(format!(
                    "the region {shown} reaches past the map's edge ({}); posts outside it hold what the rules give there",
                    t.header.extent_text()
                ));
            }
        }
        let cols = post_count(region[0], region[2], spacing)?;
        let rows = post_count(region[1], region[3], spacing)?;
        let tile = match self.tile {
            Some(0) => return Err(Error::Invalid("the tile size must be at least 1 post".into())),
            Some(n) => n,
            None if self.backend == Backend::Cpu => 512,
            None => 2048,
        };
        // Refuse an impossible preset/tiling now, not after the bake.
        check_choice(&self.export, cols, rows)?;
        let heights = HeightEvaluator::new(t, &self.height)?;
        for w in &heights.plan.warnings {
            self.reporter.warn(w);
        }
        let params = BakeParams {
            input: self.input.clone(),
            input_sha256: self.input_sha256.clone(),
            spacing,
            region: [region[0], region[1], region[0] + (cols - 1) as f64 * spacing, region[1] + (rows - 1) as f64 * spacing],
            cols,
            rows,
            tile,
            roads: self.height.roads,
            bitmap_gain: self.height.bitmap_gain,
            plan_sha256: crate::plan_sha256(&heights.plan),
        };
        let surface_maps = self.surface_maps_job()?;
        let job = BakeJob {
            surface_maps,
            grid: Grid { x0: region[0], z0: region[1], spacing, cols, rows },
            params,
            backend: self.backend,
            adapter_filter: self.adapter_filter,
            shard: self.shard,
            outdir: self.outdir,
            reporter: self.reporter,
            export: self.export,
            recipe,
        };
        Ok(Pipeline { job, heights })
    }

    /// What [`BakeRecipe::request`] rebuilds this request from.
    pub fn recipe(&self) -> BakeRecipe {
        BakeRecipe {
            input: self.input.clone(),
            input_sha256: self.input_sha256.clone(),
            input_path: self.input_path.clone(),
            name: self.name.clone(),
            // The data root as an absolute path: a merge may run in another folder.
            height: HeightOptions {
                data_root: self.height.data_root.as_ref().map(|d| std::fs::canonicalize(d).unwrap_or_else(|_| d.clone())),
                ..self.height.clone()
            },
            surface: self.surface,
            normals: self.normals,
            flora_supersample: self.flora_supersample,
            spawn: self.spawn,
            region: self.region,
            spacing: self.spacing,
            tile: self.tile,
            band_rows: self.band_rows,
            maps: self.maps.clone(),
            export: self.export.clone(),
            backend: self.backend,
        }
    }

    /// The surface maps wanted (swg-trn §5.2 steps 2–4); `None` when only heights are.
    fn surface_maps_job(&self) -> Result<Option<SurfaceMapsJob>> {
        if self.maps.iter().all(|m| *m == MapRequest::Map(MapKind::Height)) {
            // Heights only: no surface plans to build.
            return Ok(None);
        }
        let t = &self.terrain;
        let surface = SurfaceEvaluator::new(t, &self.height, self.surface)?;
        for w in &surface.plan.warnings {
            self.reporter.warn(w);
        }
        let mut maps = Vec::new();
        for m in &self.maps {
            match m {
                // Every map the file feeds, at any size: the maps stream by bands.
                MapRequest::Auto => maps.extend(default_maps(t, &surface)),
                MapRequest::Map(kind) => maps.push(*kind),
            }
        }
        maps.retain(|m| *m != MapKind::Height);
        maps.sort();
        maps.dedup();
        if maps.is_empty() {
            return Ok(None);
        }
        Ok(Some(SurfaceMapsJob {
            terrain: t.clone(),
            surface,
            maps,
            normals: self.normals,
            flora_supersample: self.flora_supersample.max(1),
            spawn: self.spawn,
            citation: format!("SWG {} local metres", self.name),
            tiff: self.export.tiff,
            band_rows: self.band_rows,
        }))
    }
}

impl BakeRecipe {
    /// The request this recipe records, writing into `outdir`: the terrain is read again from
    /// the recorded file (or is the built-in demo) and must be the same bytes.
    pub fn request(&self, outdir: impl Into<PathBuf>) -> Result<BakeRequest> {
        let mut r = if self.input == DEMO_INPUT {
            BakeRequest::demo(outdir)
        } else {
            let Some(path) = &self.input_path else {
                return Err(Error::Invalid(format!("the shards were baked from {}, which is not a file; merge needs the terrain file", self.input)));
            };
            BakeRequest::from_file(path, outdir)?
        };
        if r.input_sha256 != self.input_sha256 {
            return Err(Error::Invalid(format!(
                "{} has changed since the shards were baked (SHA-256 {} then, {} now)",
                self.input_path.as_ref().map_or(self.input.clone(), |p| p.display().to_string()),
                self.input_sha256,
                r.input_sha256
            )));
        }
        r.input = self.input.clone();
        r.name = self.name.clone();
        r.height = self.height.clone();
        r.surface = self.surface;
        r.normals = self.normals;
        r.flora_supersample = self.flora_supersample;
        r.spawn = self.spawn;
        r.region = self.region;
        r.spacing = self.spacing;
        r.tile = self.tile;
        r.band_rows = self.band_rows;
        r.maps = self.maps.clone();
        r.export = self.export.clone();
        r.backend = self.backend;
        Ok(r)
    }
}

/// How [`BakeRequest::demo`] names its input.
const DEMO_INPUT: &str = "(built-in demo terrain)";

/// A validated bake, ready to run: the job and the height evaluator of its terrain.
pub struct Pipeline {
    pub job: BakeJob,
    pub heights: HeightEvaluator,
}

impl Pipeline {
    /// Runs the whole bake into the job's output folder (resuming from its checkpoints).
    pub fn run(&self) -> Result<BakeReport> {
        run_bake(&self.job, &self.heights)
    }
}
