//! Surface maps of a baked height grid (swg-trn §5.2 steps 2–4, §5.9–§5.11; exports.md
//! §4.6–§4.7): normals, splat weights and shader ids, flora ids and probabilities per class,
//! water, environment, colour, exclusion, passability, SMAP rough-terrain chunks and a shaded
//! preview; every map is a grid of the bake's posts.
//!
//! Streamed by bands of rows from the north edge ([`SurfaceMapsJob::stream`]): each band's
//! heights and 1-post apron are read from the height checkpoints, its normals and surface
//! passes are evaluated (on the GPU with `trnbake_gpu::surface_pass`, else on the CPU with
//! `trnbake_swg::surface::grid`), and the per-post values every map needs are written to a
//! band checkpoint (`surface_bands`), from which the map writers — one thread each — encode
//! their rows as soon as the band is finished. Memory is bounded by a band, whatever the grid;
//! a killed bake resumes with the bands it has. The maps that need a figure of the whole grid
//! (the splat channels, the flora legends and density ranges, the per-family flora maps, the
//! scatter) are written from the band checkpoints once every band is finished.

use crate::folder::write_json;
use crate::store::{Checkpoint, CheckpointSource, Fingerprint, CHECKPOINT_DIR};
use crate::surface_bands::{
    band_chunks, band_file_bytes, chunk_blocks, largest_remainder_bytes, pack_block, read_meta, BandLayout, BandMeta, BandSet, Plane, PREVIEW_COLOURED,
};
use crate::Shard;
use rayon::prelude::*;
use serde::Serialize;
use std::io;
use std::path::Path;
use std::path::PathBuf;
use std::time::Instant;
use trnbake_gpu::surface_pass::{GpuSurfacePass, SurfacePasses};
use trnbake_gpu::GpuHeightPass;
use trnbake_gpu::{GpuContext, GpuError};
use trnbake_raster::writers::geotiff::{write_geotiff_from, GeoTiffOptions, TiffSample};
use trnbake_raster::writers::png16::{write_png16_from, Png16Options};
use trnbake_raster::writers::png8::{write_png8_from, ByteRows, MemRows, Png8Coding, RowFilter};
use trnbake_raster::writers::set::ExportSummary;
use trnbake_raster::{HeightSource, WrittenFile};
use trnbake_swg::eval::{Grid, HeightEvaluator};
use trnbake_swg::grid::TileSpec;
use trnbake_swg::model::Terrain;
use trnbake_swg::plan::FLORA_CLASSES;
use trnbake_swg::surface::grid::{
    band_apron_heights, band_normals, band_results, evaluate, ClassProbabilities, HeightsView, PassSelection, PostSurface, SurfaceGrid,
};
use trnbake_swg::surface::normals::NormalMethod;
use trnbake_swg::surface::smap::smap_chunks;
use trnbake_swg::surface::supersample::flora_supersampled_rows;
use trnbake_swg::surface::{SurfaceEvaluator, SPLAT_LAYERS};
use trnbake_swg::water::WaterTables;

const CHANNELS: [&str; 4] = ["r", "g", "b", "a"];

/// Every map `bake --maps` knows, in the order they are written. `flora_families` (a
/// probability map per flora family) and `scatter` (instance points) are only written when
/// named.
pub const MAP_NAMES: [&str; 12] = ["height", "normals", "splat", "flora", "flora_families", "scatter", "water", "env", "color", "exclude", "smap", "preview"];

/// Most posts a surface band holds (its rows are a multiple of the CPU's 128-post culling
/// block, at least one block): ~2 M posts keep a band's transient state (heights, normals,
/// results, encoded planes; ~250 bytes a post) near 0.5 GB whatever the grid.
const BAND_POSTS: u64 = 2 << 20;
/// The culling block of the surface passes (`trnbake_swg::surface::grid`'s `BLOCK`).
const BAND_ROW_MULTIPLE: u32 = 128;
/// The maps the file uses (the default of `bake --maps`): height and normals always, the
/// preview always, and each other map when some rule or table feeds it.
pub fn default_maps(t: &Terrain, surface: &SurfaceEvaluator) -> Vec<String> {
    use trnbake_swg::plan::*;
    let kinds: Vec<u32> = surface.plan.affectors.iter().map(|a| a.kind).collect();
    let has = |ks: &[u32]| kinds.iter().any(|k| ks.contains(k));
    let mut maps = vec!["height", "normals"];
    if has(&[AFFECTOR_SHADER_CONSTANT, AFFECTOR_SHADER_REPLACE, AFFECTOR_ROAD_SHADER]) {
        maps.push("splat");
    }
    if kinds.iter().any(|k| (AFFECTOR_FLORA_BASE..AFFECTOR_FLORA_BASE + 4).contains(k)) {
        maps.push("flora");
    }
    if WaterTables::new(t).has_any() {
        maps.push("water");
    }
    if has(&[AFFECTOR_ENVIRONMENT]) {
        maps.push("env");
    }
    if has(&[AFFECTOR_COLOR_CONSTANT, AFFECTOR_COLOR_RAMP_HEIGHT, AFFECTOR_COLOR_RAMP_FRACTAL]) {
        maps.push("color");
    }
    if has(&[AFFECTOR_EXCLUDE, AFFECTOR_PASSABLE]) {
        maps.push("exclude");
    }
    maps.push("preview");
    maps.into_iter().map(String::from).collect()
}

/// The surface maps of a bake: what to write, and the plans and options to compute them with.
pub struct SurfaceMapsJob {
    pub terrain: Terrain,
    pub surface: SurfaceEvaluator,
    /// Map names from [`MAP_NAMES`], without `height`.
    pub maps: Vec<String>,
    pub normals: NormalMethod,
    /// The outputs' CRS name (`SWG NAME local metres`).
    pub citation: String,
    /// How the GeoTIFF maps are written (`--cog`, `--compress`); id maps use them
    /// [`for_ids`](trnbake_raster::GeoTiffOptions::for_ids).
    pub tiff: GeoTiffOptions,
    /// Rows a band; `None`: [`SurfaceMapsJob::band_rows`] of the grid's width.
    pub band_rows: Option<u32>,
    /// Flora maps read the mean over N × N sub-posts of each post's square (`bake
    /// --flora-supersample N`, on the CPU: [`trnbake_swg::surface::supersample`]); 1 reads
    /// the post alone.
    pub flora_supersample: u32,
}

/// What [`SurfaceMapsJob::stream`] wrote, and how.
pub struct SurfaceMapsOutput {
    pub files: Vec<WrittenFile>,
    /// `"gpu"` or `"cpu"`: where the surface passes ran.
    pub backend: &'static str,
    pub timing: SurfaceTiming,
}

/// Where the time of the surface maps went, in seconds (the manifest's `timing.surface`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct SurfaceTiming {
    /// Rows of posts a band.
    pub band_rows: u32,
    pub bands_computed: usize,
    pub bands_resumed: usize,
    /// Reading each band's heights and evaluating its apron, then its normals.
    pub heights_and_normals_seconds: f64,
    /// The shader and later passes (one tree walk a post by default).
    pub passes_seconds: f64,
    /// The water surface at every post.
    pub water_seconds: f64,
    /// Turning the results into the maps' values (the band checkpoints' bytes). On the GPU
    /// backend this runs on a thread of its own beside the next band's passes, so there the
    /// figures add up to more than `total_seconds`.
    pub checkpoint_seconds: f64,
    /// Writing the band checkpoints, on a thread of their own beside the next bands.
    pub checkpoint_write_seconds: f64,
    /// From the last band to the last map written (the writers that need the whole grid).
    pub writing_after_compute_seconds: f64,
    pub total_seconds: f64,
    /// Surface posts per second over the whole stage.
    pub posts_per_second: f64,
}

/// A surface grid and the backend that computed it.
pub struct SurfaceOnBackend {
    pub surface: SurfaceGrid,
    /// `"gpu"` or `"cpu"`.
    pub backend: &'static str,
    /// Why the CPU ran it although a GPU context was given (the kernels cannot compute these
    /// options exactly).
    pub cpu_because: Option<String>,
}

