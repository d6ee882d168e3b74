//! Height exports (GeoTIFF f32/u16, PNG16): decode with the `tiff`/`png` crates and, when GDAL's
//! command-line tools are installed (always when `CI=true`), check them with `gdalinfo` and
//! `gdallocationinfo` (spec exports.md §3, §4.1, §7 item 5–6).

mod common;

use std::path::Path;
use std::time::Instant;

use common::{stats_min_max, tmp, Gdal};

use trnbake_raster::writers::geotiff::{write_geotiff_f32_with, BigTiff, GeoTiffOptions};
use trnbake_raster::{finite_min_max, sha256_file, u16_scale_offset, write_geotiff_f32, write_geotiff_u16, write_png16, Grid, WrittenFile};

const CITATION: &str = "SWG testplanet local metres";

/// 257×129 posts, 4 m apart, x from −512 to 512, z from −256 to 256.
fn grid() -> Grid {
    Grid { cols: 257, rows: 129, x0: -512.0, z0: -256.0, spacing: 4.0 }
}

/// Known analytic heights, negative and positive (about −380 … +420 m), row 0 = south.
fn height_at(x: f64, z: f64) -> f32 {
    (300.0 * (x / 97.0).sin() * (z / 61.0).cos() + 0.05 * x + 0.2 * z - 40.0 + 25.0 * ((x + z) / 23.0).sin()) as f32
}

fn heights(g: &Grid) -> Vec<f32> {
    let mut v = Vec::with_capacity(g.len());
    for r in 0..g.rows {
        for c in 0..g.cols {
            v.push(height_at(g.x0 + f64::from(c) * g.spacing, g.z0 + f64::from(r) * g.spacing));
        }
    }
    v
}

/// The heights flipped to north-up (file order).
fn north_up(g: &Grid, h: &[f32]) -> Vec<f32> {
    let cols = g.cols as usize;
    h.chunks(cols).rev().flatten().copied().collect()
}

fn check_written(wf: &WrittenFile, path: &Path, format: &str) {
    let (bytes, sha) = sha256_file(path).unwrap();
    assert_eq!(wf.bytes, bytes);
    assert_eq!(wf.sha256, sha);
    assert_eq!(wf.sha256.len(), 64);
    assert_eq!(wf.path, path.file_name().unwrap().to_str().unwrap());
    assert_eq!(wf.format, format);
}

fn open_tiff(path: &Path) -> tiff::decoder::Decoder<std::io::BufReader<std::fs::File>> {
    tiff::decoder::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap())).unwrap()
}

/// Tags common to both GeoTIFF flavours.
fn check_geotiff_tags(path: &Path, g: &Grid, predictor: u32) {
    use tiff::tags::Tag;
    let mut d = open_tiff(path);
    assert_eq!(d.dimensions().unwrap(), (g.cols, g.rows));
    assert_eq!(d.get_tag_u32(Tag::Compression).unwrap(), 8);
    assert_eq!(d.get_tag_u32(Tag::Predictor).unwrap(), predictor);
    assert_eq!(d.get_tag_f64_vec(Tag::ModelPixelScaleTag).unwrap(), vec![g.spacing, g.spacing, 0.0]);
    assert_eq!(d.get_tag_f64_vec(Tag::ModelTiepointTag).unwrap(), vec![0.0, 0.0, 0.0, g.x0, g.north_z(), 0.0]);
    let keys = d.get_tag_u16_vec(Tag::GeoKeyDirectoryTag).unwrap();
    let cit = format!("{CITATION}|");
    assert_eq!(keys, vec![1, 1, 0, 5, 1024, 0, 1, 32767, 1025, 0, 1, 2, 1026, 34737, cit.len() as u16, 0, 3076, 0, 1, 9001, 4099, 0, 1, 9001]);
    assert_eq!(d.get_tag_ascii_string(Tag::GeoAsciiParamsTag).unwrap(), cit);
}

