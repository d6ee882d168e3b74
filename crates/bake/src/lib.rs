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
mod request;
pub mod shard;
mod surface_bands;
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
use trnbake_raster::source::{check_block, read_exact_at, scan_min_max};
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
}

/// Posts from `a` to `b` (inclusive) at `spacing`.
pub fn post_count(a: f64, b: f64, spacing: f64) -> Result<u32> {
    Ok(trnbake_swg::grid::post_count(a, b, spacing)?)
}

use trnbake_swg::grid::{tiles, TileSpec};

const STATE_FILE: &str = "bake-state.json";
pub(crate) const TILE_DIR: &str = ".trnbake-tiles";

/// The checkpoint of a bake in progress (or of a finished shard).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BakeState {
    pub params: BakeParams,
    pub shard: Option<Shard>,
    /// Which evaluator computed the checkpoints (`cpu`, or `gpu: ADAPTER (BACKEND)`): a
    /// hardware GPU may differ from the CPU in the last bits, so tiles of one are never
    /// resumed by the other.
    pub backend: String,
    pub complete: bool,
    /// The surface maps' fingerprint (`SurfaceMapsJob::fingerprint`) the surface band
    /// checkpoints were computed for, when any maps are wanted.
    #[serde(default)]
    pub surface: Option<String>,
}

/// The determinism class of a backend for [`BakeState::backend`].
fn backend_class(gpu: Option<&GpuContext>) -> String {
    match gpu {
        Some(c) => format!("gpu: {} ({})", c.adapter.name, c.adapter.backend),
        None => "cpu".into(),
    }
}

