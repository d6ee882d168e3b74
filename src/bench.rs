//! `trnbake bench`: throughput of the height and surface passes per backend, measured in one run
//! (performance lives here, never in timed tests).

use serde::Serialize;
use std::time::Instant;
use trnbake_swg::eval::{Grid, HeightEvaluator};

#[derive(Debug, Serialize)]
pub struct BenchCase {
    pub name: String,
    pub backend: String,
    pub posts: u64,
    pub seconds: f64,
    pub posts_per_second: f64,
}

/// The CPU rows' label: the backend's threads and lane width (`trnbake_swg::lanes`).
fn cpu_label() -> String {
    format!("{} threads, {} lanes", rayon::current_num_threads(), trnbake_swg::lanes::width().name())
}

/// Grid of `n`×`n` posts `spacing` apart, starting at (x0, z0).
pub fn square_grid(x0: f64, z0: f64, spacing: f64, n: u32) -> Grid {
    Grid { x0, z0, spacing, cols: n, rows: n }
}

/// Evaluate `grid` on the CPU in blocks of `block` posts a side (per-block culling), best of `repeat` runs.
pub fn time_cpu(e: &HeightEvaluator, grid: &Grid, block: u32, repeat: usize) -> (f64, Vec<f32>) {
    let mut best = f64::MAX;
    let mut out = vec![0.0f32; grid.cols as usize * grid.rows as usize];
    for _ in 0..repeat.max(1) {
        let t0 = Instant::now();
        cpu_grid(e, grid, block, &mut out);
        best = best.min(t0.elapsed().as_secs_f64());
    }
    (best, out)
}

/// The whole grid on the CPU, in parallel blocks, into `out` (row-major, row 0 = south).
pub fn cpu_grid(e: &HeightEvaluator, grid: &Grid, block: u32, out: &mut [f32]) {
    e.grid_region(grid, 0, 0, grid.cols, grid.rows, block, out);
}

/// The standard cases of `trnbake bench`: the full map at 8 m, a central 1024² region at
/// the pole spacing with per-block culling (256-post blocks) and without (one block), on the
/// CPU and, when an adapter exists, the GPU backend — all in one run so ratios are fair. The
/// GPU always culls per 128² block inside its tiles, so its rows are 256² tiles and one tile.
pub fn run_standard(
    t: &trnbake_swg::model::Terrain,
    e: &HeightEvaluator,
    repeat: usize,
    full_16m: bool,
    with_cpu: bool,
    with_gpu: bool,
) -> anyhow::Result<Vec<BenchCase>> {
    let half = f64::from(t.header.map_width) / 2.0;
    let pole = f64::from(t.header.pole_spacing());
    let full8_n = (2.0 * half / 8.0) as u32 + 1;
    let region_n = 1024u32.min((2.0 * half / pole) as u32 + 1);
    let region_x0 = -(f64::from(region_n) / 2.0) * pole;
    // (CPU row name, GPU row name, grid, CPU culling block = GPU tile side)
    let region = square_grid(region_x0, region_x0, pole, region_n);
    let mut specs: Vec<(String, String, Grid, u32)> = vec![
        (format!("full map at 8 m ({full8_n}²)"), format!("full map at 8 m ({full8_n}²)"), square_grid(-half, -half, 8.0, full8_n), 256),
        (format!("{region_n}² region at {pole} m, 256² tiles"), format!("{region_n}² region at {pole} m, 256² tiles"), region, 256),
        (format!("{region_n}² region at {pole} m, no culling"), format!("{region_n}² region at {pole} m, one tile"), region, region_n),
    ];
    if full_16m {
        let n = (2.0 * half / 16.0) as u32 + 1;
        let name = format!("full map at 16 m ({n}²)");
        specs.insert(0, (name.clone(), name, square_grid(-half, -half, 16.0, n), 256));
    }
    let mut cases = Vec::new();
    for (name, _, grid, tile) in specs.iter().filter(|_| with_cpu) {
        let (s, _) = time_cpu(e, grid, *tile, repeat);
        let posts = u64::from(grid.cols) * u64::from(grid.rows);
        cases.push(BenchCase { name: format!("{name} [{}]", cpu_label()), backend: "cpu".into(), posts, seconds: s, posts_per_second: posts as f64 / s });
    }
    if !with_gpu {
        return Ok(cases);
    }
    match trnbake_gpu::GpuContext::new(false, None) {
        Ok(ctx) => {
            let pass = trnbake_gpu::GpuHeightPass::new(&ctx, &e.plan);
            for (_, name, grid, tile) in &specs {
                let tiles = trnbake_swg::grid::tiles(grid, *tile);
                let mut best = f64::MAX;
                for _ in 0..repeat.max(1) {
                    let mut out = vec![0.0f32; grid.cols as usize * grid.rows as usize];
                    let t0 = Instant::now();
                    pass.run(grid, &tiles, &mut |ts, data| {
                        for r in 0..ts.rows as usize {
                            let dst = (ts.r0 as usize + r) * grid.cols as usize + ts.c0 as usize;
                            out[dst..dst + ts.cols as usize].copy_from_slice(&data[r * ts.cols as usize..(r + 1) * ts.cols as usize]);
                        }
                    })?;
                    best = best.min(t0.elapsed().as_secs_f64());
                }
                let posts = u64::from(grid.cols) * u64::from(grid.rows);
                cases.push(BenchCase {
                    name: format!("{name} [{}, {} post{} per invocation]", ctx.adapter.name, ctx.strip, if ctx.strip == 1 { "" } else { "s" }),
                    backend: "gpu".into(),
                    posts,
                    seconds: best,
                    posts_per_second: posts as f64 / best,
                });
            }
        }
        Err(e) => tracing::warn!("GPU backend not measured: {e}"),
    }
    Ok(cases)
}