/// The surface passes over a whole grid held in memory (the golden checks' small fixtures) on
/// the backend that baked the heights: the GPU when there is a context and its kernels compute
/// the options exactly, else the CPU.
pub fn surface_on_backend(
    gpu: Option<&GpuContext>,
    grid: &Grid,
    heights: &[f32],
    he: &HeightEvaluator,
    se: &SurfaceEvaluator,
    normals: NormalMethod,
) -> crate::Result<SurfaceOnBackend> {
    let cpu = |why: Option<String>| SurfaceOnBackend { surface: evaluate(grid, heights, he, se, normals), backend: "cpu", cpu_because: why };
    match gpu.map(|ctx| trnbake_gpu::surface_pass::evaluate(ctx, grid, heights, he, se, normals)) {
        Some(Ok(surface)) => Ok(SurfaceOnBackend { surface, backend: "gpu", cpu_because: None }),
        Some(Err(GpuError::Unsupported(why))) => Ok(cpu(Some(why))),
        Some(Err(e)) => Err(e.into()),
        None => Ok(cpu(None)),
    }
}

/// The GPU surface passes when the kernels compute the options exactly, else `None` (the CPU):
/// the one place the surface maps fall back, decided once a bake.
fn gpu_surface_pass<'a>(
    gpu: Option<&'a GpuContext>,
    se: &'a SurfaceEvaluator,
    normals: NormalMethod,
    reporter: &dyn crate::Reporter,
) -> crate::Result<Option<GpuSurfacePass<'a>>> {
    let Some(ctx) = gpu else { return Ok(None) };
    match GpuSurfacePass::new(ctx, se, normals) {
        Ok(pass) => Ok(Some(pass)),
        Err(GpuError::Unsupported(why)) => {
            reporter.note(format!("surface maps on the CPU: {}", GpuError::Unsupported(why)));
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}

/// What the surface stage does with the bands of a grid.
pub enum StageRole<'a> {
    /// The whole bake: compute the bands not yet checkpointed from the finished height tiles,
    /// and write every map.
    Bake,
    /// One shard of a bake: compute its share of the bands (band k from the north when
    /// k ≡ K−1 mod N), their heights evaluated for them on the bake's backend (the height tiles
    /// around them are other shards'), and write no map.
    Shard { shard: Shard, gpu_heights: Option<&'a GpuHeightPass<'a>> },
    /// A merge: every band is in the shard folders (each named with its shard); write every map.
    Merge { shards: &'a [(Shard, PathBuf)] },
}

/// What [`SurfaceMapsJob::stream`] reads: the finished heights and where to write.
pub struct StreamInputs<'a> {
    pub outdir: &'a Path,
    pub grid: &'a Grid,
    /// The finished height tiles (of the whole grid, but in a shard, which reads none).
    pub heights: &'a CheckpointSource,
    /// The height tiles' identity, which the bands' includes.
    pub heights_fingerprint: Fingerprint,
    /// The folders holding the band checkpoints (in their checkpoint folders): the bake's own
    /// output folder, or a merge's shard folders.
    pub checkpoint_dirs: Vec<PathBuf>,
    pub role: StageRole<'a>,
    /// The finite height range of the grid (the preview's tint).
    pub range: (f32, f32),
    pub height_evaluator: &'a HeightEvaluator,
    pub gpu: Option<&'a GpuContext>,
    pub reporter: &'a dyn crate::Reporter,
    /// The height export already written (its preset, resampled grid, tiles and engine
    /// settings): the engine splat maps match its heightmap.
    pub export: Option<&'a ExportSummary>,
}

impl SurfaceMapsJob {
    fn want(&self, map: &str) -> bool {
        self.maps.iter().any(|m| m == map)
    }

    /// The per-post planes the wanted maps are written from.
    pub fn layout(&self) -> BandLayout {
        let mut planes = Vec::new();
        let w = |m: &str| self.want(m);
        if w("normals") {
            planes.push(Plane::Normals);
        }
        if w("splat") {
            planes.extend([Plane::ShaderId, Plane::Splat]);
        }
        if w("flora") {
            for k in 0..4 {
                planes.extend([Plane::FloraId(k), Plane::FloraProbability(k)]);
            }
        }
        if w("water") {
            planes.extend([Plane::WaterLevel, Plane::WaterMask]);
        }
        if w("env") {
            planes.push(Plane::Environment);
        }
        if w("color") {
            planes.push(Plane::Color);
        }
        if w("exclude") {
            planes.extend([Plane::Exclude, Plane::Passable]);
        }
        if w("preview") {
            planes.extend([Plane::Preview, Plane::PreviewShade]);
        }
        BandLayout { planes, probabilities: w("flora_families") || w("scatter") }
    }

    /// Whether any wanted map reads the shader or later pass (normals, water and SMAP do not).
    fn needs_passes(&self) -> bool {
        ["splat", "flora", "flora_families", "scatter", "env", "color", "exclude", "preview"].iter().any(|m| self.want(m))
    }

    /// Rows a band of a grid `cols` posts wide: the job's own choice rounded up to a multiple
    /// of the culling block (so bands cull exactly as the whole grid), else about
    /// 2 M posts (`BAND_POSTS`).
    pub fn band_rows(&self, cols: u32) -> u32 {
        match self.band_rows {
            Some(rows) => rows.max(1).div_ceil(BAND_ROW_MULTIPLE) * BAND_ROW_MULTIPLE,
            None => ((BAND_POSTS / u64::from(cols.max(1))) as u32 / BAND_ROW_MULTIPLE).max(1) * BAND_ROW_MULTIPLE,
        }
    }

    /// SHA-256 of everything that determines the band checkpoints besides the heights: the
    /// surface plans, options, normals method and the planes (a resume with other maps or
    /// options starts the surface bands afresh).
    pub fn fingerprint(&self) -> String {
        use sha2::Digest;
        let se = &self.surface;
        let mut h = sha2::Sha256::new();
        for plan in [&se.plan, &se.shader_plan, &se.later_plan, &se.all_plan] {
            h.update(crate::plan_sha256(plan).as_bytes());
            let ramps: Vec<u8> = plan.ramps.iter().flat_map(|r| r.iter().flatten().copied()).collect();
            h.update((ramps.len() as u64).to_le_bytes());
            h.update(&ramps);
        }
        h.update(format!("{:?}|{:?}|{:?}|{}|{}|v2", se.opts, self.normals, self.layout(), self.citation, self.flora_supersample).as_bytes());
        trnbake_raster::hex(&h.finalize())
    }

