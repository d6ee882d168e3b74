//! The golden corpus (`golden/`) and `trnbake check`: the corpus covers every rule tag and
//! version the writer supports; the check passes on the CPU and GPU backends (lavapipe in CI)
//! within a minute; a changed affector fails with a diff image of exactly the affected area;
//! `--bless` rewrites only what changed; users can make goldens for their own terrains.

mod common;

use common::{output_text, tmp, trnbake};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Instant;
use trnbake_bake::golden::compare::height_raster;
use trnbake_bake::golden::coverage::{features, tag_version_name};
use trnbake_bake::golden::{image::read_png, load_terrain, Manifest};
use trnbake_swg::eval::{Grid, HeightEvaluator};
use trnbake_swg::model::rules::TYPED_RULES;
use trnbake_swg::plan::HeightOptions;

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("golden")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), dst).unwrap();
        }
    }
}

/// `trnbake check ARGS --golden GOLDEN --report REPORT`.
fn check(args: &[&str], golden: &Path, report: &Path) -> Output {
    trnbake()
        .arg("check")
        .args(args)
        .arg("--golden")
        .arg(golden)
        .arg("--report")
        .arg(report)
        .env("XDG_RUNTIME_DIR", std::env::var_os("XDG_RUNTIME_DIR").unwrap_or_else(|| "/tmp".into()))
        .output()
        .unwrap()
}

#[test]
fn corpus_covers_every_rule_kind_and_version() {
    let dir = golden_dir();
    let m = Manifest::load(&dir).unwrap();
    let mut found = BTreeSet::new();
    let mut with_roads = BTreeSet::new();
    let mut without_gain = BTreeSet::new();
    for f in &m.fixtures {
        let t = load_terrain(&dir.join(&f.terrain)).unwrap();
        let fs = features(&t);
        if f.roads {
            with_roads.extend(fs.iter().cloned());
        }
        if !f.bitmap_gain {
            without_gain.extend(fs.iter().cloned());
        }
        found.extend(fs);
    }
    let kinds: Vec<String> = TYPED_RULES.iter().flat_map(|(t, vs)| vs.iter().map(|v| tag_version_name(t, *v))).collect();
    let mut expected: Vec<String> = kinds.clone();
    for tag in ["BCIR", "BREC", "BPOL", "BPLN", "FHGT", "FFRA", "FBIT"] {
        expected.extend((0..4).map(|ft| format!("{tag} feather {ft}")));
    }
    for tag in ["AHCN", "AHFR"] {
        expected.extend((0..4).map(|op| format!("{tag} operation {op}")));
    }
    expected.extend((0..6).map(|r| format!("fractal rule {r}")));
    expected.extend(
        [
            "fractal bias",
            "fractal gain",
            "FBIT gain",
            "FBIT no gain",
            "water global",
            "water BREC",
            "water BPOL",
            "layer invert boundaries",
            "layer invert filters",
            "layer nested",
            "layer disabled",
            "rule disabled",
        ]
        .map(String::from),
    );
    let missing: Vec<&String> = expected.iter().filter(|e| !found.contains(*e)).collect();
    eprintln!(
        "golden corpus: {} fixtures cover {}/{} rule tag/versions and {} features in all:\n  {}",
        m.fixtures.len(),
        kinds.iter().filter(|k| found.contains(*k)).count(),
        kinds.len(),
        found.len(),
        found.iter().cloned().collect::<Vec<_>>().join(", ")
    );
    assert!(missing.is_empty(), "the golden corpus does not exercise: {missing:?}");
    // Roads and rivers only change heights with roads on; the FBIT gain only matters when a
    // fixture turns it off.
    for k in ["AROA 0005", "AROA 0006", "ARIV 0005", "ARIV 0006"] {
        assert!(with_roads.contains(k), "no fixture baked with roads on has {k}");
    }
    assert!(without_gain.contains("FBIT gain"), "no fixture with bitmap_gain off has a bitmap gain");
    // The built-in demo terrain of `bake` is one of the fixtures.
    let demo = m.fixtures.iter().find(|f| f.name == "demo").expect("a demo fixture");
    assert_eq!(std::fs::read_to_string(dir.join(&demo.terrain)).unwrap(), trnbake_swg::model::json::DEMO_TERRAIN_JSON);
}

