//! The CPU backend's layer-major row evaluator equals the per-post reference bit for bit.

mod common;
use trnbake::eval::{height_at_point, Grid, HeightEvaluator};
use trnbake::plan::HeightOptions;
use trnbake::swg::Terrain;

fn check(t: &Terrain, grid: Grid) -> usize {
    let e = HeightEvaluator::new(t, &HeightOptions { data_root: Some(common::swg_root()), missing_bitmaps_zero: true, ..Default::default() }).unwrap();
    let mut fast = vec![0.0f32; grid.cols as usize * grid.rows as usize];
    e.grid_region(&grid, 0, 0, grid.cols, grid.rows, 64, &mut fast);
    let everywhere = e.plan.tile_layers([f32::MIN, f32::MIN, f32::MAX, f32::MAX]);
    let mut differ = 0;
    for r in 0..grid.rows {
        for c in 0..grid.cols {
            let (x, z) = grid.post(c, r);
            let want = height_at_point(&e.plan, &everywhere, x, z);
            let got = fast[(r * grid.cols + c) as usize];
            if want.to_bits() != got.to_bits() {
                differ += 1;
            }
        }
    }
    differ
}

#[test]
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
        let Some(p) = common::real_file(&format!("terrain/{name}.trn")) else { continue };
        let t = Terrain::load(&p).unwrap();
        assert_eq!(check(&t, grid), 0, "{name}: {grid:?}");
    }
}

#[test]
fn block_rows_equal_per_post_walk_on_demo() {
    let t = trnbake::swg::json::demo_terrain();
    assert_eq!(check(&t, Grid { x0: -2048.0, z0: -2048.0, spacing: 8.0, cols: 513, rows: 513 }), 0);
}