    /// Computes the surface passes band by band over the finished heights (on the GPU when
    /// `inputs.gpu` is given and its kernels compute the options exactly) and writes every
    /// wanted map into `inputs.outdir`, resuming from the band checkpoints a killed run left.
    pub fn stream(&self, inputs: &StreamInputs) -> crate::Result<SurfaceMapsOutput> {
        let start = Instant::now();
        let grid = *inputs.grid;
        let band_rows = self.band_rows(grid.cols);
        let dirs = inputs.checkpoint_dirs.iter().map(|d| d.join(CHECKPOINT_DIR)).collect();
        let bake = Fingerprint::of_bands(&inputs.heights_fingerprint, &self.fingerprint(), band_rows);
        let set = BandSet::new(grid, self.layout(), band_rows, dirs, bake);
        let computes = !matches!(inputs.role, StageRole::Merge { .. });
        let writes_maps = !matches!(inputs.role, StageRole::Shard { .. });
        let gpu = if computes { gpu_surface_pass(inputs.gpu, &self.surface, self.normals, inputs.reporter)? } else { None };
        let backend = if gpu.is_some() { "gpu" } else { "cpu" };
        let mut timing = SurfaceTiming { band_rows, ..Default::default() };

        // Resume: bands whose checkpoint is whole are done from the start; a shard computes
        // its own share only; a merge finds every band in some shard folder.
        let bands = set.bands();
        let mut todo = Vec::new();
        for (k, &(r0, rows)) in bands.iter().enumerate() {
            let status = set.locate(r0, rows);
            if status == Checkpoint::Done {
                set.done(k);
                timing.bands_resumed += 1;
                continue;
            }
            match &inputs.role {
                StageRole::Merge { shards } => return Err(missing_band(shards, k, r0, rows, status)),
                StageRole::Shard { shard, .. } if k as u32 % shard.count != shard.index - 1 => continue,
                _ => {}
            }
            if status != Checkpoint::Missing {
                inputs.reporter.note(format!("the checkpoint of the surface band of rows {r0}..{} {}; recomputing it", r0 + rows - 1, status.why()));
            }
            todo.push(k);
        }
        timing.bands_computed = todo.len();
        if timing.bands_resumed > 0 && computes {
            inputs.reporter.info(format!("resuming the surface maps: {} of {} bands already done", timing.bands_resumed, bands.len()));
        }
        let todo_posts: u64 = todo.iter().map(|&k| u64::from(bands[k].1) * u64::from(grid.cols)).sum();
        let progress = crate::Progress::new(inputs.reporter, todo_posts, "posts", "surface maps");
        let tables = WaterTables::new(&self.terrain);

        let files = std::thread::scope(|scope| -> crate::Result<Vec<(usize, Vec<WrittenFile>)>> {
            let set = &set;
            // The maps written while the bands compute, one writer thread each.
            let streamed: Vec<_> = if writes_maps { self.streamed_writers(set, inputs) } else { Vec::new() }
                .into_iter()
                .map(|(order, writer)| (order, scope.spawn(writer)))
                .collect();
            // A pipeline of bands: they compute here; on the GPU backend the band before is
            // encoded into its checkpoint's bytes meanwhile, with the pool's threads that the
            // GPU leaves idle (the CPU backend's passes keep them busy: encoding beside them
            // measured no faster at 2 m on 2 cores and held 200 MB more, so it encodes in
            // turn); the band before that is written on a thread of its own. Memory stays
            // bounded by a few bands.
            let encode_beside = gpu.is_some();
            let (to_checkpoint, checkpoint_queue) = std::sync::mpsc::sync_channel::<(usize, Vec<u8>)>(1);
            let (to_encoder, encoder_queue) = std::sync::mpsc::sync_channel::<(usize, ComputedBand)>(0);
            let (bands, progress_ref) = (&bands, &progress);
            let checkpoints = scope.spawn(move || -> crate::Result<f64> {
                let mut seconds = 0.0;
                for (k, bytes) in checkpoint_queue {
                    let t = Instant::now();
                    let (r0, rows) = bands[k];
                    trnbake_raster::fsutil::write_renamed(&set.path(r0, rows), &bytes)?;
                    drop(bytes);
                    set.done(k);
                    progress_ref.inc(u64::from(rows) * u64::from(grid.cols));
                    seconds += t.elapsed().as_secs_f64();
                }
                Ok(seconds)
            });
            let encode = move |k: usize, band: ComputedBand, to_checkpoint: &std::sync::mpsc::SyncSender<(usize, Vec<u8>)>| -> (f64, bool) {
                let t = Instant::now();
                let bytes = self.encode_band(set, bands[k], &band.values(&grid), band.probabilities.as_deref());
                drop(band);
                // A closed queue: the checkpoint thread stopped on an error, reported below.
                (t.elapsed().as_secs_f64(), to_checkpoint.send((k, bytes)).is_ok())
            };
            let encoder = encode_beside.then(|| {
                let to_checkpoint = to_checkpoint.clone();
                scope.spawn(move || -> f64 {
                    let mut seconds = 0.0;
                    for (k, band) in encoder_queue {
                        let (s, sent) = encode(k, band, &to_checkpoint);
                        seconds += s;
                        if !sent {
                            break;
                        }
                    }
                    seconds
                })
            });
            let mut computed = Ok(());
            for (n, &k) in todo.iter().enumerate() {
                progress.set_stage(&format!("band {} of {}", n + 1, todo.len()));
                let (r0, rows) = bands[k];
                match self.compute_band(inputs, gpu.as_ref(), &tables, set.layout.probabilities, r0, rows, &mut timing) {
                    Ok(band) if encode_beside => {
                        // A closed queue: the encoder stopped (its checkpoint thread failed).
                        if to_encoder.send((k, band)).is_err() {
                            break;
                        }
                    }
                    Ok(band) => {
                        let (s, sent) = encode(k, band, &to_checkpoint);
                        timing.checkpoint_seconds += s;
                        if !sent {
                            break;
                        }
                    }
                    Err(e) => {
                        computed = Err(e);
                        break;
                    }
                }
            }
            drop((to_encoder, to_checkpoint));
            match encoder.map(|e| e.join()) {
                None => {}
                Some(Ok(seconds)) => timing.checkpoint_seconds += seconds,
                Some(Err(_)) => computed = computed.and(Err(crate::Error::Invalid("the band checkpoint encoder panicked".into()))),
            }
            match checkpoints.join() {
                Ok(Ok(seconds)) => timing.checkpoint_write_seconds = seconds,
                Ok(Err(e)) => computed = computed.and(Err(e)),
                Err(_) => computed = computed.and(Err(crate::Error::Invalid("the band checkpoint writer panicked".into()))),
            }
            if computed.is_err() {
                set.fail();
            }
            progress.set_stage("writing the maps");
            let t_tail = Instant::now();
            let mut out = Vec::new();
            if computed.is_ok() && writes_maps {
                // The maps that need the whole grid, from the finished bands.
                match self.whole_grid_writers(set, inputs) {
                    Ok(files) => out.extend(files),
                    Err(e) => computed = Err(e),
                }
            }
            for (order, handle) in streamed {
                match handle.join() {
                    Ok(Ok(files)) => out.push((order, files)),
                    Ok(Err(e)) => computed = computed.and(Err(e)),
                    Err(_) => computed = computed.and(Err(crate::Error::Invalid("a surface map writer panicked".into()))),
                }
            }
            timing.writing_after_compute_seconds = t_tail.elapsed().as_secs_f64();
            computed.map(|()| out)
        });
        progress.finish();
        let files = files?;
        let mut files = files;
        files.sort_by_key(|(order, _)| *order);
        timing.total_seconds = start.elapsed().as_secs_f64();
        timing.posts_per_second = grid.len() as f64 / timing.total_seconds.max(1e-9);
        Ok(SurfaceMapsOutput { files: files.into_iter().flat_map(|(_, f)| f).collect(), backend, timing })
    }

    /// One band's heights, normals, passes and water (with every family's probabilities when
    /// `want_probabilities`).
    #[allow(clippy::too_many_arguments)]
    fn compute_band(
        &self,
        inputs: &StreamInputs,
        gpu: Option<&GpuSurfacePass>,
        tables: &WaterTables,
        want_probabilities: bool,
        r0: u32,
        rows: u32,
        timing: &mut SurfaceTiming,
    ) -> crate::Result<ComputedBand> {
        let grid = inputs.grid;
        let se = &self.surface;
        let t = Instant::now();
        let padded = band_apron_heights(grid, r0, rows, inputs.height_evaluator, |r, n, out| band_heights(inputs, r, n, out))?;
        let heights = HeightsView::padded(grid, &padded);
        let passes = self.needs_passes();
        let (normals, results, probabilities) = match gpu {
            Some(pass) => {
                let which = if passes { SurfacePasses::All } else { SurfacePasses::Normals };
                let (normals, results) = pass.run_band(grid, r0, rows, &padded, which)?;
                timing.passes_seconds += t.elapsed().as_secs_f64();
                // The per-family probabilities are the CPU's (the kernel keeps the most likely).
                let probabilities = want_probabilities
                    .then(|| band_results(grid, r0, rows, heights, &normals, se, PassSelection::Both, true).probabilities.unwrap_or_default());
                (normals, results, probabilities)
            }
            None => {
                let normals = band_normals(grid, r0, rows, &padded, se.plan.half_width, self.normals);
                timing.heights_and_normals_seconds += t.elapsed().as_secs_f64();
                let t = Instant::now();
                let (results, probabilities) = if passes {
                    let b = band_results(grid, r0, rows, heights, &normals, se, PassSelection::Both, want_probabilities);
                    (b.results, b.probabilities)
                } else {
                    (vec![PostSurface::default(); normals.len()], None)
                };
                timing.passes_seconds += t.elapsed().as_secs_f64();
                (normals, results, probabilities)
            }
        };
        // Coarse flora maps from each post's square (issue #27): the chances of its sub-posts.
        let flora_maps = ["flora", "flora_families", "scatter"].iter().any(|m| self.want(m));
        let (results, probabilities) = if self.flora_supersample > 1 && flora_maps {
            let t = Instant::now();
            let chances = flora_supersampled_rows(grid, inputs.height_evaluator, se, self.normals, self.flora_supersample, r0, rows);
            let mut results = results;
            for (r, c) in results.iter_mut().zip(&chances) {
                r.flora = std::array::from_fn(|k| trnbake_swg::fidelity::most_likely(&c[k]));
            }
            timing.passes_seconds += t.elapsed().as_secs_f64();
            (results, want_probabilities.then_some(chances))
        } else {
            (results, probabilities)
        };
        let t = Instant::now();
        let needs_water = self.layout().planes.iter().any(|p| matches!(p, Plane::WaterLevel | Plane::WaterMask | Plane::Preview));
        let water: Vec<Option<f32>> = if needs_water {
            let cols = grid.cols as usize;
            (0..results.len())
                .into_par_iter()
                .with_min_len(4096)
                .map(|i| {
                    let (x, z) = grid.post((i % cols) as u32, r0 + (i / cols) as u32);
                    tables.height_at(x, z)
                })
                .collect()
        } else {
            Vec::new()
        };
        timing.water_seconds += t.elapsed().as_secs_f64();
        Ok(ComputedBand { padded, normals, results, probabilities, water })
    }