#[test]
fn f32_geotiff_decodes_exactly() {
    let dir = tmp("f32");
    let (g, h) = (grid(), heights(&grid()));
    let path = dir.join("h.tif");
    let wf = write_geotiff_f32(&path, &g, &h, CITATION).unwrap();
    check_written(&wf, &path, "geotiff-f32");
    assert_eq!((wf.height_scale, wf.height_offset), (None, None));
    check_geotiff_tags(&path, &g, 3);
    let mut d = open_tiff(&path);
    assert_eq!(d.get_tag_u32(tiff::tags::Tag::SampleFormat).unwrap(), 3);
    assert!(d.find_tag(tiff::tags::Tag::GdalNodata).unwrap().is_none());
    match d.read_image().unwrap() {
        tiff::decoder::DecodingResult::F32(v) => {
            assert!(v == north_up(&g, &h), "f32 samples differ")
        }
        other => panic!("unexpected sample type {:?}", std::mem::discriminant(&other)),
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn u16_geotiff_decodes_within_half_step() {
    let dir = tmp("u16");
    let (g, h) = (grid(), heights(&grid()));
    let (lo, hi) = finite_min_max(&h).unwrap();
    let (scale, offset) = u16_scale_offset(lo, hi);
    let path = dir.join("h16.tif");
    let wf = write_geotiff_u16(&path, &g, &h, CITATION, scale, offset).unwrap();
    check_written(&wf, &path, "geotiff-u16");
    assert_eq!((wf.height_scale, wf.height_offset), (Some(scale), Some(offset)));
    check_geotiff_tags(&path, &g, 2);
    let mut d = open_tiff(&path);
    assert_eq!(d.get_tag_ascii_string(tiff::tags::Tag::GdalNodata).unwrap(), "65535");
    let md = d.get_tag_ascii_string(tiff::tags::Tag::Unknown(42112)).unwrap();
    assert!(md.contains(r#"role="scale">"#) && md.contains(r#"role="offset">"#) && md.contains(">m</Item>"), "{md}");
    let raw = match d.read_image().unwrap() {
        tiff::decoder::DecodingResult::U16(v) => v,
        other => panic!("unexpected sample type {:?}", std::mem::discriminant(&other)),
    };
    let want = north_up(&g, &h);
    assert_eq!(*raw.iter().max().unwrap(), 65534);
    assert_eq!(*raw.iter().min().unwrap(), 0);
    for (r, w) in raw.iter().zip(&want) {
        let back = f64::from(*r) * scale + offset;
        assert!((back - f64::from(*w)).abs() <= scale / 2.0 + 1e-9, "{back} vs {w}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn nan_becomes_nodata() {
    let dir = tmp("nan");
    let g = Grid { cols: 5, rows: 3, x0: 0.0, z0: 0.0, spacing: 1.0 };
    let mut h: Vec<f32> = (0..15).map(|i| i as f32).collect();
    h[7] = f32::NAN;
    let p16 = dir.join("n16.tif");
    write_geotiff_u16(&p16, &g, &h, CITATION, 1.0, 0.0).unwrap();
    let p32 = dir.join("n32.tif");
    write_geotiff_f32(&p32, &g, &h, CITATION).unwrap();
    let mut d = open_tiff(&p16);
    let tiff::decoder::DecodingResult::U16(v) = d.read_image().unwrap() else { panic!() };
    // input row 1 (middle) col 2 → file row 1 col 2
    assert_eq!(v[5 + 2], 65535);
    assert_eq!(v[0], 10);
    let mut d = open_tiff(&p32);
    assert_eq!(d.get_tag_ascii_string(tiff::tags::Tag::GdalNodata).unwrap(), "nan");
    let tiff::decoder::DecodingResult::F32(v) = d.read_image().unwrap() else { panic!() };
    assert!(v[7].is_nan());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bigtiff_when_forced_decodes() {
    let dir = tmp("big");
    let (g, h) = (grid(), heights(&grid()));
    let path = dir.join("big.tif");
    let opts = GeoTiffOptions { bigtiff: BigTiff::Always, strip_bytes: 8192, ..Default::default() };
    write_geotiff_f32_with(&path, &g, &h, CITATION, &opts).unwrap();
    let head = std::fs::read(&path).unwrap();
    assert_eq!(&head[..4], b"II\x2b\x00");
    check_geotiff_tags(&path, &g, 3);
    let tiff::decoder::DecodingResult::F32(v) = open_tiff(&path).read_image().unwrap() else { panic!() };
    assert!(v == north_up(&g, &h));
    if let Some(gdal) = Gdal::find() {
        let info = gdal.info(&path);
        assert_eq!(info["size"], serde_json::json!([g.cols, g.rows]));
        let band = &info["bands"][0];
        let (lo, hi) = finite_min_max(&h).unwrap();
        let (min, max) = stats_min_max(band);
        assert_eq!((min as f32, max as f32), (lo, hi));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn png16_decodes_within_half_step() {
    let dir = tmp("png");
    let (g, h) = (grid(), heights(&grid()));
    let (lo, hi) = finite_min_max(&h).unwrap();
    let scale = f64::from(hi - lo) / 65535.0;
    let offset = f64::from(lo);
    let path = dir.join("h.png");
    let wf = write_png16(&path, &g, &h, scale, offset).unwrap();
    check_written(&wf, &path, "png16");
    let bytes = std::fs::read(&path).unwrap();
    let mut reader = png::Decoder::new(std::io::Cursor::new(&bytes)).read_info().unwrap();
    let info = reader.info();
    assert_eq!((info.width, info.height), (g.cols, g.rows));
    assert_eq!(info.bit_depth, png::BitDepth::Sixteen);
    assert_eq!(info.color_type, png::ColorType::Grayscale);
    let text = |k: &str| info.uncompressed_latin1_text.iter().find(|t| t.keyword == k).map(|t| t.text.clone()).unwrap_or_default();
    assert_eq!(text("trnbake:height_scale").parse::<f64>().unwrap(), scale);
    assert_eq!(text("trnbake:height_offset").parse::<f64>().unwrap(), offset);
    assert_eq!(text("trnbake:height_min").parse::<f64>().unwrap(), f64::from(lo));
    assert_eq!(text("trnbake:height_max").parse::<f64>().unwrap(), f64::from(hi));
    assert_eq!(text("trnbake:spacing").parse::<f64>().unwrap(), g.spacing);
    assert_eq!(text("trnbake:west_x").parse::<f64>().unwrap(), g.x0);
    assert_eq!(text("trnbake:north_z").parse::<f64>().unwrap(), g.north_z());
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    reader.next_frame(&mut buf).unwrap();
    let raw: Vec<u16> = buf.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect();
    assert_eq!(*raw.iter().max().unwrap(), 65535);
    assert_eq!(*raw.iter().min().unwrap(), 0);
    for (r, w) in raw.iter().zip(north_up(&g, &h)) {
        let back = f64::from(*r) * scale + offset;
        assert!((back - f64::from(w)).abs() <= scale / 2.0 + 1e-9);
    }
    if let Some(gdal) = Gdal::find() {
        let info = gdal.info(&path);
        assert_eq!(info["size"], serde_json::json!([g.cols, g.rows]));
        let band = &info["bands"][0];
        assert_eq!(band["type"], "UInt16");
        assert_eq!(band["minimum"].as_f64().unwrap(), 0.0);
        assert_eq!(band["maximum"].as_f64().unwrap(), 65535.0);
        // Pixel coordinates (no georeferencing in a PNG): (col, row from the north).
        let pts: Vec<(f64, f64)> = vec![(0.0, 0.0), (256.0, 128.0), (100.0, 30.0), (3.0, 127.0)];
        let vals = gdal.location(&path, false, &pts);
        for ((c, r), v) in pts.iter().zip(vals) {
            assert_eq!(v, f64::from(raw[*r as usize * g.cols as usize + *c as usize]));
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn failed_writes_leave_nothing() {
    let dir = tmp("fail");
    let (g, h) = (grid(), heights(&grid()));
    // 1. A path in a directory that does not exist.
    let missing = dir.join("no-such-dir").join("h.tif");
    assert!(write_geotiff_f32(&missing, &g, &h, CITATION).is_err());
    assert!(write_geotiff_u16(&missing, &g, &h, CITATION, 1.0, 0.0).is_err());
    assert!(write_png16(&missing.with_extension("png"), &g, &h, 1.0, 0.0).is_err());
    assert!(!dir.join("no-such-dir").exists());
    // 2. The final rename fails (the target is a directory): the temp file must be removed.
    for name in ["isdir.tif", "isdir16.tif", "isdir.png"] {
        std::fs::create_dir(dir.join(name)).unwrap();
    }
    assert!(write_geotiff_f32(&dir.join("isdir.tif"), &g, &h, CITATION).is_err());
    assert!(write_geotiff_u16(&dir.join("isdir16.tif"), &g, &h, CITATION, 1.0, 0.0).is_err());
    assert!(write_png16(&dir.join("isdir.png"), &g, &h, 1.0, 0.0).is_err());
    // 3. Bad input is refused before anything is created.
    assert!(write_geotiff_f32(&dir.join("short.tif"), &g, &h[1..], CITATION).is_err());
    assert!(write_geotiff_u16(&dir.join("badscale.tif"), &g, &h, CITATION, 0.0, 0.0).is_err());
    assert!(write_png16(&dir.join("nan.png"), &g, &h, f64::NAN, 0.0).is_err());
    let mut left: Vec<String> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    left.sort();
    assert_eq!(left, vec!["isdir.png", "isdir.tif", "isdir16.tif"], "unexpected files left behind");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// World points at posts (and a little off them, still nearest the same post) with the
/// expected post (col, row-from-south).
fn probe_points(g: &Grid) -> Vec<((f64, f64), (u32, u32))> {
    let s = g.spacing;
    let posts = [(0, 0), (g.cols - 1, g.rows - 1), (0, g.rows - 1), (g.cols - 1, 0), (128, 64), (37, 101), (200, 5)];
    let mut v = Vec::new();
    for &(c, r) in &posts {
        let x = g.x0 + f64::from(c) * s;
        let z = g.z0 + f64::from(r) * s;
        v.push(((x, z), (c, r)));
        // Within the post's cell (PixelIsPoint: the cell is centred on the post).
        let dx = if c + 1 < g.cols { 0.3 * s } else { -0.3 * s };
        let dz = if r > 0 { -0.4 * s } else { 0.4 * s };
        v.push(((x + dx, z + dz), (c, r)));
    }
    v
}

/// gdalinfo prints doubles with 15 significant digits.
fn assert_close15(got: f64, want: f64, what: &str) {
    assert!((got - want).abs() <= 1e-13 * want.abs().max(1e-300), "{what}: gdal {got} vs {want}");
}

fn check_georef(info: &serde_json::Value, g: &Grid) {
    let s = g.spacing;
    assert_eq!(info["size"], serde_json::json!([g.cols, g.rows]));
    let gt: Vec<f64> = info["geoTransform"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert_eq!(gt, vec![g.x0 - s / 2.0, s, 0.0, g.north_z() + s / 2.0, 0.0, -s]);
    assert_eq!(info["metadata"][""]["AREA_OR_POINT"], "Point");
    let wkt = info["coordinateSystem"]["wkt"].as_str().unwrap_or_default();
    assert!(wkt.contains(CITATION), "CRS lacks the citation: {wkt}");
}

#[test]
fn gdal_reads_f32_geotiff() {
    let Some(gdal) = Gdal::find() else { return };
    let dir = tmp("gdal-f32");
    let (g, h) = (grid(), heights(&grid()));
    let path = dir.join("h.tif");
    write_geotiff_f32(&path, &g, &h, CITATION).unwrap();
    let info = gdal.info(&path);
    check_georef(&info, &g);
    let band = &info["bands"][0];
    assert_eq!(band["type"], "Float32");
    let (lo, hi) = finite_min_max(&h).unwrap();
    let (min, max) = stats_min_max(band);
    assert_eq!((min as f32, max as f32), (lo, hi), "f32 min/max must match exactly");
    assert!(band.get("noDataValue").is_none());
    assert_eq!(band["unit"], "m");
    let probes = probe_points(&g);
    let pts: Vec<(f64, f64)> = probes.iter().map(|p| p.0).collect();
    let vals = gdal.location(&path, true, &pts);
    for ((pt, (c, r)), v) in probes.iter().zip(vals) {
        let want = h[(*r * g.cols + *c) as usize];
        assert_eq!(v as f32, want, "at world {pt:?} (post {c},{r})");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn gdal_reads_u16_geotiff() {
    let Some(gdal) = Gdal::find() else { return };
    let dir = tmp("gdal-u16");
    let (g, h) = (grid(), heights(&grid()));
    let (lo, hi) = finite_min_max(&h).unwrap();
    let (scale, offset) = u16_scale_offset(lo, hi);
    let path = dir.join("h16.tif");
    write_geotiff_u16(&path, &g, &h, CITATION, scale, offset).unwrap();
    let info = gdal.info(&path);
    check_georef(&info, &g);
    let band = &info["bands"][0];
    assert_eq!(band["type"], "UInt16");
    assert_eq!(band["noDataValue"].as_f64().unwrap(), 65535.0);
    assert_close15(band["scale"].as_f64().unwrap(), scale, "scale");
    assert_close15(band["offset"].as_f64().unwrap(), offset, "offset");
    assert_eq!(band["unit"], "m");
    // gdalinfo's statistics are over raw values; unscale them.
    let (raw_min, raw_max) = stats_min_max(band);
    assert_eq!((raw_min, raw_max), (0.0, 65534.0));
    let min = raw_min * scale + offset;
    let max = raw_max * scale + offset;
    assert!((min - f64::from(lo)).abs() <= scale, "min {min} vs {lo}");
    assert!((max - f64::from(hi)).abs() <= scale, "max {max} vs {hi}");
    // gdallocationinfo prints raw values too (it does not apply scale/offset).
    let probes = probe_points(&g);
    let pts: Vec<(f64, f64)> = probes.iter().map(|p| p.0).collect();
    let vals = gdal.location(&path, true, &pts);
    for ((pt, (c, r)), v) in probes.iter().zip(vals) {
        let want = f64::from(h[(*r * g.cols + *c) as usize]);
        let got = v * scale + offset;
        assert!((got - want).abs() <= scale / 2.0 + 1e-9, "at world {pt:?}: {got} vs {want}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---------------------------------------------------------------------------------------------
// Sizes and throughput (printed, not asserted): run with
// `cargo test --release --test export_gdal report_1025 -- --nocapture --test-threads=1`.

#[test]
fn report_1025_sizes_and_throughput() {
    let dir = tmp("report");
    let g = Grid { cols: 1025, rows: 1025, x0: -8192.0, z0: -8192.0, spacing: 16.0 };
    let h: Vec<f32> = (0..g.len())
        .map(|i| {
            let (c, r) = ((i % 1025) as f64, (i / 1025) as f64);
            let (x, z) = (g.x0 + c * g.spacing, g.z0 + r * g.spacing);
            (400.0 * (x / 2900.0).sin() * (z / 2300.0).cos() + 120.0 * ((x - z) / 1100.0).sin() + 0.01 * x) as f32
        })
        .collect();
    let (lo, hi) = finite_min_max(&h).unwrap();
    let (s16, o16) = u16_scale_offset(lo, hi);
    let mb = |n: usize| n as f64 / 1e6;
    let raw32 = g.len() * 4;
    let raw16 = g.len() * 2;
    let mut report = Vec::new();
    let mut run = |name: &str, raw: usize, f: &mut dyn FnMut(&Path) -> WrittenFile| {
        let path = dir.join(name);
        f(&path); // warm-up (page cache, thread pool)
        let reps = 10;
        let (t, c) = (Instant::now(), cpu_seconds());
        let mut wf = None;
        for _ in 0..reps {
            wf = Some(f(&path));
        }
        let secs = t.elapsed().as_secs_f64() / f64::from(reps);
        let cpu = c.zip(cpu_seconds()).map(|(a, b)| (b - a) / f64::from(reps));
        let wf = wf.unwrap();
        report.push(format!(
            "{name:>8}: {:>8} bytes, ratio {:.2}:1 (raw {:.2} MB), wall {:.1} ms/write = {:.0} MB/s{}",
            wf.bytes,
            raw as f64 / wf.bytes as f64,
            mb(raw),
            secs * 1e3,
            mb(raw) / secs,
            cpu.map_or(String::new(), |c| format!(", cpu {:.1} ms = {:.0} MB/s per core", c * 1e3, mb(raw) / c)),
        ));
    };
    run("f32.tif", raw32, &mut |p| write_geotiff_f32(p, &g, &h, CITATION).unwrap());
    run("u16.tif", raw16, &mut |p| write_geotiff_u16(p, &g, &h, CITATION, s16, o16).unwrap());
    run("h.png", raw16, &mut |p| write_png16(p, &g, &h, f64::from(hi - lo) / 65535.0, f64::from(lo)).unwrap());
    eprintln!("1025x1025 smooth grid, {} rayon threads (MB/s of raw samples; atomic write, fsync and SHA-256 included):", rayon::current_num_threads());
    for l in &report {
        eprintln!("  {l}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// User + system CPU time of this process (Linux `/proc/self/stat`, 100 Hz ticks).
fn cpu_seconds() -> Option<f64> {
    let st = std::fs::read_to_string("/proc/self/stat").ok()?;
    let f: Vec<&str> = st.get(st.rfind(')')? + 2..)?.split(' ').collect();
    Some((f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?) / 100.0)
}
