//! trnbake-bake: the bake pipeline. A [`BakeRequest`] (plain fields with the command line's
//! defaults) becomes a validated [`Pipeline`], which tiles the grid, picks the backend (a GPU
//! when there is one; the CPU where the kernels cannot compute an option exactly, decided once
//! in [`surface_maps::surface_on_backend`]), checkpoints tiles so a killed bake resumes, streams
//! the height files while tiles finish, writes the surface maps and the manifest. [`golden`]
//! re-bakes fixtures and compares them with expected images.
//!
//! # Example
//!
//! ```
//! use trnbake_bake::{Backend, BakeRequest};
//!
//! let out = std::env::temp_dir().join(format!("trnbake-bake-doc-{}", std::process::id()));
//! let mut request = BakeRequest::demo(&out);      // the built-in 4 km demo terrain
//! request.spacing = Some(64.0);                   // 65 x 65 posts
//! request.maps = vec!["height".into(), "splat".into()];
//! request.backend = Backend::Cpu;
//! // Silent by default: `request.reporter` takes notes and progress (see `report`).
//! let report = request.pipeline()?.run()?;
//! assert_eq!(report.posts, 65 * 65);
//! assert!(out.join("height.tif").is_file() && out.join("manifest.json").is_file());
//! # std::fs::remove_dir_all(&out)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `trnbake bake`: a height grid over a region, tile by tile on the GPU or CPU backend, with
//! checkpointed tiles (a killed bake resumes), deterministic shards for job arrays, and
//! atomically written outputs plus a manifest.
//!
//! Tiles are blocks of posts; every post is evaluated from its global indices, so the result
//! does not depend on the tile size or on which shard computed it (design.md "Tiles in post
//! coordinates").

use trnbake_swg::eval::{Grid, HeightEvaluator};
mod bands;
pub mod folder;
use folder::OutputFolder;
pub mod error;
pub use error::{Error, Result};
mod engine_splat;
pub mod golden;
pub use report::{Level, NullReporter, Progress, Reporter};
pub use trnbake_swg::report;
mod merge;
pub use merge::merge;
mod request;
pub mod shard;
pub mod store;
mod surface_bands;
use store::{tile_bytes, tile_checkpoint, tile_path, Checkpoint, CHECKPOINT_DIR, STATE_FILE};
pub use store::{BakeState, CheckpointSource, Fingerprint};
pub mod surface_maps;
pub use request::{BakeRequest, Pipeline};
pub use surface_maps::{SurfaceMapsJob, SurfaceMapsOutput, SurfaceTiming};

use bands::{BandProgress, StreamedCheckpoints};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;
use trnbake_gpu::{GpuContext, GpuHeightPass};
use trnbake_raster::error::Context;
use trnbake_raster::fsutil::{write_atomic, write_renamed};
use trnbake_raster::source::scan_min_max;
use trnbake_raster::writers::set::{export, ExportChoice, ExportReport, ExportSpec, ExportSummary, Format};
use trnbake_raster::{HeightSource, WrittenFile};

/// Which evaluator runs the height pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// A hardware GPU adapter when one exists, else the CPU backend (a software adapter
    /// such as lavapipe is slower than the CPU backend; `gpu` still uses it).
    Auto,
    Gpu,
    Cpu,
}

/// Everything that determines the bake's numbers (the resume/merge fingerprint).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BakeParams {
    pub input: String,
    pub input_sha256: String,
    pub spacing: f64,
    /// West, south, east, north post positions (world metres).
    pub region: [f64; 4],
    pub cols: u32,
    pub rows: u32,
    pub tile: u32,
    pub roads: bool,
    pub bitmap_gain: bool,
    /// SHA-256 of the height plan: every record, fractal table and bitmap pixel the height
    /// pass reads. It changes with anything that changes a tile (the terrain, the data root
    /// and the bitmaps found there, the missing-bitmap policy, roads, the bitmap gain), so a
    /// resume or a merge never mixes tiles of different inputs.
    pub plan_sha256: String,
}