/// The full map at each of `spacings` (the H200 figures of the height issue: 2 m and 1 m),
/// heights into host memory: on the GPU backend split into plan upload, compute without
/// read-back (dispatches + wait) and end to end (compute, read-back and assembly in one
/// `Vec<f32>`), in tiles of `tile` posts (default: the bake's, the adapter's largest up to 2048²); on
/// the CPU backend too when `with_cpu`.
pub fn run_planet(t: &trnbake_swg::model::Terrain, e: &HeightEvaluator, spacings: &[f64], tile: Option<u32>, with_cpu: bool) -> anyhow::Result<Vec<BenchCase>> {
    let half = f64::from(t.header.map_width) / 2.0;
    let mut cases = Vec::new();
    let case = |name: String, backend: &str, posts: u64, seconds: f64| BenchCase {
        name,
        backend: backend.into(),
        posts,
        seconds,
        posts_per_second: posts as f64 / seconds,
    };
    let gpu = match trnbake_gpu::GpuContext::new(false, None) {
        Ok(c) => Some(c),
        Err(err) => {
            tracing::warn!("GPU backend not measured: {err}");
            None
        }
    };
    for &spacing in spacings {
        anyhow::ensure!(spacing > 0.0, "--planet spacings must be positive");
        let n = (2.0 * half / spacing) as u32 + 1;
        let grid = square_grid(-half, -half, spacing, n);
        let posts = u64::from(n) * u64::from(n);
        let what = format!("full map at {spacing} m ({n}²)");
        if let Some(ctx) = &gpu {
            let side = tile.unwrap_or_else(|| ctx.max_tile(2048));
            let tiles = trnbake_swg::grid::tiles(&grid, side);
            let t0 = Instant::now();
            let pass = trnbake_gpu::GpuHeightPass::new(ctx, &e.plan);
            let upload = t0.elapsed().as_secs_f64();
            // One small tile first: a driver may compile the shader at the first dispatch.
            pass.compute_only(&grid, &[trnbake_gpu::TileSpec { c0: 0, r0: 0, cols: 8.min(n), rows: 8.min(n) }])?;
            let t1 = Instant::now();
            pass.compute_only(&grid, &tiles)?;
            let compute = t1.elapsed().as_secs_f64();
            let t2 = Instant::now();
            let heights = pass.run_grid(&grid, side)?;
            let end_to_end = t2.elapsed().as_secs_f64();
            drop(heights);
            let label = |part: &str| format!("{what}, {part}, {side}² tiles [{}]", ctx.adapter.name);
            cases.push(case(label("plan upload"), "gpu", posts, upload));
            cases.push(case(label("compute, no read-back"), "gpu", posts, compute));
            cases.push(case(label("heights in host memory"), "gpu", posts, end_to_end));
        }
        if with_cpu || gpu.is_none() {
            let t0 = Instant::now();
            let mut out = vec![0.0f32; posts as usize];
            cpu_grid(e, &grid, trnbake_bake::CPU_CULL_BLOCK, &mut out);
            cases.push(case(format!("{what}, heights in host memory"), "cpu", posts, t0.elapsed().as_secs_f64()));
        }
    }
    Ok(cases)
}

