//! `trnbake bench`: throughput of the height pass per backend, measured in one run
//! (performance lives here, never in timed tests).

use crate::eval::{Grid, HeightEvaluator};
use serde::Serialize;
use std::time::Instant;

#[derive(Debug, Serialize)]
pub struct BenchCase {
    pub name: String,
    pub backend: String,
    pub posts: u64,
    pub seconds: f64,
    pub posts_per_second: f64,
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
/// the pole spacing with per-tile culling (256-post tiles) and without (one tile), on the
/// CPU and, when an adapter exists, the GPU backend — all in one run so ratios are fair.
pub fn run_standard(t: &crate::trn::Terrain, e: &HeightEvaluator, repeat: usize, full_16m: bool) -> anyhow::Result<Vec<BenchCase>> {
    let half = f64::from(t.header.map_width) / 2.0;
    let pole = f64::from(t.header.pole_spacing());
    let full8_n = (2.0 * half / 8.0) as u32 + 1;
    let region_n = 1024u32.min((2.0 * half / pole) as u32 + 1);
    let region_x0 = -(f64::from(region_n) / 2.0) * pole;
    let mut specs: Vec<(String, Grid, u32)> = vec![
        (format!("full map at 8 m ({full8_n}²)"), square_grid(-half, -half, 8.0, full8_n), 256),
        (format!("{region_n}² region at {pole} m, 256² tiles"), square_grid(region_x0, region_x0, pole, region_n), 256),
        (format!("{region_n}² region at {pole} m, no culling"), square_grid(region_x0, region_x0, pole, region_n), region_n),
    ];
    if full_16m {
        let n = (2.0 * half / 16.0) as u32 + 1;
        specs.insert(0, (format!("full map at 16 m ({n}²)"), square_grid(-half, -half, 16.0, n), 256));
    }
    let mut cases = Vec::new();
    for (name, grid, tile) in &specs {
        let (s, _) = time_cpu(e, grid, *tile, repeat);
        let posts = u64::from(grid.cols) * u64::from(grid.rows);
        cases.push(BenchCase { name: name.clone(), backend: "cpu".into(), posts, seconds: s, posts_per_second: posts as f64 / s });
    }
    match crate::gpu::GpuContext::new(false, None) {
        Ok(ctx) => {
            let pass = crate::gpu::GpuHeightPass::new(&ctx, &e.plan);
            for (name, grid, tile) in &specs {
                let tiles = crate::bake::tiles(grid, *tile);
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
                    name: format!("{name} [{}]", ctx.adapter.name),
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

/// The surface passes over the full map at 8 m (CPU backend; there is no GPU surface pass
/// yet): normals and both traversals from a finished height grid, timed separately from the
/// heights they start from.
pub fn run_surface(t: &crate::trn::Terrain, e: &HeightEvaluator, s: &crate::surface::SurfaceEvaluator) -> Vec<BenchCase> {
    let half = f64::from(t.header.map_width) / 2.0;
    let n = (2.0 * half / 8.0) as u32 + 1;
    let grid = square_grid(-half, -half, 8.0, n);
    let mut heights = vec![0.0f32; n as usize * n as usize];
    cpu_grid(e, &grid, 256, &mut heights);
    let t0 = Instant::now();
    let maps = crate::surface::maps::evaluate(&grid, &heights, e, s, crate::surface::normals::NormalMethod::Faces);
    let seconds = t0.elapsed().as_secs_f64();
    drop(maps);
    let posts = u64::from(n) * u64::from(n);
    vec![BenchCase { name: format!("surface passes, full map at 8 m ({n}²)"), backend: "cpu".into(), posts, seconds, posts_per_second: posts as f64 / seconds }]
}
