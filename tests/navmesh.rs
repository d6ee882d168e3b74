//! `trnbake-navmesh` on a real planet (issue #40): a 1 km region of naboo with lakes is built
//! at the default settings, the set is loaded back through Detour (the library's own FFI), and
//! - every tile of the set loads;
//! - at random dry points the navmesh height (nearest polygon + `getPolyHeight`) is within
//!   0.5 m of the exact `height_at` for ≥ 99 % of them and within 2 m for all;
//! - straight paths between random dry pairs that Detour connects stay within 1 m of the
//!   ground at their corners and never cross water deeper than `water_depth` (sampled along
//!   every segment);
//! - a rerun resumes every tile and writes the same set; a damaged checkpoint is rebuilt.

mod common;

use std::path::Path;

use trnbake_navmesh::{build_navmesh, Navmesh, NavmeshRequest, NavmeshSettings};
use trnbake_swg::eval::HeightEvaluator;
use trnbake_swg::report::NullReporter;
use trnbake_swg::water::WaterTables;

/// 1,024 m of naboo with lakes (about a tenth of it deep water) and dry land (8 × 8 tiles of 128 m).
const REGION: [f64; 4] = [2816.0, -6400.0, 3840.0, -5376.0];

/// Deterministic pseudo-random numbers (64-bit LCG, high bits) in [0, 1).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

struct Fixture {
    heights: HeightEvaluator,
    water: WaterTables,
    region: [f64; 4],
}

fn fixture() -> Option<Fixture> {
    planet_fixture("naboo", REGION)
}

fn planet_fixture(name: &str, region: [f64; 4]) -> Option<Fixture> {
    let t = common::planet(name)?;
    let heights = HeightEvaluator::new(&t, &common::real_options()).unwrap();
    Some(Fixture { heights, water: WaterTables::new(&t), region })
}

fn build(f: &Fixture, out: &Path) -> trnbake_navmesh::NavmeshReport {
    let req = NavmeshRequest {
        heights: &f.heights,
        water: &f.water,
        settings: settings(),
        region: Some(f.region),
        out_dir: out.to_path_buf(),
        source_id: "naboo".into(),
        obj: false,
        reporter: &NullReporter,
    };
    build_navmesh(&req).unwrap()
}

/// The defaults, or for the benchmark the fields given as JSON in `TRNBAKE_NAVMESH_SETTINGS`
/// (e.g. `{"detail_sample_dist": 3.0}`), to compare settings on the same targets.
fn settings() -> NavmeshSettings {
    std::env::var("TRNBAKE_NAVMESH_SETTINGS")
        .map_or_else(|_| NavmeshSettings::default(), |j| serde_json::from_str(&j).expect("TRNBAKE_NAVMESH_SETTINGS is settings JSON"))
}

fn depth(f: &Fixture, x: f32, z: f32) -> f32 {
    let g = f.heights.height_at(x, z);
    f.water.height_at(x, z).map_or(f32::NEG_INFINITY, |w| w - g)
}

/// A random point of the region (kept 20 m inside its edge) that is dry.
fn dry_point(f: &Fixture, rng: &mut Lcg) -> (f32, f32) {
    loop {
        let r = f.region;
        let x = r[0] as f32 + 20.0 + rng.next() * (r[2] - r[0] - 40.0) as f32;
        let z = r[1] as f32 + 20.0 + rng.next() * (r[3] - r[1] - 40.0) as f32;
        if depth(f, x, z) <= 0.0 {
            return (x, z);
        }
    }
}

#[test]
fn a_navmesh_of_a_real_region_loads_in_detour_and_follows_the_ground() {
    let Some(f) = fixture() else { return };
    let out = common::tmp("navmesh_region");
    let report = build(&f, &out);
    assert_eq!((report.tiles_x, report.tiles_z), (8, 8));
    assert!(report.polys_ground > 0 && report.tiles_with_polys > 32, "{report:?}");
    check_targets(&f, &out, &report, 2000, 100, 50);
}

