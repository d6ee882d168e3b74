//! `trnbake merge`: the folders of a sharded bake assembled into what the unsharded bake writes.
//!
//! Each shard folder holds its share of the height tiles and of the surface bands, and its
//! `bake-state.json`: the bake's parameters, fingerprints and recipe (terrain, data root,
//! options, maps). The merge checks that every shard of 1..=N is there once and that all belong
//! to one bake, rebuilds the bake from the recipe (the terrain read again and checked against its
//! SHA-256; its plan against the shards'), and runs the bake's own writers over the checkpoints
//! of all shard folders: the height outputs, then every surface map, whose whole-grid figures
//! (splat channels, flora ranges and legends, families) come from the bands' small metas.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use trnbake_raster::bail;
use trnbake_raster::error::Context;
use trnbake_raster::writers::set::ExportChoice;
use trnbake_swg::eval::Grid;

use crate::folder::OutputFolder;
use crate::height_stage::write_outputs;
use crate::manifest::write_manifest;
use crate::store::{BakeState, CheckpointSource, Fingerprint, STATE_FILE};
use crate::surface_maps::{StageRole, StreamInputs};
use crate::{BakeReport, Error, Level, Reporter, Result, Shard};

/// Reads the state of shard folder `dir`, which must be a finished shard.
fn shard_state(dir: &Path) -> Result<(BakeState, Shard)> {
    let p = dir.join(STATE_FILE);
    let text = std::fs::read_to_string(&p).map_err(|source| Error::NotAShard { dir: dir.to_path_buf(), source })?;
    let st: BakeState = serde_json::from_str(&text).with_context(|| format!("{} is damaged", p.display()))?;
    let Some(shard) = st.shard else { bail!("{} holds an unsharded bake's checkpoints, not a shard's", dir.display()) };
    if !st.complete {
        return Err(Error::ShardIncomplete { dir: dir.to_path_buf(), shard });
    }
    Ok((st, shard))
}

/// What differs between two shards' states, if anything that makes them of different bakes.
fn difference(a: &BakeState, b: &BakeState) -> Option<&'static str> {
    if a.params.input_sha256 != b.params.input_sha256 {
        Some("another terrain")
    } else if a.params.plan_sha256 != b.params.plan_sha256 {
        Some("other heights (data root, bitmaps or height options)")
    } else if a.params != b.params {
        Some("another grid, region, spacing or tile size")
    } else if a.backend != b.backend {
        Some("another backend")
    } else if a.surface != b.surface || a.recipe.as_ref().map(|r| &r.maps) != b.recipe.as_ref().map(|r| &r.maps) {
        Some("other maps or surface options")
    } else if a.recipe != b.recipe {
        Some("other options")
    } else if a.shard.map(|s| s.count) != b.shard.map(|s| s.count) {
        Some("another shard count")
    } else {
        None
    }
}