/// SHA-256 (hex) of what the height pass of `plan` reads, for [`BakeParams::plan_sha256`].
pub fn plan_sha256(plan: &trnbake_swg::plan::BakePlan) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    let mut part = |name: &str, bytes: &[u8]| {
        // Each part with its name and length, so no two plans hash alike by shifting bytes.
        h.update(name.as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    part("half_width", &plan.half_width.to_le_bytes());
    part("layers", bytemuck::cast_slice(&plan.layers));
    part("boundaries", bytemuck::cast_slice(&plan.boundaries));
    part("points", bytemuck::cast_slice(&plan.points));
    part("filters", bytemuck::cast_slice(&plan.filters));
    part("affectors", bytemuck::cast_slice(&plan.affectors));
    part("roads", bytemuck::cast_slice(&plan.roads));
    part("road_segments", bytemuck::cast_slice(&plan.road_segments));
    part("road_samples", bytemuck::cast_slice(&plan.road_samples));
    part("road_heights", bytemuck::cast_slice(&plan.road_heights));
    part("fractal_records", bytemuck::cast_slice(&plan.fractal_records));
    part("perm", bytemuck::cast_slice(&plan.perm_table()));
    part("gradients", bytemuck::cast_slice(&plan.gradient_table()));
    part("bitmap_records", bytemuck::cast_slice(&plan.bitmap_records));
    part("bitmaps", bytemuck::cast_slice(&plan.bitmap_words()));
    trnbake_raster::hex(&h.finalize())
}

/// A shard of the tile list: tiles whose index is ≡ index−1 (mod count).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (k, n) = s.split_once('/').ok_or("expected K/N, e.g. 2/8")?;
        let index: u32 = k.trim().parse().map_err(|_| format!("`{k}` is not a shard number"))?;
        let count: u32 = n.trim().parse().map_err(|_| format!("`{n}` is not a shard count"))?;
        if count == 0 || index == 0 || index > count {
            return Err(format!("shard {index}/{count}: K must be in 1..=N"));
        }
        Ok(Shard { index, count })
    }
}

/// Validated options of one bake.
pub struct BakeJob {
    pub params: BakeParams,
    pub grid: Grid,
    pub backend: Backend,
    pub adapter_filter: Option<String>,
    pub shard: Option<Shard>,
    pub outdir: PathBuf,
    /// Where notes and progress go (the command line's renderer, or a silent one).
    pub reporter: std::sync::Arc<dyn Reporter>,
    /// Output formats, preset, tiling.
    pub export: ExportChoice,
    /// Surface maps to write from the finished heights, if any.
    pub surface_maps: Option<SurfaceMapsJob>,
    /// What the bake was asked for (recorded in a shard's state for `merge`).
    pub recipe: request::BakeRecipe,
}

/// Posts from `a` to `b` (inclusive) at `spacing`.
pub fn post_count(a: f64, b: f64, spacing: f64) -> Result<u32> {
    Ok(trnbake_swg::grid::post_count(a, b, spacing)?)
}

use trnbake_swg::grid::{tiles, TileSpec};

/// The determinism class of a backend for [`BakeState::backend`].
fn backend_class(gpu: Option<&GpuContext>) -> String {
    match gpu {
        Some(c) => format!("gpu: {} ({})", c.adapter.name, c.adapter.backend),
        None => "cpu".into(),
    }
}

/// What a finished bake reports.
#[derive(Debug, Serialize)]
pub struct BakeReport {
    pub backend: String,
    pub adapter: Option<trnbake_gpu::AdapterSummary>,
    pub posts: u64,
    pub tiles_computed: usize,
    pub tiles_resumed: usize,
    pub compute_seconds: f64,
    pub total_seconds: f64,
    pub min_height: f32,
    pub max_height: f32,
    pub outputs: Vec<WrittenFile>,
    /// Time spent on the surface maps, when any were asked for.
    pub maps_seconds: Option<f64>,
    /// The backend that computed the surface maps (`"gpu"` or `"cpu"`), when any were asked for.
    pub maps_backend: Option<String>,
    /// Preset, resampling, tiles and engine settings of the outputs.
    pub export: Option<ExportSummary>,
    /// Where the surface maps' time went, when any were asked for.
    pub surface_timing: Option<SurfaceTiming>,
    /// The adapter as the shards' manifests had it (a merge, which runs on none).
    #[serde(skip)]
    pub adapter_json: Option<serde_json::Value>,
}