/// The targets of issue #40 on a built region: `points` random dry points for the heights,
/// `pairs` random dry pairs for the paths, of which at least `min_connected` must connect.
fn check_targets(f: &Fixture, out: &Path, report: &trnbake_navmesh::NavmeshReport, points: usize, pairs: usize, min_connected: usize) {
    let settings = settings();

    // Every tile of the set loads into Detour.
    let set = trnbake_navmesh::set::read_set(&out.join("navmesh.bin")).unwrap();
    let n = set.tiles.len();
    assert_eq!(n, report.tiles_with_polys);
    let mut nav = Navmesh::from_set(set).unwrap();
    assert_eq!(nav.tiles, n);
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("navmesh.json")).unwrap()).unwrap();
    assert_eq!(json["report"]["polys"].as_u64(), Some(report.polys));

    // Heights at random dry points.
    let mut rng = Lcg(40);
    let (mut within, mut total, mut worst) = (0, 0, 0.0f32);
    let mut uncovered = 0;
    let mut signed = 0.0f64;
    for _ in 0..points {
        let (x, z) = dry_point(f, &mut rng);
        let g = f.heights.height_at(x, z);
        match nav.height_at(x, g, z, 3.0).unwrap() {
            Some(h) => {
                total += 1;
                within += usize::from((h - g).abs() <= 0.5);
                worst = worst.max((h - g).abs());
                signed += f64::from(h - g);
            }
            None => uncovered += 1,
        }
    }
    eprintln!(
        "heights: {within}/{total} within 0.5 m, worst {worst:.3} m, mean signed {:.3} m, {uncovered} dry points off the mesh (steep, or near deep water)",
        signed / total as f64
    );
    assert!(total * 4 >= points * 3, "most dry points are on the mesh: {total} of {points}");
    assert!(within as f64 >= 0.99 * total as f64, "{within} of {total} within 0.5 m");
    assert!(worst <= 2.0, "worst {worst} m");

    // Straight paths between random dry pairs, on dry feet.
    nav.set_flags(trnbake_navmesh::settings::FLAG_WALK, 0);
    let ext = [2.0, 4.0, 2.0];
    let (mut connected, mut corners, mut samples) = (0, 0, 0);
    for _ in 0..pairs {
        let (ax, az) = dry_point(f, &mut rng);
        let (bx, bz) = dry_point(f, &mut rng);
        let a = [ax, f.heights.height_at(ax, az), az];
        let b = [bx, f.heights.height_at(bx, bz), bz];
        let Some(path) = nav.straight_path(a, b, ext).unwrap() else { continue };
        connected += 1;
        for p in &path {
            let g = f.heights.height_at(p[0], p[2]);
            assert!((p[1] - g).abs() <= 1.0, "path corner {p:?} is {} m off the ground {g}", p[1] - g);
            corners += 1;
        }
        for w in path.windows(2) {
            let len = ((w[1][0] - w[0][0]).powi(2) + (w[1][2] - w[0][2]).powi(2)).sqrt();
            let steps = (len / 0.25).ceil().max(1.0) as usize;
            for k in 0..=steps {
                let t = k as f32 / steps as f32;
                let (x, z) = (w[0][0] + t * (w[1][0] - w[0][0]), w[0][2] + t * (w[1][2] - w[0][2]));
                let d = depth(f, x, z);
                assert!(d <= settings.water_depth, "the path {:?} → {:?} crosses water {d} m deep at {x},{z}", w[0], w[1]);
                samples += 1;
            }
        }
    }
    eprintln!("paths: {connected} of {pairs} connected, {corners} corners, {samples} samples along them");
    assert!(connected >= min_connected, "dry pairs connect: {connected} of {pairs}");
}

/// Issue #40's benchmark (not a timed test; run with `--ignored --nocapture`): a 4 km region
/// of tatooine at the defaults, 2,000 random dry points and 200 random dry pairs.
#[test]
#[ignore = "benchmark: a 4 km region (minutes on 2 cores)"]
fn targets_on_a_4_km_region_of_tatooine() {
    let Some(f) = planet_fixture("tatooine", [-2048.0, -2048.0, 2048.0, 2048.0]) else { return };
    let out = common::tmp("navmesh_tatooine_4km");
    let start = std::time::Instant::now();
    let report = build(&f, &out);
    eprintln!("built in {:.1} s: {report:?}", start.elapsed().as_secs_f64());
    // Mesas and canyons split this region into many islands: only the pairs Detour connects
    // count (issue #40), and at least a tenth of them must.
    check_targets(&f, &out, &report, 2000, 200, 20);
}

