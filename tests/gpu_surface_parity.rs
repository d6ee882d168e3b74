//! The surface passes on the GPU (lavapipe in CI) against the CPU reference on the same
//! plans and heights (issue #7): normals, shader id, splat weights, flora ids and
//! probabilities per class, environment, colour, exclude and passable, map by map, with how
//! many posts are bit-identical. Grids: the demo terrain under every surface option, and on
//! tatooine and mustafar the whole map at 32 m plus a 256² window at 2 m on the busiest area.
//! The water levels (`WaterTables::height_at`, kernels/water.wgsl) bit for bit on the
//! roads_water fixture, the demo terrain and naboo / mustafar.

mod common;
use common::gpu;
use trnbake_bake::surface_maps::splat_bytes;
use trnbake_gpu::GpuContext;
use trnbake_swg::eval::{Grid, HeightEvaluator};
use trnbake_swg::model::Terrain;
use trnbake_swg::plan::HeightOptions;
use trnbake_swg::surface::grid::{evaluate, SurfaceGrid};
use trnbake_swg::surface::normals::NormalMethod;
use trnbake_swg::surface::{DirectionFilter, FeatherClamp, FloraAmount, Ground, SlopeHeight, SurfaceEvaluator, SurfaceOptions, SurfaceWalk};

/// Posts that agree bit for bit, posts within the map's tolerance, and posts where the CPU's
/// map holds something (so a map that is empty everywhere cannot pass unnoticed).
#[derive(Default)]
struct Tally {
    same: usize,
    within: usize,
    posts: usize,
    used: usize,
}

impl Tally {
    fn add(&mut self, same: bool, within: bool, used: bool) {
        self.posts += 1;
        self.same += same as usize;
        self.within += (same || within) as usize;
        self.used += used as usize;
    }
}

fn byte(c: f32, scale: f32) -> i64 {
    (c.clamp(0.0, 1.0) * scale).round() as i64
}

/// Compare the GPU's surface grid with the CPU's, print one line per map and assert the
/// issue's tolerances: ids, exclude and passable identical; normals within 1e-5; splat
/// weights and colour within 1 LSB of 255; flora probabilities within 1 LSB of 65535.
fn compare(name: &str, cpu: &SurfaceGrid, gpu: &SurfaceGrid) {
    let n = cpu.results.len();
    assert_eq!(gpu.results.len(), n);
    let mut families: Vec<i32> = cpu.results.iter().chain(&gpu.results).flat_map(|r| r.splat.iter().filter(|e| e.0 != 0 && e.1 > 0.0).map(|e| e.0)).collect();
    families.sort_unstable();
    families.dedup();
    let mut maps: Vec<(&str, Tally)> = ["normals", "shader id", "splat weights", "flora ids", "flora probabilities", "env", "colour", "exclude", "passable"]
        .map(|m| (m, Tally::default()))
        .into();
    for i in 0..n {
        let (c, g) = (&cpu.results[i], &gpu.results[i]);
        let (cn, gn) = (cpu.normals[i], gpu.normals[i]);
        let bits = |v: [f32; 3]| v.map(f32::to_bits);
        maps[0].1.add(bits(cn) == bits(gn), (0..3).all(|k| (cn[k] - gn[k]).abs() <= 1e-5), cn[1] < 1.0);
        maps[1].1.add(c.shader == g.shader, false, c.shader != 0);
        let raw_same = c.splat.iter().zip(&g.splat).all(|(a, b)| a.0 == b.0 && a.1.to_bits() == b.1.to_bits());
        let (cb, gb) = (splat_bytes(c, &families), splat_bytes(g, &families));
        maps[2].1.add(raw_same, cb.iter().zip(&gb).all(|(a, b)| a.abs_diff(*b) <= 1), cb.iter().filter(|&&w| w > 0).count() > 1);
        maps[3].1.add((0..4).all(|k| c.flora[k].0 == g.flora[k].0), false, c.flora.iter().any(|f| f.0 != 0));
        maps[4].1.add(
            (0..4).all(|k| c.flora[k].1.to_bits() == g.flora[k].1.to_bits()),
            (0..4).all(|k| (byte(c.flora[k].1, 65535.0) - byte(g.flora[k].1, 65535.0)).abs() <= 1),
            c.flora.iter().any(|f| f.1 > 0.0 && f.1 < 1.0),
        );
        maps[5].1.add(c.environment == g.environment, false, c.environment != 0);
        maps[6].1.add(
            (0..3).all(|k| c.color[k].to_bits() == g.color[k].to_bits()),
            (0..3).all(|k| (byte(c.color[k], 255.0) - byte(g.color[k], 255.0)).abs() <= 1),
            c.color != [0.0; 3],
        );
        maps[7].1.add(c.excluded == g.excluded, false, c.excluded);
        maps[8].1.add(c.passable == g.passable, false, c.passable.is_some());
    }
    let g = &cpu.grid;
    eprintln!("{name}: {}x{} posts at {} m from ({}, {})", g.cols, g.rows, g.spacing, g.x0, g.z0);
    for (map, t) in &maps {
        eprintln!(
            "  {map:<20} {:>8}/{} bit-identical ({:.4} %), {} within tolerance; {} posts in use",
            t.same,
            t.posts,
            100.0 * t.same as f64 / t.posts as f64,
            t.within,
            t.used
        );
    }
    for (map, t) in &maps {
        assert_eq!(t.within, t.posts, "{name}: {} posts of {map} differ beyond tolerance", t.posts - t.within);
    }
}