impl BakeReport {
    /// A report of `posts` posts before anything is timed or written.
    fn new(backend: String, adapter: Option<trnbake_gpu::AdapterSummary>, posts: u64) -> Self {
        BakeReport {
            backend,
            adapter,
            posts,
            tiles_computed: 0,
            tiles_resumed: 0,
            compute_seconds: 0.0,
            total_seconds: 0.0,
            min_height: f32::NAN,
            max_height: f32::NAN,
            outputs: Vec::new(),
            maps_seconds: None,
            maps_backend: None,
            export: None,
            surface_timing: None,
            adapter_json: None,
        }
    }
}

/// Run the height pass of `job` with `evaluator`, checkpointing tiles in the output folder.
pub fn run_bake(job: &BakeJob, evaluator: &HeightEvaluator) -> Result<BakeReport> {
    let start = Instant::now();
    // One owner per folder, temp files of dead runs swept, the manifest marked in progress.
    let resume_note = format!("the finished tiles are kept in {}; run the same command again to resume", job.outdir.join(CHECKPOINT_DIR).display());
    let folder = OutputFolder::claim(&job.outdir, Some(resume_note), &*job.reporter)?;
    std::fs::create_dir_all(job.outdir.join(CHECKPOINT_DIR)).with_context(|| format!("cannot create {}", job.outdir.display()))?;
    // The backend first: checkpoints of another backend are not resumed.
    let gpu = choose_gpu(job.backend, job.adapter_filter.as_deref(), &*job.reporter)?;
    let adapter = gpu.as_ref().map(|c| c.adapter.clone());
    let backend_name = backend_name(gpu.as_ref()).to_string();
    let backend = backend_class(gpu.as_ref());
    let fingerprint = Fingerprint::of_heights(&job.params, &backend);

    let state_path = job.outdir.join(STATE_FILE);
    let surface_fingerprint = job.surface_maps.as_ref().map(|m| m.fingerprint());
    if let Ok(text) = std::fs::read_to_string(&state_path) {
        let previous = serde_json::from_str::<BakeState>(&text).ok();
        let why = match &previous {
            Some(s) if s.params == job.params && s.shard == job.shard && s.backend == backend => None,
            Some(s) if s.params.plan_sha256 != job.params.plan_sha256 => {
                Some("its heights come from other inputs (the terrain, data root, bitmaps or height options differ)".to_string())
            }
            Some(s) if s.backend != backend => Some(format!("it was computed on another backend ({}, now {backend})", s.backend)),
            Some(_) => Some("its grid, tiles or shard differ".to_string()),
            None => Some("it is damaged or from another version".to_string()),
        };
        if let Some(why) = why {
            job.reporter.note(format!("the checkpoints in {} belong to a different bake: {why}; starting afresh", job.outdir.display()));
            tracing::info!("{} belongs to a different bake; starting afresh", state_path.display());
            let _ = std::fs::remove_dir_all(job.outdir.join(CHECKPOINT_DIR));
            std::fs::create_dir_all(job.outdir.join(CHECKPOINT_DIR))?;
        } else if previous.and_then(|s| s.surface) != surface_fingerprint {
            // Same heights, other maps or surface options: only the surface bands go.
            store::remove_surface_bands(&job.outdir.join(CHECKPOINT_DIR));
        }
    }
    let state = BakeState {
        params: job.params.clone(),
        shard: job.shard,
        backend,
        complete: false,
        surface: surface_fingerprint,
        recipe: Some(job.recipe.clone()),
        manifest_backend: None,
    };
    write_atomic(&state_path, serde_json::to_string_pretty(&state)?.as_bytes())?;

    let all = tiles(&job.grid, job.params.tile);
    let mine: Vec<TileSpec> = match job.shard {
        Some(s) => all.iter().enumerate().filter(|(i, _)| *i as u32 % s.count == s.index - 1).map(|(_, t)| *t).collect(),
        None => all.clone(),
    };
    let mut todo = Vec::new();
    for t in &mine {
        match tile_checkpoint(&tile_path(&job.outdir, t), t, &fingerprint) {
            Checkpoint::Done => {}
            Checkpoint::Missing => todo.push(*t),
            status => {
                job.reporter.note(format!("the checkpoint of the tile at post ({}, {}) {}; recomputing it", t.c0, t.r0, status.why()));
                todo.push(*t);
            }
        }
    }
    let resumed = mine.len() - todo.len();
    if resumed > 0 {
        job.reporter.info(format!("resuming: {resumed} of {} tiles already done", mine.len()));
    }

    // Tiles from the north edge down, band by band, so that the outputs can be written
    // while later bands compute (`bands`): the Float32 formats stream, the others (their
    // encoding needs the height range) follow the compute.
    bands::north_first(&mut todo);
    let progress = BandProgress::new(&job.grid, job.params.tile, &todo);
    let streamed_spec = match job.shard {
        None if job.export.preset.is_none() && job.export.tiles.is_none() => {
            let (now, later): (Vec<Format>, Vec<Format>) = job.export.formats.iter().partition(|f| !f.needs_range());
            (!now.is_empty()).then(|| (ExportChoice { formats: now, ..job.export.clone() }, ExportChoice { formats: later, ..job.export.clone() }))
        }
        _ => None,
    };

    let pb = Progress::new(&*job.reporter, todo.len() as u64, "tiles", "height");
    let t_compute = Instant::now();
    let mut report = BakeReport::new(backend_name, adapter, u64::from(job.grid.cols) * u64::from(job.grid.rows));
    report.tiles_computed = todo.len();
    report.tiles_resumed = resumed;
    let citation = bake_citation(&job.params);
    let streamed = std::thread::scope(|scope| -> Result<Option<(ExportReport, Option<ExportReport>)>> {
        // One writer thread per streamed format (a writer waiting for rows must not sit on a
        // rayon worker: the workers compute those rows).
        let writers: Vec<_> = streamed_spec
            .iter()
            .flat_map(|(now, _)| now.formats.iter())
            .map(|&format| {
                let files = CheckpointSource::pending(&job.grid, job.params.tile, &job.outdir);
                let spec = ExportSpec::for_bake(&ExportChoice { formats: vec![format], ..job.export.clone() }, citation.clone());
                let (outdir, progress) = (&job.outdir, &progress);
                scope.spawn(move || -> Result<ExportReport> { Ok(export(&StreamedCheckpoints { files, progress }, None, &spec, outdir, &|_| ())?) })
            })
            .collect();
        let join_all = |ws: Vec<std::thread::ScopedJoinHandle<'_, Result<ExportReport>>>| -> Result<Vec<ExportReport>> {
            ws.into_iter().map(|w| w.join().unwrap_or_else(|_| Err(Error::Invalid("an output writer panicked".into())))).collect()
        };
        if let Err(e) = compute_tiles(job, evaluator, gpu.as_ref(), &fingerprint, &todo, &progress, &pb) {
            progress.fail();
            let _ = join_all(writers);
            return Err(e);
        }
        pb.finish();
        report.compute_seconds = t_compute.elapsed().as_secs_f64();
        let Some((_, later)) = &streamed_spec else { return Ok(None) };
        // The outputs that need the height range, written while the streamed ones finish.
        // The range: computed tiles reported theirs, resumed ones are read. Every tile of this
        // folder is in place by now (verified at the start, or just written): no second check.
        let src = CheckpointSource::pending(&job.grid, job.params.tile, &job.outdir);
        for t in mine.iter().filter(|t| !todo.contains(t)) {
            let mut buf = vec![0.0f32; t.cols as usize * t.rows as usize];
            src.read_block(t.c0, t.r0, t.cols, t.rows, &mut buf)?;
            progress.include(trnbake_raster::finite_min_max(&buf));
        }
        let range = progress.range().context("the bake has no finite height")?;
        let rest = if later.formats.is_empty() {
            None
        } else {
            let pb = Progress::new(&*job.reporter, 0, "files", "writing");
            let r = export(&src, Some(range), &ExportSpec::for_bake(later, citation.clone()), &job.outdir, &|total| {
                pb.set_total(total);
                pb.inc(1);
            });
            pb.finish();
            Some(r?)
        };
        let mut streamed = join_all(writers)?.into_iter();
        let mut first = streamed.next().context("no streamed output")?;
        first.files.extend(streamed.flat_map(|r| r.files));
        Ok(Some((first, rest)))
    })?;

    if let Some(shard) = job.shard {
        // A shard's share of the surface bands, their heights evaluated for them (the tiles
        // around them are other shards'): `merge` writes every map from all shards' bands.
        let mut maps_backend = None;
        if let Some(maps) = &job.surface_maps {
            let gpu_heights = gpu.as_ref().map(|ctx| GpuHeightPass::new(ctx, &evaluator.plan));
            let source = CheckpointSource::pending(&job.grid, job.params.tile, &job.outdir);
            let inputs = surface_maps::StreamInputs {
                outdir: &job.outdir,
                grid: &job.grid,
                heights: &source,
                heights_fingerprint: fingerprint,
                checkpoint_dirs: vec![job.outdir.clone()],
                role: surface_maps::StageRole::Shard { shard, gpu_heights: gpu_heights.as_ref() },
                range: (f32::NAN, f32::NAN),
                height_evaluator: evaluator,
                gpu: gpu.as_ref(),
                reporter: &*job.reporter,
                export: None,
            };
            let out = maps.stream(&inputs)?;
            maps_backend = Some(out.backend.to_string());
            report.maps_backend = maps_backend.clone();
            report.maps_seconds = Some(out.timing.total_seconds);
            report.surface_timing = Some(out.timing);
        }
        let manifest_backend = serde_json::json!({ "backend": report.backend, "adapter": report.adapter, "surface_maps_backend": maps_backend });
        let done = BakeState { complete: true, manifest_backend: Some(manifest_backend), ..state };
        write_atomic(&state_path, serde_json::to_string_pretty(&done)?.as_bytes())?;
        report.total_seconds = start.elapsed().as_secs_f64();
        return Ok(report);
    }
    match streamed {
        Some((streamed, rest)) => {
            let (min, max) = progress.range().context("the bake has no finite height")?;
            report.min_height = min;
            report.max_height = max;
            report.outputs = streamed.files;
            let mut summary = streamed.summary;
            if let Some(rest) = rest {
                report.outputs.extend(rest.files);
                summary = rest.summary;
            }
            summary.height_min = min;
            summary.height_max = max;
            report.export = Some(summary);
        }
        None => write_outputs(
            &CheckpointSource::pending(&job.grid, job.params.tile, &job.outdir),
            &job.params,
            &job.outdir,
            &job.export,
            &*job.reporter,
            &mut report,
        )?,
    }
    if let Some(maps) = &job.surface_maps {
        // Streamed band by band from the height checkpoints (memory bounded by a band).
        let source = CheckpointSource::pending(&job.grid, job.params.tile, &job.outdir);
        let inputs = surface_maps::StreamInputs {
            outdir: &job.outdir,
            grid: &job.grid,
            heights: &source,
            heights_fingerprint: fingerprint,
            checkpoint_dirs: vec![job.outdir.clone()],
            role: surface_maps::StageRole::Bake,
            range: (report.min_height, report.max_height),
            height_evaluator: evaluator,
            gpu: gpu.as_ref(),
            reporter: &*job.reporter,
            export: report.export.as_ref(),
        };
        let out = maps.stream(&inputs)?;
        report.outputs.extend(out.files);
        report.maps_backend = Some(out.backend.to_string());
        report.maps_seconds = Some(out.timing.total_seconds);
        report.surface_timing = Some(out.timing);
    }
    folder.remove_stale(&report.outputs, &*job.reporter);
    report.total_seconds = start.elapsed().as_secs_f64();
    write_manifest(&job.outdir, &job.params, &report)?;
    let _ = std::fs::remove_dir_all(job.outdir.join(CHECKPOINT_DIR));
    let _ = std::fs::remove_file(&state_path);
    Ok(report)
}

