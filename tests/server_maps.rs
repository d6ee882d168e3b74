//! The maps servers want (issue #40 item 3): `slope` and `spawnable`, baked by the command line
//! over a real region of tatooine at the native 2 m and checked post by post against the
//! library's own answers:
//! - `slope.tif` equals `slope_at` at every post bit for bit (one formula);
//! - `spawnable.tif` equals the spawn rule applied to `height_at`, the water tables,
//!   `slope_at`, the same bake's `exclude.png` and the flattened pads; the region straddles
//!   the rim of tatooine's 1,500 m "small_flats" circle, whose inside is a pad (flat at its
//!   constant) and whose feathered rim and outside are not;
//! - the legend and GDAL's category names name every code; GDAL reads the files' types;
//! - `--max-slope` / `--water-depth` change the map and are recorded in the legend.

mod common;

use std::path::Path;

use trnbake_swg::eval::{Grid, HeightEvaluator};
use trnbake_swg::spawn::{SpawnPost, SpawnRule, FLATTENED, SPAWNABLE, SPAWN_LEGEND, TOO_STEEP};
use trnbake_swg::water::WaterTables;

/// 512 m × 256 m across the east rim of the flattened circle of radius 1,500 m at
/// (−2568, −5588) (swg-trn §2.3): 1,070 to 1,590 m from its centre.
const REGION: [f64; 4] = [-1500.0, -5716.0, -988.0, -5460.0];
const CENTRE: (f32, f32) = (-2568.0, -5588.0);

/// A single-band GeoTIFF's samples, north row first, with its width and height.
fn read_tiff<T: Copy>(path: &Path, pick: impl Fn(tiff::decoder::DecodingResult) -> Option<Vec<T>>) -> (Vec<T>, u32, u32) {
    let mut d = tiff::decoder::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap())).unwrap();
    let (w, h) = d.dimensions().unwrap();
    let v = pick(d.read_image().unwrap()).unwrap_or_else(|| panic!("{} has another sample type", path.display()));
    (v, w, h)
}

/// An 8-bit grey PNG's samples, north row first.
fn read_png8(path: &Path) -> Vec<u8> {
    let img = image::open(path).unwrap();
    img.to_luma8().into_raw()
}