fn evaluators(t: &Terrain, opts: SurfaceOptions) -> (HeightEvaluator, SurfaceEvaluator) {
    common::evaluators(t, &common::lenient_options(), opts)
}

fn parity(name: &str, ctx: &GpuContext, he: &HeightEvaluator, se: &SurfaceEvaluator, grid: Grid, method: NormalMethod) {
    let mut heights = vec![0.0f32; grid.cols as usize * grid.rows as usize];
    he.grid_region(&grid, 0, 0, grid.cols, grid.rows, 256, &mut heights);
    let t0 = std::time::Instant::now();
    let cpu = evaluate(&grid, &heights, he, se, method);
    let t1 = std::time::Instant::now();
    let gpu = trnbake_gpu::surface_pass::evaluate(ctx, &grid, &heights, he, se, method).unwrap();
    eprintln!("{name}: CPU {:.2} s, GPU {:.2} s", (t1 - t0).as_secs_f64(), t1.elapsed().as_secs_f64());
    compare(name, &cpu, &gpu);
}

#[test]
#[cfg_attr(no_gpu_adapter, ignore = "needs a GPU adapter")]
fn demo_terrain_under_every_surface_option() {
    let Some(ctx) = gpu() else { return };
    let t = trnbake_swg::model::json::demo_terrain();
    // Not on a 128-post block boundary, so blocks and tiles are ragged.
    let grid = Grid { x0: -2050.0, z0: -1990.0, spacing: 8.0, cols: 517, rows: 389 };
    for feather_clamp in [FeatherClamp::Threshold, FeatherClamp::Ignore, FeatherClamp::Weight] {
        for direction in [DirectionFilter::Zero, DirectionFilter::One] {
            let (he, se) = evaluators(&t, SurfaceOptions { feather_clamp, direction, ..Default::default() });
            parity(&format!("demo {feather_clamp:?} {direction:?}"), &ctx, &he, &se, grid, NormalMethod::Faces);
        }
    }
    let (he, se) = evaluators(&t, SurfaceOptions::default());
    parity("demo central normals", &ctx, &he, &se, grid, NormalMethod::Central);
}

