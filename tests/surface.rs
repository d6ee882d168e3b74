//! Surface passes (swg-trn §5.2 steps 2–4, §5.9–§5.11): flora against the PIMP maps the
//! original tool baked, the SMAP rule as a map, and `bake --maps` end to end.

mod common;
use trnbake_swg::eval::{Grid, HeightEvaluator};
use trnbake_swg::fidelity::{check_pimp, check_smap_whole_map, smap_stale_layers, CellPicker};
use trnbake_swg::surface::normals::NormalMethod;
use trnbake_swg::surface::SurfaceOptions;

/// Most-likely collidable family vs PIMP in 4,000 random cells per planet, each cell's
/// chances the mean over a 4×4 sample of its posts (the original object lies somewhere in
/// the cell). Issue targets: tatooine ≥ 94 %, yavin4 ≥ 96 %, and calibration within 0.1 in
/// every bin of ≥ 100 cells; the other planets are reported and guarded against regressions.
#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn pimp_agreement_and_calibration() {
    for (name, floor) in [("tatooine", 0.94), ("yavin4", 0.96), ("naboo", 0.90), ("dathomir", 0.30), ("mustafar", 0.9), ("kashyyyk_main", 0.75)] {
        let Some(t) = common::planet(name) else { continue };
        let (he, se) = common::evaluators(&t, &common::lenient_options(), SurfaceOptions::default());
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

/// The SMAP rule (swg-trn §2.3) on our heights against the file's SMAP over every 8 m chunk
/// of the map (2048² per planet, heights on the whole 4 m grid), so the figure carries no
/// sampling error: ≥ 99.5 % (the target) on tatooine, naboo, yavin4 and mustafar, and
/// on dathomir outside its known stale area (`fidelity::SMAP_STALE_LAYERS`). The raw figure
/// is reported too. Whole map: tatooine 99.820 %, naboo 99.901 %, yavin4 99.583 %, mustafar
/// 100.000 %, dathomir 99.207 % raw. Yavin4's misses are spread over the map, a bell around the
/// 4 m cut (README); the 20,000-chunk sample this test used before read 99.49 % there, two
/// standard errors below the whole-map figure. The `smap` map code (`smap_chunks`, per-point
/// heights) must give the same bit as the whole-grid rule in 2,000 random chunks.
#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn smap_map_reproduces_the_baked_smap() {
    for name in ["tatooine", "naboo", "yavin4", "mustafar", "dathomir"] {
        let Some(t) = common::planet(name) else { continue };
        let opts = common::lenient_options();
        let stale = smap_stale_layers(name);
        let r = check_smap_whole_map(&t, &opts, stale).unwrap();
        eprintln!(
            "{name}: SMAP rule agrees in {}/{} chunks ({:.3} %); outside the known stale area ({} chunks, layers {stale:?}): {:.3} %",
            r.agree,
            r.chunks,
            100.0 * r.rate(),
            r.stale_chunks,
            100.0 * r.rate_outside_stale()
        );
        assert!(r.rate_outside_stale() >= 0.995, "{name}: {} < 0.995", r.rate_outside_stale());
        if stale.is_empty() {
            assert_eq!(r.stale_chunks, 0);
        }
        // The map code, chunk by chunk, gives the same bits.
        let he = HeightEvaluator::new(&t, &opts).unwrap();
        let half = t.header.map_width * 0.5;
        let mut pick = CellPicker::new(7);
        for _ in 0..2000 {
            let (col, row) = (pick.below(u64::from(r.per_side)) as u32, pick.below(u64::from(r.per_side)) as u32);
            let grid = Grid { x0: -f64::from(half) + f64::from(col) * 8.0, z0: -f64::from(half) + f64::from(row) * 8.0, spacing: 4.0, cols: 3, rows: 3 };
            let (cc, rr, _, _, bits) = trnbake_swg::surface::smap::smap_chunks(&grid, &he, half);
            assert_eq!((cc, rr), (1, 1));
            assert_eq!(bits[0], r.bits[(row * r.per_side + col) as usize], "{name}: chunk ({col}, {row})");
        }
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
    let out = common::tmp_path("maps");
    let o = common::trnbake().args(["bake", "--backend", "cpu", "--spacing", "16", "-q", "-o"]).arg(&out).output().unwrap();
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
    assert!((1..=4).contains(&channels), "the demo has 1–4 shader families: {channels}");
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
    let out = common::tmp_path("scatter");
    let run = |dir: &std::path::Path| {
        let o = common::trnbake()
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

/// Bakes the demo at 16 m (257 posts a side) with `args`; returns the folder and stderr.
fn bake_demo(name: &str, args: &[&str]) -> (std::path::PathBuf, String) {
    let out = common::tmp_path(name);
    let o = common::trnbake().args(["bake", "--backend", "cpu", "--spacing", "16", "--maps", "splat", "-o"]).arg(&out).args(args).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (out, String::from_utf8_lossy(&o.stderr).into_owned())
}

fn json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Issue #25 item 3: `splat_preview.png` shows a post of one family in that family's legend
/// colour; `--preset unreal` writes one grey weightmap per family the size of its heightmap
/// (256 posts: the demo's 257 resampled), `--preset unity` RGBA alphamaps at heightmap − 1
/// texels; the layers of every pixel sum to 0 or 255, in the legend's order; Godot gets none.
#[test]
fn engine_splat_maps_match_the_preset_heightmaps() {
    let (out, _) = bake_demo("splat-unreal", &["--preset", "unreal"]);
    let legend = json(&out.join("splat_legend.json"));
    let legend = legend["channels"].as_array().unwrap();
    // Preview: a post wholly of one family is that family's colour.
    let (_, splat) = read_png(&out.join("splat_0.png"));
    let (info, preview) = read_png(&out.join("splat_preview.png"));
    assert_eq!((info.width, info.height, info.color_type), (257, 257, png::ColorType::Rgb));
    let mut pure = vec![false; legend.len()];
    for (px, rgb) in splat.chunks(4).zip(preview.chunks(3)) {
        if let Some(ch) = px.iter().position(|&v| v == 255) {
            let color: Vec<u8> = legend[ch]["color"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u8).collect();
            assert_eq!(rgb, &color[..], "a post of family {} alone", legend[ch]["family_id"]);
            pure[ch] = true;
        } else if px.iter().all(|&v| v == 0) {
            assert_eq!(rgb, [0, 0, 0]);
        }
    }
    assert!(pure.iter().any(|&p| p), "some post has one family alone");

    // Unreal: one weightmap per legend family, in legend order, the heightmap's size.
    let heightmap = json(&out.join("manifest.json"))["export"]["grid"]["cols"].as_u64().unwrap() as u32;
    assert_eq!(heightmap, 256, "Unreal's largest size below 257");
    let layers = json(&out.join("splat_unreal_layers.json"));
    let layers = layers["layers"].as_array().unwrap();
    assert_eq!(layers.len(), legend.len());
    let mut maps = Vec::new();
    for (l, c) in layers.iter().zip(legend) {
        assert_eq!((&l["family_id"], &l["name"]), (&c["family_id"], &c["name"]));
        let (info, data) = read_png(&out.join(l["file"].as_str().unwrap()));
        assert_eq!((info.width, info.height, info.color_type), (heightmap, heightmap, png::ColorType::Grayscale));
        maps.push(data);
    }
    let mut shaded = 0;
    for i in 0..maps[0].len() {
        let sum: u32 = maps.iter().map(|m| u32::from(m[i])).sum();
        assert!(sum == 0 || sum == 255, "Unreal layers sum to {sum}");
        shaded += usize::from(sum == 255);
    }
    assert!(shaded > maps[0].len() / 2, "most posts carry a shader");
    std::fs::remove_dir_all(&out).unwrap();

    // Unity: RGBA alphamaps of 4 layers, 2^n texels for a 2^n + 1 heightmap.
    let (out, _) = bake_demo("splat-unity", &["--preset", "unity"]);
    let meta = json(&out.join("splat_unity.json"));
    let manifest = json(&out.join("manifest.json"));
    assert_eq!(meta["heightmap_resolution"], 257);
    assert_eq!(meta["alphamap_resolution"], 256);
    assert_eq!(meta["terrain_size_m"], manifest["export"]["engine"]["terrain_size_m"]);
    let names: Vec<&serde_json::Value> = legend.iter().map(|c| &c["name"]).collect();
    assert_eq!(meta["layers"].as_array().unwrap().iter().collect::<Vec<_>>(), names);
    let images = meta["alphamaps"].as_array().unwrap();
    assert_eq!(images.len(), legend.len().div_ceil(4));
    let (info, alpha) = read_png(&out.join(images[0]["file"].as_str().unwrap()));
    assert_eq!((info.width, info.height, info.color_type), (256, 256, png::ColorType::Rgba));
    for px in alpha.chunks(4) {
        let sum: u32 = px.iter().map(|&v| u32::from(v)).sum();
        assert!(sum == 0 || sum == 255, "Unity layers sum to {sum}");
    }
    std::fs::remove_dir_all(&out).unwrap();

    // Godot: nothing, and a note saying so.
    let (out, err) = bake_demo("splat-godot", &["--preset", "godot"]);
    assert!(err.contains("no godot splat maps"), "{err}");
    assert!(std::fs::read_dir(&out).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().contains("godot")));
    std::fs::remove_dir_all(&out).unwrap();
}
