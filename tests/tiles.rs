//! `trnbake tiles` and `trnbake serve` on a small real region (512 × 512 m of Tatooine at
//! 1 m): the Terrarium tiles decode to the evaluator's heights, neighbouring tiles agree on
//! their edges, lower zooms keep the max zoom's samples, and the viewer page, served by
//! `trnbake serve` and opened in headless Chromium (viewer/browser-check.mjs), shows the same
//! heights, names the families under a click and draws a picture (docs/src/viewer.md).
//! The browser part needs /usr/bin/chromium (or $CHROMIUM), node and `npm ci` in viewer/:
//! missing, it fails under CI=true and is a printed skip elsewhere.

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use common::{real_file, real_options, run_ok, tmp, trnbake};
use trnbake_swg::eval::HeightEvaluator;
use trnbake_swg::model::Terrain;

const H: f64 = std::f64::consts::PI * 6_378_137.0;
const REGION: [f64; 4] = [3000.0, -5200.0, 3511.0, -4689.0];

/// The tiles of one layer, decoded on demand (RGBA bytes).
struct Tiles {
    dir: PathBuf,
    cache: HashMap<(u8, u32, u32), Vec<u8>>,
}

impl Tiles {
    fn new(out: &Path, layer: &str) -> Self {
        Self { dir: out.join("tiles").join(layer), cache: HashMap::new() }
    }

    fn tile(&mut self, z: u8, x: u32, y: u32) -> &[u8] {
        let dir = self.dir.clone();
        self.cache.entry((z, x, y)).or_insert_with(|| {
            let p = dir.join(format!("{z}/{x}/{y}.png"));
            let img = image::open(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            img.to_rgba8().into_raw()
        })
    }

    /// The pixel at absolute column, row of zoom z.
    fn pixel(&mut self, z: u8, col: u32, row: u32) -> [u8; 4] {
        let t = self.tile(z, col / 512, row / 512);
        let i = (((row % 512) * 512 + col % 512) * 4) as usize;
        [t[i], t[i + 1], t[i + 2], t[i + 3]]
    }
}

fn terrarium(p: [u8; 4]) -> f64 {
    f64::from(p[0]) * 256.0 + f64::from(p[1]) + f64::from(p[2]) / 256.0 - 32768.0
}

fn pixel_m(z: u8) -> f64 {
    2.0 * H / (512.0 * f64::from(1u32 << z))
}

/// The height at world x, z decoded from the zoom-z Terrarium tiles as MapLibre reads them:
/// pixel i of a tile at i/512 of the tile, bilinear in between.
fn decode(t: &mut Tiles, z: u8, x: f64, zz: f64) -> f64 {
    let p = pixel_m(z);
    let (u, v) = ((x + H) / p, (H - zz) / p);
    let (c, r) = (u.floor() as u32, v.floor() as u32);
    let (fu, fv) = (u - f64::from(c), v - f64::from(r));
    let h = |t: &mut Tiles, c, r| terrarium(t.pixel(z, c, r));
    let a = h(t, c, r) * (1.0 - fu) + h(t, c + 1, r) * fu;
    let b = h(t, c, r + 1) * (1.0 - fu) + h(t, c + 1, r + 1) * fu;
    a * (1.0 - fv) + b * fv
}

/// Deterministic points inside the region.
fn points(n: usize, seed: u64) -> Vec<(f64, f64)> {
    let mut s = seed;
    let mut next = || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..n).map(|_| (REGION[0] + next() * (REGION[2] - REGION[0]), REGION[1] + next() * (REGION[3] - REGION[1]))).collect()
}