    /// The band checkpoint's bytes: every plane's blocks, the probabilities and the meta. The
    /// band's threads take a chunk of rows each, encode all its planes in one pass over its
    /// posts (each post's results read once) and compress them ([`pack_block`]).
    fn encode_band(&self, set: &BandSet, (r0, band_rows): (u32, u32), band: &BandValues, probabilities: Option<&[ClassProbabilities]>) -> Vec<u8> {
        let cols = band.cols;
        let rows = (band.results.len() / cols.max(1)) as u32;
        let mut colors: Vec<(i32, [u8; 3])> = self.terrain.generator.shader_families.families().iter().map(|f| (f.id, f.color)).collect();
        // By id for a binary search; a repeated id keeps its last colour (as a map collected
        // from the list would): reversed, stably sorted, the first of each id kept.
        colors.reverse();
        colors.sort_by_key(|c| c.0);
        colors.dedup_by_key(|c| c.0);
        let planes = &set.layout.planes;
        // The Splat plane's blocks: every family with a weight in the band.
        let splat_families = if planes.contains(&Plane::Splat) {
            band.results
                .par_chunks(1 << 15)
                .map(|posts| distinct_sorted(posts.iter().flat_map(post_splat_families)))
                .reduce(Vec::new, |a, b| distinct_sorted(a.into_iter().chain(b)))
        } else {
            Vec::new()
        };
        let chunks: Vec<(u32, u32)> = band_chunks(rows).collect();
        let encoded: Vec<(Vec<u8>, Vec<u64>, BandFigures)> = chunks
            .par_iter()
            .map(|&(c0, crows)| {
                let posts = c0 as usize * cols..(c0 + crows) as usize * cols;
                let raw = band.encode_rows(planes, c0 as usize..(c0 + crows) as usize, &colors, &splat_families);
                let mut packed = Vec::new();
                let blocks =
                    raw.iter().zip(chunk_blocks(planes, splat_families.len())).map(|(values, plane)| pack_block(values, plane.bytes(), &mut packed)).collect();
                (packed, blocks, BandFigures::of(&band.results[posts]))
            })
            .collect();
        let mut body = Vec::with_capacity(encoded.iter().map(|e| e.0.len()).sum());
        let mut meta = BandMeta { bake: set.bake.hex(), place: (r0, band_rows), ..Default::default() };
        let mut figures = BandFigures::default();
        for (packed, blocks, chunk_figures) in encoded {
            body.extend_from_slice(&packed);
            meta.blocks.extend(blocks);
            figures = BandFigures::merge(figures, chunk_figures);
        }
        meta.splat_families = splat_families;
        for &plane in planes {
            if let Plane::FloraId(k) = plane {
                let k = usize::from(k);
                meta.flora_ids[k] = figures.flora_ids[k].clone();
                meta.flora_range[k] = figures.flora_range[k];
            }
        }
        if let Some(probs) = probabilities {
            for class in 0..4 {
                let counts_at = body.len() as u64;
                for p in probs {
                    body.extend_from_slice(&(p[class].len().min(usize::from(u16::MAX)) as u16).to_le_bytes());
                }
                let entries_at = body.len() as u64;
                let mut fams = Vec::new();
                for p in probs {
                    for &(f, v) in p[class].iter().take(usize::from(u16::MAX)) {
                        body.extend_from_slice(&f.to_le_bytes());
                        body.extend_from_slice(&v.to_le_bytes());
                        fams.push(f);
                    }
                }
                fams.sort_unstable();
                fams.dedup();
                meta.probability_families[class] = fams;
                meta.probability_offsets[class] = (counts_at, entries_at);
            }
        }
        band_file_bytes(body, &meta)
    }
}

/// What [`SurfaceMapsJob::compute_band`] computed for a band, on its way to the checkpoint.
struct ComputedBand {
    /// The heights with their 1-post apron ([`band_apron_heights`]).
    padded: Vec<f32>,
    normals: Vec<[f32; 3]>,
    results: Vec<PostSurface>,
    probabilities: Option<Vec<ClassProbabilities>>,
    water: Vec<Option<f32>>,
}

impl ComputedBand {
    fn values(&self, grid: &Grid) -> BandValues<'_> {
        BandValues {
            cols: grid.cols as usize,
            heights: HeightsView::padded(grid, &self.padded),
            normals: &self.normals,
            results: &self.results,
            water: &self.water,
        }
    }
}

/// One band's evaluated values, for [`BandValues::encode`].
struct BandValues<'a> {
    cols: usize,
    heights: HeightsView<'a>,
    normals: &'a [[f32; 3]],
    results: &'a [PostSurface],
    water: &'a [Option<f32>],
}

impl<'a> BandValues<'a> {
    /// Every block's bytes of the band's rows `rows` (each plane's, the Splat plane's a family
    /// of `splat_families` at a time), in one pass over their posts.
    #[inline(never)]
    fn encode_rows(&self, planes: &[Plane], rows: std::ops::Range<usize>, colors: &[(i32, [u8; 3])], splat_families: &[i32]) -> Vec<Vec<u8>> {
        let posts = rows.len() * self.cols;
        let mut raw: Vec<Vec<u8>> = chunk_blocks(planes, splat_families.len()).map(|p| vec![0u8; posts * p.bytes()]).collect();
        let mut k = 0;
        for r in rows {
            for c in 0..self.cols {
                let post = self.post(c, r);
                let mut block = 0;
                for &plane in planes {
                    if plane == Plane::Splat {
                        let (fams, bytes, n) = post.splat_bytes();
                        for (f, b) in fams[..n].iter().zip(bytes) {
                            let at = splat_families.binary_search(f).expect("the band's splat families hold each post's");
                            raw[block + at][k] = b;
                        }
                        block += splat_families.len();
                    } else {
                        let size = plane.bytes();
                        post.encode(plane, &mut raw[block][k * size..(k + 1) * size], colors);
                        block += 1;
                    }
                }
                k += 1;
            }
        }
        raw
    }

    /// The values of the post in column `c` of the band's row `r`.
    fn post(&self, c: usize, r: usize) -> PostValues<'a> {
        let i = r * self.cols + c;
        PostValues { result: &self.results[i], normal: self.normals[i], height: self.heights.at(c, r), water: self.water.get(i).copied().flatten() }
    }
}

/// One post's evaluated values, for [`PostValues::encode`].
struct PostValues<'a> {
    result: &'a PostSurface,
    normal: [f32; 3],
    height: f32,
    /// The water surface over the post, if any.
    water: Option<f32>,
}

