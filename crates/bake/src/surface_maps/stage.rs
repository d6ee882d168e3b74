//! The surface stage's band loop ([`SurfaceMapsJob::stream`]): which bands to compute (a
//! resume keeps the finished ones; a shard computes its share; a merge computes none), their
//! heights, normals, passes and water, and the pipeline that encodes and checkpoints each band
//! while the map writers read the finished ones.

use super::*;

impl SurfaceMapsJob {
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
            let (to_checkpoint, checkpoint_queue) = std::sync::mpsc::sync_channel::<(usize, EncodedBand)>(1);
            let (to_encoder, encoder_queue) = std::sync::mpsc::sync_channel::<(usize, ComputedBand)>(0);
            let (bands, progress_ref) = (&bands, &progress);
            let checkpoints = scope.spawn(move || -> crate::Result<f64> {
                let mut seconds = 0.0;
                for (k, band) in checkpoint_queue {
                    let t = Instant::now();
                    let (r0, rows) = bands[k];
                    let path = set.path(r0, rows);
                    trnbake_raster::fsutil::write_renamed(&path, &band.file).map_err(crate::error::writing(&path))?;
                    // The writers read the band's values from memory while it is among the
                    // last two (no read and decode of the file just written).
                    if writes_maps {
                        set.hold(r0, rows, &band.meta, band.values);
                    }
                    set.done(k);
                    progress_ref.inc(u64::from(rows) * u64::from(grid.cols));
                    seconds += t.elapsed().as_secs_f64();
                }
                Ok(seconds)
            });
            let encode = move |k: usize, band: ComputedBand, to_checkpoint: &std::sync::mpsc::SyncSender<(usize, EncodedBand)>| -> (f64, bool) {
                let t = Instant::now();
                let encoded = self.encode_band(set, bands[k], &band.values(&grid, self.spawn), band.probabilities.as_deref());
                drop(band);
                // A closed queue: the checkpoint thread stopped on an error, reported below.
                (t.elapsed().as_secs_f64(), to_checkpoint.send((k, encoded)).is_ok())
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
            timing.band_reads = set.reads();
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
    pub(super) fn compute_band(
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
        let flora_maps = [MapKind::Flora, MapKind::FloraFamilies, MapKind::Scatter].into_iter().any(|m| self.want(m));
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
        let needs_water = self.layout().planes.iter().any(|p| matches!(p, Plane::WaterLevel | Plane::WaterMask | Plane::Preview | Plane::Spawnable));
        let water: Vec<Option<f32>> = if needs_water {
            let cols = grid.cols as usize;
            let xs: Vec<f32> = (0..grid.cols).map(|c| grid.post(c, 0).0).collect();
            let mut water = vec![None; results.len()];
            water.par_chunks_mut(cols).enumerate().for_each(|(k, row)| tables.row_heights(&xs, grid.post(0, r0 + k as u32).1, row));
            water
        } else {
            Vec::new()
        };
        timing.water_seconds += t.elapsed().as_secs_f64();
        // The flatten boundaries (the spawnable map): a height walk on the CPU, on either
        // backend, settled without one wherever the culled layers hold no flatten.
        let flattened = if self.want(MapKind::Spawnable) {
            let t = Instant::now();
            let mut f = vec![false; results.len()];
            inputs.height_evaluator.flattened_region(grid, 0, r0, grid.cols, rows, &mut f);
            timing.passes_seconds += t.elapsed().as_secs_f64();
            f
        } else {
            Vec::new()
        };
        Ok(ComputedBand { padded, normals, results, probabilities, water, flattened })
    }
}

/// What [`SurfaceMapsJob::compute_band`] computed for a band, on its way to the checkpoint.
pub(super) struct ComputedBand {
    /// The heights with their 1-post apron ([`band_apron_heights`]).
    pub(super) padded: Vec<f32>,
    pub(super) normals: Vec<[f32; 3]>,
    pub(super) results: Vec<PostSurface>,
    pub(super) probabilities: Option<Vec<ClassProbabilities>>,
    pub(super) water: Vec<Option<f32>>,
    pub(super) flattened: Vec<bool>,
}

impl ComputedBand {
    pub(super) fn values(&self, grid: &Grid, spawn: SpawnRule) -> BandValues<'_> {
        BandValues {
            cols: grid.cols as usize,
            heights: HeightsView::padded(grid, &self.padded),
            normals: &self.normals,
            results: &self.results,
            water: &self.water,
            flattened: &self.flattened,
            spacing: grid.spacing as f32,
            spawn,
        }
    }
}

/// The heights of grid rows `r..r + n` for a band: read from the finished height tiles, or, in
/// a shard, evaluated on the bake's backend (the same values as the tiles: every post is
/// evaluated from its global indices, whatever the block that holds it).
pub(super) fn band_heights(inputs: &StreamInputs, r: u32, n: u32, out: &mut [f32]) -> crate::Result<()> {
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
pub(super) fn missing_band(shards: &[(Shard, PathBuf)], k: usize, r0: u32, rows: u32, status: Checkpoint) -> crate::Error {
    let count = shards.first().map_or(1, |(s, _)| s.count);
    let owner = k as u32 % count + 1;
    let folder = shards.iter().find(|(s, _)| s.index == owner).map_or("not given".to_string(), |(_, d)| d.display().to_string());
    let what = match status {
        Checkpoint::Missing => "is missing from every shard folder".to_string(),
        other => format!("{} in the shard folders", other.why()),
    };
    crate::Error::Invalid(format!("the surface band of rows {r0}..{} {what}; shard {owner}/{count} ({folder}) computes it: re-run that shard", r0 + rows - 1))
}