/// Remove the surface band checkpoints of a tile folder (`surface_bands`), keeping the
/// height tiles.
fn remove_surface_bands(tile_dir: &Path) {
    for e in std::fs::read_dir(tile_dir).into_iter().flatten().flatten() {
        if e.file_name().to_string_lossy().starts_with("surface-") {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

fn tile_path(outdir: &Path, t: &TileSpec) -> PathBuf {
    outdir.join(TILE_DIR).join(format!("r{}-c{}-{}x{}.f32", t.r0, t.c0, t.cols, t.rows))
}

/// The trailer after a checkpoint tile's Float32 posts: this magic, then the CRC-32 of the
/// posts' bytes (little-endian). Tiles are renamed into place without fsync, so a power loss
/// can leave a file of the right size holding zeros; the checksum tells it from a finished tile.
const TILE_MAGIC: &[u8; 4] = b"TBK1";
const TILE_TRAILER: u64 = 8;

/// A checkpoint tile's bytes: the posts, then the trailer.
fn tile_bytes(data: &[f32]) -> Vec<u8> {
    let posts: &[u8] = bytemuck::cast_slice(data);
    let mut out = Vec::with_capacity(posts.len() + TILE_TRAILER as usize);
    out.extend_from_slice(posts);
    out.extend_from_slice(TILE_MAGIC);
    out.extend_from_slice(&crc32fast::hash(posts).to_le_bytes());
    out
}

/// What a tile's checkpoint file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TileCheckpoint {
    Missing,
    /// Finished: the right size, and the posts match their checksum.
    Done,
    /// Present but not a finished tile (wrong size, no trailer, or a checksum mismatch).
    Damaged,
}

/// Reads and verifies the checkpoint of tile `t` at `path`.
fn tile_checkpoint(path: &Path, t: &TileSpec) -> TileCheckpoint {
    let posts = u64::from(t.cols) * u64::from(t.rows) * 4;
    match std::fs::metadata(path) {
        Err(_) => return TileCheckpoint::Missing,
        Ok(m) if m.len() != posts + TILE_TRAILER => return TileCheckpoint::Damaged,
        Ok(_) => {}
    }
    let Ok(bytes) = std::fs::read(path) else { return TileCheckpoint::Damaged };
    let (data, trailer) = bytes.split_at(posts as usize);
    let good = trailer.len() == TILE_TRAILER as usize && &trailer[..4] == TILE_MAGIC && trailer[4..] == crc32fast::hash(data).to_le_bytes();
    if good {
        TileCheckpoint::Done
    } else {
        TileCheckpoint::Damaged
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
        }
    }
}

/// Run the height pass of `job` with `evaluator`, checkpointing tiles in the output folder.
pub fn run_bake(job: &BakeJob, evaluator: &HeightEvaluator) -> Result<BakeReport> {
    let start = Instant::now();
    // One owner per folder, temp files of dead runs swept, the manifest marked in progress.
    let resume_note = format!("the finished tiles are kept in {}; run the same command again to resume", job.outdir.join(TILE_DIR).display());
    let folder = OutputFolder::claim(&job.outdir, Some(resume_note), &*job.reporter)?;
    std::fs::create_dir_all(job.outdir.join(TILE_DIR)).with_context(|| format!("cannot create {}", job.outdir.display()))?;
    // The backend first: checkpoints of another backend are not resumed.
    let gpu = choose_gpu(job.backend, job.adapter_filter.as_deref(), &*job.reporter)?;
    let adapter = gpu.as_ref().map(|c| c.adapter.clone());
    let backend_name = backend_name(gpu.as_ref()).to_string();
    let backend = backend_class(gpu.as_ref());

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
            let _ = std::fs::remove_dir_all(job.outdir.join(TILE_DIR));
            std::fs::create_dir_all(job.outdir.join(TILE_DIR))?;
        } else if previous.and_then(|s| s.surface) != surface_fingerprint {
            // Same heights, other maps or surface options: only the surface bands go.
            remove_surface_bands(&job.outdir.join(TILE_DIR));
        }
    }
    let state = BakeState { params: job.params.clone(), shard: job.shard, backend, complete: false, surface: surface_fingerprint };
    write_atomic(&state_path, serde_json::to_string_pretty(&state)?.as_bytes())?;

    let all = tiles(&job.grid, job.params.tile);
    let mine: Vec<TileSpec> = match job.shard {
        Some(s) => all.iter().enumerate().filter(|(i, _)| *i as u32 % s.count == s.index - 1).map(|(_, t)| *t).collect(),
        None => all.clone(),
    };
    let mut todo = Vec::new();
    for t in &mine {
        match tile_checkpoint(&tile_path(&job.outdir, t), t) {
            TileCheckpoint::Done => {}
            TileCheckpoint::Missing => todo.push(*t),
            TileCheckpoint::Damaged => {
                job.reporter.note(format!("the checkpoint of the tile at post ({}, {}) is damaged (size or checksum); recomputing it", t.c0, t.r0));
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
        if let Err(e) = compute_tiles(job, evaluator, gpu.as_ref(), &todo, &progress, &pb) {
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

    if job.shard.is_some() {
        let done = BakeState { complete: true, ..state };
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
    let _ = std::fs::remove_dir_all(job.outdir.join(TILE_DIR));
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
    todo: &[TileSpec],
    progress: &BandProgress,
    pb: &Progress,
) -> Result<()> {
    let (grid, tile) = (&job.grid, job.params.tile);
    let checkpoint = |t: &TileSpec, data: &[f32]| -> Result<()> {
        // No fsync: a killed bake cannot leave a partial checkpoint under its final name (the
        // rename is atomic), and one a machine crash leaves zeroed or short fails its checksum
        // and is recomputed on resume; syncing hundreds of tiles would only slow every bake.
        write_renamed(&tile_path(&job.outdir, t), &tile_bytes(data)).context("cannot write a tile checkpoint")?;
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

/// The finished tile checkpoints of a bake (in one folder, or spread over shard folders) as
/// one [`HeightSource`]: blocks are read straight from the tile files with positioned reads,
/// so writing the outputs never holds the whole grid (a 16385² bake is 1 GiB of f32).
pub struct CheckpointSource {
    grid: Grid,
    tile: u32,
    tiles_x: u32,
    /// Tile files in [`tiles`] order (row-major from the south-west).
    files: Vec<PathBuf>,
}

impl CheckpointSource {
    /// Find every tile of `grid` in `sources` (a complete file: the right size), or name the
    /// first missing one.
    pub fn new(grid: &Grid, tile: u32, sources: &[PathBuf]) -> Result<Self> {
        let mut files = Vec::new();
        for t in tiles(grid, tile) {
            let found: Vec<(PathBuf, TileCheckpoint)> = sources
                .iter()
                .map(|s| tile_path(s, &t))
                .map(|p| {
                    let c = tile_checkpoint(&p, &t);
                    (p, c)
                })
                .collect();
            match found.iter().find(|(_, c)| *c == TileCheckpoint::Done) {
                Some((p, _)) => files.push(p.clone()),
                None => match found.iter().find(|(_, c)| *c == TileCheckpoint::Damaged) {
                    Some((p, _)) => return Err(Error::TileDamaged { col: t.c0, row: t.r0, path: p.clone() }),
                    None => return Err(Error::ShardMissing { col: t.c0, row: t.r0 }),
                },
            }
        }
        Ok(Self::with_files(grid, tile, files))
    }

    /// The checkpoints a bake into `outdir` is still writing: every tile's file name, whether
    /// it exists yet or not (a `bands::StreamedCheckpoints` reads a tile only once it is done).
    pub fn pending(grid: &Grid, tile: u32, outdir: &Path) -> Self {
        let files = tiles(grid, tile).iter().map(|t| tile_path(outdir, t)).collect();
        Self::with_files(grid, tile, files)
    }

    fn with_files(grid: &Grid, tile: u32, files: Vec<PathBuf>) -> Self {
        let post_grid = Grid { cols: grid.cols, rows: grid.rows, x0: grid.x0, z0: grid.z0, spacing: grid.spacing };
        Self { grid: post_grid, tile, tiles_x: grid.cols.div_ceil(tile), files }
    }
}

impl HeightSource for CheckpointSource {
    fn grid(&self) -> Grid {
        self.grid
    }

    fn read_block(&self, c0: u32, r0: u32, cols: u32, rows: u32, out: &mut [f32]) -> std::io::Result<()> {
        check_block(&self.grid, c0, r0, cols, rows, out)?;
        if cols == 0 || rows == 0 {
            return Ok(());
        }
        let t = self.tile;
        let mut buf = Vec::new();
        for ty in r0 / t..=(r0 + rows - 1) / t {
            for tx in c0 / t..=(c0 + cols - 1) / t {
                let path = &self.files[(ty * self.tiles_x + tx) as usize];
                let file = std::fs::File::open(path)?;
                let (tc0, tr0) = (tx * t, ty * t);
                let tile_cols = t.min(self.grid.cols - tc0);
                // The part of this tile inside the block.
                let (a, b) = (c0.max(tc0), (c0 + cols).min(tc0 + tile_cols));
                let (ra, rb) = (r0.max(tr0), (r0 + rows).min(tr0 + t));
                buf.resize((b - a) as usize * 4, 0);
                for r in ra..rb {
                    let pos = (u64::from(r - tr0) * u64::from(tile_cols) + u64::from(a - tc0)) * 4;
                    read_exact_at(&file, &mut buf, pos).map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
                    let dst = (r - r0) as usize * cols as usize + (a - c0) as usize;
                    for (h, c) in out[dst..dst + (b - a) as usize].iter_mut().zip(buf.chunks_exact(4)) {
                        *h = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                    }
                }
            }
        }
        Ok(())
    }
}

/// Write the outputs of a finished grid from the tile checkpoints in `sources` (bake or shard
/// folders), streaming: no step holds the whole grid.
pub fn assemble(
    params: &BakeParams,
    grid: &Grid,
    sources: &[PathBuf],
    outdir: &Path,
    choice: &ExportChoice,
    reporter: &dyn Reporter,
    report: &mut BakeReport,
) -> Result<()> {
    write_outputs(&CheckpointSource::new(grid, params.tile, sources)?, params, outdir, choice, reporter, report)
}

/// Write the outputs of a finished grid from `src` into `outdir` (for [`assemble`], and for a
/// bake from the checkpoints it verified or wrote itself).
fn write_outputs(
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
    let spec = ExportSpec::for_bake(choice, bake_citation(params));
    let pb = Progress::new(reporter, 0, "files", "writing");
    let r = export(src, Some((min, max)), &spec, outdir, &|total| {
        pb.set_total(total);
        pb.inc(1);
    })?;
    pb.finish();
    report.outputs = r.files;
    report.export = Some(r.summary);
    Ok(())
}

fn write_manifest(outdir: &Path, params: &BakeParams, report: &BakeReport) -> Result<()> {
    let v = serde_json::json!({
        "trnbake_version": env!("CARGO_PKG_VERSION"),
        "status": "complete",
        "parameters": params,
        "backend": report.backend,
        "surface_maps_backend": report.maps_backend,
        "adapter": report.adapter,
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

/// `trnbake merge OUT SHARD...`: check that the shards belong to one bake and cover it, then
/// write the outputs and manifest into OUT.
pub fn merge(outdir: &Path, shards: &[PathBuf], choice: &ExportChoice, reporter: &dyn Reporter) -> Result<BakeReport> {
    let start = Instant::now();
    let mut params: Option<BakeParams> = None;
    for s in shards {
        let p = s.join(STATE_FILE);
        let text = std::fs::read_to_string(&p).map_err(|source| Error::NotAShard { dir: s.clone(), source })?;
        let st: BakeState = serde_json::from_str(&text).with_context(|| format!("{} is damaged", p.display()))?;
        if !st.complete {
            return Err(Error::ShardIncomplete { dir: s.clone() });
        }
        match &params {
            None => params = Some(st.params),
            Some(q) if *q != st.params => return Err(Error::ShardForeign { dir: s.clone() }),
            _ => {}
        }
    }
    let params = params.context("give at least one shard folder")?;
    let grid = Grid { x0: params.region[0], z0: params.region[1], spacing: params.spacing, cols: params.cols, rows: params.rows };
    let folder = OutputFolder::claim(outdir, None, reporter)?;
    let mut report = BakeReport::new("merge".into(), None, u64::from(grid.cols) * u64::from(grid.rows));
    assemble(&params, &grid, shards, outdir, choice, reporter, &mut report)?;
    folder.remove_stale(&report.outputs, reporter);
    report.total_seconds = start.elapsed().as_secs_f64();
    write_manifest(outdir, &params, &report)?;
    Ok(report)
}