#[test]
#[cfg_attr(no_gpu_adapter, ignore = "needs a GPU adapter")]
fn aspect_direction_filter_stays_on_the_cpu() {
    let Some(ctx) = gpu() else { return };
    let t = trnbake_swg::model::json::demo_terrain();
    let (_, se) = evaluators(&t, SurfaceOptions { direction: DirectionFilter::Aspect, ..Default::default() });
    let e = trnbake_gpu::surface_pass::GpuSurfacePass::new(&ctx, &se, NormalMethod::Faces).err().expect("the aspect reading is refused");
    assert!(matches!(e, trnbake_gpu::GpuError::Unsupported(_)), "{e}");
}

/// The tree walk (`--surface-walk tree`, the default, swg-trn §5.9): one walk of every
/// affector, FHGT, FSHD and (the default `--slope-height tree`) FSLP on what it has built so
/// far, FSLP's neighbourhood from the kernel's `slope_heights_pass`. On the demo terrain, the
/// road fixture with the road height model on (the roads' height parts run inside the walk),
/// dathomir's whole map at 32 m (ragged 512² tiles) and its busiest 2 m window; the readings
/// before tree slopes and scaled density on the demo; the separate passes on the demo and
/// road fixture; the CPU-only tree readings are refused.
#[test]
#[cfg_attr(no_gpu_adapter, ignore = "needs a GPU adapter")]
fn tree_walk_matches_cpu() {
    let Some(ctx) = gpu() else { return };
    let tree = SurfaceOptions { walk: SurfaceWalk::Tree, ..Default::default() };
    let t = trnbake_swg::model::json::demo_terrain();
    let (he, se) = evaluators(&t, tree);
    parity("demo tree walk", &ctx, &he, &se, Grid { x0: -2050.0, z0: -1990.0, spacing: 8.0, cols: 517, rows: 389 }, NormalMethod::Faces);
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("golden");
    let t = trnbake_bake::golden::load_terrain(&golden.join("roads_water.json")).unwrap();
    let h = HeightOptions { roads: true, ..Default::default() };
    let (he, se) = common::evaluators(&t, &h, tree);
    let half = f64::from(t.header.map_width) / 2.0;
    let n = (2.0 * half / 4.0) as u32 + 1;
    parity("roads_water tree walk", &ctx, &he, &se, Grid { x0: -half, z0: -half, spacing: 4.0, cols: n, rows: n }, NormalMethod::Faces);
    if let Some(t) = common::planet("dathomir") {
        let (he, se) = evaluators(&t, tree);
        let half = f64::from(se.plan.half_width);
        let n = (2.0 * half / 32.0) as u32 + 1;
        parity("dathomir whole map tree walk", &ctx, &he, &se, Grid { x0: -half, z0: -half, spacing: 32.0, cols: n, rows: n }, NormalMethod::Faces);
        // FSLP on the heights built so far (the default `--slope-height tree`) at the native
        // 2 m on the busiest window, where its neighbours' walks cross block and tile edges.
        parity("dathomir busiest 2 m window tree walk", &ctx, &he, &se, busy_window(&se), NormalMethod::Faces);
    }
    // The tree walk with FSLP on the final normals and the full flora density (the readings
    // before `--slope-height tree` and `--flora-amount scale`) stays on the GPU too.
    let previous = SurfaceOptions { walk: SurfaceWalk::Tree, slope_height: SlopeHeight::Final, flora_amount: FloraAmount::Any, ..Default::default() };
    let (he, se) = evaluators(&trnbake_swg::model::json::demo_terrain(), previous);
    parity(
        "demo tree walk, final slopes, full density",
        &ctx,
        &he,
        &se,
        Grid { x0: -2050.0, z0: -1990.0, spacing: 8.0, cols: 517, rows: 389 },
        NormalMethod::Faces,
    );
    // The separate passes (`--surface-walk separate`) stay on the GPU too.
    let separate = SurfaceOptions { walk: SurfaceWalk::Separate, ..Default::default() };
    let (he, se) = evaluators(&trnbake_swg::model::json::demo_terrain(), separate);
    parity("demo separate passes", &ctx, &he, &se, Grid { x0: -2050.0, z0: -1990.0, spacing: 8.0, cols: 517, rows: 389 }, NormalMethod::Faces);
    let t = trnbake_bake::golden::load_terrain(&golden.join("roads_water.json")).unwrap();
    let (he, se) = common::evaluators(&t, &h, separate);
    parity("roads_water separate passes", &ctx, &he, &se, Grid { x0: -half, z0: -half, spacing: 4.0, cols: n, rows: n }, NormalMethod::Faces);
    let cpu_only = [SurfaceWalk::TreeHeight, SurfaceWalk::TreeShader].map(|walk| SurfaceOptions { walk, ..Default::default() });
    for opts in cpu_only {
        let (_, se) = evaluators(&trnbake_swg::model::json::demo_terrain(), opts);
        let e = trnbake_gpu::surface_pass::GpuSurfacePass::new(&ctx, &se, NormalMethod::Faces).err().expect("CPU-only readings are refused");
        assert!(matches!(e, trnbake_gpu::GpuError::Unsupported(_)), "{e}");
    }
}