/// `trnbake merge OUT SHARD...`: check that the shards belong to one bake and cover it, then
/// write every output of the bake and its manifest into OUT, as the unsharded bake writes them.
/// `export`: the height outputs (and how GeoTIFFs are written) when not the shards' own.
pub fn merge(outdir: &Path, shards: &[PathBuf], export: Option<&ExportChoice>, reporter: &dyn Reporter) -> Result<BakeReport> {
    let start = Instant::now();
    let mut states = Vec::new();
    for dir in shards {
        states.push((shard_state(dir)?, dir.clone()));
    }
    let Some(((first, first_shard), first_dir)) = states.first() else { bail!("give at least one shard folder") };
    let count = first_shard.count;
    let mut by_index: BTreeMap<u32, PathBuf> = BTreeMap::new();
    for ((st, shard), dir) in &states {
        if let Some(why) = difference(first, st) {
            return Err(Error::ShardForeign { dir: dir.clone(), shard: *shard, first_dir: first_dir.clone(), first: *first_shard, why });
        }
        if let Some(other) = by_index.insert(shard.index, dir.clone()) {
            bail!("shard {}/{count} is given twice ({} and {})", shard.index, other.display(), dir.display());
        }
    }
    let missing: Vec<u32> = (1..=count).filter(|k| !by_index.contains_key(k)).collect();
    if !missing.is_empty() {
        return Err(Error::ShardMissing { missing, count, found: by_index.keys().copied().collect() });
    }
    let ordered: Vec<(Shard, PathBuf)> = by_index.into_iter().map(|(index, dir)| (Shard { index, count }, dir)).collect();
    let dirs: Vec<PathBuf> = ordered.iter().map(|(_, d)| d.clone()).collect();

    let params = &first.params;
    let fingerprint = Fingerprint::of_heights(params, &first.backend);
    let grid = Grid { x0: params.region[0], z0: params.region[1], spacing: params.spacing, cols: params.cols, rows: params.rows };
    let choice = match (export, &first.recipe) {
        (Some(c), _) => c.clone(),
        (None, Some(r)) => r.export.clone(),
        (None, None) => bail!("{} records no export choice (a shard of an older trnbake); give --format", first_dir.display()),
    };
    let folder = OutputFolder::claim(outdir, None, reporter)?;
    // The surface maps: the bake rebuilt from its recipe (its writers run over every shard's
    // bands below), known before any output is written so that the manifest in progress can
    // name what this merge writes.
    let pipeline = match &first.surface {
        None => None,
        Some(surface) => {
            let recipe = first.recipe.as_ref().context("the shards record no recipe (an older trnbake); re-bake them")?;
            let mut request = recipe.request(outdir)?;
            request.export = choice.clone();
            let kept = std::sync::Arc::new(Kept::default());
            request.reporter = kept.clone();
            let pipeline = request.pipeline();
            for (level, text) in kept.0.lock().unwrap_or_else(|e| e.into_inner()).drain(..) {
                reporter.message(level, &text);
            }
            let pipeline = pipeline?;
            if pipeline.job.params != *params {
                bail!(
                    "the terrain's heights have changed since the shards were baked (the bitmaps under the data root, or the terrain file); re-bake the shards"
                );
            }
            let maps = pipeline.job.surface_maps.as_ref().context("the rebuilt bake wants no surface maps")?;
            if maps.fingerprint() != *surface {
                bail!("the surface options have changed since the shards were baked; re-bake the shards");
            }
            Some(pipeline)
        }
    };
    let mut planned = vec![trnbake_swg::maps::MapKind::Height];
    planned.extend(pipeline.iter().flat_map(|p| p.job.surface_maps.iter().flat_map(|m| m.maps.iter().copied())));
    folder.plan(&planned)?;
    let recorded = first.manifest_backend.clone().unwrap_or_default();
    let backend = recorded.get("backend").and_then(|b| b.as_str()).unwrap_or("merge").to_string();
    let mut report = BakeReport::new(backend, None, grid.len() as u64);
    report.adapter_json = recorded.get("adapter").cloned();
    let heights = CheckpointSource::new(&grid, params.tile, &dirs, &fingerprint)?;
    write_outputs(&heights, params, outdir, &choice, reporter, &mut report)?;

    if let Some(pipeline) = &pipeline {
        let maps = pipeline.job.surface_maps.as_ref().context("the rebuilt bake wants no surface maps")?;
        let inputs = StreamInputs {
            outdir,
            grid: &grid,
            heights: &heights,
            heights_fingerprint: fingerprint,
            checkpoint_dirs: dirs.clone(),
            role: StageRole::Merge { shards: &ordered },
            range: (report.min_height, report.max_height),
            height_evaluator: &pipeline.heights,
            gpu: None,
            reporter,
            export: report.export.as_ref(),
        };
        let out = maps.stream(&inputs)?;
        report.outputs.extend(out.files);
        report.maps_backend = recorded.get("surface_maps_backend").and_then(|b| b.as_str()).map(String::from);
        report.maps_seconds = Some(out.timing.total_seconds);
        report.surface_timing = Some(out.timing);
    }
    folder.remove_stale(&report.outputs, reporter);
    folder.note_unlisted(&report.outputs, reporter);
    report.total_seconds = start.elapsed().as_secs_f64();
    write_manifest(outdir, params, &report)?;
    Ok(report)
}

/// The messages of the bake a merge rebuilds (its plan's warnings), kept to be told to the
/// merge's reporter: a request holds an `Arc<dyn Reporter>`, the merge borrows its reporter.
#[derive(Default)]
struct Kept(std::sync::Mutex<Vec<(Level, String)>>);

impl Reporter for Kept {
    fn message(&self, level: Level, text: &str) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push((level, text.to_string()));
    }
}
