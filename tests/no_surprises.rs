//! Issue 37 "No silent surprises": `convert` and `scs export` trust nothing they read without
//! checking it, and keep what they are given.
//!
//! * item 3: a damaged Deflate, Zstandard or LZW tile or strip is an error naming the file and
//!   the tile, never wrong heights with exit 0;
//! * item 4: round trips through every pair of formats keep origin, spacing and CRS;
//! * item 10: trnbake's own `--compress zstd` GeoTIFF of flat ground reads back;
//! * item 11: a killed `convert`'s partial file is swept by the next `convert` into that folder;
//! * item 15: id GeoTIFFs have no unit, and their values can be named for GDAL and QGIS.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use trnbake_raster::writers::geotiff::{write_geotiff_f32_with, Compression, TiffLayout};
use trnbake_raster::{write_geotiff_f32, GeoTiffOptions, Grid};

fn trnbake() -> Command {
    Command::new(env!("CARGO_BIN_EXE_trnbake"))
}

fn run_ok(cmd: &mut Command) -> Output {
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{cmd:?} failed: {}", String::from_utf8_lossy(&o.stderr));
    o
}

fn out_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("no_surprises-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn read_json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
}

/// Heights that vary everywhere (so every tile holds real data).
fn hills(g: &Grid) -> Vec<f32> {
    (0..g.len())
        .map(|i| {
            let (c, r) = ((i as u32 % g.cols) as f32, (i as u32 / g.cols) as f32);
            (c * 0.021).sin() * 150.0 + (r * 0.013).cos() * 90.0 + c * 0.05 - r * 0.025 + 12.0
        })
        .collect()
}

/// The (offset, length) of every tile, or strip, of the first image of a TIFF.
fn blocks(path: &Path) -> Vec<(u64, u64)> {
    use tiff::tags::Tag;
    let mut d = tiff::decoder::Decoder::new(std::fs::File::open(path).unwrap()).unwrap();
    let tiled = d.find_tag(Tag::TileOffsets).unwrap().is_some();
    let (o, c) = if tiled { (Tag::TileOffsets, Tag::TileByteCounts) } else { (Tag::StripOffsets, Tag::StripByteCounts) };
    let offsets = d.get_tag_u64_vec(o).unwrap();
    let counts = d.get_tag_u64_vec(c).unwrap();
    offsets.into_iter().zip(counts).collect()
}

/// `convert IN OUT` must fail with exit 1, naming the file and `what` (the tile or strip).
fn refused(input: &Path, out: &Path, what: &str) -> String {
    let o = trnbake().arg("convert").arg(input).arg(out).arg("-q").output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "{} was read: {err}", input.display());
    assert!(!err.contains("panicked"), "{err}");
    let name = input.file_name().unwrap().to_string_lossy();
    assert!(err.contains(name.as_ref()) && err.contains(what) && err.contains("damaged"), "the error names neither the file nor {what}: {err}");
    assert!(!out.exists(), "{} written from a damaged input", out.display());
    err
}