/// Timed runs of each surface row (the best is reported).
const SURFACE_RUNS: usize = 2;

/// The surface passes over the full map at 8 m, each timed on its own, on the CPU and, when
/// an adapter exists, the GPU backend (all in one run so ratios are fair): normals from the
/// finished heights, the shader pass alone, and every pass (shader, flora, environment, colour,
/// exclude, passable) in the one tree walk a post that the bake runs. The rows are whole runs,
/// not differences: the one walk makes "every pass" barely dearer than "shader", so a
/// difference is noise (on the H200 it came out negative). Each row is the best of
/// [`SURFACE_RUNS`] after a warm-up run; a GPU row includes uploading the heights and reading
/// the results back.
pub fn run_surface(
    t: &trnbake_swg::model::Terrain,
    e: &HeightEvaluator,
    s: &trnbake_swg::surface::SurfaceEvaluator,
    with_cpu: bool,
    with_gpu: bool,
) -> anyhow::Result<Vec<BenchCase>> {
    use trnbake_gpu::surface_pass::{GpuSurfacePass, SurfacePasses};
    use trnbake_swg::surface::grid::{apron_heights, grid_normals, surface_results, PassSelection};
    use trnbake_swg::surface::normals::NormalMethod;
    let half = f64::from(t.header.map_width) / 2.0;
    let n = (2.0 * half / 8.0) as u32 + 1;
    let grid = square_grid(-half, -half, 8.0, n);
    let mut heights = vec![0.0f32; n as usize * n as usize];
    cpu_grid(e, &grid, 256, &mut heights);
    let posts = u64::from(n) * u64::from(n);
    let case = |name: &str, backend: &str, seconds: f64| BenchCase {
        name: format!("{name}, full map at 8 m ({n}²)"),
        backend: backend.into(),
        posts,
        seconds,
        posts_per_second: posts as f64 / seconds,
    };
    let best = |f: &mut dyn FnMut()| {
        f();
        (0..SURFACE_RUNS)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min)
    };
    let normals = grid_normals(&grid, &heights, e, s.plan.half_width, NormalMethod::Faces);
    let normals_s = best(&mut || drop(grid_normals(&grid, &heights, e, s.plan.half_width, NormalMethod::Faces)));
    let shader_s = best(&mut || drop(surface_results(&grid, &heights, &normals, s, PassSelection::Shader)));
    let both_s = best(&mut || drop(surface_results(&grid, &heights, &normals, s, PassSelection::Both)));
    let mut cases = vec![case("normals", "cpu", normals_s), case("shader pass", "cpu", shader_s), case("every surface pass (one walk)", "cpu", both_s)];
    if !with_cpu {
        cases.clear();
    }
    if !with_gpu {
        return Ok(cases);
    }
    let ctx = match trnbake_gpu::GpuContext::new(false, None) {
        Ok(ctx) => ctx,
        Err(e) => {
            tracing::warn!("GPU surface passes not measured: {e}");
            return Ok(cases);
        }
    };
    let pass = match GpuSurfacePass::new(&ctx, s, NormalMethod::Faces) {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!("GPU surface passes not measured: {e}");
            return Ok(cases);
        }
    };
    // The apron ring is the CPU's share of the normals on both backends: timed with the
    // CPU normals above, and here with the GPU's.
    let t0 = Instant::now();
    let padded = apron_heights(&grid, &heights, e);
    let apron_s = t0.elapsed().as_secs_f64();
    let mut failed = None;
    let mut timed = |passes| {
        best(&mut || {
            if let Err(e) = pass.run(&grid, &padded, passes) {
                failed.get_or_insert(e);
            }
        })
    };
    let normals_g = timed(SurfacePasses::Normals);
    let shader_g = timed(SurfacePasses::Shader);
    let all_g = timed(SurfacePasses::All);
    if let Some(e) = failed {
        return Err(e.into());
    }
    let on_gpu = |what: &str, seconds: f64| {
        let c = case(what, "gpu", seconds);
        BenchCase { name: format!("{} [{}]", c.name, ctx.adapter.name), ..c }
    };
    // Each GPU run computes the normals too; the apron ring is the CPU's share of them.
    cases.extend([
        on_gpu("normals", apron_s + normals_g),
        on_gpu("normals + shader pass", apron_s + shader_g),
        on_gpu("normals + every surface pass (one walk)", apron_s + all_g),
    ]);
    Ok(cases)
}