/// The 256² window at 2 m (on a 512 m lattice) whose culled surface programs hold the most
/// boundaries: a city or another hand-made area.
fn busy_window(se: &SurfaceEvaluator) -> Grid {
    let half = se.plan.half_width;
    let mut best = (0usize, 0.0f32, 0.0f32);
    let mut z = -half + 512.0;
    while z + 512.0 <= half {
        let mut x = -half + 512.0;
        while x + 512.0 <= half {
            let tiles = se.tile([x, z, x + 510.0, z + 510.0]);
            let score = tiles.shader.boundaries.len() + tiles.later.boundaries.len();
            if score > best.0 {
                best = (score, x, z);
            }
            x += 512.0;
        }
        z += 512.0;
    }
    Grid { x0: f64::from(best.1), z0: f64::from(best.2), spacing: 2.0, cols: 256, rows: 256 }
}

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
#[cfg_attr(no_gpu_adapter, ignore = "needs a GPU adapter")]
fn gpu_surface_matches_cpu_on_tatooine_and_mustafar() {
    let Some(ctx) = gpu() else { return };
    for name in ["tatooine", "mustafar"] {
        let Some(t) = common::planet(name) else { continue };
        let (he, se) = evaluators(&t, SurfaceOptions::default());
        let half = f64::from(se.plan.half_width);
        let n = (2.0 * half / 32.0) as u32 + 1;
        parity(&format!("{name} whole map"), &ctx, &he, &se, Grid { x0: -half, z0: -half, spacing: 32.0, cols: n, rows: n }, NormalMethod::Faces);
        parity(&format!("{name} busiest 2 m window"), &ctx, &he, &se, busy_window(&se), NormalMethod::Faces);
    }
}

/// `bake --maps auto --backend gpu` computes the surface maps on the GPU, says so in the
/// manifest, and writes the same bytes as `--backend cpu` for every output.
#[test]
#[cfg_attr(no_gpu_adapter, ignore = "needs a GPU adapter")]
fn gpu_bake_writes_the_cpu_bakes_maps() {
    let Some(_ctx) = gpu() else { return };
    let bake = |backend: &str| {
        let out = common::tmp_path(&format!("surface-{backend}"));
        let o = common::trnbake().args(["bake", "--backend", backend, "--spacing", "16", "-q", "-o"]).arg(&out).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let m: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
        std::fs::remove_dir_all(&out).unwrap();
        m
    };
    let (cpu, gpu) = (bake("cpu"), bake("gpu"));
    assert_eq!(cpu["surface_maps_backend"], "cpu");
    assert_eq!(gpu["surface_maps_backend"], "gpu");
    let files = |m: &serde_json::Value| -> Vec<(String, String)> {
        m["outputs"].as_array().unwrap().iter().map(|f| (f["path"].as_str().unwrap().to_string(), f["sha256"].as_str().unwrap_or("").to_string())).collect()
    };
    let (c, g) = (files(&cpu), files(&gpu));
    assert!(c.len() > 10, "{c:?}");
    assert_eq!(c, g, "the GPU bake's outputs differ from the CPU bake's");
}

