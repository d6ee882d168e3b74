//! Every export format checked from outside (exports.md §7, issue 5 acceptance):
//!
//! * a tatooine bake at 32 m in every format, read back by GDAL (`gdalinfo -json -stats`:
//!   size, georeferencing, min/max) and at 1,000 random posts (`gdallocationinfo`, batch mode)
//!   against `trnbake sample`, within each format's quantization step;
//! * the .ter golden vector of §1.10 as GDAL sees it; a .ter written by GDAL read by `convert`;
//! * `convert` between all formats (heights stay in metres), engine presets, and damaged
//!   inputs (an error naming the file, never a panic).
//!
//! GDAL checks skip with a message when `gdalinfo` is missing, and fail when `CI=true`.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{real_file, run_ok, stats_min_max, tmp, trnbake, Gdal};
use serde_json::Value;
use trnbake_raster::{sha256_file, write_geotiff_f32, Grid};

fn read_json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The manifest entry of `name`.
fn entry<'a>(manifest: &'a Value, name: &str) -> &'a Value {
    manifest["outputs"].as_array().unwrap().iter().find(|o| o["path"] == name).unwrap_or_else(|| panic!("{name} not in the manifest"))
}

/// Deterministic pseudo-random numbers (64-bit LCG, high bits).
struct Lcg(u64);
impl Lcg {
    fn below(&mut self, n: u32) -> u32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) % u64::from(n)) as u32
    }
}

/// A raw-band VRT so GDAL can read a headerless RAW (R16/R32, north row first).
fn raw_vrt(dir: &Path, file: &str, cols: u32, rows: u32, dtype: &str, bytes: u32) -> PathBuf {
    let p = dir.join(format!("{file}.rawband.vrt"));
    let x = format!(
        r#"<VRTDataset rasterXSize="{cols}" rasterYSize="{rows}">
  <VRTRasterBand dataType="{dtype}" band="1" subClass="VRTRawRasterBand">
    <SourceFilename relativetoVRT="1">{file}</SourceFilename>
    <ImageOffset>0</ImageOffset>
    <PixelOffset>{bytes}</PixelOffset>
    <LineOffset>{}</LineOffset>
    <ByteOrder>LSB</ByteOrder>
  </VRTRasterBand>
</VRTDataset>
"#,
        cols * bytes
    );
    std::fs::write(&p, x).unwrap();
    p
}

/// How GDAL locates a format's posts.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Georef {
    /// North-up, PixelIsPoint: origin half a spacing beyond the north-west post (§3.3).
    NorthUp,
    /// GDAL's Terragen driver: origin (0, 0), pixel size (+SCAL, +SCAL), rows reversed (§2.4).
    Terragen,
    /// No georeferencing (RAW through a raw VRT): pixel coordinates.
    None,
}

