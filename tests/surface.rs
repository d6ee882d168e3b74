//! Surface passes (swg-trn §5.2 steps 2–4, §5.9–§5.11): flora against the PIMP maps the
//! original tool baked, the SMAP rule as a map, and `bake --maps` end to end.

mod common;
use trnbake::eval::{Grid, HeightEvaluator};
use trnbake::fidelity::{baked_smap_bit, check_pimp, CellPicker};
use trnbake::plan::HeightOptions;
use trnbake::surface::normals::NormalMethod;
use trnbake::surface::{SurfaceEvaluator, SurfaceOptions};
use trnbake::trn::Terrain;

fn evaluators(t: &Terrain) -> (HeightEvaluator, SurfaceEvaluator) {
    let opts = HeightOptions { data_root: Some(common::swg_root()), missing_bitmaps_zero: true, ..Default::default() };
    (HeightEvaluator::new(t, &opts).unwrap(), SurfaceEvaluator::new(t, &opts, SurfaceOptions::default()).unwrap())
}

/// Most-likely collidable family vs PIMP in 4,000 random cells per planet, each cell's
/// chances the mean over a 4×4 sample of its posts (the original object lies somewhere in
/// the cell). Issue targets: tatooine ≥ 94 %, yavin4 ≥ 96 %, and calibration within 0.1 in
/// every bin of ≥ 100 cells; the other planets are reported and guarded against regressions.
#[test]
fn pimp_agreement_and_calibration() {
    for (name, floor) in [("tatooine", 0.94), ("yavin4", 0.96), ("naboo", 0.90), ("dathomir", 0.30), ("mustafar", 0.9), ("kashyyyk_main", 0.75)] {
        let Some(p) = common::real_file(&format!("terrain/{name}.trn")) else { continue };
        let t = Terrain::load(&p).unwrap();
        let (he, se) = evaluators(&t);
        let r = check_pimp(&t, &he, &se, NormalMethod::Faces, 4, 4000, 1).unwrap();
        eprintln!(
            "{name}: PIMP {}/{} flora cells agree ({:.2} %); empty {}/{}; worst calibration gap (bins ≥ 100 cells) {:.3}",
            r.agree,
            r.flora_cells,
            100.0 * r.rate(),
            r.empty_agree,
            r.empty_cells,
            r.worst_calibration(100)
        );
        for b in &r.calibration {
            eprintln!("    p in [{:.1}, {:.1}): {:>5} cells, predicted {:.3}, observed {:.3}", b.lo, b.hi, b.cells, b.mean_predicted, b.observed);
        }
        assert!(r.rate() >= floor, "{name}: PIMP agreement {:.4} < {floor}", r.rate());
        if matches!(name, "tatooine" | "yavin4" | "naboo") {
            assert!(r.worst_calibration(100) <= 0.1, "{name}: calibration gap {:.3} > 0.1", r.worst_calibration(100));
        }
    }
}

/// The `smap` map (swg-trn §2.3 rule on our heights) against the file's SMAP in 20,000 random
/// chunks per planet: ≥ 99.5 % agree (the target) on tatooine, naboo and mustafar.
/// Yavin4 sits on the target: 99.49 % here (standard error 0.05 %; the spec measured
/// 99.68 %), half its misses within 0.1 m of the 4 m cut — guarded at 99.4 % (README).
#[test]
fn smap_map_reproduces_the_baked_smap() {
    for (name, floor) in [("tatooine", 0.995), ("naboo", 0.995), ("yavin4", 0.994), ("mustafar", 0.995)] {
        let Some(p) = common::real_file(&format!("terrain/{name}.trn")) else { continue };
        let t = Terrain::load(&p).unwrap();
        let (he, _) = evaluators(&t);
        let half = t.header.map_width * 0.5;
        let mut pick = CellPicker::new(7);
        let (mut chunks, mut agree) = (0usize, 0usize);
        let per_side = (t.header.map_width / 8.0) as u64;
        for _ in 0..20000 {
            // One random chunk: its 3×3 tile-corner posts as a grid, through the map code.
            let (col, row) = (pick.below(per_side) as u32, pick.below(per_side) as u32);
            let grid = Grid { x0: -f64::from(half) + f64::from(col) * 8.0, z0: -f64::from(half) + f64::from(row) * 8.0, spacing: 4.0, cols: 3, rows: 3 };
            let (cc, rr, _, _, bits) = trnbake::surface::maps::smap_chunks(&grid, &he, half);
            assert_eq!((cc, rr), (1, 1));
            chunks += 1;
            agree += usize::from(baked_smap_bit(&t, col, row) == Some(bits[0]));
        }
        let rate = agree as f64 / chunks as f64;
        eprintln!("{name}: smap map agrees with SMAP in {agree}/{chunks} chunks ({:.2} %)", 100.0 * rate);
        assert!(rate >= floor, "{name}: {rate} < {floor}");
    }
}