fn quantile(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

/// A child process ended when dropped (the server).
struct Killed(Child);
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// What the browser part needs (node, chromium, viewer/node_modules), or why not.
fn browser_tools() -> Result<PathBuf, String> {
    let chromium = std::env::var_os("CHROMIUM").map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    if !chromium.is_file() {
        return Err(format!("no browser at {} (apt-get install chromium, or set CHROMIUM)", chromium.display()));
    }
    if Command::new("node").arg("--version").output().map_or(true, |o| !o.status.success()) {
        return Err("no node on PATH".into());
    }
    let modules = repo().join("viewer/node_modules");
    for p in ["maplibre-gl", "pmtiles", "playwright-core"] {
        if !modules.join(p).is_dir() {
            return Err(format!("viewer/node_modules/{p} is missing (run `npm ci` in viewer/)"));
        }
    }
    Ok(modules)
}

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn tiles_decode_to_the_evaluators_heights_and_show_in_a_browser() {
    let Some(trn) = real_file("terrain/tatooine.trn") else { return };
    let tools = browser_tools();
    let tools = match tools {
        Ok(m) => Some(m),
        Err(why) if common::in_ci() => panic!("the viewer test needs a browser in CI: {why}"),
        Err(why) => {
            eprintln!("skipping the browser part: {why}");
            None
        }
    };
    let out = tmp("tatooine");
    let mut cmd = trnbake();
    cmd.arg("tiles").arg(&trn).arg("-o").arg(&out);
    cmd.args(["--region", &REGION.map(|v| v.to_string()).join(","), "--spacing", "1", "--backend", "cpu", "--pmtiles"]);
    if let Some(m) = &tools {
        cmd.arg("--assets").arg(m);
    }
    run_ok(&mut cmd);
    let meta: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("tiles.json")).unwrap()).unwrap();
    let hj = &meta["layers"]["height"];
    let zmax = hj["maxzoom"].as_u64().unwrap() as u8;
    let zmin = hj["minzoom"].as_u64().unwrap() as u8;
    assert_eq!(hj["encoding"], "terrarium");
    assert_eq!(zmax, 17, "1 m posts: the least zoom whose pixels are ≤ 1 m");
    assert!(pixel_m(zmax) <= 1.0 && pixel_m(zmax - 1) > 1.0);
    for l in ["color", "splat", "flora", "shader", "flora_id"] {
        assert!(meta["layers"][l].is_object(), "layer {l} missing from tiles.json");
        assert!(out.join(format!("{l}.pmtiles")).is_file());
    }
    assert!(out.join("index.html").is_file() && !out.join("bake").exists());

    // The decoded heights against the evaluator's at 200 random points.
    let t = Terrain::load(&trn).unwrap();
    let e = HeightEvaluator::new(&t, &real_options()).unwrap();
    let mut heights = Tiles::new(&out, "height");
    let mut err: Vec<f64> =
        points(200, 41).into_iter().map(|(x, z)| (decode(&mut heights, zmax, x, z) - f64::from(e.height_at(x as f32, z as f32))).abs()).collect();
    let (median, p90, max) = (quantile(&mut err, 0.5), quantile(&mut err, 0.9), quantile(&mut err, 1.0));
    eprintln!("decoded vs evaluator: median {median:.4} m, p90 {p90:.4} m, max {max:.4} m");
    assert!(median <= 0.02 && p90 <= 0.1 && max <= 1.0, "median {median}, p90 {p90}, max {max}");

    // Seams: across every inner tile edge at max zoom, the step from the last pixel of one
    // tile to the first of the next is an ordinary step of the surface (no offset, no
    // misregistration), and the edge samples hold the evaluator's heights.
    let p = pixel_m(zmax);
    let (c0, c1) = (((REGION[0] + H) / p) as u32, ((REGION[2] + H) / p) as u32);
    let (r0, r1) = (((H - REGION[3]) / p) as u32, ((H - REGION[1]) / p) as u32);
    let (mut edge, mut inner, mut n, mut edge_err) = (0.0, 0.0, 0, Vec::new());
    for tx in (c0 / 512 + 1)..=(c1 / 512) {
        let c = tx * 512;
        for r in r0 + 1..r1 {
            let h = |k: u32, hh: &mut Tiles| terrarium(hh.pixel(zmax, k, r));
            edge += (h(c, &mut heights) - h(c - 1, &mut heights)).abs();
            inner += (h(c - 1, &mut heights) - h(c - 2, &mut heights)).abs();
            n += 1;
            let (x, z) = (-H + f64::from(c) * p, H - f64::from(r) * p);
            edge_err.push((h(c, &mut heights) - f64::from(e.height_at(x as f32, z as f32))).abs());
        }
    }
    for ty in (r0 / 512 + 1)..=(r1 / 512) {
        let r = ty * 512;
        for c in c0 + 1..c1 {
            let h = |k: u32, hh: &mut Tiles| terrarium(hh.pixel(zmax, c, k));
            edge += (h(r, &mut heights) - h(r - 1, &mut heights)).abs();
            inner += (h(r - 1, &mut heights) - h(r - 2, &mut heights)).abs();
            n += 1;
        }
    }
    assert!(n > 500, "the region crosses tile edges ({n} edge pixels)");
    let (edge, inner) = (edge / f64::from(n), inner / f64::from(n));
    eprintln!("mean step across tile edges {edge:.4} m, beside them {inner:.4} m");
    assert!(edge <= 1.5 * inner + 0.01, "a seam: mean step {edge} m across tile edges, {inner} m beside them");
    let edge_median = quantile(&mut edge_err, 0.5);
    assert!(edge_median <= 0.02 && quantile(&mut edge_err, 1.0) <= 1.0, "edge samples off the evaluator: median {edge_median}");

    // Lower zooms keep the max zoom's samples (pixel i of zoom z − 1 is pixel 2i of zoom z).
    if zmin < zmax {
        for (x, z) in points(20, 7) {
            let (c, r) = (((x + H) / pixel_m(zmax - 1)) as u32, ((H - z) / pixel_m(zmax - 1)) as u32);
            assert_eq!(heights.pixel(zmax - 1, c, r), heights.pixel(zmax, 2 * c, 2 * r));
        }
    }

    let Some(modules) = tools else { return };
    // The pinned libraries' hashes are the installed files'.
    for f in trnbake_tiles::viewer::lib_files() {
        let bytes = std::fs::read(modules.join(&f.package).join(&f.file)).unwrap();
        assert_eq!(trnbake_tiles::viewer::sri(&bytes), f.integrity, "viewer/libs.json is stale for {}/{} (npm run sri in viewer/)", f.package, f.file);
    }
    browser_checks(&out, zmax, &meta, &mut heights, false);
    // The same page reading the PMTiles archives through range requests.
    browser_checks(&out, zmax, &meta, &mut heights, true);
    std::fs::remove_dir_all(&out).unwrap();
}