/// One writer measured by [`run_export`].
#[derive(Debug, Serialize)]
pub struct ExportBenchCase {
    pub format: String,
    /// "deflate 2", "cog deflate 2", "zlib 3", "none", or "-" for formats that are never compressed.
    pub compression: String,
    pub posts: u64,
    /// Bytes of samples in the file's sample type (cols · rows · bytes per sample).
    pub sample_bytes: u64,
    pub file_bytes: u64,
    pub seconds: f64,
    /// `sample_bytes` per second, in MB (10^6 bytes).
    pub mb_per_s: f64,
}

/// What `trnbake bench-export` reports.
#[derive(Debug, Serialize)]
pub struct ExportBench {
    pub posts_a_side: u32,
    pub threads: usize,
    pub cases: Vec<ExportBenchCase>,
    /// Peak resident memory of the process (VmHWM), bytes; 0 where /proc is missing.
    pub peak_rss_bytes: u64,
}

/// Smooth synthetic terrain with ridges and fine detail, about −400 … +600 m.
fn synthetic_height(x: f64, z: f64) -> f32 {
    let h = 400.0 * (x / 2900.0).sin() * (z / 2300.0).cos()
        + 120.0 * ((x - z) / 1100.0).sin()
        + 15.0 * (x / 97.0).sin() * (z / 131.0).sin()
        + 0.7 * ((x * 0.37).sin() + (z * 0.29).cos())
        + 0.01 * x;
    h as f32
}

/// One way of writing a file in the export benchmark (a writer with its options).
type WriteVariant<'a> = Box<dyn Fn() -> std::io::Result<trnbake_raster::WrittenFile> + 'a>;

