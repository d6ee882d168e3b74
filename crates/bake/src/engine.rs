//! The bake's two stages over one checkpoint store, in order: claim the folder, pick the
//! backend, resume what the store holds, then the height stage (tiles) and the surface stage
//! (bands); a shard stops there, a whole bake writes its manifest and clears the store.

use std::time::Instant;

use trnbake_gpu::GpuHeightPass;
use trnbake_raster::error::Context;
use trnbake_raster::fsutil::write_atomic;
use trnbake_raster::writers::set::{export, ExportChoice, ExportReport, ExportSpec, Format};
use trnbake_raster::HeightSource;
use trnbake_swg::eval::HeightEvaluator;
use trnbake_swg::grid::{tiles, TileSpec};

use crate::backend::{backend_class, backend_name, choose_gpu};
use crate::folder::OutputFolder;
use crate::height_stage::{bake_citation, compute_tiles, write_outputs};
use crate::manifest::write_manifest;
use crate::row_progress::{north_first, RowProgress, StreamedCheckpoints};
use crate::store::{self, tile_checkpoint, tile_path, BakeState, Checkpoint, CheckpointSource, Fingerprint, CHECKPOINT_DIR, STATE_FILE};
use crate::surface_maps;
use crate::Progress;
use crate::{BakeJob, BakeReport, Error, Result};

/// Run the height pass of `job` with `evaluator`, checkpointing tiles in the output folder.
pub fn run_bake(job: &BakeJob, evaluator: &HeightEvaluator) -> Result<BakeReport> {
    let start = Instant::now();
    // One owner per folder, temp files of dead runs swept, the manifest marked in progress.
    let resume_note = format!("the finished tiles are kept in {}; run the same command again to resume", job.outdir.join(CHECKPOINT_DIR).display());
    let folder = OutputFolder::claim(&job.outdir, Some(resume_note), &*job.reporter)?;
    if job.shard.is_none() {
        // What this bake writes, in its manifest in progress before any of it is written.
        let mut maps = vec![trnbake_swg::maps::MapKind::Height];
        maps.extend(job.surface_maps.iter().flat_map(|m| m.maps.iter().copied()));
        folder.plan(&maps)?;
    }
    let checkpoints = job.outdir.join(CHECKPOINT_DIR);
    std::fs::create_dir_all(&checkpoints).map_err(crate::error::writing(&checkpoints))?;
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
            std::fs::create_dir_all(&checkpoints).map_err(crate::error::writing(&checkpoints))?;
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
    write_atomic(&state_path, serde_json::to_string_pretty(&state)?.as_bytes()).map_err(crate::error::writing(&state_path))?;

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
    north_first(&mut todo);
    let progress = RowProgress::new(&job.grid, job.params.tile, &todo);
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
        write_atomic(&state_path, serde_json::to_string_pretty(&done)?.as_bytes()).map_err(crate::error::writing(&state_path))?;
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
    folder.note_unlisted(&report.outputs, &*job.reporter);
    report.total_seconds = start.elapsed().as_secs_f64();
    write_manifest(&job.outdir, &job.params, &report)?;
    let _ = std::fs::remove_dir_all(job.outdir.join(CHECKPOINT_DIR));
    let _ = std::fs::remove_file(&state_path);
    Ok(report)
}