fn browser_checks(out: &Path, zmax: u8, meta: &serde_json::Value, heights: &mut Tiles, pmtiles: bool) {
    let mut server = trnbake();
    server.arg("serve").arg(out).args(["--port", "0"]).stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = Killed(server.spawn().unwrap());
    let mut line = String::new();
    BufReader::new(child.0.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.split_whitespace().find(|w| w.starts_with("http://127.0.0.1:")).unwrap_or_else(|| panic!("no URL in `{line}`")).to_string();
    let url = if pmtiles { format!("{url}?pmtiles") } else { url };
    // The archives' pass checks fewer points and no click (software WebGL is slow).
    let pts = points(if pmtiles { 2 } else { 5 }, 5);
    // The click: a post with flora families of two classes, so the popup has names to show.
    let mut flora_ids = Tiles::new(out, "flora_id");
    let click = points(2000, 9)
        .into_iter()
        .find(|&(x, z)| {
            let f = flora_ids.pixel(zmax, ((x + H) / pixel_m(zmax)) as u32, ((H - z) / pixel_m(zmax)) as u32);
            f[0] != 0 && f[1] != 0
        })
        .expect("a post with collidable and non-collidable flora in the region");
    let spec = serde_json::json!({ "points": pts.iter().map(|p| [p.0, p.1]).collect::<Vec<_>>(), "click": if pmtiles { serde_json::Value::Null } else { serde_json::json!([click.0, click.1]) } });
    let spec_path = out.join(format!("points-{pmtiles}.json"));
    std::fs::write(&spec_path, spec.to_string()).unwrap();
    let shot = out.join(format!("screenshot-{pmtiles}.png"));
    let o = Command::new("node")
        .arg(repo().join("viewer/browser-check.mjs"))
        .arg(&url)
        .arg(&shot)
        .arg(&spec_path)
        .current_dir(repo().join("viewer"))
        .output()
        .unwrap();
    assert!(o.status.success(), "browser-check failed: {}{}", common::text(&o.stdout), common::text(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    eprintln!("browser ({url}): {} requests; popup {:?}", r["requests"], r["popup"]);
    assert_eq!(r["consoleErrors"], serde_json::json!([]), "console errors");
    assert_eq!(r["failedRequests"], serde_json::json!([]), "failed requests");
    assert_eq!(r["terrain"], true);
    assert!(r["maxZoom"].as_f64().unwrap() >= f64::from(zmax) + 2.0);
    for ev in r["elevations"].as_array().unwrap() {
        let (x, z) = (ev["x"].as_f64().unwrap(), ev["z"].as_f64().unwrap());
        let ml = ev["maplibre"].as_f64().unwrap_or(f64::NAN);
        let own = decode(heights, zmax, x, z);
        assert!((ml - own).abs() <= 0.01, "at {x},{z}: MapLibre's terrain {ml} m, the tiles decode to {own} m");
    }
    if pmtiles {
        return;
    }

    // The popup names the families of the clicked post (read from the id tiles).
    let popup = r["popup"].as_str().unwrap();
    let num = |key: &str| -> f64 {
        let at = popup.find(key).unwrap_or_else(|| panic!("no `{key}` in the popup: {popup}")) + key.len();
        popup[at..].split_whitespace().next().unwrap().parse().unwrap()
    };
    let (x, z) = (num("x "), num("z "));
    assert!((x - click.0).abs() < 2.0 && (z - click.1).abs() < 2.0, "clicked {click:?}, the popup says {x}, {z}");
    let mut shader = Tiles::new(out, "shader");
    let mut flora = Tiles::new(out, "flora_id");
    let p = pixel_m(zmax);
    let name = |list: &serde_json::Value, id: u32| -> String {
        list.as_array()
            .and_then(|l| l.iter().find(|c| c["family_id"].as_u64() == Some(u64::from(id))))
            .map_or_else(|| if id == 0 { "none".into() } else { format!("family {id}") }, |c| c["name"].as_str().unwrap().to_string())
    };
    // The page reads the pixel of its own (unrounded) point: one of these.
    let found = (-1..=1).flat_map(|dc| (-1..=1).map(move |dr| (dc, dr))).any(|(dc, dr)| {
        let (c, r) = ((((x + H) / p) as i64 + dc) as u32, (((H - z) / p) as i64 + dr) as u32);
        let s = shader.pixel(zmax, c, r);
        let f = flora.pixel(zmax, c, r);
        let sid = u32::from(s[0]) * 256 + u32::from(s[1]);
        let mut want = vec![format!("shader {} ({sid})", name(&meta["legends"]["splat"]["channels"], sid))];
        for (k, cls) in ["collidable", "noncollidable", "radial_near"].iter().enumerate() {
            want.push(format!("flora {cls}: {} ({})", name(&meta["legends"]["flora"]["classes"][cls], u32::from(f[k])), f[k]));
        }
        want.iter().all(|w| popup.contains(w.as_str()))
    });
    assert!(found, "the popup does not name the families of the tiles at {x}, {z}: {popup}");
    assert!(!popup.contains("family "), "a family id without a legend name: {popup}");
    assert!(!popup.contains("collidable: none"), "the clicked post has flora: {popup}");

    // The picture is not blank: many colours, not one background.
    let img = image::open(&shot).unwrap().to_rgb8();
    let mut colours = std::collections::HashSet::new();
    for px in img.pixels() {
        colours.insert(px.0);
    }
    assert!(colours.len() > 1000, "the screenshot has {} colours", colours.len());
    if !pmtiles && std::env::var_os("TRNBAKE_UPDATE_SCREENSHOT").is_some() {
        std::fs::copy(&shot, repo().join("docs/src/viewer-screenshot.png")).unwrap();
    }
}