/// The golden fixtures with roads, rivers, ribbons and every surface rule kind (authored
/// terrains in `golden/`), with the road and river height model on: the road / river /
/// ribbon shader parts (§5.12 step 5) and the water-adjacent rules run on both backends.
#[test]
#[cfg_attr(no_gpu_adapter, ignore = "needs a GPU adapter")]
fn gpu_surface_matches_cpu_on_road_and_surface_fixtures() {
    let Some(ctx) = gpu() else { return };
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("golden");
    for name in ["roads_water", "surfaces"] {
        let t = trnbake_bake::golden::load_terrain(&golden.join(format!("{name}.json"))).unwrap();
        let h = HeightOptions { roads: true, ..Default::default() };
        let (he, se) = common::evaluators(&t, &h, SurfaceOptions::default());
        let road_shaders = se.later_plan.affectors.iter().filter(|a| a.kind == trnbake_swg::plan::AFFECTOR_ROAD_SHADER).count();
        if name == "roads_water" {
            assert!(road_shaders > 0, "{name} must exercise the road / river / ribbon shader parts");
        }
        let half = f64::from(t.header.map_width) / 2.0;
        let spacing = 4.0;
        let n = (2.0 * half / spacing) as u32 + 1;
        let grid = Grid { x0: -half, z0: -half, spacing, cols: n, rows: n };
        parity(&format!("{name} ({road_shaders} road shader parts)"), &ctx, &he, &se, grid, NormalMethod::Faces);
    }
}

/// Compare the GPU's water levels with the CPU's post by post (bit for bit, `None` alike);
/// returns (posts with water, posts with a local table's water, i.e. other than the global
/// table's height).
fn water_parity(name: &str, ctx: &GpuContext, t: &Terrain, grid: Grid) -> (usize, usize) {
    let tables = trnbake_swg::water::WaterTables::new(t);
    let t0 = std::time::Instant::now();
    let cpu = trnbake_swg::surface::grid::water_levels(&grid, &tables);
    let t1 = std::time::Instant::now();
    let gpu = trnbake_gpu::water_pass::evaluate(ctx, &grid, &tables).unwrap();
    let secs = (t1 - t0).as_secs_f64();
    assert_eq!(gpu.len(), cpu.len());
    let same = cpu.iter().zip(&gpu).filter(|(c, g)| c.map(f32::to_bits) == g.map(f32::to_bits)).count();
    let wet = cpu.iter().filter(|c| c.is_some()).count();
    let local = cpu.iter().filter(|c| c.is_some_and(|h| Some(h) != tables.global)).count();
    eprintln!(
        "{name} water: {}x{} posts at {} m, {same}/{} bit-identical, {wet} with water ({local} local; {} local tables, {} lines); CPU {secs:.2} s, GPU {:.2} s",
        grid.cols,
        grid.rows,
        grid.spacing,
        cpu.len(),
        tables.local.len(),
        tables.lines.len(),
        t1.elapsed().as_secs_f64()
    );
    if let Some(i) = cpu.iter().zip(&gpu).position(|(c, g)| c.map(f32::to_bits) != g.map(f32::to_bits)) {
        let (x, z) = grid.post((i % grid.cols as usize) as u32, (i / grid.cols as usize) as u32);
        panic!("{name}: {} posts differ; first at ({x}, {z}): CPU {:?}, GPU {:?}", cpu.len() - same, cpu[i], gpu[i]);
    }
    (wet, local)
}