/// Compute and checkpoint `todo` (already in north-first order) on the GPU when `gpu` is
/// given, else on the CPU, reporting each finished tile to `progress`. The CPU computes one
/// band of tiles at a time (its tiles, and each tile's blocks, in parallel), so bands finish
/// in order from the north for the streamed writers.
fn compute_tiles(
    job: &BakeJob,
    evaluator: &HeightEvaluator,
    gpu: Option<&GpuContext>,
    fingerprint: &Fingerprint,
    todo: &[TileSpec],
    progress: &BandProgress,
    pb: &Progress,
) -> Result<()> {
    let (grid, tile) = (&job.grid, job.params.tile);
    let checkpoint = |t: &TileSpec, data: &[f32]| -> Result<()> {
        // No fsync: a killed bake cannot leave a partial checkpoint under its final name (the
        // rename is atomic), and one a machine crash leaves zeroed or short fails its checksum
        // and is recomputed on resume; syncing hundreds of tiles would only slow every bake.
        write_renamed(&tile_path(&job.outdir, t), &tile_bytes(data, fingerprint, t)).context("cannot write a tile checkpoint")?;
        progress.tile_done(grid, tile, t, trnbake_raster::finite_min_max(data));
        pb.inc(1);
        Ok(())
    };
    match gpu {
        Some(ctx) => {
            // GPU tiles arrive here one by one, in `todo` order, while the next tile computes.
            let mut save_error: Option<Error> = None;
            let mut save = |t: TileSpec, data: &[f32]| {
                if save_error.is_none() {
                    save_error = checkpoint(&t, data).err();
                }
            };
            GpuHeightPass::new(ctx, &evaluator.plan).run(grid, todo, &mut save)?;
            save_error.map_or(Ok(()), Err)
        }
        None => {
            use rayon::prelude::*;
            for band in todo.chunk_by(|a, b| a.r0 == b.r0) {
                band.par_iter().try_for_each(|t| -> Result<()> {
                    let mut out = vec![0.0f32; t.cols as usize * t.rows as usize];
                    evaluator.grid_region(grid, t.c0, t.r0, t.cols, t.rows, CPU_CULL_BLOCK, &mut out);
                    checkpoint(t, &out)
                })?;
            }
            Ok(())
        }
    }
}

