//! Issue #23 item 4: the surface tree walk over a block's rows (layer-major over lanes, with
//! the slope traces walked a row at a time) equals the per-post tree walk bit for bit, at
//! every lane width this CPU has, on the real planets (FSLP neighbourhoods, FHGT, FSHD, flora
//! stacks, colour ramps, roads) and the demo terrain.

mod common;
use trnbake_swg::eval::Grid;
use trnbake_swg::lanes::Width;
use trnbake_swg::model::Terrain;
use trnbake_swg::surface::grid::grid_normals;
use trnbake_swg::surface::normals::NormalMethod;
use trnbake_swg::surface::{Ground, SurfaceOptions, SurfaceResult};

/// A result's every bit (f32 Debug output round-trips, -0 and 0 apart).
fn bits(r: &SurfaceResult) -> String {
    format!("{r:?}")
}

/// Posts where the row walk differs from the per-post walk, over `grid` cut into blocks of
/// `block` posts a side (odd sizes leave SIMD tails), at every lane width; and how many
/// posts carried flora, to show the comparison met the flora passes.
fn check(t: &Terrain, grid: Grid, block: u32) -> (usize, usize) {
    let ho = common::lenient_options();
    let (he, se) = common::evaluators(t, &ho, SurfaceOptions::default());
    assert!(se.walks_rows(), "the default readings walk rows");
    let heights = he.grid_heights(&grid);
    let normals = grid_normals(&grid, &heights, &he, se.plan.half_width, NormalMethod::Faces);
    let ground = |c: u32, r: u32| {
        let i = (r * grid.cols + c) as usize;
        Ground { height: heights[i], normal: normals[i] }
    };
    let (mut differ, mut flora) = (0, 0);
    for r0 in (0..grid.rows).step_by(block as usize) {
        for c0 in (0..grid.cols).step_by(block as usize) {
            let (c1, r1) = ((c0 + block).min(grid.cols) - 1, (r0 + block).min(grid.rows) - 1);
            let per_post = se.grid_block(&grid, c0, r0, c1, r1);
            let want: Vec<SurfaceResult> =
                (r0..=r1).flat_map(|r| (c0..=c1).map(move |c| (c, r))).map(|(c, r)| se.at_grid_post(&per_post, c, r, ground(c, r))).collect();
            flora += want.iter().filter(|w| w.flora.iter().any(|s| !s.0.is_empty())).count();
            for w in Width::available() {
                let block = se.grid_block(&grid, c0, r0, c1, r1);
                let mut got = Vec::new();
                se.block_rows_at(w, &block, (c0, r0, c1, r1), ground, |r, row| {
                    assert_eq!(r, r0 + (got.len() as u32) / (c1 - c0 + 1), "rows arrive south first");
                    got.extend(row.iter().cloned());
                });
                assert_eq!(got.len(), want.len());
                for (k, (g, e)) in got.iter().zip(&want).enumerate() {
                    if bits(g) != bits(e) {
                        if differ < 5 {
                            let (c, r) = (c0 + k as u32 % (c1 - c0 + 1), r0 + k as u32 / (c1 - c0 + 1));
                            eprintln!("{}: post ({c}, {r}): rows {g:?}\n  per post {e:?}", w.name());
                        }
                        differ += 1;
                    }
                }
            }
        }
    }
    (differ, flora)
}

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn row_walk_equals_per_post_walk_on_real_planets() {
    for (name, grid, block) in [
        // The 2 m posts of the bake (FSLP neighbourhoods one post apart), and coarse views
        // of whole planets.
        ("tatooine", Grid { x0: -1200.0, z0: 2000.0, spacing: 2.0, cols: 150, rows: 70 }, 64),
        ("tatooine", Grid { x0: -8192.0, z0: -8192.0, spacing: 128.0, cols: 129, rows: 129 }, 64),
        ("dathomir", Grid { x0: -8192.0, z0: -8192.0, spacing: 128.0, cols: 129, rows: 129 }, 50),
        ("naboo", Grid { x0: -8192.0, z0: -8192.0, spacing: 128.0, cols: 129, rows: 129 }, 64),
        ("yavin4", Grid { x0: -8192.0, z0: -8192.0, spacing: 128.0, cols: 129, rows: 129 }, 64),
        ("kashyyyk_main", Grid { x0: -8192.0, z0: -8192.0, spacing: 128.0, cols: 129, rows: 129 }, 64),
        // Odd spacing and row length: SIMD groups straddle lattice cells and leave tails.
        ("dathomir", Grid { x0: -3001.3, z0: 1000.7, spacing: 3.7, cols: 101, rows: 37 }, 37),
    ] {
        let Some(t) = common::planet(name) else { continue };
        let (differ, flora) = check(&t, grid, block);
        assert_eq!(differ, 0, "{name}: {grid:?}");
        assert!(flora > 0, "{name}: no post carried flora, so the check proved little");
    }
}

#[test]
fn row_walk_equals_per_post_walk_on_the_demo_terrain() {
    let t = trnbake_swg::model::json::demo_terrain();
    let half = t.header.map_width / 2.0;
    let grid = Grid { x0: f64::from(-half), z0: f64::from(-half), spacing: f64::from(t.header.map_width) / 96.0, cols: 97, rows: 97 };
    assert_eq!(check(&t, grid, 40).0, 0);
}