impl PostValues<'_> {
    /// The post's splat families (distinct, ascending) and their bytes, the first `n` of each:
    /// each family's byte depends on the post's weights alone ([`splat_bytes`]), so the maps'
    /// channels can be chosen once every band is done.
    fn splat_bytes(&self) -> ([i32; SPLAT_LAYERS], [u8; SPLAT_LAYERS], usize) {
        let mut fams = [0i32; SPLAT_LAYERS];
        let mut bytes = [0u8; SPLAT_LAYERS];
        let mut n = 0;
        for f in post_splat_families(self.result) {
            fams[n] = f;
            n += 1;
        }
        fams[..n].sort_unstable();
        let mut distinct = 0;
        for k in 0..n {
            if distinct == 0 || fams[k] != fams[distinct - 1] {
                fams[distinct] = fams[k];
                distinct += 1;
            }
        }
        splat_bytes_into(self.result, &fams[..distinct], &mut bytes[..distinct]);
        (fams, bytes, distinct)
    }

    /// The post's bytes of `plane` (the values the maps encode; see each writer); `colors`:
    /// each shader family's legend colour, by id.
    fn encode(&self, plane: Plane, out: &mut [u8], colors: &[(i32, [u8; 3])]) {
        let r = self.result;
        let under_water = self.water.is_some_and(|w| self.height < w);
        let f32_bytes = |out: &mut [u8], v: f32| out.copy_from_slice(&v.to_le_bytes());
        match plane {
            Plane::Normals => {
                let v = self.normal;
                for (o, c) in out.iter_mut().zip([v[0], v[2], v[1]]) {
                    *o = round_to_byte((c * 0.5 + 0.5) * 255.0);
                }
            }
            Plane::ShaderId => f32_bytes(out, r.shader.max(0) as f32),
            Plane::Splat => unreachable!("the Splat plane is encoded a family at a time (BandValues::encode_rows)"),
            Plane::FloraId(k) => f32_bytes(out, r.flora[usize::from(k)].0.max(0) as f32),
            Plane::FloraProbability(k) => f32_bytes(out, r.flora[usize::from(k)].1),
            Plane::WaterLevel => f32_bytes(out, self.water.unwrap_or(f32::NAN)),
            Plane::WaterMask => out[0] = if under_water { 255 } else { 0 },
            Plane::Environment => f32_bytes(out, r.environment.max(0) as f32),
            Plane::Color => {
                for (o, c) in out.iter_mut().zip(r.color) {
                    *o = round_to_byte(c.clamp(0.0, 1.0) * 255.0);
                }
            }
            Plane::Exclude => out[0] = if r.excluded { 255 } else { 0 },
            Plane::Passable => out[0] = if r.passable.unwrap_or(1) != 0 { 255 } else { 0 },
            Plane::Preview | Plane::PreviewShade => {
                let shade = 0.35 + 0.65 * hillshade(self.normal);
                // Water, else the shader family's legend colour, shaded; else a tint by height
                // that the writer makes (`preview_tint`: it needs the grid's height range).
                let colour = if under_water {
                    Some([0.12f32, 0.30, 0.55].map(|c| c * (0.8 + 0.2 * shade)))
                } else {
                    colors.binary_search_by_key(&r.shader, |c| c.0).ok().map(|k| colors[k].1.map(|v| f32::from(v) / 255.0 * shade))
                };
                if plane == Plane::Preview {
                    let rgb = colour.map_or([0; 3], |rgb| rgb.map(|c| round_to_byte(c.clamp(0.0, 1.0) * 255.0)));
                    out.copy_from_slice(&rgb);
                } else {
                    f32_bytes(out, if colour.is_some() { PREVIEW_COLOURED } else { shade });
                }
            }
        }
    }
}

/// The preview colour of a post tinted by its height `h` (low sand → high grey-brown over the
/// grid's finite height `range`), shaded by `shade`.
fn preview_tint(h: f32, (lo, hi): (f32, f32), shade: f32) -> [u8; 3] {
    let span = (hi - lo).max(1e-3);
    let u = ((h - lo) / span).clamp(0.0, 1.0);
    let base = [0.78 - 0.3 * u, 0.70 - 0.3 * u, 0.52 - 0.2 * u];
    base.map(|c| round_to_byte((c * shade).clamp(0.0, 1.0) * 255.0))
}

/// The heights of grid rows `r..r + n` for a band: read from the finished height tiles, or, in
/// a shard, evaluated on the bake's backend (the same values as the tiles: every post is
/// evaluated from its global indices, whatever the block that holds it).
fn band_heights(inputs: &StreamInputs, r: u32, n: u32, out: &mut [f32]) -> crate::Result<()> {
    let grid = inputs.grid;
    let cols = grid.cols;
    match &inputs.role {
        StageRole::Shard { gpu_heights: Some(pass), .. } => {
            const SIDE: u32 = 2048;
            let tiles: Vec<TileSpec> = (r..r + n)
                .step_by(SIDE as usize)
                .flat_map(|tr| (0..cols).step_by(SIDE as usize).map(move |c0| TileSpec { c0, r0: tr, cols: SIDE.min(cols - c0), rows: SIDE.min(r + n - tr) }))
                .collect();
            pass.run(grid, &tiles, &mut |t, data| {
                for (k, row) in data.chunks_exact(t.cols as usize).enumerate() {
                    let at = ((t.r0 - r) as usize + k) * cols as usize + t.c0 as usize;
                    out[at..at + row.len()].copy_from_slice(row);
                }
            })?;
        }
        StageRole::Shard { gpu_heights: None, .. } => {
            let block = crate::CPU_CULL_BLOCK;
            let starts: Vec<u32> = (0..cols).step_by(block as usize).collect();
            let parts: Vec<(u32, Vec<f32>)> = starts
                .into_par_iter()
                .map(|c0| {
                    let w = block.min(cols - c0);
                    let mut part = vec![0.0f32; w as usize * n as usize];
                    inputs.height_evaluator.grid_region(grid, c0, r, w, n, block, &mut part);
                    (c0, part)
                })
                .collect();
            for (c0, part) in parts {
                let w = part.len() / n.max(1) as usize;
                for (k, row) in part.chunks_exact(w.max(1)).enumerate() {
                    let at = k * cols as usize + c0 as usize;
                    out[at..at + w].copy_from_slice(row);
                }
            }
        }
        _ => inputs.heights.read_rows(r, n, out)?,
    }
    Ok(())
}

/// A merge's error for band `k` (`r0`, `rows`) found `status` in no shard folder: which shard
/// computes it, and where that shard's folder is.
fn missing_band(shards: &[(Shard, PathBuf)], k: usize, r0: u32, rows: u32, status: Checkpoint) -> crate::Error {
    let count = shards.first().map_or(1, |(s, _)| s.count);
    let owner = k as u32 % count + 1;
    let folder = shards.iter().find(|(s, _)| s.index == owner).map_or("not given".to_string(), |(_, d)| d.display().to_string());
    let what = match status {
        Checkpoint::Missing => "is missing from every shard folder".to_string(),
        other => format!("{} in the shard folders", other.why()),
    };
    crate::Error::Invalid(format!("the surface band of rows {r0}..{} {what}; shard {owner}/{count} ({folder}) computes it: re-run that shard", r0 + rows - 1))
}

/// `x.round() as u8` (halves away from zero, saturating, NaN → 0) without libm's `roundf`
/// call: the encoders round ~10 values a post.
fn round_to_byte(x: f32) -> u8 {
    // In range, truncation is exact and the remainder x − t exactly representable.
    if x > 0.0 && x < 256.0 {
        let t = x as u32;
        (t + u32::from(x - t as f32 >= 0.5)).min(255) as u8
    } else if x >= 256.0 {
        255
    } else {
        // ≤ 0 or NaN: round() gives −0, a negative number or NaN, all 0 as u8.
        0
    }
}

/// A map writer to run on a thread of its own: its files, or the error.
type Writer<'s> = Box<dyn FnOnce() -> crate::Result<Vec<WrittenFile>> + Send + 's>;

/// Positions of the maps in the list of written files (the order of [`MAP_NAMES`]).
mod order {
    pub const NORMALS: usize = 0;
    pub const SPLAT: usize = 10;
    pub const FLORA: usize = 20;
    pub const FLORA_FAMILIES: usize = 40;
    pub const SCATTER: usize = 50;
    pub const WATER: usize = 60;
    pub const ENV: usize = 70;
    pub const COLOR: usize = 80;
    pub const EXCLUDE: usize = 90;
    pub const SMAP: usize = 100;
    pub const PREVIEW: usize = 110;
}