struct Check {
    label: &'static str,
    path: PathBuf,
    georef: Georef,
    /// `h = raw · scale + offset` (1, 0 for Float32).
    scale: f64,
    offset: f64,
    /// Largest allowed |decoded − true| from the encoding alone.
    quant: f64,
}

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn tatooine_exports_read_back_through_gdal_and_match_sample() {
    let Some(trn) = real_file("terrain/tatooine.trn") else { return };
    let Some(gdal) = Gdal::find() else { return };
    let dir = tmp("tatooine");
    let (plain, tiled) = (dir.join("plain"), dir.join("tiled"));
    let bake = |out: &Path, extra: &[&str]| {
        run_ok(trnbake().arg("bake").arg(&trn).args(["--spacing", "32", "--backend", "cpu", "--maps", "height", "-q", "-o"]).arg(out).args(extra));
        read_json(&out.join("manifest.json"))
    };
    let m = bake(&plain, &["--format", "tif,tif16,ter,png,raw,r32"]);
    let mt = bake(&tiled, &["--format", "tif,tif16", "--tiles", "4"]);
    let (hmin, hmax) = (f(&m["min_height"]), f(&m["max_height"]));
    assert_eq!((f(&mt["min_height"]), f(&mt["max_height"])), (hmin, hmax));
    let (cols, rows, s) = (513u32, 513u32, 32.0);
    let (west, south) = (-8192.0, -8192.0);
    let north = south + f64::from(rows - 1) * s;

    // The manifests list every file with its real size and checksum.
    let mut listed = 0;
    for (man, d) in [(&m, &plain), (&mt, &tiled)] {
        for o in man["outputs"].as_array().unwrap() {
            let (bytes, sha) = sha256_file(&d.join(o["path"].as_str().unwrap())).unwrap();
            assert_eq!((o["bytes"].as_u64().unwrap(), o["sha256"].as_str().unwrap()), (bytes, sha.as_str()), "{o}");
            listed += 1;
        }
    }
    // plain: 6 formats + the PNG world file; tiled: 2 × 16 tiles + 2 VRTs.
    assert_eq!(listed, 7 + 34);
    assert_eq!(mt["export"]["tiles"]["count"], serde_json::json!([4, 4]));

    let enc = |man: &Value, name: &str| {
        let e = entry(man, name);
        (f(&e["height_scale"]), f(&e["height_offset"]))
    };
    let mut checks = vec![Check { label: "GeoTIFF f32", path: plain.join("height.tif"), georef: Georef::NorthUp, scale: 1.0, offset: 0.0, quant: 0.0 }];
    let (sc, of) = enc(&m, "height_u16.tif");
    checks.push(Check { label: "GeoTIFF u16", path: plain.join("height_u16.tif"), georef: Georef::NorthUp, scale: sc, offset: of, quant: sc / 2.0 });
    let (sc, of) = enc(&m, "height.ter");
    checks.push(Check { label: "Terragen .ter", path: plain.join("height.ter"), georef: Georef::Terragen, scale: sc, offset: of, quant: sc / 2.0 });
    let (sc, of) = enc(&m, "height.png");
    checks.push(Check { label: "PNG16 + .pgw", path: plain.join("height.png"), georef: Georef::NorthUp, scale: sc, offset: of, quant: sc / 2.0 });
    checks.push(Check { label: "VRT of f32 tiles", path: tiled.join("height.vrt"), georef: Georef::NorthUp, scale: 1.0, offset: 0.0, quant: 0.0 });
    let (sc, of) = enc(&mt, "height_u16.vrt");
    checks.push(Check { label: "VRT of u16 tiles", path: tiled.join("height_u16.vrt"), georef: Georef::NorthUp, scale: sc, offset: of, quant: sc / 2.0 });
    let (sc, of) = enc(&m, "height.raw");
    checks.push(Check {
        label: "RAW r16",
        path: raw_vrt(&plain, "height.raw", cols, rows, "UInt16", 2),
        georef: Georef::None,
        scale: sc,
        offset: of,
        quant: sc / 2.0,
    });
    checks.push(Check {
        label: "RAW r32",
        path: raw_vrt(&plain, "height.r32", cols, rows, "Float32", 4),
        georef: Georef::None,
        scale: 1.0,
        offset: 0.0,
        quant: 0.0,
    });

    // 1. gdalinfo -json -stats on every format: size, georeferencing, min/max.
    let tif_wkt = gdal.info(&checks[0].path)["coordinateSystem"]["wkt"].as_str().unwrap().to_string();
    assert!(tif_wkt.contains("SWG tatooine local metres"), "{tif_wkt}");
    let mut gdal_passes = Vec::new();
    for c in &checks {
        let info = gdal.info(&c.path);
        assert_eq!(info["size"], serde_json::json!([cols, rows]), "{}", c.label);
        let gt: Vec<f64> = info["geoTransform"].as_array().map(|a| a.iter().map(f).collect()).unwrap_or_default();
        match c.georef {
            Georef::NorthUp => {
                // North-up: no rotation, negative y pixel size; PixelIsPoint half-spacing origin.
                assert_eq!(gt, vec![west - s / 2.0, s, 0.0, north + s / 2.0, 0.0, -s], "{}", c.label);
                if c.label != "PNG16 + .pgw" {
                    assert_eq!(info["metadata"][""]["AREA_OR_POINT"], "Point", "{}", c.label);
                    assert_eq!(info["coordinateSystem"]["wkt"].as_str().unwrap(), tif_wkt, "{}: CRS differs from the GeoTIFF's", c.label);
                }
            }
            Georef::Terragen => assert_eq!(gt, vec![0.0, s, 0.0, 0.0, 0.0, s], "{}", c.label),
            Georef::None => assert!(gt.is_empty(), "{}", c.label),
        }
        let band = &info["bands"][0];
        // GDAL's own scale/offset where the format carries them (GeoTIFF u16, .ter, VRT u16).
        if let (Some(gs), Some(go)) = (band["scale"].as_f64(), band["offset"].as_f64()) {
            assert!((gs - c.scale).abs() <= 1e-12 * c.scale && (go - c.offset).abs() <= 1e-9, "{}: {gs} {go}", c.label);
        }
        let (raw_min, raw_max) = stats_min_max(band);
        let (got_min, got_max) = (raw_min * c.scale + c.offset, raw_max * c.scale + c.offset);
        // Half a step; f32 formats exactly (GDAL prints 14 significant digits).
        let tol = c.quant + 1e-9 * hmin.abs().max(hmax.abs());
        assert!((got_min - hmin).abs() <= tol && (got_max - hmax).abs() <= tol, "{}: GDAL min/max {got_min} {got_max} vs {hmin} {hmax}", c.label);
        gdal_passes.push(c.label);
    }
    eprintln!("gdalinfo checks passed: {}/{} ({})", gdal_passes.len(), checks.len(), gdal_passes.join(", "));

    // 2. 1,000 random posts: GDAL's value from each format vs `trnbake sample`.
    let mut rng = Lcg(1);
    let posts: Vec<(u32, u32)> = (0..1000).map(|_| (rng.below(cols), rng.below(rows))).collect();
    let world: Vec<(f64, f64)> = posts.iter().map(|&(c, r)| (west + f64::from(c) * s, south + f64::from(r) * s)).collect();
    let mut child =
        trnbake().arg("sample").arg(&trn).args(["--points", "-"]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    {
        let mut stdin = child.stdin.take().unwrap();
        for (x, z) in &world {
            writeln!(stdin, "{x},{z}").unwrap();
        }
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let truth: Vec<f64> = String::from_utf8_lossy(&o.stdout).lines().map(|l| l.rsplit(',').next().unwrap().parse().unwrap()).collect();
    assert_eq!(truth.len(), 1000);
    for c in &checks {
        let raw = match c.georef {
            Georef::NorthUp => gdal.location(&c.path, true, &world),
            Georef::Terragen | Georef::None => {
                // Pixel coordinates: column, row from the north (GDAL flips .ter rows).
                let px: Vec<(f64, f64)> = posts.iter().map(|&(col, r)| (f64::from(col), f64::from(rows - 1 - r))).collect();
                gdal.location(&c.path, false, &px)
            }
        };
        let max_err = raw.iter().zip(&truth).map(|(v, t)| (v * c.scale + c.offset - t).abs()).fold(0.0, f64::max);
        // `sample` prints 4 decimals (±0.00005); Float32 values print with ~7 digits.
        let bound = c.quant + 5e-5 + 1e-6;
        eprintln!("1,000 posts, {:<17} max |GDAL − sample| = {max_err:.6} m (quantization step {:.6} m, bound {bound:.6})", c.label, c.quant * 2.0);
        assert!(max_err <= bound, "{}: {max_err} > {bound}", c.label);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The 5 × 3 golden grid of exports.md §1.10, written through the library and the CLI.
fn golden_tif(dir: &Path) -> PathBuf {
    let g = Grid { cols: 5, rows: 3, x0: -4.0, z0: -2.0, spacing: 2.0 };
    let h: Vec<f32> = (0..15).map(|i| (100 + 10 * (i % 5) + 100 * (i / 5)) as f32).collect();
    let p = dir.join("golden.tif");
    write_geotiff_f32(&p, &g, &h, "golden").unwrap();
    p
}

#[test]
fn ter_golden_vector_via_convert_and_gdal() {
    let dir = tmp("golden");
    let tif = golden_tif(&dir);
    let ter = dir.join("golden.ter");
    run_ok(trnbake().arg("convert").arg(&tif).arg(&ter).arg("-q"));
    let bytes = std::fs::read(&ter).unwrap();
    // §1.10: 116 bytes; hs = 121, bh = 110; first and last elevations; pad; EOF.
    assert_eq!(bytes.len(), 116);
    assert_eq!(&bytes[0x48..0x58], &[0x41, 0x4C, 0x54, 0x57, 0x79, 0x00, 0x6E, 0x00, 0x0F, 0x81, 0xA3, 0x8B, 0x37, 0x96, 0xCB, 0xA0]);
    assert_eq!(&bytes[0x6C..], &[0xF1, 0x7E, 0x00, 0x00, 0x45, 0x4F, 0x46, 0x20]);
    let Some(gdal) = Gdal::find() else { return };
    let info = gdal.info(&ter);
    assert_eq!(info["driverShortName"], "Terragen");
    assert_eq!(info["size"], serde_json::json!([5, 3]));
    let band = &info["bands"][0];
    assert_eq!((f(&band["offset"]), f(&band["scale"])), (220.0, 0.003692626953125));
    // GDAL puts the south row last: south-west raw −32497 (100.0007 m), north-east 32497.
    let raw = gdal.location(&ter, false, &[(0.0, 2.0), (4.0, 0.0)]);
    assert_eq!(raw, vec![-32497.0, 32497.0]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn convert_reads_a_ter_written_by_gdal() {
    let Some(_gdal) = Gdal::find() else { return };
    let dir = tmp("gdal-ter");
    let g = Grid { cols: 65, rows: 33, x0: -128.0, z0: -64.0, spacing: 4.0 };
    let h: Vec<f32> = (0..g.len()).map(|i| ((i % 65) as f32 * 0.37).sin() * 80.0 + (i / 65) as f32 * 3.0 - 20.0).collect();
    let (lo, hi) = trnbake_raster::finite_min_max(&h).unwrap();
    let tif = dir.join("in.tif");
    write_geotiff_f32(&tif, &g, &h, "gdal ter").unwrap();
    let ter = dir.join("gdal.ter");
    let o = Command::new("gdal_translate")
        .args(["-q", "-of", "Terragen", "-co", &format!("MINUSERPIXELVALUE={lo}"), "-co", &format!("MAXUSERPIXELVALUE={hi}")])
        .arg(&tif)
        .arg(&ter)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let head = std::fs::read(&ter).unwrap();
    assert!(!head.ends_with(b"EOF "), "GDAL writes no EOF (spec §2.4), so this exercises the lenient reader");
    let back = dir.join("back.r32");
    run_ok(trnbake().arg("convert").arg(&ter).arg(&back).arg("-q"));
    let side = read_json(&dir.join("back.r32.json"));
    let grid = &side["outputs"][0]["grid"];
    // SCAL carries the spacing; a .ter has no origin, so the grid comes back centred.
    assert_eq!((grid["cols"].as_u64(), grid["rows"].as_u64(), f(&grid["spacing"])), (Some(65), Some(33), 4.0));
    assert_eq!((f(&grid["west_x"]), f(&grid["south_z"])), (-128.0, -64.0));
    assert_eq!(side["outputs"][0]["row_order"], "north_first");
    let bytes = std::fs::read(&back).unwrap();
    let got: Vec<f32> = bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    // GDAL's step, from its header; it truncates instead of rounding: up to one step off.
    let hs = i16::from_le_bytes([head[head.len() - 2 * 65 * 33 - 4], head[head.len() - 2 * 65 * 33 - 3]]);
    let step = 4.0 * f64::from(hs) / 65536.0;
    let north_up: Vec<f32> = h.chunks(65).rev().flatten().copied().collect();
    let max_err = got.iter().zip(&north_up).map(|(a, b)| f64::from((a - b).abs())).fold(0.0, f64::max);
    assert!(max_err <= step * 1.001, "max error {max_err} vs GDAL step {step}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A 65 × 33 grid (off-centre origin) with known heights, as a Float32 GeoTIFF.
fn synthetic_tif(dir: &Path, name: &str, g: Grid) -> (PathBuf, Vec<f32>) {
    let h: Vec<f32> = (0..g.len())
        .map(|i| {
            let (c, r) = ((i as u32 % g.cols) as f32, (i as u32 / g.cols) as f32);
            (c * 0.21).sin() * 150.0 + (r * 0.13).cos() * 90.0 + c * 0.5 - r * 0.25 + 12.0
        })
        .collect();
    let p = dir.join(name);
    write_geotiff_f32(&p, &g, &h, "SWG synthetic local metres").unwrap();
    (p, h)
}

fn read_r32(p: &Path) -> Vec<f32> {
    std::fs::read(p).unwrap().chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

#[test]
fn convert_round_trips_every_format_in_metres() {
    let dir = tmp("roundtrip");
    let g = Grid { cols: 65, rows: 33, x0: 1000.0, z0: -2000.0, spacing: 4.0 };
    let (src, h) = synthetic_tif(&dir, "src.tif", g);
    let north_up: Vec<f32> = h.chunks(g.cols as usize).rev().flatten().copied().collect();
    for (ext, format) in [("tif", None), ("tif", Some("tif16")), ("ter", None), ("png", None), ("raw", None), ("r16", None), ("r32", None)] {
        let name = format!("out-{}.{ext}", format.unwrap_or(ext));
        let out = dir.join(&name);
        let mut c = trnbake();
        c.arg("convert").arg(&src).arg(&out).arg("-q");
        if let Some(fm) = format {
            c.args(["--format", fm]);
        }
        run_ok(&mut c);
        let side = read_json(&dir.join(format!("{name}.json")));
        let e = &side["outputs"][0];
        let step = e["height_scale"].as_f64().unwrap_or(0.0);
        // Back to R32 metres (RAW inputs find their size/range/order in the sidecar).
        let back = dir.join(format!("{name}.back.r32"));
        run_ok(trnbake().arg("convert").arg(&out).arg(&back).arg("-q"));
        let bg = read_json(&dir.join(format!("{name}.back.r32.json")))["outputs"][0]["grid"].clone();
        let (bx, bz) = (f(&bg["west_x"]), f(&bg["south_z"]));
        if ext == "ter" {
            // No origin in a .ter: the grid comes back centred on (0, 0).
            assert_eq!((bx, bz), (-128.0, -64.0), "{name}");
        } else {
            assert_eq!((bx, bz, f(&bg["spacing"])), (g.x0, g.z0, g.spacing), "{name}");
        }
        let got = read_r32(&back);
        assert_eq!(got.len(), h.len(), "{name}");
        let max_err = got.iter().zip(&north_up).map(|(a, b)| f64::from((a - b).abs())).fold(0.0, f64::max);
        assert!(max_err <= step / 2.0 + 1e-4, "{name}: max error {max_err} vs step {step}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn convert_refuses_damaged_inputs_with_an_error() {
    let dir = tmp("damaged");
    let g = Grid { cols: 65, rows: 33, x0: 0.0, z0: 0.0, spacing: 4.0 };
    let (src, _) = synthetic_tif(&dir, "src.tif", g);
    for ext in ["ter", "png"] {
        run_ok(trnbake().arg("convert").arg(&src).arg(dir.join(format!("good.{ext}"))).arg("-q"));
    }
    let fail = |input: &Path, extra: &[&str], why: &str| {
        let o = trnbake().arg("convert").arg(input).arg(dir.join("out.r32")).args(extra).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{why}: {err}");
        assert!(!err.contains("panicked"), "{why}: {err}");
        let name = input.file_name().unwrap().to_string_lossy();
        assert!(err.contains(name.as_ref()), "{why}: the error does not name the file: {err}");
        err.to_string()
    };
    for (ext, good) in [("tif", src.clone()), ("ter", dir.join("good.ter")), ("png", dir.join("good.png"))] {
        let bytes = std::fs::read(&good).unwrap();
        // Truncations: empty, inside the header, half way, and near the end (inside the last
        // data of the PNG and .ter, inside the directory the TIFF writer puts last).
        let cuts = [0, 7, 20, bytes.len() / 2, bytes.len() - 20];
        for cut in cuts {
            let p = dir.join(format!("cut{cut}.{ext}"));
            std::fs::write(&p, &bytes[..cut]).unwrap();
            fail(&p, &[], &format!("{ext} cut at {cut}"));
        }
        // Damage in the middle of the data: zlib's checksum (TIFF, PNG) catches it.
        if ext != "ter" {
            let mut bad = bytes.clone();
            let mid = bytes.len() / 2;
            for b in &mut bad[mid..mid + 16] {
                *b ^= 0x5A;
            }
            let p = dir.join(format!("flipped.{ext}"));
            std::fs::write(&p, &bad).unwrap();
            fail(&p, &[], &format!("{ext} with flipped bytes"));
        }
    }
    // RAW: no size, wrong size, no height range.
    let raw = dir.join("x.raw");
    std::fs::write(&raw, vec![0u8; 100]).unwrap();
    assert!(fail(&raw, &[], "raw without dims").contains("--dims"));
    assert!(fail(&raw, &["--dims", "10x10", "--height-range", "0,1", "--spacing", "1"], "raw of the wrong size").contains("200"));
    assert!(fail(&raw, &["--dims", "10x5", "--spacing", "1"], "raw without range").contains("--height-range"));
    let junk = dir.join("junk.tif");
    std::fs::write(&junk, b"not a tiff at all").unwrap();
    fail(&junk, &[], "junk with a .tif name");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn presets_use_engine_sizes_row_orders_and_settings() {
    let dir = tmp("presets");
    let g = Grid { cols: 1025, rows: 1025, x0: -8192.0, z0: -8192.0, spacing: 16.0 };
    let (src, h) = synthetic_tif(&dir, "planet.tif", g);
    let n = 1025usize;
    let (sw, se, nw, ne) = (h[0], h[n - 1], h[n * (n - 1)], h[n * n - 1]);

    // Unreal: 1025 is no landscape size; the largest below is 1021 (255 quads × 4 components).
    run_ok(trnbake().arg("convert").arg(&src).arg(dir.join("unreal.png")).args(["--preset", "unreal", "-q"]));
    let side = read_json(&dir.join("unreal.png.json"));
    let e = &side["export"]["engine"];
    assert_eq!(e["heightmap_size"], serde_json::json!([1021, 1021]));
    assert_eq!(e["landscape"]["quads_per_section"], 255);
    let mut dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(dir.join("unreal.png")).unwrap())).read_info().unwrap();
    let mut buf = vec![0; dec.output_buffer_size().unwrap()];
    dec.next_frame(&mut buf).unwrap();
    let raw = |i: usize| f64::from(u16::from_be_bytes([buf[2 * i], buf[2 * i + 1]]));
    // Unreal's import settings turn stored values back into metres (§4.2); the resampling keeps
    // the corner posts, and image row 0 is the north edge.
    let (scale_z, loc) = (f(&e["scale_cm"][2]), f(&e["location_z_cm"]));
    let metres = |v: f64| (loc + (v - 32768.0) / 128.0 * scale_z) / 100.0;
    let step = f(&e["height_step_m"]);
    for (i, want) in [(0, nw), (1020, ne), (1021 * 1020, sw), (1021 * 1021 - 1, se)] {
        assert!((metres(raw(i)) - f64::from(want)).abs() <= step / 2.0 + 1e-6, "unreal post {i}");
    }
    assert!((f(&e["scale_cm"][0]) - 16384.0 / 1020.0 * 100.0).abs() < 1e-9);

    // Unity, 2 × 2 tiles: 513-post tiles sharing edges, south row first, x0_y0 = south-west.
    run_ok(trnbake().arg("convert").arg(&src).arg(dir.join("unity.raw")).args(["--preset", "unity", "--tiles", "2", "-q"]));
    let side = read_json(&dir.join("unity.raw.json"));
    assert_eq!(side["export"]["engine"]["heightmap_resolution"], 513);
    assert_eq!(side["export"]["tiles"]["y_origin"], "south");
    let tile = |x: u32, y: u32| -> Vec<u16> {
        let b = std::fs::read(dir.join(format!("unity_x{x}_y{y}.raw"))).unwrap();
        assert_eq!(b.len(), 513 * 513 * 2);
        b.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect()
    };
    let (t00, t10, t01) = (tile(0, 0), tile(1, 0), tile(0, 1));
    let e = &side["outputs"][0];
    let (sc, of) = (f(&e["height_scale"]), f(&e["height_offset"]));
    assert!((f64::from(t00[0]) * sc + of - f64::from(sw)).abs() <= sc / 2.0 + 1e-6, "first sample of x0_y0 is the south-west post");
    for r in 0..513 {
        assert_eq!(t00[r * 513 + 512], t10[r * 513], "shared east/west edge, row {r}");
    }
    for c in 0..513 {
        assert_eq!(t00[512 * 513 + c], t01[c], "shared north/south edge, column {c}");
    }

    // Godot with an explicit size: 513 posts, north row first.
    run_ok(trnbake().arg("convert").arg(&src).arg(dir.join("godot.r16")).args(["--preset", "godot", "--size", "513", "-q"]));
    let b = std::fs::read(dir.join("godot.r16")).unwrap();
    assert_eq!(b.len(), 513 * 513 * 2);
    let e = &read_json(&dir.join("godot.r16.json"))["outputs"][0];
    let first = f64::from(u16::from_le_bytes([b[0], b[1]])) * f(&e["height_scale"]) + f(&e["height_offset"]);
    assert!((first - f64::from(nw)).abs() <= f(&e["height_scale"]) / 2.0 + 1e-6);

    // Sizes the engine does not accept, and non-square grids, are refused up front.
    let o = trnbake().arg("convert").arg(&src).arg(dir.join("bad.png")).args(["--preset", "unreal", "--size", "1025"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("1021"), "{}", String::from_utf8_lossy(&o.stderr));
    let (rect, _) = synthetic_tif(&dir, "rect.tif", Grid { cols: 65, rows: 33, x0: 0.0, z0: 0.0, spacing: 1.0 });
    let o = trnbake().arg("convert").arg(&rect).arg(dir.join("rect.raw")).args(["--preset", "unity"]).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("square"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The 198-byte TIFF of issue #26: 32769² Float32 samples declared, one 64-byte uncompressed
/// strip. Built here field by field (little-endian, ten IFD entries).
fn tiny_tiff_declaring_a_huge_image() -> Vec<u8> {
    let (side, strip_len) = (32769u32, 64u32);
    let entries: [(u16, u16, u32); 10] = [
        (256, 4, side),      // ImageWidth, LONG
        (257, 4, side),      // ImageLength
        (258, 3, 32),        // BitsPerSample, SHORT
        (259, 3, 1),         // Compression: none
        (262, 3, 1),         // PhotometricInterpretation: BlackIsZero
        (273, 4, 134),       // StripOffsets: right after the IFD
        (277, 3, 1),         // SamplesPerPixel
        (278, 4, side),      // RowsPerStrip: one strip
        (279, 4, strip_len), // StripByteCounts
        (339, 3, 3),         // SampleFormat: IEEE float
    ];
    let mut v = b"II*\0".to_vec();
    v.extend_from_slice(&8u32.to_le_bytes());
    v.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    for (tag, ty, value) in entries {
        v.extend_from_slice(&tag.to_le_bytes());
        v.extend_from_slice(&ty.to_le_bytes());
        v.extend_from_slice(&1u32.to_le_bytes());
        if ty == 3 {
            v.extend_from_slice(&(value as u16).to_le_bytes());
            v.extend_from_slice(&[0, 0]);
        } else {
            v.extend_from_slice(&value.to_le_bytes());
        }
    }
    v.extend_from_slice(&0u32.to_le_bytes()); // no next IFD
    assert_eq!(v.len(), 134);
    v.extend(std::iter::repeat_n(0u8, strip_len as usize));
    v
}

/// Issue #26 case 4: the declared image is checked against the file before anything is
/// allocated, so `convert` refuses the file cleanly under a 4 GB address-space limit (it
/// used to allocate 4.3 GB and abort with exit 134).
#[test]
fn a_tiny_tiff_declaring_a_huge_image_is_refused_before_allocating() {
    let dir = tmp("tiny-huge-tiff");
    let tif = dir.join("huge.tif");
    let bytes = tiny_tiff_declaring_a_huge_image();
    assert_eq!(bytes.len(), 198);
    std::fs::write(&tif, &bytes).unwrap();
    let script = format!("ulimit -v 4000000; exec '{}' convert '{}' '{}' -q", env!("CARGO_BIN_EXE_trnbake"), tif.display(), dir.join("out.r32").display());
    let o = Command::new("sh").arg("-c").arg(&script).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("huge.tif") && err.contains("cannot hold them uncompressed"), "{err}");
    assert!(!dir.join("out.r32").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn convert_keeps_the_crs_and_states_the_real_range_through_every_format() {
    // Issue 25 item 2: `convert` prints and records the real height range whatever the input
    // and output format (it printed NaN and wrote null for Float32 outputs), and the planet's
    // CRS name survives a round trip through every format: GeoTIFF and VRT state it, the
    // sidecar keeps it for .ter, PNG and RAW, from where the way back reads it.
    let dir = tmp("crs");
    let crs = "SWG naboo local metres";
    let g = Grid { cols: 65, rows: 33, x0: 1000.0, z0: -2000.0, spacing: 4.0 };
    let h: Vec<f32> = (0..g.len()).map(|i| ((i % 65) as f32 * 0.3).sin() * 120.0 - (i / 65) as f32 * 1.5 + 7.25).collect();
    let src = dir.join("src.tif");
    write_geotiff_f32(&src, &g, &h, crs).unwrap();
    let (lo, hi) = trnbake_raster::finite_min_max(&h).unwrap();
    let gdal = Gdal::find();
    for (out, format) in
        [("o.tif", None), ("o16.tif", Some("tif16")), ("o.ter", None), ("o.png", None), ("o.raw", None), ("o.r16", None), ("o.r32", None), ("o.vrt", None)]
    {
        let mut c = trnbake();
        c.arg("convert").arg(&src).arg(dir.join(out));
        if let Some(fm) = format {
            c.args(["--format", fm]);
        }
        let stderr = String::from_utf8_lossy(&run_ok(&mut c).stderr).into_owned();
        assert!(stderr.contains(&format!("heights {lo:.3} .. {hi:.3} m")), "{out}: {stderr}");
        let side = read_json(&dir.join(format!("{out}.json")));
        assert_eq!((f(&side["export"]["height_min"]), f(&side["export"]["height_max"])), (f64::from(lo), f64::from(hi)), "{out}");
        for o in side["outputs"].as_array().unwrap() {
            assert_eq!(o["crs"], crs, "{out}: {o}");
        }
        // Back to a GeoTIFF (from the first tile of the mosaic for .vrt): the CRS returns, and
        // the range is the decoded input's, finite and within a quantisation step.
        let input = if out == "o.vrt" { dir.join("o_x0_y0.tif") } else { dir.join(out) };
        let back = dir.join(format!("{out}.back.tif"));
        let stderr = String::from_utf8_lossy(&run_ok(trnbake().arg("convert").arg(&input).arg(&back)).stderr).into_owned();
        assert!(!stderr.contains("NaN"), "{out}: {stderr}");
        let bs = read_json(&dir.join(format!("{out}.back.tif.json")));
        let step = side["outputs"][0]["height_scale"].as_f64().unwrap_or(0.0);
        for (got, want) in [(f(&bs["export"]["height_min"]), lo), (f(&bs["export"]["height_max"]), hi)] {
            assert!((got - f64::from(want)).abs() <= step / 2.0 + 1e-4, "{out}: range {got} vs {want} (step {step})");
        }
        let back_crs = trnbake_raster::readers::open(&back, &Default::default()).unwrap().citation;
        assert_eq!(back_crs.as_deref(), Some(crs), "{out}");
        if let Some(gd) = &gdal {
            let wkt = gd.info(&back)["coordinateSystem"]["wkt"].as_str().unwrap_or_default().to_string();
            assert!(wkt.contains(crs), "{out}: GDAL reads {wkt}");
        }
    }
    let vrt = std::fs::read_to_string(dir.join("o.vrt")).unwrap();
    assert!(vrt.contains(&format!("LOCAL_CS[&quot;{crs}&quot;")), "{vrt}");
    std::fs::remove_dir_all(&dir).unwrap();
}