fn bake(out: &Path, backend: &str, extra: &[&str]) -> bool {
    let Some(trn) = common::real_file("terrain/tatooine.trn") else { return false };
    let region = REGION.map(|v| v.to_string()).join(",");
    let mut cmd = common::trnbake();
    cmd.arg("bake").arg(&trn).arg("--data-root").arg(common::swg_root());
    cmd.args(["--backend", backend, "-q", "--spacing", "2", "--region", &region, "--maps", "height,slope,spawnable,exclude", "-o"]).arg(out);
    cmd.args(extra);
    common::run_ok(&mut cmd);
    true
}

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn slope_and_spawnable_maps_match_the_queries_post_by_post() {
    let out = common::tmp("server_maps");
    if !bake(&out, "cpu", &[]) {
        return;
    }
    let t = common::planet("tatooine").unwrap();
    let he = HeightEvaluator::new(&t, &common::real_options()).unwrap();
    let water = WaterTables::new(&t);
    let (slopes, w, h) = read_tiff(&out.join("slope.tif"), |r| match r {
        tiff::decoder::DecodingResult::F32(v) => Some(v),
        _ => None,
    });
    let (codes, w2, h2) = read_tiff(&out.join("spawnable.tif"), |r| match r {
        tiff::decoder::DecodingResult::U8(v) => Some(v),
        _ => None,
    });
    assert_eq!((w, h), (257, 129));
    assert_eq!((w2, h2), (w, h));
    let excluded = read_png8(&out.join("exclude.png"));
    assert_eq!(excluded.len(), codes.len());
    let grid = Grid { x0: REGION[0], z0: REGION[1], spacing: 2.0, cols: w, rows: h };
    // The flatten boundaries of the region, south row first.
    let mut flattened = vec![false; (w * h) as usize];
    he.flattened_region(&grid, 0, 0, w, h, &mut flattened);

    let rule = SpawnRule::default();
    let mut counts = [0usize; 6];
    let (mut inside, mut inside_flat, mut outside_flat) = (0, 0, 0);
    for row in 0..h {
        for c in 0..w {
            let i = (row * w + c) as usize; // north first, as the files
            let south_row = h - 1 - row;
            let (x, z) = grid.post(c, south_row);
            let slope = he.slope_at(x, z).unwrap();
            assert_eq!(slopes[i].to_bits(), slope.to_bits(), "slope.tif at {x},{z}: {} against slope_at {slope}", slopes[i]);
            let flat = flattened[(south_row * w + c) as usize];
            let post = SpawnPost { height: he.height_at(x, z), water: water.height_at(x, z), slope, excluded: excluded[i] == 255, flattened: flat };
            assert_eq!(codes[i], rule.classify(&post), "spawnable.tif at {x},{z}: {post:?}");
            counts[usize::from(codes[i])] += 1;
            // Measured at 16 m over the whole circle: 90–95 % of the posts within 1,250 m of
            // the centre are on the pad (other layers act on the rest), none past 1,400 m.
            let d = ((x - CENTRE.0).powi(2) + (z - CENTRE.1).powi(2)).sqrt();
            if d < 1250.0 {
                inside += 1;
                inside_flat += usize::from(flat);
            } else if d > 1400.0 {
                outside_flat += usize::from(flat);
            }
        }
    }
    assert_eq!(outside_flat, 0, "no post outside the circle is flattened");
    assert!(inside > 5000 && inside_flat * 10 >= inside * 8, "the pad: {inside_flat} of {inside} posts within 1,250 m flattened");
    assert_eq!(counts[0], 0, "every post has a code");
    assert!(counts[usize::from(SPAWNABLE)] > 1000 && counts[usize::from(FLATTENED)] > 1000, "codes {counts:?}");

    // The legend names every code, with the limits used; GDAL's category names too.
    let legend: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("spawnable_legend.json")).unwrap()).unwrap();
    let names: Vec<&str> = legend["codes"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, SPAWN_LEGEND.iter().map(|c| c.1).collect::<Vec<_>>());
    assert_eq!(legend["max_slope_degrees"], 45.0);
    let aux = std::fs::read_to_string(out.join("spawnable.tif.aux.xml")).unwrap();
    for (_, name, _) in SPAWN_LEGEND {
        assert!(aux.contains(name), "spawnable.tif.aux.xml names {name}");
    }
    if let Some(gdal) = common::Gdal::find() {
        let info = gdal.info(&out.join("spawnable.tif"));
        assert_eq!(info["bands"][0]["type"], "Byte");
        let info = gdal.info(&out.join("slope.tif"));
        assert_eq!(info["bands"][0]["type"], "Float32");
        assert!(info["bands"][0].get("unit").is_none(), "degrees are not metres");
    }

    // Stricter limits: more steep posts, and the legend records them.
    let strict = common::tmp("server_maps_strict");
    assert!(bake(&strict, "cpu", &["--max-slope", "5", "--water-depth", "0"]));
    let (strict_codes, _, _) = read_tiff(&strict.join("spawnable.tif"), |r| match r {
        tiff::decoder::DecodingResult::U8(v) => Some(v),
        _ => None,
    });
    let steep = |v: &[u8]| v.iter().filter(|&&c| c == TOO_STEEP).count();
    assert!(steep(&strict_codes) > steep(&codes), "5° marks more posts too steep than 45° ({} vs {})", steep(&strict_codes), steep(&codes));
    let legend: serde_json::Value = serde_json::from_slice(&std::fs::read(strict.join("spawnable_legend.json")).unwrap()).unwrap();
    assert_eq!((legend["max_slope_degrees"].as_f64(), legend["water_depth_m"].as_f64()), (Some(5.0), Some(0.0)));
}

/// The GPU backend (lavapipe in CI) writes the same slope and spawnable files as the CPU: the
/// slope comes from the band's heights, the exclusion from the kernels, the pads from the CPU.
#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
#[cfg_attr(no_gpu_adapter, ignore = "needs a GPU adapter")]
fn the_gpu_backend_writes_the_same_server_maps() {
    if common::gpu().is_none() {
        return;
    }
    let (cpu, gpu) = (common::tmp("server_maps_cpu"), common::tmp("server_maps_gpu"));
    if !bake(&cpu, "cpu", &[]) {
        return;
    }
    assert!(bake(&gpu, "gpu", &[]));
    for name in ["slope.tif", "spawnable.tif", "spawnable.tif.aux.xml", "spawnable_legend.json"] {
        assert!(std::fs::read(cpu.join(name)).unwrap() == std::fs::read(gpu.join(name)).unwrap(), "{name} differs between the backends");
    }
}

#[test]
fn bad_spawn_limits_are_refused() {
    let out = common::tmp("server_maps_bad");
    for args in [["--max-slope=91"], ["--water-depth=-1"]] {
        let o = common::trnbake().args(["bake", "--maps", "spawnable", "-q", "-o"]).arg(&out).args(args).output().unwrap();
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        let flag = args[0].split('=').next().unwrap();
        assert!(err.contains(flag), "{err}");
    }
}