/// The GeoTIFF citation / CRS name of a bake's outputs.
fn bake_citation(params: &BakeParams) -> String {
    format!("SWG {} local metres", Path::new(&params.input).file_stem().map_or("terrain".into(), |s| s.to_string_lossy()))
}

/// The GPU context `backend` asks for, or `None` for the CPU backend; says which to
/// `reporter`. `Auto` takes only hardware adapters: a software adapter (lavapipe) runs
/// the kernel far slower than the CPU backend (README, Performance); `Gpu` still uses it.
pub fn choose_gpu(backend: Backend, adapter_filter: Option<&str>, reporter: &dyn Reporter) -> Result<Option<GpuContext>> {
    let gpu = match backend {
        Backend::Cpu => None,
        Backend::Gpu => Some(GpuContext::new(false, adapter_filter)?),
        Backend::Auto => match GpuContext::new(false, adapter_filter) {
            Ok(c) if c.adapter.device_type == "Cpu" && adapter_filter.is_none() => {
                reporter.note(format!(
                    "only a software GPU adapter ({}) is present; baking on the faster CPU backend (--backend gpu forces the adapter)",
                    c.adapter.name
                ));
                None
            }
            Ok(c) => Some(c),
            Err(e) => {
                reporter.note(format!("no usable GPU adapter ({e}); baking on the CPU"));
                None
            }
        },
    };
    match &gpu {
        Some(c) => reporter.info(format!("backend: GPU, adapter {} ({}, {})", c.adapter.name, c.adapter.backend, c.adapter.driver_info)),
        None => reporter.info(format!("backend: CPU ({} threads)", rayon::current_num_threads())),
    }
    Ok(gpu)
}

