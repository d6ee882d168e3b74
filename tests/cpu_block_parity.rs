//! The CPU backend's layer-major row evaluator equals the per-post reference bit for bit, at
//! every lane width (`trnbake_swg::lanes`).

mod common;
use trnbake_swg::eval::walk_strip::{height_row_with, RowScratch};
use trnbake_swg::eval::{height_at_point, Grid, HeightEvaluator};
use trnbake_swg::lanes::Width;
use trnbake_swg::model::Terrain;
use trnbake_swg::plan::{BakePlan, TileList};

/// The grid in 64² blocks with their culled programs, row by row at lane width `w` (what
/// `HeightEvaluator::grid_region` does at the process's width).
fn rows_at(w: Width, e: &HeightEvaluator, grid: &Grid) -> Vec<f32> {
    let mut out = vec![0.0f32; grid.cols as usize * grid.rows as usize];
    for br in (0..grid.rows).step_by(64) {
        for bc in (0..grid.cols).step_by(64) {
            let (cols, rows) = (64.min(grid.cols - bc), 64.min(grid.rows - br));
            let tile = e.plan.tile_layers(grid.area(bc, br, bc + cols - 1, br + rows - 1));
            let xs: Vec<f32> = (0..cols).map(|c| grid.post(bc + c, 0).0).collect();
            let mut scratch = RowScratch::default();
            let mut row = vec![0.0f32; cols as usize];
            for r in br..br + rows {
                let z = grid.post(0, r).1;
                trnbake_swg::with_lanes_at!(w, |L; plan: &BakePlan, tile: &TileList, xs: &[f32], z: f32, row: &mut [f32], s: &mut RowScratch| -> () {
                    height_row_with::<L>(plan, tile, xs, z, row, s)
                }, &e.plan, &tile, &xs, z, &mut row, &mut scratch);
                let dst = (r * grid.cols + bc) as usize;
                out[dst..dst + cols as usize].copy_from_slice(&row);
            }
        }
    }
    out
}

/// Posts where the row evaluator differs from the per-post walk, at every lane width this
/// CPU has (scalar, SSE2, AVX2) and through `grid_region` at the process's width.
fn check(t: &Terrain, grid: Grid) -> usize {
    let e = HeightEvaluator::new(t, &common::lenient_options()).unwrap();
    let mut region = vec![0.0f32; grid.cols as usize * grid.rows as usize];
    e.grid_region(&grid, 0, 0, grid.cols, grid.rows, 64, &mut region);
    let mut results = vec![("grid_region".to_string(), region)];
    for w in Width::available() {
        results.push((w.name().to_string(), rows_at(w, &e, &grid)));
    }
    let everywhere = e.plan.tile_layers([f32::MIN, f32::MIN, f32::MAX, f32::MAX]);
    let mut differ = 0;
    for r in 0..grid.rows {
        for c in 0..grid.cols {
            let (x, z) = grid.post(c, r);
            let want = height_at_point(&e.plan, &everywhere, x, z);
            for (name, got) in &results {
                let got = got[(r * grid.cols + c) as usize];
                if want.to_bits() != got.to_bits() {
                    if differ < 5 {
                        eprintln!("{name}: post ({c}, {r}) at ({x}, {z}): {got} vs the per-post {want}");
                    }
                    differ += 1;
                }
            }
        }
    }
    differ
}

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn block_rows_equal_per_post_walk_on_real_planets() {
    for (name, grid) in [
        ("tatooine", Grid { x0: -8192.0, z0: -8192.0, spacing: 64.0, cols: 257, rows: 257 }),
        ("tatooine", Grid { x0: -300.0, z0: -300.0, spacing: 2.0, cols: 300, rows: 300 }),
        ("naboo", Grid { x0: -8192.0, z0: -8192.0, spacing: 64.0, cols: 257, rows: 257 }),
        ("mustafar", Grid { x0: -8192.0, z0: -8192.0, spacing: 64.0, cols: 257, rows: 257 }),
        ("yavin4", Grid { x0: -8192.0, z0: -8192.0, spacing: 64.0, cols: 257, rows: 257 }),
        ("dathomir", Grid { x0: -8192.0, z0: -8192.0, spacing: 64.0, cols: 257, rows: 257 }),
        // Odd spacing and row length: SIMD quads straddle lattice cells and leave tails.
        ("naboo", Grid { x0: -5001.3, z0: 4000.7, spacing: 3.7, cols: 203, rows: 150 }),
    ] {
        let Some(t) = common::planet(name) else { continue };
        assert_eq!(check(&t, grid), 0, "{name}: {grid:?}");
    }
}

#[test]
fn block_rows_equal_per_post_walk_on_demo() {
    let t = trnbake_swg::model::json::demo_terrain();
    assert_eq!(check(&t, Grid { x0: -2048.0, z0: -2048.0, spacing: 8.0, cols: 513, rows: 513 }), 0);
}