impl SurfaceMapsJob {
    /// The writers of the maps that need no figure of the whole grid: they start before the
    /// first band and encode each band as soon as it is finished.
    fn streamed_writers<'s>(&'s self, set: &'s BandSet, inputs: &'s StreamInputs) -> Vec<(usize, Writer<'s>)> {
        let mut out: Vec<(usize, Writer<'s>)> = Vec::new();
        let dir = inputs.outdir;
        let png = move |name: &'static str, plane: Plane, channels: u32| -> Writer<'s> {
            // The noisy maps as noisy, each with its best filter; the masks as patterned
            // (`png8`'s measurements).
            let coding = match plane {
                Plane::Normals | Plane::Preview => Png8Coding::Noisy(RowFilter::Paeth),
                Plane::Color => Png8Coding::Noisy(RowFilter::Average),
                _ => Png8Coding::Patterned,
            };
            Box::new(move || Ok(vec![write_png8_from(&dir.join(name), &PlaneRows { set, plane, channels, wait: true }, coding)?]))
        };
        let tif = move |name: String, plane: Plane, sample: TiffSample| -> Writer<'s> {
            // Ids and classes: overviews (COG) pick a value instead of averaging.
            let opts = if matches!(sample, TiffSample::U16 { .. }) { self.tiff.for_ids() } else { self.tiff };
            Box::new(move || Ok(vec![write_geotiff_from(&dir.join(name), &PlaneSource { set, plane, wait: true }, &self.citation, sample, &opts)?]))
        };
        let ids = TiffSample::U16 { scale: 1.0, offset: 0.0 };
        if self.want("normals") {
            out.push((order::NORMALS, png("normals.png", Plane::Normals, 3)));
        }
        if self.want("splat") {
            out.push((order::SPLAT, tif("shader_id.tif".into(), Plane::ShaderId, ids)));
        }
        if self.want("flora") {
            for (k, name) in FLORA_CLASSES.iter().enumerate() {
                out.push((order::FLORA + 2 * k, tif(format!("flora_{name}_id.tif"), Plane::FloraId(k as u8), ids)));
            }
        }
        if self.want("water") {
            out.push((order::WATER, tif("water_height.tif".into(), Plane::WaterLevel, TiffSample::F32)));
            out.push((order::WATER + 1, png("water_mask.png", Plane::WaterMask, 1)));
        }
        if self.want("env") {
            out.push((order::ENV, tif("env_id.tif".into(), Plane::Environment, ids)));
        }
        if self.want("color") {
            out.push((order::COLOR, png("color.png", Plane::Color, 3)));
        }
        if self.want("exclude") {
            out.push((order::EXCLUDE, png("exclude.png", Plane::Exclude, 1)));
            out.push((order::EXCLUDE + 1, png("passable.png", Plane::Passable, 1)));
        }
        if self.want("preview") {
            let rows = PreviewRows { set, heights: inputs.heights, range: inputs.range };
            out.push((order::PREVIEW, Box::new(move || Ok(vec![write_png8_from(&dir.join("preview.png"), &rows, Png8Coding::Noisy(RowFilter::Paeth))?]))));
        }
        out
    }

    /// The maps that need a figure of the whole grid, from the finished band checkpoints
    /// (their metas hold the figures): splat channels and legend, flora densities and legend,
    /// per-family flora maps, the scatter, and SMAP (whose 8 m chunks come from the height
    /// evaluator itself).
    fn whole_grid_writers(&self, set: &BandSet, inputs: &StreamInputs) -> crate::Result<Vec<(usize, Vec<WrittenFile>)>> {
        let metas: Vec<((u32, u32), BandMeta)> =
            set.bands().into_iter().map(|(r0, rows)| read_meta(&set.path(r0, rows)).map(|m| ((r0, rows), m))).collect::<io::Result<_>>()?;
        let dir = inputs.outdir;
        let generator = &self.terrain.generator;
        // The splat maps on a thread of their own, beside the flora maps: each reads the
        // checkpoints and deflates in parallel, but their reading is serial.
        let splat = || -> crate::Result<Vec<(usize, Vec<WrittenFile>)>> {
            if !self.want("splat") {
                return Ok(Vec::new());
            }
            let mut families: Vec<i32> = metas.iter().flat_map(|(_, m)| m.splat_families.iter().copied()).collect();
            families.sort_unstable();
            families.dedup();
            let mut files = Vec::new();
            let mut legend = Vec::new();
            for (k, chunk) in families.chunks(4).enumerate() {
                let name = format!("splat_{k}.png");
                let channels = std::array::from_fn(|ch| chunk.get(ch).copied());
                files.push(write_png8_from(&dir.join(&name), &SplatRows { set, channels }, Png8Coding::Noisy(RowFilter::Up))?);
                for (ch, f) in chunk.iter().enumerate() {
                    let fam = generator.shader_families.families().iter().find(|x| x.id == *f);
                    legend.push(serde_json::json!({
                        "image": name, "channel": CHANNELS[ch], "family_id": f,
                        "name": fam.map(|x| x.name.clone()), "surface_properties": fam.map(|x| x.surface_properties.clone()),
                        "color": fam.map(|x| x.color), "shaders": fam.map(|x| x.children.iter().map(|c| c.name.clone()).collect::<Vec<_>>()),
                    }));
                }
            }
            files.push(write_json(
                &dir.join("splat_legend.json"),
                &serde_json::json!({ "channels": legend, "weights": "per post, summing to 255 where a shader applies" }),
            )?);
            // Something to look at, and the engines' own packings of the same weights.
            files.push(crate::engine_splat::write_preview(dir, set, &families, generator)?);
            files.extend(crate::engine_splat::write_engine_maps(dir, set, &families, generator, inputs.export, inputs.reporter)?);
            Ok(vec![(order::SPLAT + 1, files)])
        };
        let mut out = Vec::new();
        let splat_written = std::thread::scope(|scope| -> crate::Result<Vec<(usize, Vec<WrittenFile>)>> {
            let splat = scope.spawn(splat);
            let rest = self.flora_and_other_whole_grid_maps(set, inputs, &metas);
            let splat = splat.join().map_err(|_| crate::Error::Invalid("the splat map writer panicked".into()))?;
            out.extend(rest?);
            splat
        })?;
        out.extend(splat_written);
        Ok(out)
    }

    /// The whole-grid maps but the splat ones (see [`SurfaceMapsJob::whole_grid_writers`]).
    fn flora_and_other_whole_grid_maps(
        &self,
        set: &BandSet,
        inputs: &StreamInputs,
        metas: &[((u32, u32), BandMeta)],
    ) -> crate::Result<Vec<(usize, Vec<WrittenFile>)>> {
        let dir = inputs.outdir;
        let generator = &self.terrain.generator;
        let mut out = Vec::new();
        if self.want("flora") {
            let mut legend = serde_json::Map::new();
            for (class, name) in FLORA_CLASSES.iter().enumerate() {
                let range = metas.iter().filter_map(|(_, m)| m.flora_range[class]).reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)));
                let opts = Png16Options { min_max: Some(range.unwrap_or((f32::NAN, f32::NAN))), ..Default::default() };
                let src = PlaneSource { set, plane: Plane::FloraProbability(class as u8), wait: false };
                out.push((
                    order::FLORA + 2 * class + 1,
                    vec![write_png16_from(&dir.join(format!("flora_{name}_density.png")), &src, 1.0 / 65535.0, 0.0, &opts)?],
                ));
                let mut used: Vec<i32> = metas.iter().flat_map(|(_, m)| m.flora_ids[class].iter().copied()).collect();
                used.sort_unstable();
                used.dedup();
                let entries: Vec<serde_json::Value> = used
                    .iter()
                    .map(|id| {
                        let (fname, density) = if class < 2 {
                            generator.flora_families.families().iter().find(|f| f.id == *id).map(|f| (f.name.clone(), f.density)).unzip()
                        } else {
                            generator.radial_families.families().iter().find(|f| f.id == *id).map(|f| (f.name.clone(), f.density)).unzip()
                        };
                        serde_json::json!({ "family_id": id, "name": fname, "density": density })
                    })
                    .collect();
                legend.insert(name.to_string(), serde_json::Value::Array(entries));
            }
            let legend = serde_json::json!({ "classes": legend, "density_png": "placement probability of the most likely family, 0..65535 = 0..1 (swg-trn §5.9 stack reading)" });
            out.push((order::FLORA + 9, vec![write_json(&dir.join("flora_legend.json"), &legend)?]));
        }
        if self.want("flora_families") {
            let mut files = Vec::new();
            for (class, name) in FLORA_CLASSES.iter().enumerate() {
                let mut families: Vec<i32> = metas.iter().flat_map(|(_, m)| m.probability_families[class].iter().copied()).collect();
                families.sort_unstable();
                families.dedup();
                for f in families {
                    let src = FamilySource { set, metas, class, family: f, cache: Default::default() };
                    files.push(write_png16_from(&dir.join(format!("flora_{name}_family_{f}.png")), &src, 1.0 / 65535.0, 0.0, &Png16Options::default())?);
                }
            }
            out.push((order::FLORA_FAMILIES, files));
        }
        if self.want("scatter") {
            out.push((order::SCATTER, write_scatter(dir, set, metas, inputs.height_evaluator, self.surface.plan.half_width)?));
        }
        if self.want("smap") {
            out.push((order::SMAP, write_smap(dir, inputs.grid, inputs.height_evaluator)?));
        }
        Ok(out)
    }
}

/// One plane of the band checkpoints as height samples (f32 planes) for the GeoTIFF and
/// 16-bit PNG writers; `wait`: rows are read as bands finish.
struct PlaneSource<'a> {
    set: &'a BandSet,
    plane: Plane,
    wait: bool,
}