/// `"gpu"` or `"cpu"`: the backend [`choose_gpu`] picked, as manifests and reports name it.
pub fn backend_name(gpu: Option<&GpuContext>) -> &'static str {
    if gpu.is_some() {
        "gpu"
    } else {
        "cpu"
    }
}

/// The heights of a whole grid in memory (row-major, row 0 = south) on the GPU when `gpu`
/// is given, else on the CPU backend: for grids small enough to hold, without checkpoints.
pub fn heights_in_memory(evaluator: &HeightEvaluator, grid: &Grid, gpu: Option<&GpuContext>) -> Result<Vec<f32>> {
    let n = grid.cols as usize * grid.rows as usize;
    match gpu {
        Some(ctx) => Ok(GpuHeightPass::new(ctx, &evaluator.plan).run_grid(grid, ctx.max_tile(2048))?),
        None => {
            let _ = n;
            Ok(evaluator.grid_heights(grid))
        }
    }
}

pub use trnbake_swg::eval::CPU_CULL_BLOCK;

/// Write the height outputs of a finished grid from `src` into `outdir`, in the order the
/// streamed bake writes them (the formats that need no height range first, a format at a
/// time, then the others), so that a merge lists the same files as the unsharded bake.
pub(crate) fn write_outputs(
    src: &CheckpointSource,
    params: &BakeParams,
    outdir: &Path,
    choice: &ExportChoice,
    reporter: &dyn Reporter,
    report: &mut BakeReport,
) -> Result<()> {
    let (min, max) = scan_min_max(src)?.context("the bake has no finite height")?;
    report.min_height = min;
    report.max_height = max;
    let pb = Progress::new(reporter, 0, "files", "writing");
    let export_all = |choice: &ExportChoice| -> Result<ExportReport> {
        Ok(export(src, Some((min, max)), &ExportSpec::for_bake(choice, bake_citation(params)), outdir, &|total| {
            pb.set_total(total);
            pb.inc(1);
        })?)
    };
    let summary;
    if choice.preset.is_none() && choice.tiles.is_none() {
        let (now, later): (Vec<Format>, Vec<Format>) = choice.formats.iter().partition(|f| !f.needs_range());
        let mut first = None;
        for format in now {
            let r = export_all(&ExportChoice { formats: vec![format], ..choice.clone() })?;
            report.outputs.extend(r.files);
            first.get_or_insert(r.summary);
        }
        if !later.is_empty() || first.is_none() {
            let r = export_all(&ExportChoice { formats: later, ..choice.clone() })?;
            report.outputs.extend(r.files);
            first = Some(r.summary);
        }
        summary = first;
    } else {
        let r = export_all(choice)?;
        report.outputs = r.files;
        summary = Some(r.summary);
    }
    pb.finish();
    let mut summary = summary.context("no height output")?;
    summary.height_min = min;
    summary.height_max = max;
    report.export = Some(summary);
    Ok(())
}

pub(crate) fn write_manifest(outdir: &Path, params: &BakeParams, report: &BakeReport) -> Result<()> {
    let adapter = report.adapter_json.clone().unwrap_or_else(|| serde_json::json!(report.adapter));
    let v = serde_json::json!({
        "trnbake_version": env!("CARGO_PKG_VERSION"),
        "status": "complete",
        "parameters": params,
        "backend": report.backend,
        "surface_maps_backend": report.maps_backend,
        "adapter": adapter,
        "posts": report.posts,
        "min_height": report.min_height,
        "max_height": report.max_height,
        "export": report.export,
        "outputs": report.outputs,
        "timing": {
            "compute_seconds": report.compute_seconds,
            "maps_seconds": report.maps_seconds,
            "surface": report.surface_timing,
            "total_seconds": report.total_seconds,
            "posts_per_second_end_to_end": report.posts as f64 / report.total_seconds.max(1e-9),
            "tiles_computed": report.tiles_computed,
            "tiles_resumed": report.tiles_resumed,
        },
    });
    write_atomic(&outdir.join("manifest.json"), serde_json::to_string_pretty(&v)?.as_bytes())?;
    Ok(())
}
