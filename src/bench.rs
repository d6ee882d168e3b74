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