fn read_png(path: &std::path::Path) -> (png::OutputInfo, Vec<u8>) {
    let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = dec.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    (info, buf)
}

/// `bake --maps auto` on the demo terrain writes every map it uses, splat weights sum to
/// 255 exactly where a shader applies, and the manifest lists every file.
#[test]
fn demo_bake_writes_surface_maps() {
    let out = std::env::temp_dir().join(format!("trnbake-test-{}-maps", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_trnbake"))
        .args(["bake", "--backend", "cpu", "--spacing", "16", "-q", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in [
        "normals.png",
        "shader_id.tif",
        "splat_0.png",
        "splat_legend.json",
        "flora_collidable_id.tif",
        "flora_collidable_density.png",
        "flora_legend.json",
        "water_height.tif",
        "water_mask.png",
        "exclude.png",
        "passable.png",
        "preview.png",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let (info, splat) = read_png(&out.join("splat_0.png"));
    assert_eq!((info.width, info.height), (257, 257));
    let legend: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("splat_legend.json")).unwrap()).unwrap();
    let channels = legend["channels"].as_array().unwrap().len();
    assert!(channels >= 1 && channels <= 4, "the demo has 1–4 shader families: {channels}");
    let mut shaded = 0;
    for px in splat.chunks(4) {
        let sum: u32 = px.iter().map(|&v| u32::from(v)).sum();
        assert!(sum == 0 || sum == 255, "splat weights sum to {sum}");
        shaded += usize::from(sum == 255);
    }
    assert!(shaded > 0, "some posts carry a shader");
    let (info, density) = read_png(&out.join("flora_collidable_density.png"));
    assert_eq!(info.bit_depth, png::BitDepth::Sixteen);
    assert!(density.chunks(2).any(|v| v != [0, 0]), "some flora is placed");
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    let listed: Vec<&str> = m["outputs"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert!(listed.contains(&"preview.png") && listed.contains(&"flora_legend.json"), "{listed:?}");
    std::fs::remove_dir_all(&out).unwrap();
}

/// `--maps flora_families,scatter`: per-family probability maps, and a deterministic scatter
/// whose instance count per family matches the summed probabilities.
#[test]
fn flora_family_maps_and_scatter_follow_the_probabilities() {
    let out = std::env::temp_dir().join(format!("trnbake-test-{}-scatter", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let run = |dir: &std::path::Path| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_trnbake"))
            .args(["bake", "--backend", "cpu", "--spacing", "16", "--maps", "flora,flora_families,scatter", "-q", "-o"])
            .arg(dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    run(&out);
    let (info, probs) = read_png(&out.join("flora_collidable_family_1.png"));
    assert_eq!((info.width, info.height, info.bit_depth), (257, 257, png::BitDepth::Sixteen));
    let expected: f64 = probs.chunks(2).map(|v| f64::from(u16::from_be_bytes([v[0], v[1]])) / 65535.0).sum();
    let csv = std::fs::read_to_string(out.join("flora_collidable_points.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("x,z,height,family_id"));
    let points: Vec<Vec<f64>> = lines.map(|l| l.split(',').map(|v| v.parse().unwrap()).collect()).collect();
    let of_1 = points.iter().filter(|p| p[3] == 1.0).count() as f64;
    // A sum of independent Bernoulli draws: within 5 standard deviations of its mean.
    let sd = expected.sqrt().max(1.0);
    assert!((of_1 - expected).abs() < 5.0 * sd, "family 1: {of_1} instances, expected {expected:.1} ± {sd:.1}");
    assert!(points.iter().all(|p| p[0].abs() <= 2048.0 && p[1].abs() <= 2048.0), "instances stay on the map");
    // Deterministic: a second bake scatters the same instances.
    let again = out.with_extension("again");
    let _ = std::fs::remove_dir_all(&again);
    run(&again);
    assert_eq!(csv, std::fs::read_to_string(again.join("flora_collidable_points.csv")).unwrap());
    std::fs::remove_dir_all(&out).unwrap();
    std::fs::remove_dir_all(&again).unwrap();
}