impl HeightSource for PlaneSource<'_> {
    fn grid(&self) -> Grid {
        self.set.grid
    }

    fn read_block(&self, c0: u32, r0: u32, cols: u32, rows: u32, out: &mut [f32]) -> io::Result<()> {
        trnbake_raster::source::check_block(&self.set.grid, c0, r0, cols, rows, out)?;
        let w = self.set.grid.cols as usize;
        let mut bytes = vec![0u8; w * rows as usize * 4];
        self.set.read_plane(self.plane, r0, rows, &mut bytes)?;
        for (r, row) in out.chunks_exact_mut(cols.max(1) as usize).enumerate() {
            let src = &bytes[(r * w + c0 as usize) * 4..];
            for (v, b) in row.iter_mut().zip(src.chunks_exact(4)) {
                *v = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
        }
        Ok(())
    }

    fn wait_rows(&self, r0: u32, _rows: u32) -> io::Result<()> {
        // Rows r0.. up to the north edge must all be finished.
        if self.wait {
            self.set.wait_north_rows(self.set.grid.rows.saturating_sub(r0))?;
        }
        Ok(())
    }

    fn may_block(&self) -> bool {
        self.wait
    }
}

/// A byte plane of the band checkpoints as image rows (north first) for the 8-bit PNG writer.
struct PlaneRows<'a> {
    set: &'a BandSet,
    plane: Plane,
    channels: u32,
    wait: bool,
}

impl ByteRows for PlaneRows<'_> {
    fn width(&self) -> u32 {
        self.set.grid.cols
    }
    fn height(&self) -> u32 {
        self.set.grid.rows
    }
    fn channels(&self) -> u32 {
        self.channels
    }
    fn read_rows(&self, rows: std::ops::Range<u32>, out: &mut [u8]) -> io::Result<()> {
        self.set.read_plane_north(self.plane, rows, out)
    }
    fn wait_rows(&self, bottom: u32) -> io::Result<()> {
        if self.wait {
            self.set.wait_north_rows(bottom)?;
        }
        Ok(())
    }
}

/// `preview.png`'s RGB rows: the colours the bands made, and the height tint of the others
/// ([`preview_tint`]) from the height tiles and the grid's height range.
struct PreviewRows<'a> {
    set: &'a BandSet,
    heights: &'a CheckpointSource,
    range: (f32, f32),
}

impl ByteRows for PreviewRows<'_> {
    fn width(&self) -> u32 {
        self.set.grid.cols
    }
    fn height(&self) -> u32 {
        self.set.grid.rows
    }
    fn channels(&self) -> u32 {
        3
    }
    fn read_rows(&self, rows: std::ops::Range<u32>, out: &mut [u8]) -> io::Result<()> {
        let (cols, n) = (self.set.grid.cols as usize, rows.len());
        self.set.read_plane_north(Plane::Preview, rows.clone(), out)?;
        let mut shades = vec![0u8; cols * n * 4];
        self.set.read_plane_north(Plane::PreviewShade, rows.clone(), &mut shades)?;
        // The same rows south first (grid rows), as the height tiles hold them.
        let mut heights = vec![0.0f32; cols * n];
        self.heights.read_block(0, self.set.grid.rows - rows.end, cols as u32, n as u32, &mut heights)?;
        for (i, (px, shade)) in out.chunks_exact_mut(3).zip(shades.chunks_exact(4)).enumerate() {
            let shade = f32::from_le_bytes([shade[0], shade[1], shade[2], shade[3]]);
            if shade != PREVIEW_COLOURED {
                let (row, col) = (i / cols, i % cols);
                px.copy_from_slice(&preview_tint(heights[(n - 1 - row) * cols + col], self.range, shade));
            }
        }
        Ok(())
    }
    fn wait_rows(&self, bottom: u32) -> io::Result<()> {
        self.set.wait_north_rows(bottom)
    }
}

/// One `splat_k.png`: RGBA rows of up to four families' splat bytes.
struct SplatRows<'a> {
    set: &'a BandSet,
    channels: [Option<i32>; 4],
}

impl ByteRows for SplatRows<'_> {
    fn width(&self) -> u32 {
        self.set.grid.cols
    }
    fn height(&self) -> u32 {
        self.set.grid.rows
    }
    fn channels(&self) -> u32 {
        4
    }
    fn read_rows(&self, rows: std::ops::Range<u32>, out: &mut [u8]) -> io::Result<()> {
        out.fill(0);
        let mut bytes = vec![0u8; out.len() / 4];
        for (ch, family) in self.channels.iter().enumerate() {
            if let Some(f) = family {
                self.set.read_splat_north(*f, rows.clone(), &mut bytes)?;
                for (px, &b) in out.chunks_exact_mut(4).zip(&bytes) {
                    px[ch] = b;
                }
            }
        }
        Ok(())
    }
}

/// One flora family's probability per post, from the band checkpoints' probabilities.
struct FamilySource<'a> {
    set: &'a BandSet,
    /// Each band (first row, rows) and its meta.
    metas: &'a [((u32, u32), BandMeta)],
    class: usize,
    family: i32,
    /// The last band decoded: its first row and the family's probability per post.
    cache: std::sync::Mutex<Option<(u32, std::sync::Arc<Vec<f32>>)>>,
}

impl FamilySource<'_> {
    fn band(&self, r0: u32, rows: u32, meta: &BandMeta) -> io::Result<std::sync::Arc<Vec<f32>>> {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((at, values)) = &*cache {
            if *at == r0 {
                return Ok(values.clone());
            }
        }
        let (counts, entries) = self.set.read_probabilities(r0, rows, self.class, meta)?;
        let mut values = Vec::with_capacity(counts.len());
        let mut at = 0usize;
        for c in counts {
            let post = &entries[at..at + usize::from(c)];
            values.push(post.iter().find(|e| e.0 == self.family).map_or(0.0, |e| e.1));
            at += usize::from(c);
        }
        let values = std::sync::Arc::new(values);
        *cache = Some((r0, values.clone()));
        Ok(values)
    }
}

impl HeightSource for FamilySource<'_> {
    fn grid(&self) -> Grid {
        self.set.grid
    }

    fn read_block(&self, c0: u32, r0: u32, cols: u32, rows: u32, out: &mut [f32]) -> io::Result<()> {
        trnbake_raster::source::check_block(&self.set.grid, c0, r0, cols, rows, out)?;
        let w = self.set.grid.cols as usize;
        for ((b0, brows), meta) in self.metas {
            let (a, b) = ((*b0).max(r0), (b0 + brows).min(r0 + rows));
            if a >= b {
                continue;
            }
            let values = self.band(*b0, *brows, meta)?;
            for row in a..b {
                let src = &values[(row - b0) as usize * w + c0 as usize..][..cols as usize];
                out[(row - r0) as usize * cols as usize..][..cols as usize].copy_from_slice(src);
            }
        }
        Ok(())
    }
}
/// The families of a post's splat layers with a weight (repeats possible).
fn post_splat_families(r: &PostSurface) -> impl Iterator<Item = i32> + '_ {
    r.splat.iter().filter(|e| e.0 != 0 && e.1 > 0.0).map(|e| e.0)
}

/// Splat weights of one post for `families` (the splat channels), summing to 255 where the
/// post has any shader (largest-remainder rounding), all 0 elsewhere.
pub fn splat_bytes(r: &PostSurface, families: &[i32]) -> Vec<u8> {
    let mut out = vec![0u8; families.len()];
    splat_bytes_into(r, families, &mut out);
    out
}

/// [`splat_bytes`] into `out` (one byte a family), without allocating for up to 16 families.
pub fn splat_bytes_into(r: &PostSurface, families: &[i32], out: &mut [u8]) {
    out.fill(0);
    let total: f32 = r.splat.iter().filter(|e| e.0 != 0).map(|e| e.1).sum();
    if total <= 0.0 {
        return;
    }
    let share = |f: &i32| r.splat.iter().filter(|e| e.0 == *f).map(|e| e.1).sum::<f32>() / total * 255.0;
    let mut short = [0.0f32; 16];
    let long: Vec<f32>;
    let shares: &[f32] = if families.len() <= short.len() {
        for (s, f) in short.iter_mut().zip(families) {
            *s = share(f);
        }
        &short[..families.len()]
    } else {
        long = families.iter().map(share).collect();
        &long
    };
    largest_remainder_bytes(shares, out);
}

/// What a band's meta records of its posts' flora: per class the most likely families and
/// the range of their (finite) probabilities.
#[derive(Default)]
struct BandFigures {
    flora_ids: [Vec<i32>; 4],
    flora_range: [Option<(f32, f32)>; 4],
}