/// Measure every writer on an `n × n` synthetic grid at 1 m (`n = 16385` is a 16384 m planet
/// at 1 m), with and without compression. The grid is first streamed into a raw float file in
/// `dir` (as a bake's checkpoints are), then each writer streams from it through the same
/// [`trnbake_raster::HeightSource`] path as a bake, so the figures include reading the source,
/// encoding, the atomic write with fsync and the SHA-256 of the manifest. Each file is deleted
/// after it is measured; memory stays bounded whatever `n` (see `peak_rss_bytes`).
pub fn run_export(n: u32, dir: &std::path::Path, formats: &[trnbake_raster::writers::set::Format]) -> anyhow::Result<ExportBench> {
    use anyhow::Context;
    use rayon::prelude::*;
    use std::io::Write;
    use trnbake_raster::source::{RawFileSource, RawSample};
    use trnbake_raster::writers::geotiff::{write_geotiff_from, Compression, GeoTiffOptions, TiffLayout, TiffSample};
    use trnbake_raster::writers::png16::{write_png16_from, Png16Options, DEFLATE};
    use trnbake_raster::writers::raw::write_raw_from;
    use trnbake_raster::writers::set::Format;
    use trnbake_raster::writers::ter::{write_ter_from, TerEncoding};
    use trnbake_raster::{u16_full_scale_offset, u16_scale_offset, Grid, RowOrder};

    if n < 2 {
        anyhow::bail!("--posts must be at least 2");
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let half = f64::from(n - 1) / 2.0;
    let grid = Grid { cols: n, rows: n, x0: -half, z0: -half, spacing: 1.0 };
    let tag = format!("trnbake-bench-export-{}", std::process::id());
    let input = dir.join(format!("{tag}-input.r32"));
    // The synthetic grid, south row first, generated in parallel 64-row bands.
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    {
        let mut w = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&input).with_context(|| format!("cannot create {}", input.display()))?);
        let band = 64u32;
        for r0 in (0..n).step_by(band as usize) {
            let rows = band.min(n - r0);
            let v: Vec<f32> = (0..rows * n).into_par_iter().map(|i| synthetic_height(grid.x0 + f64::from(i % n), grid.z0 + f64::from(r0 + i / n))).collect();
            for &h in &v {
                lo = lo.min(h);
                hi = hi.max(h);
            }
            w.write_all(bytemuck::cast_slice(&v))?;
        }
        w.flush()?;
    }
    let src = RawFileSource::open(&input, grid, RawSample::F32, false)?;
    let posts = u64::from(n) * u64::from(n);
    let mut cases = Vec::new();
    let out = |ext: &str| dir.join(format!("{tag}-out.{ext}"));
    for &f in formats {
        let variants: Vec<(&str, WriteVariant<'_>, u64)> = match f {
            Format::Tif | Format::Tif16 => {
                let sample = match f {
                    Format::Tif => TiffSample::F32,
                    _ => {
                        let (scale, offset) = u16_scale_offset(lo, hi);
                        TiffSample::U16 { scale, offset }
                    }
                };
                let bytes = if f == Format::Tif { 4 } else { 2 };
                let p = out("tif");
                let (p2, p3) = (p.clone(), p.clone());
                let src = &src;
                let write = move |p: &std::path::Path, opts: GeoTiffOptions| write_geotiff_from(p, src, "bench", sample, &opts).map_err(std::io::Error::other);
                vec![
                    ("deflate 2", Box::new(move || write(&p, GeoTiffOptions::default())), bytes),
                    ("none", Box::new(move || write(&p2, GeoTiffOptions { compression: Compression::None, ..Default::default() })), bytes),
                    ("cog deflate 2", Box::new(move || write(&p3, GeoTiffOptions { layout: TiffLayout::Cog, ..Default::default() })), bytes),
                ]
            }
            Format::Png => {
                let (scale, offset) = u16_full_scale_offset(lo, hi);
                let (p, p2, src) = (out("png"), out("png"), &src);
                vec![
                    ("zlib 3", Box::new(move || write_png16_from(&p, src, scale, offset, &Png16Options { compression: DEFLATE, min_max: Some((lo, hi)) })), 2),
                    (
                        "none",
                        Box::new(move || {
                            write_png16_from(
                                &p2,
                                src,
                                scale,
                                offset,
                                &Png16Options { compression: png::DeflateCompression::NoCompression, min_max: Some((lo, hi)) },
                            )
                        }),
                        2,
                    ),
                ]
            }
            Format::Ter => {
                let enc = TerEncoding::for_range(lo, hi, grid.spacing)?;
                let (p, src) = (out("ter"), &src);
                vec![("-", Box::new(move || write_ter_from(&p, src, &enc)), 2)]
            }
            Format::Raw | Format::R16 => {
                let (scale, offset) = u16_full_scale_offset(lo, hi);
                let (p, src) = (out("r16"), &src);
                vec![("-", Box::new(move || write_raw_from(&p, src, RawSample::U16 { scale, offset }, RowOrder::NorthFirst)), 2)]
            }
            Format::R32 => {
                let (p, src) = (out("r32"), &src);
                vec![("-", Box::new(move || write_raw_from(&p, src, RawSample::F32, RowOrder::NorthFirst)), 4)]
            }
        };
        for (compression, write, bytes) in variants {
            let t0 = Instant::now();
            let wf = write().with_context(|| format!("{} writer failed", f.name()))?;
            let seconds = t0.elapsed().as_secs_f64();
            let _ = std::fs::remove_file(dir.join(&wf.path));
            let sample_bytes = posts * bytes;
            cases.push(ExportBenchCase {
                format: f.name().to_string(),
                compression: compression.to_string(),
                posts,
                sample_bytes,
                file_bytes: wf.bytes,
                seconds,
                mb_per_s: sample_bytes as f64 / seconds / 1e6,
            });
        }
    }
    let _ = std::fs::remove_file(&input);
    Ok(ExportBench { posts_a_side: n, threads: rayon::current_num_threads(), cases, peak_rss_bytes: peak_rss_bytes() })
}

/// VmHWM of this process (Linux), in bytes; 0 when unavailable.
pub fn peak_rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok()))
        .map_or(0, |kb| kb * 1024)
}
