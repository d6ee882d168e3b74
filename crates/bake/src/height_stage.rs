//! The height stage: the bake's tiles computed on the GPU or the CPU and checkpointed, and the
//! height outputs written from the checkpoints (streamed while tiles finish, or at once).

use std::path::Path;

use trnbake_gpu::{GpuContext, GpuHeightPass};
use trnbake_raster::error::Context;
use trnbake_raster::fsutil::write_renamed;
use trnbake_raster::source::scan_min_max;
use trnbake_raster::writers::set::{export, ExportChoice, ExportReport, ExportSpec, Format};
use trnbake_swg::eval::HeightEvaluator;
use trnbake_swg::grid::TileSpec;

use crate::row_progress::RowProgress;
use crate::store::{tile_bytes, tile_path, CheckpointSource, Fingerprint};
use crate::{BakeJob, BakeParams, BakeReport, Error, Result, CPU_CULL_BLOCK};
use crate::{Progress, Reporter};

/// Compute and checkpoint `todo` (already in north-first order) on the GPU when `gpu` is
/// given, else on the CPU, reporting each finished tile to `progress`. The CPU computes one
/// band of tiles at a time (its tiles, and each tile's blocks, in parallel), so bands finish
/// in order from the north for the streamed writers.
pub(crate) fn compute_tiles(
    job: &BakeJob,
    evaluator: &HeightEvaluator,
    gpu: Option<&GpuContext>,
    fingerprint: &Fingerprint,
    todo: &[TileSpec],
    progress: &RowProgress,
    pb: &Progress,
) -> Result<()> {
    let (grid, tile) = (&job.grid, job.params.tile);
    let checkpoint = |t: &TileSpec, data: &[f32]| -> Result<()> {
        // No fsync: a killed bake cannot leave a partial checkpoint under its final name (the
        // rename is atomic), and one a machine crash leaves zeroed or short fails its checksum
        // and is recomputed on resume; syncing hundreds of tiles would only slow every bake.
        let path = tile_path(&job.outdir, t);
        write_renamed(&path, &tile_bytes(data, fingerprint, t)).map_err(crate::error::writing(&path))?;
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
pub(crate) fn bake_citation(params: &BakeParams) -> String {
    format!("SWG {} local metres", Path::new(&params.input).file_stem().map_or("terrain".into(), |s| s.to_string_lossy()))
}

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