/// Item 3: one flipped bit in a COG tile (Deflate, the default), or in its Adler-32 trailer,
/// is refused naming the file and the tile, as GDAL refuses it; likewise a damaged Zstandard
/// strip (its content checksum) and a cut LZW strip.
#[test]
fn damaged_compressed_tiles_are_refused_naming_the_tile() {
    let dir = out_dir("damaged-tiles");
    let g = Grid { cols: 1100, rows: 700, x0: -2000.0, z0: 1000.0, spacing: 2.0 };
    let h = hills(&g);
    let cog = GeoTiffOptions { layout: TiffLayout::Cog, ..Default::default() };
    let src = dir.join("cog.tif");
    write_geotiff_f32_with(&src, &g, &h, "SWG test local metres", &cog).unwrap();
    let good = std::fs::read(&src).unwrap();
    run_ok(trnbake().arg("convert").arg(&src).arg(dir.join("good.r32")).arg("-q"));
    let tiles = blocks(&src);
    assert_eq!(tiles.len(), 3 * 2, "1100x700 posts in 512² tiles");
    // Tile 4 is column 1, row 1 (its trailing 4 bytes: the COG's ghost trailer repeats them).
    let (offset, len) = tiles[4];
    let (offset, len) = (offset as usize, len as usize);
    // The Adler-32 trailer: the data decodes as before, only the checksum can tell.
    let mut bad = good.clone();
    bad[offset + len - 1] ^= 0x01;
    let p = dir.join("trailer.tif");
    std::fs::write(&p, &bad).unwrap();
    let err = refused(&p, &dir.join("trailer.r32"), "tile 4 (column 1, row 1 of 3x2 tiles)");
    assert!(err.contains("Adler-32"), "{err}");
    // Every bit of a byte in the middle of the tile's data.
    for bit in 0..8 {
        let mut bad = good.clone();
        bad[offset + len / 2] ^= 1 << bit;
        let p = dir.join(format!("bit{bit}.tif"));
        std::fs::write(&p, &bad).unwrap();
        refused(&p, &dir.join(format!("bit{bit}.r32")), "tile 4");
    }

    // Zstandard: trnbake writes each strip's content checksum, and it is checked.
    for (compression, name) in [(Compression::Zstd, "zstd.tif"), (Compression::Lzw, "lzw.tif")] {
        let opts = GeoTiffOptions { compression, ..Default::default() };
        let p = dir.join(name);
        write_geotiff_f32_with(&p, &g, &h, "SWG test local metres", &opts).unwrap();
        let good = std::fs::read(&p).unwrap();
        let strips = blocks(&p);
        let (offset, len) = (strips[1].0 as usize, strips[1].1 as usize);
        let mut bad = good.clone();
        if compression == Compression::Zstd {
            bad[offset + len - 1] ^= 0x10; // the XXH64 content checksum
        } else {
            // LZW has no checksum: a strip whose codes stop half way (zeros: clear codes).
            bad[offset + len / 2..offset + len].fill(0);
        }
        let damaged = dir.join(format!("bad-{name}"));
        std::fs::write(&damaged, &bad).unwrap();
        let err = refused(&damaged, &dir.join(format!("{name}.r32")), "strip 1 (rows");
        if compression == Compression::Zstd {
            assert!(err.contains("checksum"), "{err}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Item 10: trnbake's own Zstandard COG of flat ground (its 1 MB tiles compress to a few
/// dozen bytes, beyond the 4096:1 the reader assumed) is read by `convert` and `scs export`,
/// as GDAL reads it.
#[test]
fn a_zstd_geotiff_of_flat_ground_reads_back() {
    let dir = out_dir("flat-zstd");
    let g = Grid { cols: 4097, rows: 4097, x0: -4096.0, z0: -4096.0, spacing: 2.0 };
    let flat = dir.join("flat.tif");
    write_geotiff_f32(&dir.join("flat-deflate.tif"), &g, &vec![0.0; g.len()], "SWG flat local metres").unwrap();
    run_ok(trnbake().arg("convert").arg(dir.join("flat-deflate.tif")).arg(&flat).args(["--compress", "zstd", "--cog", "-q"]));
    let len = std::fs::metadata(&flat).unwrap().len();
    assert!(g.len() as u64 * 4 > len * 4096, "the file compresses beyond 4096:1 ({len} bytes)");
    run_ok(trnbake().arg("convert").arg(&flat).arg(dir.join("back.r32")).arg("-q"));
    let back = std::fs::read(dir.join("back.r32")).unwrap();
    assert_eq!(back.len(), g.len() * 4);
    assert!(back.chunks_exact(4).all(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) == 0.0));
    run_ok(trnbake().args(["scs", "export"]).arg(&flat).args(["--region", "-512,-512,512,512", "-o"]).arg(dir.join("map")).arg("-q"));
    if let Some(gdal) = common::Gdal::find() {
        let info = gdal.info(&flat);
        assert_eq!(info["size"], serde_json::json!([4097, 4097]));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Item 4: every pair of formats, A → B, keeps the origin, the spacing and the CRS (a `.ter`
/// stores neither origin nor CRS: its sidecar does, and the way back reads it). The grid is
/// south-west of the centre and an even number of posts wide, so neither "centred on (0, 0)"
/// nor a half-post shift can pass.
#[test]
fn round_trips_through_every_pair_of_formats_keep_origin_spacing_and_crs() {
    let dir = out_dir("pairs");
    let crs = "SWG naboo local metres";
    let g = Grid { cols: 64, rows: 33, x0: -1000.0, z0: -4096.0, spacing: 2.0 };
    let src = dir.join("src.tif");
    write_geotiff_f32(&src, &g, &hills(&g), crs).unwrap();
    let gdal = common::Gdal::find();
    let formats = [("tif", "tif"), ("tif16", "tif"), ("ter", "ter"), ("png", "png"), ("r16", "raw"), ("r32", "r32")];
    let convert = |input: &Path, out: &Path, format: &str| {
        run_ok(trnbake().arg("convert").arg(input).arg(out).args(["--format", format, "-q"]));
    };
    let check = |p: &Path, why: &str| {
        let imp = trnbake_raster::readers::open(p, &Default::default()).unwrap_or_else(|e| panic!("{why}: {e}"));
        assert_eq!(imp.source.grid(), g, "{why}: the grid moved");
        assert_eq!(imp.citation.as_deref(), Some(crs), "{why}: the CRS");
        if let (Some(gd), Some("tif")) = (&gdal, p.extension().and_then(|e| e.to_str())) {
            let gt: Vec<f64> = gd.info(p)["geoTransform"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
            assert_eq!(gt, vec![g.x0 - 1.0, 2.0, 0.0, g.north_z() + 1.0, 0.0, -2.0], "{why}: GDAL's geotransform");
            let wkt = gd.info(p)["coordinateSystem"]["wkt"].as_str().unwrap_or_default().to_string();
            assert!(wkt.contains(crs), "{why}: GDAL reads {wkt}");
        }
    };
    for (a_name, a_ext) in formats {
        let a = dir.join(format!("a-{a_name}.{a_ext}"));
        convert(&src, &a, a_name);
        check(&a, &format!("tif → {a_name}"));
        for (b_name, b_ext) in formats {
            let b = dir.join(format!("{a_name}-to-{b_name}.{b_ext}"));
            convert(&a, &b, b_name);
            check(&b, &format!("tif → {a_name} → {b_name}"));
        }
    }
    // The issue's own case, from a bake-like folder: the manifest of `height.tif` is no help to
    // the `.ter` beside it; its sidecar is.
    let side = read_json(&dir.join("a-ter.ter.json"));
    assert_eq!(side["outputs"][0]["grid"]["west_x"], -1000.0);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Item 11: a `convert` killed while writing leaves `.NAME.PID.partial` beside its output;
/// the next `convert` into that folder removes it (as a bake sweeps its folder), and leaves a
/// running process's partial file alone.
#[test]
fn convert_sweeps_partial_files_of_killed_runs() {
    let dir = out_dir("partials");
    let g = Grid { cols: 2049, rows: 2049, x0: 0.0, z0: 0.0, spacing: 1.0 };
    let src = dir.join("src.tif");
    write_geotiff_f32(&src, &g, &hills(&g), "SWG test local metres").unwrap();
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let partials = || -> Vec<String> {
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).filter(|n| n.ends_with(".partial")).collect()
    };
    // A real kill -9 while the output is being written, when it can be caught in the act.
    let mut child = trnbake().arg("convert").arg(&src).arg(out.join("big.tif")).args(["--compress", "deflate", "-q"]).spawn().unwrap();
    let start = std::time::Instant::now();
    while partials().is_empty() && start.elapsed().as_secs() < 20 && child.try_wait().unwrap().is_none() {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let _ = child.kill();
    let _ = child.wait();
    let killed = partials();
    // A partial file of a process long gone (a PID above any pid_max), and one of a process
    // that is running (this test).
    let dead = ".earlier.tif.4000000000.partial";
    let alive = format!(".mine.tif.{}.partial", std::process::id());
    std::fs::write(out.join(dead), b"half a file").unwrap();
    std::fs::write(out.join(&alive), b"being written").unwrap();
    let o = run_ok(trnbake().arg("convert").arg(&src).arg(out.join("small.r32")));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("removed") && err.contains("temporary file"), "{err}");
    let left = partials();
    assert_eq!(left, vec![alive.clone()], "killed run's files {killed:?}; left {left:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `gdalinfo -json` with GDAL's sidecars read (`.aux.xml`), as QGIS opens the file.
fn gdalinfo_with_sidecars(p: &Path) -> Value {
    let o = Command::new("gdalinfo").arg("-json").arg(p).output().unwrap();
    assert!(o.status.success(), "gdalinfo {}: {}", p.display(), String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Item 15: id GeoTIFFs (`shader_id`, `flora_*_id`, `env_id`) have no unit (GDAL said
/// `Unit Type: m`), heights keep theirs, and the writer names an id map's values in a GDAL
/// `.aux.xml` (category names and a raster attribute table) that GDAL reads.
#[test]
fn id_geotiffs_have_no_unit_and_can_name_their_values() {
    use trnbake_raster::writers::categories::write_category_names;
    use trnbake_raster::writers::geotiff::write_geotiff_u16_with;
    let Some(_gdal) = common::Gdal::find() else { return };
    let dir = out_dir("ids");
    // A bake of the demo terrain: every id map without a unit, the heights in metres.
    let bake = dir.join("bake");
    run_ok(trnbake().args(["bake", "--spacing", "32", "--maps", "height,splat,flora,env", "--format", "tif", "--backend", "cpu", "-q", "-o"]).arg(&bake));
    let mut ids = 0;
    for e in std::fs::read_dir(&bake).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with("_id.tif") {
            ids += 1;
            let band = &gdalinfo_with_sidecars(&p)["bands"][0];
            assert!(band.get("unit").is_none(), "{name}: unit {}", band["unit"]);
        }
    }
    assert!(ids >= 3, "{ids} id maps");
    assert_eq!(gdalinfo_with_sidecars(&bake.join("height.tif"))["bands"][0]["unit"], "m");
    // The bake names every id map's families (the terrain's, 0 as "none"), as GDAL reads them.
    for name in ["shader_id.tif", "env_id.tif", "flora_collidable_id.tif"] {
        assert!(bake.join(format!("{name}.aux.xml")).is_file(), "{name}: no category names");
        let cats = gdalinfo_with_sidecars(&bake.join(name))["bands"][0]["categories"].clone();
        let named: Vec<&str> =
            cats.as_array().unwrap_or_else(|| panic!("{name}: no categories")).iter().filter_map(|c| c.as_str()).filter(|c| !c.is_empty()).collect();
        // The demo's environment families may all be unused ids; shaders and flora name several.
        assert!(named.contains(&"none") && (name == "env_id.tif" || named.len() >= 2), "{name}: {cats}");
    }

    // The writer: category names by value (gaps stay unnamed), read back by GDAL.
    let g = Grid { cols: 40, rows: 30, x0: 0.0, z0: 0.0, spacing: 2.0 };
    let values: Vec<f32> = (0..g.len()).map(|i| [0.0, 1.0, 3.0][i % 3]).collect();
    let p = dir.join("shader_id.tif");
    write_geotiff_u16_with(&p, &g, &values, "SWG demo local metres", 1.0, 0.0, &GeoTiffOptions::default().for_ids()).unwrap();
    let names = vec![(0, "none".to_string()), (1, "grass".to_string()), (3, "sand & rock".to_string())];
    let written = write_category_names(&p, &names).unwrap();
    assert_eq!((written.path.as_str(), written.format.as_str()), ("shader_id.tif.aux.xml", "aux-xml"));
    let band = &gdalinfo_with_sidecars(&p)["bands"][0];
    assert!(band.get("unit").is_none(), "{band}");
    assert_eq!(band["categories"], serde_json::json!(["none", "grass", "", "sand & rock"]), "{band}");
    let rat = gdalinfo_with_sidecars(&p)["rat"].clone();
    let rows: Vec<Value> = rat["row"].as_array().unwrap_or_else(|| panic!("no attribute table: {rat}")).iter().map(|r| r["f"].clone()).collect();
    assert_eq!(rows, vec![serde_json::json!([0, "none"]), serde_json::json!([1, "grass"]), serde_json::json!([3, "sand & rock"])], "{rat}");
    std::fs::remove_dir_all(&dir).unwrap();
}