/// Run the whole corpus on one backend, in under a minute.
fn check_corpus(backend: &str) {
    let report = tmp(&format!("report-{backend}"));
    let start = Instant::now();
    let o = check(&["--backend", backend], &golden_dir(), &report);
    let secs = start.elapsed().as_secs_f64();
    let out = output_text(&o);
    eprintln!("{out}golden check on the {backend} backend: {secs:.2} s end to end");
    assert!(o.status.success(), "golden check failed on the {backend} backend:\n{out}");
    assert!(out.contains(&format!("on the {backend} backend")), "{out}");
    // On the GPU backend the splat and flora maps come from the GPU surface passes too.
    assert!(!out.contains("surface maps on the CPU"), "{out}");
    let junit = std::fs::read_to_string(report.join("junit.xml")).unwrap();
    assert!(junit.contains("failures=\"0\" errors=\"0\""), "{junit}");
    assert!(secs < 60.0, "the golden check took {secs:.1} s on the {backend} backend (limit: one minute)");
    std::fs::remove_dir_all(&report).unwrap();
}

#[test]
fn golden_check_passes_on_the_cpu_backend() {
    check_corpus("cpu");
}

#[test]
#[cfg_attr(no_gpu_adapter, ignore = "needs a GPU adapter")]
fn golden_check_passes_on_the_gpu_backend() {
    // As in gpu_parity: skip outside CI without an adapter, fail in CI.
    if common::gpu().is_none() {
        return;
    }
    check_corpus("gpu");
}