impl BandFigures {
    fn of(posts: &[PostSurface]) -> BandFigures {
        BandFigures {
            flora_ids: std::array::from_fn(|k| distinct_sorted(posts.iter().map(|r| r.flora[k].0.max(0)).filter(|&i| i != 0))),
            flora_range: std::array::from_fn(|k| {
                let finite = posts.iter().map(|r| r.flora[k].1).filter(|v| v.is_finite());
                finite.fold(None, |range: Option<(f32, f32)>, v| Some(range.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v)))))
            }),
        }
    }

    fn merge(a: BandFigures, b: BandFigures) -> BandFigures {
        let union = |x: &[i32], y: &[i32]| distinct_sorted(x.iter().chain(y).copied());
        let range = |x: Option<(f32, f32)>, y: Option<(f32, f32)>| match (x, y) {
            (Some(x), Some(y)) => Some((x.0.min(y.0), x.1.max(y.1))),
            (x, y) => x.or(y),
        };
        BandFigures {
            flora_ids: std::array::from_fn(|k| union(&a.flora_ids[k], &b.flora_ids[k])),
            flora_range: std::array::from_fn(|k| range(a.flora_range[k], b.flora_range[k])),
        }
    }
}

/// The distinct values of `values`, ascending: a sorted set grown by binary search, the
/// repeats of the last value skipped first (neighbouring posts mostly share their ids), so a
/// band's millions of posts cost no sort.
fn distinct_sorted(values: impl Iterator<Item = i32>) -> Vec<i32> {
    let mut set: Vec<i32> = Vec::new();
    let mut last = None;
    for v in values {
        if last == Some(v) {
            continue;
        }
        last = Some(v);
        if let Err(at) = set.binary_search(&v) {
            set.insert(at, v);
        }
    }
    set
}

/// A hillshade value in [0, 1] for a unit normal: light from the north-west at 45°.
pub fn hillshade(n: [f32; 3]) -> f32 {
    let l = [-0.5f32, std::f32::consts::FRAC_1_SQRT_2, 0.5];
    (n[0] * l[0] + n[1] * l[1] + n[2] * l[2]).clamp(0.0, 1.0)
}

/// A uniform number in [0, 1) from a post's global indices and a stream (SplitMix64), so a
/// post scatters the same way whichever grid or tile holds it.
fn post_random(gc: i64, gr: i64, stream: u64) -> f64 {
    let mut z = (gc as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (gr as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F) ^ stream.wrapping_mul(0x1656_67B1_9E37_79F9);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// `flora_<class>_points.csv` (`x,z,height,family_id`): a deterministic scatter from the
/// probabilities — each post's cell (one spacing wide, centred on the post) holds at most one
/// instance, of family k with probability P(k), at a jittered position in the cell, with the
/// exact ground height there. Not the original client's placement (swg-trn §5.9: its seeds
/// are not public), but the same densities. Written band by band from the south (the rows of
/// the file run south to north, west to east).
fn write_scatter(outdir: &Path, set: &BandSet, metas: &[((u32, u32), BandMeta)], he: &HeightEvaluator, half: f32) -> crate::Result<Vec<WrittenFile>> {
    let g = set.grid;
    let cols = g.cols as usize;
    let gc0 = ((g.x0 + f64::from(half)) / g.spacing).round() as i64;
    let gr0 = ((g.z0 + f64::from(half)) / g.spacing).round() as i64;
    let mut files = Vec::new();
    for (class, name) in FLORA_CLASSES.iter().enumerate() {
        let path = outdir.join(format!("flora_{name}_points.csv"));
        trnbake_raster::fsutil::write_atomic_with(&path, |w| {
            use std::io::Write;
            writeln!(w, "x,z,height,family_id")?;
            for ((b0, brows), meta) in metas.iter().rev() {
                let (counts, entries) = set.read_probabilities(*b0, *brows, class, meta)?;
                let mut starts = Vec::with_capacity(counts.len());
                let mut at = 0usize;
                for &c in &counts {
                    starts.push(at);
                    at += usize::from(c);
                }
                let points: Vec<(f32, f32, i32)> = (0..counts.len())
                    .into_par_iter()
                    .filter_map(|i| {
                        let (c, r) = ((i % cols) as i64, (i / cols) as i64 + i64::from(*b0));
                        let (gc, gr) = (gc0 + c, gr0 + r);
                        let stream = class as u64 * 3;
                        let u = post_random(gc, gr, stream);
                        let mut acc = 0.0f64;
                        let family = entries[starts[i]..starts[i] + usize::from(counts[i])].iter().find(|e| {
                            acc += f64::from(e.1);
                            u < acc
                        })?;
                        let (x, z) = g.post(c as u32, r as u32);
                        let jx = (post_random(gc, gr, stream + 1) - 0.5) * g.spacing;
                        let jz = (post_random(gc, gr, stream + 2) - 0.5) * g.spacing;
                        let inside = |v: f32| v.clamp(-half, half);
                        Some((inside(x + jx as f32), inside(z + jz as f32), family.0))
                    })
                    .collect();
                let heights = he.heights_at(&points.iter().map(|p| (p.0, p.1)).collect::<Vec<_>>());
                for (p, h) in points.iter().zip(&heights) {
                    writeln!(w, "{:.3},{:.3},{:.4},{}", p.0, p.1, h, p.2)?;
                }
            }
            Ok(())
        })?;
        files.push(WrittenFile::of_file(&path, "csv")?);
    }
    Ok(files)
}

fn write_smap(outdir: &Path, g: &Grid, he: &HeightEvaluator) -> crate::Result<Vec<WrittenFile>> {
    let (cc, rr, west, south, bits) = smap_chunks(g, he, he.plan.half_width);
    if cc == 0 || rr == 0 {
        return Ok(Vec::new());
    }
    let bytes: Vec<u8> = bits.iter().map(|&b| if b { 255 } else { 0 }).collect();
    let png = write_png8(&outdir.join("smap.png"), cc, rr, 1, &bytes)?;
    let meta = serde_json::json!({
        "map": "smap.png", "chunk_metres": 8.0, "cols": cc, "rows": rr,
        "west_x": west, "south_z": south,
        "rule": "255 where the 3x3 tile-corner posts (4 m apart) of the 8 m chunk span more than 4 m (swg-trn §2.3)",
    });
    Ok(vec![png, write_json(&outdir.join("smap.json"), &meta)?])
}

/// Write an 8-bit PNG of `channels` (1 = grey, 3 = RGB, 4 = RGBA) from row-major-from-south
/// samples held in memory: image row 0 is the north edge, as every image viewer expects.
pub fn write_png8(path: &Path, cols: u32, rows: u32, channels: usize, data: &[u8]) -> io::Result<WrittenFile> {
    assert_eq!(data.len(), cols as usize * rows as usize * channels);
    let stride = cols as usize * channels;
    let north_first: Vec<u8> = data.chunks_exact(stride.max(1)).rev().flatten().copied().collect();
    write_png8_from(path, &MemRows { width: cols, height: rows, channels: channels as u32, data: &north_first }, Png8Coding::Patterned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_encoders_splat_bytes_are_those_of_the_rule() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let weights = [0.0f32, 1.0, 0.25, 0.3, 1e-30, 7.5, -0.5, 2e38, f32::NAN, f32::INFINITY];
        for _ in 0..50_000 {
            let mut result = PostSurface::default();
            for layer in result.splat.iter_mut() {
                // Mostly one family, sometimes none or another, odd weights among them.
                let family = [0, 3, 3, 3, 3, 8][next(6) as usize];
                *layer = (family, weights[next(weights.len() as u64) as usize]);
            }
            let post = PostValues { result: &result, normal: [0.0, 1.0, 0.0], height: 0.0, water: None };
            let (fams, bytes, n) = post.splat_bytes();
            let mut want: Vec<i32> = post_splat_families(&result).collect();
            want.sort_unstable();
            want.dedup();
            assert_eq!(&fams[..n], &want[..], "{result:?}");
            assert_eq!(bytes[..n].to_vec(), splat_bytes(&result, &want), "{result:?}");
        }
    }

    #[test]
    fn round_to_byte_is_round_as_u8() {
        let mut cases = vec![f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::MAX, f32::MIN, 0.0, -0.0, f32::MIN_POSITIVE, 1e30, -1e30];
        // Every half and whole number of the range and its neighbours, where rounding turns.
        for k in -4..=1024 {
            let x = k as f32 * 0.5;
            cases.extend([x, x.next_up(), x.next_down(), x.next_up().next_up(), x.next_down().next_down()]);
        }
        // And a dense sweep.
        cases.extend((0..2_000_000).map(|k| -10.0 + k as f32 * 1.37e-4));
        for x in cases {
            assert_eq!(round_to_byte(x), x.round() as u8, "{x:e}");
        }
    }
}