#[test]
fn a_rerun_resumes_every_tile_and_a_damaged_checkpoint_is_rebuilt() {
    let Some(f) = fixture() else { return };
    let out = common::tmp("navmesh_resume");
    let first = build(&f, &out);
    let bin = std::fs::read(out.join("navmesh.bin")).unwrap();
    let again = build(&f, &out);
    assert_eq!(again.tiles_resumed, 64);
    assert_eq!(again.tiles_built, 0);
    assert_eq!(std::fs::read(out.join("navmesh.bin")).unwrap(), bin, "a resume writes the same set");

    // Flip one byte of a tile's data: the checkpoint fails its check and is rebuilt.
    let work = out.join(trnbake_navmesh::job::WORK_DIR);
    let tile = (0..8)
        .flat_map(|y| (0..8).map(move |x| (x, y)))
        .map(|(x, y)| work.join(format!("tile_{x}_{y}.bin")))
        .find(|p| std::fs::metadata(p).unwrap().len() > 100)
        .unwrap();
    let mut bytes = std::fs::read(&tile).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&tile, &bytes).unwrap();
    let third = build(&f, &out);
    assert_eq!((third.tiles_resumed, third.tiles_built), (63, 1));
    assert_eq!(std::fs::read(out.join("navmesh.bin")).unwrap(), bin, "the rebuilt tile is the same");
    assert_eq!(first.polys, third.polys);

    // Other settings in the same folder are refused, naming the folder.
    let req = NavmeshRequest {
        heights: &f.heights,
        water: &f.water,
        settings: NavmeshSettings { agent_radius: 0.6, ..Default::default() },
        region: Some(REGION),
        out_dir: out.clone(),
        source_id: "naboo".into(),
        obj: false,
        reporter: &NullReporter,
    };
    let e = build_navmesh(&req).unwrap_err().to_string();
    assert!(e.contains("other settings") && e.contains("navmesh_resume"), "{e}");
}

#[test]
fn the_command_line_builds_a_set_and_prints_a_path_through_it() {
    let Some(file) = common::real_file("terrain/naboo.trn") else { return };
    let out = common::tmp("navmesh_cli");
    // 256 m of the region above: 2 × 2 tiles, with the input mesh as OBJ.
    let o = common::run_ok(common::trnbake().args(["navmesh"]).arg(&file).arg("-o").arg(&out).args(["--region", "3328,-5888,3584,-5632", "--obj"]));
    assert!(common::output_text(&o).contains("2x2 tiles"), "{}", common::output_text(&o));
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("navmesh.json")).unwrap()).unwrap();
    assert_eq!(json["settings"]["cell_height"].as_f64(), Some(0.1), "f32 settings written as typed");
    assert_eq!(json["areas"]["shallow_water"].as_u64(), Some(u64::from(trnbake_navmesh::settings::AREA_SHALLOW_WATER)));
    let obj = std::fs::read_to_string(out.join("navmesh-input.obj")).unwrap();
    assert!(obj.lines().filter(|l| l.starts_with("f ")).count() > 2 * 256 * 256, "two triangles a lattice cell");

    // A path between two dry points: corners x,y,z from near the start to near the end.
    let heights = fixture().unwrap().heights;
    let (a, b) = ((3360.0f32, -5860.0f32), (3560.0f32, -5650.0f32));
    let o = common::run_ok(
        common::trnbake().args(["navmesh", "path"]).arg(out.join("navmesh.bin")).args([&format!("{},{}", a.0, a.1), &format!("{},{}", b.0, b.1)]),
    );
    let corners: Vec<Vec<f32>> = common::text(&o.stdout).lines().map(|l| l.split(',').map(|v| v.parse().unwrap()).collect()).collect();
    assert!(corners.len() >= 2, "{corners:?}");
    let (first, last) = (&corners[0], &corners[corners.len() - 1]);
    assert!((first[0] - a.0).abs() < 2.5 && (first[2] - a.1).abs() < 2.5, "{first:?}");
    assert!((last[0] - b.0).abs() < 2.5 && (last[2] - b.1).abs() < 2.5, "{last:?}");
    for c in &corners {
        assert!((c[1] - heights.height_at(c[0], c[2])).abs() <= 1.0, "{c:?}");
    }

    // Off the map, and a file that is not a set: clear errors naming what is wrong.
    let o = common::trnbake().args(["navmesh"]).arg(&file).arg("-o").arg(&out).args(["--region", "7000,7000,9000,9000"]).output().unwrap();
    assert!(!o.status.success() && common::output_text(&o).contains("off the map"), "{}", common::output_text(&o));
    let o = common::trnbake().args(["navmesh", "path"]).arg(out.join("navmesh.json")).args(["0,0", "1,1"]).output().unwrap();
    assert!(!o.status.success() && common::output_text(&o).contains("navmesh.json: not a navmesh set"), "{}", common::output_text(&o));
}