/// Set the height of the `dig` affector of the demo's crater layer in a JSON terrain.
fn set_crater_depth(path: &Path, depth: f64) {
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let layers = v["generator"]["layers"].as_array_mut().unwrap();
    let crater = layers.iter_mut().find(|l| l["name"] == "crater (subtract, ease-in)").unwrap();
    let dig = crater["children"].as_array_mut().unwrap().iter_mut().find(|c| c["name"] == "dig").unwrap();
    assert_eq!(dig["height"], 60.0);
    dig["height"] = depth.into();
    std::fs::write(path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

#[test]
fn changed_affector_fails_with_a_diff_of_exactly_the_affected_area() {
    let dir = tmp("mutated");
    let golden = dir.join("golden");
    copy_dir(&golden_dir(), &golden);
    set_crater_depth(&golden.join("demo.json"), 75.0);
    let report = dir.join("report");
    let o = check(&["--backend", "cpu"], &golden, &report);
    let out = output_text(&o);
    eprintln!("{out}");
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("FAIL      demo/height 257×257"), "{out}");
    // The crater's floor also falls under the demo's height-filtered shader layer, so its
    // splat weights move there too; every other map passes.
    assert!(out.contains("FAIL      demo/splat 257×257"), "{out}");
    assert_eq!(out.matches("FAIL ").count(), 2, "{out}");
    assert_eq!(out.matches("PASS ").count(), 16, "every other map still passes:\n{out}");
    let junit = std::fs::read_to_string(report.join("junit.xml")).unwrap();
    assert!(junit.contains("tests=\"18\" failures=\"2\" errors=\"0\""), "{junit}");
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    assert!(md.contains("## demo / height: FAIL") && md.contains("![difference](demo.height.diff.png)"), "{md}");

    // The posts whose 16-bit samples the change moves, computed here from the two terrains.
    let m = Manifest::load(&golden).unwrap();
    let hm = &m.fixtures.iter().find(|f| f.name == "demo").unwrap().maps[0];
    let (scale, offset) = (hm.height_scale.unwrap(), hm.height_offset.unwrap());
    let grid = Grid { x0: -2048.0, z0: -2048.0, spacing: 16.0, cols: 257, rows: 257 };
    let bake = |p: &Path| {
        let e = HeightEvaluator::new(&load_terrain(p).unwrap(), &HeightOptions::default()).unwrap();
        let mut h = vec![0.0; 257 * 257];
        e.grid_region(&grid, 0, 0, 257, 257, 64, &mut h);
        height_raster(&h, 257, 257, scale, offset).samples
    };
    let (before, after) = (bake(&golden_dir().join("demo.json")), bake(&golden.join("demo.json")));
    let changed: BTreeSet<usize> = (0..before.len()).filter(|&i| before[i] != after[i]).collect();

    // The heat map colours exactly those posts (unchanged posts are grey: R = G = B).
    let diff = read_png(&report.join("demo.height.diff.png")).unwrap().raster;
    assert_eq!((diff.width, diff.height, diff.channels), (257, 257, 3));
    let coloured: BTreeSet<usize> = diff.samples.chunks_exact(3).enumerate().filter(|(_, p)| !(p[0] == p[1] && p[1] == p[2])).map(|(i, _)| i).collect();
    assert_eq!(coloured, changed, "the diff image marks exactly the posts whose heights changed");
    // ... and they lie in the crater's circle (centre (−900, −800), radius 420 m, feather
    // 0.6): all of the circle's full-strength core, nothing outside the circle.
    let (mut core, mut core_marked) = (0, 0);
    for i in 0..257 * 257 {
        let (col, row) = (i % 257, i / 257);
        let (x, z) = (-2048.0 + 16.0 * col as f64, 2048.0 - 16.0 * row as f64);
        let d = ((x + 900.0).powi(2) + (z + 800.0).powi(2)).sqrt();
        if coloured.contains(&i) {
            assert!(d <= 420.0, "post at ({x}, {z}) outside the crater is marked");
        }
        if d <= 0.4 * 420.0 {
            core += 1;
            core_marked += coloured.contains(&i) as usize;
        }
    }
    assert_eq!(core_marked, core, "every post of the crater's core is marked");
    let sbs = read_png(&report.join("demo.height.side-by-side.png")).unwrap().raster;
    assert_eq!((sbs.width, sbs.height), (3 * 257 + 2 * trnbake_bake::golden::image::PANEL_GAP, 257));
    eprintln!("mutation (crater depth 60 → 75 m): {} of {} posts marked, crater core {core}/{core} marked, none outside the circle", coloured.len(), 257 * 257);

    // --bless rewrites the demo golden only, then the check passes.
    let pngs = |d: &Path| -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "png"))
            .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
            .collect();
        v.sort();
        v
    };
    let original = pngs(&golden);
    let o = check(&["--backend", "cpu", "--bless"], &golden, &report);
    let out = output_text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("UPDATED   demo/height 257×257: was max "), "{out}");
    assert!(out.contains("UPDATED   demo/splat 257×257: was max "), "{out}");
    assert_eq!(out.matches("UNCHANGED").count(), 16, "{out}");
    for ((name, old), (_, new)) in original.iter().zip(pngs(&golden)) {
        assert_eq!(old == &new, name != "demo.height.png" && name != "demo.splat.png", "{name}");
    }
    assert!(!golden.read_dir().unwrap().any(|e| e.unwrap().file_name().to_string_lossy().ends_with(".partial")));
    let o = check(&["--backend", "cpu"], &golden, &report);
    assert!(o.status.success(), "{}", output_text(&o));
    assert!(!report.join("demo.height.diff.png").exists(), "a passing check removes the images of an earlier failure");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A surface-only change (a flora affector's density) fails exactly the flora map of its
/// class, while the fixture's heights and splat weights still pass.
#[test]
fn changed_flora_density_fails_only_the_flora_map() {
    let dir = tmp("flora");
    let golden = dir.join("golden");
    copy_dir(&golden_dir(), &golden);
    let path = golden.join("surfaces.json");
    let mut text_json = std::fs::read_to_string(&path).unwrap();
    let before = "\"name\": \"boulders\",";
    assert!(text_json.contains(before), "the surfaces fixture has its boulders affector");
    let at = text_json.find(before).unwrap();
    let density = text_json[at..].find("\"density_override\": 0.3").expect("boulders density 0.3") + at;
    text_json.replace_range(density..density + "\"density_override\": 0.3".len(), "\"density_override\": 0.6");
    std::fs::write(&path, text_json).unwrap();
    let report = dir.join("report");
    let o = check(&["--backend", "cpu", "--fixture", "surfaces"], &golden, &report);
    let out = output_text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("FAIL") && out.contains("surfaces/flora_collidable"), "{out}");
    for other in ["surfaces/height", "surfaces/splat", "surfaces/flora_noncollidable"] {
        assert!(!out.lines().any(|l| l.starts_with("FAIL") && l.contains(other)), "{other} must still pass: {out}");
    }
    assert!(report.join("junit.xml").is_file());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn goldens_for_your_own_terrain() {
    // The README's recipe: a .trn, a golden.json naming it, --bless, commit, check in CI.
    let dir = tmp("own");
    let g = dir.join("goldens");
    std::fs::create_dir_all(&g).unwrap();
    let o = trnbake().args(["compile"]).arg(golden_dir().join("boundaries.json")).arg("-o").arg(g.join("mine.trn")).output().unwrap();
    assert!(o.status.success(), "{}", output_text(&o));
    let manifest = r#"{"format": 1, "fixtures": [{"name": "mine", "terrain": "mine.trn", "spacing": 20.0, "region": [-640, -640, 640, 640]}]}"#;
    std::fs::write(g.join("golden.json"), manifest).unwrap();
    let report = dir.join("report");

    let o = check(&["--backend", "cpu"], &g, &report);
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    assert!(output_text(&o).contains("no golden image") && output_text(&o).contains("--bless"), "{}", output_text(&o));

    let o = check(&["--backend", "cpu", "--bless"], &g, &report);
    assert!(o.status.success(), "{}", output_text(&o));
    assert!(output_text(&o).contains("CREATED   mine/height 65×65: written"), "{}", output_text(&o));
    let m = Manifest::load(&g).unwrap();
    assert_eq!(m.fixtures[0].maps[0].file.as_deref(), Some("mine.height.png"));
    assert!(m.fixtures[0].maps[0].height_scale.is_some());

    let o = check(&["--backend", "cpu"], &g, &report);
    assert!(o.status.success(), "{}", output_text(&o));
    let manifest_after = std::fs::read(g.join("golden.json")).unwrap();
    let o = check(&["--backend", "cpu", "--bless"], &g, &report);
    assert!(output_text(&o).contains("UNCHANGED mine/height"), "{}", output_text(&o));
    assert_eq!(std::fs::read(g.join("golden.json")).unwrap(), manifest_after, "an unchanged bless leaves golden.json alone");

    // An image and a manifest from different blesses (an interrupted one) are reported.
    let text_before = String::from_utf8(manifest_after.clone()).unwrap();
    let m = Manifest::load(&g).unwrap();
    let offset = m.fixtures[0].maps[0].height_offset.unwrap();
    std::fs::write(g.join("golden.json"), text_before.replace(&format!("{offset:?}"), &format!("{:?}", offset + 1.0))).unwrap();
    let o = check(&["--backend", "cpu"], &g, &report);
    assert_eq!(o.status.code(), Some(1));
    assert!(output_text(&o).contains("an interrupted --bless?"), "{}", output_text(&o));

    // A golden from another grid is reported, not compared.
    let edited = String::from_utf8(manifest_after).unwrap().replace("\"spacing\": 20.0", "\"spacing\": 40.0");
    std::fs::write(g.join("golden.json"), edited).unwrap();
    let o = check(&["--backend", "cpu"], &g, &report);
    assert_eq!(o.status.code(), Some(1));
    assert!(output_text(&o).contains("is 65×65 but the fixture bakes 33×33 posts"), "{}", output_text(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_golden_folders_are_clear_errors() {
    let dir = tmp("bad");
    let report = dir.join("report");
    let case = |manifest: &str, expect: &[&str]| {
        std::fs::write(dir.join("golden.json"), manifest).unwrap();
        let o = check(&["--backend", "cpu"], &dir, &report);
        let out = output_text(&o);
        assert_eq!(o.status.code(), Some(1), "{manifest}: {out}");
        for e in expect {
            assert!(out.contains(e), "{manifest}: expected `{e}` in:\n{out}");
        }
        assert!(!out.contains("panicked"), "{out}");
    };
    let fx = |extra: &str| format!(r#"{{"format": 1, "fixtures": [{{"name": "a", "terrain": "a.json", "spacing": 8.0{extra}}}]}}"#);
    case(&fx(r#", "spacng": 4"#), &["golden.json: at `fixtures[0].spacng`", "unknown field `spacng`"]);
    case(&fx(r#", "maps": [{"map": "slope"}]"#), &["fixtures[0].maps[0].map", "unknown variant `slope`"]);
    case(r#"{"format": 2, "fixtures": []}"#, &["format 2"]);
    case(&fx(""), &["ERROR     a/bake", "cannot read", "a.json"]);
    case(r#"{"format": 1, "fixtures": [{"name": "a b", "terrain": "a.json", "spacing": 8.0}]}"#, &["`a b` must be letters"]);
    std::fs::remove_dir_all(&dir).unwrap();
    let o = check(&[], &PathBuf::from("/nonexistent/goldens"), &report);
    assert_eq!(o.status.code(), Some(1));
    assert!(output_text(&o).contains("/nonexistent/goldens/golden.json"), "{}", output_text(&o));
}

/// Two `check --bless` runs on one golden folder, each for another fixture, at once: both
/// fixtures' figures land in golden.json every round (#37 item 6: without the folder's lock
/// the second writer kept only its own).
#[test]
fn concurrent_blesses_of_two_fixtures_both_land() {
    let dir = tmp("concurrent-bless");
    let golden = dir.join("golden");
    copy_dir(&golden_dir(), &golden);
    let original = Manifest::load(&golden).unwrap();
    let (a, b) = ("boundaries", "filters");
    let figures = |m: &Manifest, name: &str| {
        let h = &m.fixtures.iter().find(|f| f.name == name).unwrap().maps[0];
        (h.height_scale, h.height_offset)
    };
    for round in 0..6 {
        // Stale goldens: each fixture's image swapped with the other's, and figures that no
        // bless wrote (so each bless must rewrite its fixture's entry).
        let mut stale = original.clone();
        for f in stale.fixtures.iter_mut().filter(|f| f.name == a || f.name == b) {
            f.maps[0].height_scale = Some(1.0);
            f.maps[0].height_offset = Some(f64::from(round));
        }
        std::fs::write(golden.join("golden.json"), serde_json::to_string_pretty(&stale).unwrap()).unwrap();
        let (pa, pb) = (golden.join(format!("{a}.height.png")), golden.join(format!("{b}.height.png")));
        let (ia, ib) = (std::fs::read(&pa).unwrap(), std::fs::read(&pb).unwrap());
        std::fs::write(&pa, ib).unwrap();
        std::fs::write(&pb, ia).unwrap();
        let bless = |name: &str| {
            trnbake()
                .args(["check", "--backend", "cpu", "--bless", "--fixture", name, "--golden"])
                .arg(&golden)
                .env("XDG_RUNTIME_DIR", std::env::var_os("XDG_RUNTIME_DIR").unwrap_or_else(|| "/tmp".into()))
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (ca, cb) = (bless(a), bless(b));
        for (name, c) in [(a, ca), (b, cb)] {
            let o = c.wait_with_output().unwrap();
            let out = output_text(&o);
            assert!(o.status.success(), "round {round}: bless of {name}: {out}");
            assert!(out.contains(&format!("UPDATED   {name}/height")), "round {round}: {out}");
        }
        let after = Manifest::load(&golden).unwrap();
        for name in [a, b] {
            assert_eq!(figures(&after, name), figures(&original, name), "round {round}: the bless of {name} was lost from golden.json");
        }
        assert_eq!(after, original, "round {round}: golden.json is the corpus's again");
    }
    // And the goldens they wrote check.
    let o = check(&["--backend", "cpu", "--fixture", a, "--fixture", b], &golden, &dir.join("report"));
    assert!(o.status.success(), "{}", output_text(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Standard base64 (as `data:` URIs carry it) decoded.
fn unbase64(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let digits: Vec<u8> = s.bytes().filter(|&c| c != b'=').map(val).collect();
    let mut out = Vec::new();
    for ch in digits.chunks(4) {
        let n = ch.iter().enumerate().fold(0u32, |n, (i, &d)| n | (u32::from(d) << (18 - 6 * i)));
        out.extend(n.to_be_bytes()[1..ch.len()].iter());
    }
    out
}

/// #37 item 17: `check` writes no report unless asked (`--report DIR`), gives a bless command
/// that runs as written (`--golden DIR` included, quoted), writes report.html (pictures and a
/// slider per failing map, embedded, no network) and summary.md, and appends the summary to
/// `$GITHUB_STEP_SUMMARY`.
#[test]
fn check_reports_only_where_asked_with_a_bless_command_that_runs_as_written() {
    let dir = tmp("reports");
    let work = dir.join("work");
    let golden = work.join("my goldens");
    copy_dir(&golden_dir(), &golden);
    set_crater_depth(&golden.join("demo.json"), 75.0);
    std::fs::remove_file(golden.join("bitmap.height.png")).unwrap();
    let job_summary = dir.join("step-summary.md");
    std::fs::write(&job_summary, "earlier step\n").unwrap();
    let listing = |d: &Path| -> BTreeSet<String> { d.read_dir().unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect() };
    let before = listing(&work);
    let run = |args: &[&str]| {
        trnbake()
            .current_dir(&work)
            .args(["check", "--backend", "cpu", "--golden", "my goldens"])
            .args(args)
            .env("GITHUB_STEP_SUMMARY", &job_summary)
            .env("XDG_RUNTIME_DIR", std::env::var_os("XDG_RUNTIME_DIR").unwrap_or_else(|| "/tmp".into()))
            .output()
            .unwrap()
    };

    // No --report: nothing lands in the current folder.
    let o = run(&[]);
    let out = output_text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert_eq!(listing(&work), before, "a check without --report writes nothing into the current folder:\n{out}");
    assert!(out.contains("add --report DIR for report.html"), "{out}");
    let bless = "trnbake check --golden 'my goldens' --bless --fixture demo --fixture bitmap";
    assert!(out.contains(&format!("if the change is intended: {bless}")), "{out}");
    assert!(out.contains("no golden image") && out.contains("run `trnbake check --golden 'my goldens' --bless --fixture bitmap` to write it"), "{out}");
    let appended = std::fs::read_to_string(&job_summary).unwrap();
    assert!(appended.starts_with("earlier step\n## ❌ trnbake check: 3 of 18 maps fail"), "appended to the job summary:\n{appended}");
    assert!(appended.contains("### demo / height: FAIL") && appended.contains("```text\n⬛") && appended.contains('🟥'), "{appended}");
    assert!(appended.contains(&format!("`{bless}`")), "{appended}");

    // --report DIR: the reports, with the pictures embedded in report.html.
    let o = run(&["--report", "out/report"]);
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    let report = work.join("out/report");
    for f in ["report.html", "report.md", "summary.md", "junit.xml", "demo.height.diff.png", "demo.splat.side-by-side.png"] {
        assert!(report.join(f).is_file(), "{f} missing in {}", report.display());
    }
    assert_eq!(listing(&work), before.iter().cloned().chain(["out".to_string()]).collect(), "only the report folder is added");
    let html = std::fs::read_to_string(report.join("report.html")).unwrap();
    assert!(!html.contains("http:") && !html.contains("https:") && !html.contains("src=\"demo."), "report.html needs nothing beside it or from the network");
    let uris: Vec<&str> = html.split("src=\"data:image/png;base64,").skip(1).map(|s| &s[..s.find('"').unwrap()]).collect();
    assert_eq!(uris.len(), 10, "demo's height and splat: expected, actual, difference and the wipe's two");
    for u in &uris {
        let img = image::load_from_memory(&unbase64(u)).unwrap();
        assert_eq!((img.width(), img.height()), (257, 257));
    }
    // The difference panel is the report's diff image, pixel for pixel.
    let diff_png = read_png(&report.join("demo.height.diff.png")).unwrap().raster;
    let embedded = image::load_from_memory(&unbase64(uris[2])).unwrap().to_rgb8().into_raw();
    assert_eq!(embedded, diff_png.samples.iter().map(|&v| v as u8).collect::<Vec<_>>());
    assert_eq!(html.matches("type=\"range\"").count(), 2, "a slider per failing map with pictures");
    assert!(html.contains("bitmap / height: FAIL") && html.contains(&format!("<code>{}</code>", bless.replace('\'', "&apos;"))), "{html}");
    let summary = std::fs::read_to_string(report.join("summary.md")).unwrap();
    assert!(summary.starts_with("## ❌ trnbake check: 3 of 18 maps fail") && summary.contains("`report.html`"), "{summary}");
    assert!(std::fs::read_to_string(report.join("report.md")).unwrap().contains(&format!("run `{bless}`")));

    // The bless command, run as written from the same folder, makes the check pass.
    let bin = Path::new(env!("CARGO_BIN_EXE_trnbake")).parent().unwrap().to_path_buf();
    let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()))).unwrap();
    let xdg = std::env::var_os("XDG_RUNTIME_DIR").unwrap_or_else(|| "/tmp".into());
    let o = std::process::Command::new("sh").arg("-c").arg(bless).current_dir(&work).env("PATH", path).env("XDG_RUNTIME_DIR", xdg).output().unwrap();
    let out = output_text(&o);
    assert!(o.status.success(), "{bless}: {out}");
    assert!(out.contains("UPDATED   demo/height") && out.contains("CREATED   bitmap/height"), "{out}");
    let o = run(&["--report", "out/report"]);
    assert!(o.status.success(), "{}", output_text(&o));
    assert!(std::fs::read_to_string(&job_summary).unwrap().contains("## ✅ trnbake check: all 18 maps match their goldens"));
    assert!(!report.join("demo.height.diff.png").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
