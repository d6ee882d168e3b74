//! GPU (lavapipe in CI) against the CPU reference on the same plan: max |Δh| ≤ 1e-3 m, and
//! how many posts are bit-identical (issue: GPU bake). Also the seam test: one tile or many
//! small tiles give identical posts.

mod common;
use trnbake_gpu::{GpuContext, GpuHeightPass};
use trnbake_swg::eval::{Grid, HeightEvaluator};
use trnbake_swg::grid::tiles;
use trnbake_swg::model::Terrain;
use trnbake_swg::plan::HeightOptions;

use common::gpu;

fn gpu_grid(ctx: &GpuContext, e: &HeightEvaluator, grid: &Grid, tile: u32) -> Vec<f32> {
    let pass = GpuHeightPass::new(ctx, &e.plan);
    let mut out = vec![f32::NAN; grid.cols as usize * grid.rows as usize];
    pass.run(grid, &tiles(grid, tile), &mut |t, data| {
        for r in 0..t.rows as usize {
            let dst = (t.r0 as usize + r) * grid.cols as usize + t.c0 as usize;
            out[dst..dst + t.cols as usize].copy_from_slice(&data[r * t.cols as usize..(r + 1) * t.cols as usize]);
        }
    })
    .unwrap();
    out
}

fn cpu_grid(e: &HeightEvaluator, grid: &Grid) -> Vec<f32> {
    let mut out = vec![0.0f32; grid.cols as usize * grid.rows as usize];
    e.grid_region(grid, 0, 0, grid.cols, grid.rows, 256, &mut out);
    out
}

/// (max |Δh|, bit-identical posts, posts)
fn compare(a: &[f32], b: &[f32]) -> (f32, usize, usize) {
    let mut max = 0.0f32;
    let mut same = 0;
    for (x, y) in a.iter().zip(b) {
        if x.to_bits() == y.to_bits() {
            same += 1;
        } else {
            max = max.max((x - y).abs());
            if x.is_nan() || y.is_nan() {
                max = f32::INFINITY;
            }
        }
    }
    (max, same, a.len())
}

fn evaluator(t: &Terrain) -> HeightEvaluator {
    evaluator_with(t, false)
}

fn evaluator_with(t: &Terrain, roads: bool) -> HeightEvaluator {
    HeightEvaluator::new(t, &HeightOptions { roads, ..common::real_options() }).unwrap()
}

fn parity(name: &str, t: &Terrain, ctx: &GpuContext, grid: Grid) {
    parity_with(name, t, ctx, grid, false)
}

fn parity_with(name: &str, t: &Terrain, ctx: &GpuContext, grid: Grid, roads: bool) {
    let e = evaluator_with(t, roads);
    let cpu = cpu_grid(&e, &grid);
    let g = gpu_grid(ctx, &e, &grid, 512);
    let (max, same, n) = compare(&cpu, &g);
    eprintln!(
        "{name} {}x{} at {} m: max |dh| = {max:e} m, {same}/{n} posts bit-identical ({:.3} %)",
        grid.cols,
        grid.rows,
        grid.spacing,
        100.0 * same as f64 / n as f64
    );
    assert!(max <= 1e-3, "{name}: max |dh| {max} > 1e-3 m");
}

#[test]
#[cfg_attr(no_gpu_adapter, ignore = "needs a GPU adapter")]
fn gpu_matches_cpu_on_demo_and_seams_are_exact() {
    let Some(ctx) = gpu() else { return };
    let t = trnbake_swg::model::json::demo_terrain();
    let grid = Grid { x0: -2048.0, z0: -2048.0, spacing: 8.0, cols: 513, rows: 513 };
    parity("demo", &t, &ctx, grid);
    // Seam test: one tile vs many small odd-sized tiles.
    let e = evaluator(&t);
    let one = gpu_grid(&ctx, &e, &grid, 1024);
    let many = gpu_grid(&ctx, &e, &grid, 40);
    assert!(one.iter().zip(&many).all(|(a, b)| a.to_bits() == b.to_bits()), "GPU tiles disagree at seams");
    let mut cpu_small = vec![0.0f32; one.len()];
    e.grid_region(&grid, 0, 0, grid.cols, grid.rows, 7, &mut cpu_small);
    assert!(cpu_grid(&e, &grid).iter().zip(&cpu_small).all(|(a, b)| a.to_bits() == b.to_bits()), "CPU tiles disagree at seams");
}

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
#[cfg_attr(no_gpu_adapter, ignore = "needs a GPU adapter")]
fn gpu_matches_cpu_on_real_planets() {
    let Some(ctx) = gpu() else { return };
    for name in ["tatooine", "naboo", "mustafar"] {
        let Some(t) = common::planet(name) else { continue };
        parity(&format!("{name} whole map"), &t, &ctx, Grid { x0: -8192.0, z0: -8192.0, spacing: 16.0, cols: 1025, rows: 1025 });
    }
}