/// The water tables on the GPU (`water_pass`) against `WaterTables::height_at`: the
/// roads_water fixture (local BPOL/BREC water, a river with a water table, ribbons), the
/// demo terrain on a grid of several ragged tiles, and whole maps of naboo (local water, no
/// global table) and mustafar (lava) at 32 m.
#[test]
#[cfg_attr(no_gpu_adapter, ignore = "needs a GPU adapter")]
fn gpu_water_levels_match_cpu() {
    let Some(ctx) = gpu() else { return };
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("golden");
    let t = trnbake_bake::golden::load_terrain(&golden.join("roads_water.json")).unwrap();
    let tables = trnbake_swg::water::WaterTables::new(&t);
    assert!(!tables.local.is_empty() && !tables.lines.is_empty(), "roads_water has local water and water lines");
    let half = f64::from(t.header.map_width) / 2.0;
    let n = (2.0 * half / 2.0) as u32 + 1;
    let (wet, local) = water_parity("roads_water", &ctx, &t, Grid { x0: -half, z0: -half, spacing: 2.0, cols: n, rows: n });
    assert!(local > 1000, "roads_water: only {local} posts of local water");
    assert!(wet >= local);

    let t = trnbake_swg::model::json::demo_terrain();
    // Several 256² tiles, ragged on both axes.
    let (wet, _) = water_parity("demo", &ctx, &t, Grid { x0: -4090.0, z0: -3010.0, spacing: 6.0, cols: 1301, rows: 1037 });
    assert!(wet > 0, "the demo terrain has water");

    for name in ["naboo", "mustafar"] {
        let Some(t) = common::planet(name) else { continue };
        let half = f64::from(t.header.map_width) / 2.0;
        let n = (2.0 * half / 32.0) as u32 + 1;
        let (_, local) = water_parity(&format!("{name} whole map"), &ctx, &t, Grid { x0: -half, z0: -half, spacing: 32.0, cols: n, rows: n });
        assert!(local > 100, "{name}: only {local} posts of local water");
    }
}

/// A post whose flora stack outgrows the kernel's (`FLORA_STACK_DEPTH`) is flagged by the
/// kernel and recomputed on the CPU: the `surfaces` fixture with 40 nested circles that each
/// add a collidable family, so the centre posts stack 40 adds and the outer ones fewer.
#[test]
#[cfg_attr(no_gpu_adapter, ignore = "needs a GPU adapter")]
fn deep_flora_stacks_fall_back_per_post() {
    let Some(ctx) = gpu() else { return };
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("golden");
    let mut doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(golden.join("surfaces.json")).unwrap()).unwrap();
    let depth = trnbake_gpu::surface_pass::FLORA_STACK_DEPTH + 16;
    let layers = doc["generator"]["layers"].as_array_mut().unwrap();
    for k in 0..depth {
        layers.push(serde_json::json!({
            "type": "layer", "enabled": true, "name": format!("ring {k}"), "invert_boundaries": false,
            "invert_filters": false, "expanded": true, "notes": "",
            "children": [
                {"enabled": true, "name": "c", "type": "circle", "center_x": 100.0, "center_z": -60.0,
                 "radius": 40.0 + 8.0 * k as f64, "feather_type": 0, "feather_amount": 0.0},
                {"enabled": true, "name": "add", "type": "flora_collidable", "family_id": 1 + (k % 3) as i64,
                 "add": true, "remove_all": false, "use_density_override": true, "density_override": 0.05 + 0.01 * k as f64}
            ]
        }));
    }
    let t = trnbake_swg::model::json::terrain_from_json(&doc.to_string(), "deep flora stacks").unwrap();
    let (he, se) = evaluators(&t, SurfaceOptions::default());
    let ground = Ground { height: he.height_at(100.0, -60.0), normal: [0.0, 1.0, 0.0] };
    let centre = se.at(100.0, -60.0, ground);
    assert!(centre.flora[0].0.len() > trnbake_gpu::surface_pass::FLORA_STACK_DEPTH, "the centre stacks {} adds", centre.flora[0].0.len());
    let grid = Grid { x0: -256.0, z0: -320.0, spacing: 4.0, cols: 181, rows: 131 };
    parity("deep flora stacks", &ctx, &he, &se, grid, NormalMethod::Faces);
}