/// The 1024² window at 2 m (centres on a 1024 m lattice) whose culled program is the most
/// complex: a bitmap (FBIT) layer first, then the most boundaries — the cities and
/// hand-placed areas of a planet.
fn complex_region(e: &HeightEvaluator, half: f32) -> (Grid, usize, bool) {
    let mut best: Option<(bool, usize, f32, f32)> = None;
    let mut cz = -half + 1024.0;
    while cz <= half - 1024.0 {
        let mut cx = -half + 1024.0;
        while cx <= half - 1024.0 {
            let tile = e.plan.tile_layers([cx - 1024.0, cz - 1024.0, cx + 1022.0, cz + 1022.0]);
            let bitmap = tile.layers.iter().any(|entry| {
                let l = &e.plan.layers[entry.layer as usize];
                e.plan.filters[l.filter_start as usize..(l.filter_start + l.filter_count) as usize].iter().any(|f| f.kind == trnbake_swg::plan::FILTER_BITMAP)
            });
            let score = (bitmap, tile.boundaries.len(), cx, cz);
            if best.is_none_or(|b| (score.0, score.1) > (b.0, b.1)) {
                best = Some(score);
            }
            cx += 1024.0;
        }
        cz += 1024.0;
    }
    let (bitmap, boundaries, cx, cz) = best.expect("the map holds a 2 km window");
    (Grid { x0: f64::from(cx) - 1024.0, z0: f64::from(cz) - 1024.0, spacing: 2.0, cols: 1024, rows: 1024 }, boundaries, bitmap)
}

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
#[cfg_attr(no_gpu_adapter, ignore = "needs a GPU adapter")]
fn gpu_matches_cpu_at_2m_in_complex_regions() {
    let Some(ctx) = gpu() else { return };
    for name in ["tatooine", "naboo", "mustafar"] {
        let Some(t) = common::planet(name) else { continue };
        let e = evaluator(&t);
        let (grid, boundaries, bitmap) = complex_region(&e, e.plan.half_width);
        eprintln!("{name}: 2 m region at ({}, {}): {boundaries} boundaries, bitmap layer: {bitmap}", grid.x0, grid.z0);
        assert!(boundaries > 0, "{name}: the chosen region has boundaries");
        parity(&format!("{name} complex region"), &t, &ctx, grid);
    }
}

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
#[cfg_attr(no_gpu_adapter, ignore = "needs a GPU adapter")]
fn gpu_matches_cpu_with_roads_and_rivers() {
    let Some(ctx) = gpu() else { return };
    // Dathomir has roads and rivers; a 2 m window on one of its roads, and the whole map.
    let Some(t) = common::planet("dathomir") else { return };
    parity_with("dathomir roads on, whole map", &t, &ctx, Grid { x0: -8192.0, z0: -8192.0, spacing: 32.0, cols: 513, rows: 513 }, true);
    let e = evaluator_with(&t, true);
    assert!(!e.plan.roads.is_empty(), "dathomir's plan has road records");
    let r = e.plan.roads[0];
    let [x, z] = e.plan.points[r.point_start as usize];
    let grid = Grid { x0: (x - 256.0).round() as f64, z0: (z - 256.0).round() as f64, spacing: 2.0, cols: 257, rows: 257 };
    parity_with("dathomir roads on, 2 m at a road", &t, &ctx, grid, true);
}

/// The height kernel's strips (1 post per invocation on real GPUs, 4 on lavapipe: gpu
/// `height_strip`) give the same bits: both against each other on a real planet at 16 m and a
/// 2 m window, tiles of a size that leaves partial strips at every tile's east edge.
#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
#[cfg_attr(no_gpu_adapter, ignore = "needs a GPU adapter")]
fn height_strips_give_the_same_bits() {
    let Some(ctx) = gpu() else { return };
    let Some(t) = common::planet("tatooine") else { return };
    let e = evaluator(&t);
    let one = GpuContext::with_height_strip(ctx.adapter.device_type == "Cpu", Some(&ctx.adapter.name), 1).unwrap();
    let four = GpuContext::with_height_strip(ctx.adapter.device_type == "Cpu", Some(&ctx.adapter.name), 4).unwrap();
    assert_eq!((one.strip, four.strip), (1, 4));
    for grid in [Grid { x0: -8192.0, z0: -8192.0, spacing: 16.0, cols: 1025, rows: 1025 }, complex_region(&e, e.plan.half_width).0] {
        let (a, b) = (gpu_grid(&one, &e, &grid, 510), gpu_grid(&four, &e, &grid, 510));
        let (max, same, n) = compare(&a, &b);
        assert_eq!(same, n, "strips of 1 and 4 differ at {} of {n} posts (max |dh| {max:e} m)", n - same);
        let (max, _, _) = compare(&a, &cpu_grid(&e, &grid));
        assert!(max <= 1e-3, "strip 1 against the CPU: max |dh| {max} > 1e-3 m");
    }
}
