//! Cloud-Optimized GeoTIFF and `--compress` (issue 25 item 1): every sample kind (Float32
//! heights with nodata, UInt16 heights, UInt16 id maps) in every compression, written by
//! the library and by `bake`/`convert --cog`, passes GDAL's own COG validator (with the full
//! check of block leaders and trailers); the statistics stored in the file equal those GDAL
//! computes over every pixel; the overviews halve down to one tile, averaged for heights and
//! picked for ids; the samples decode exactly.
//!
//! The GDAL checks need `python3-gdal` (skipped with a message without it; required when
//! `CI=true`).

mod common;

use std::path::{Path, PathBuf};

use common::{run_ok, tmp, trnbake, GdalPython};
use trnbake_raster::writers::geotiff::{write_geotiff_from, Compression, GeoTiffOptions, GeoTiffStreamWriter, TiffLayout, TiffSample};
use trnbake_raster::{readers, u16_scale_offset, Grid, HeightSource, MemSource, RowOrder};

const CITATION: &str = "SWG testplanet local metres";

fn cog(compression: Compression) -> GeoTiffOptions {
    GeoTiffOptions { layout: TiffLayout::Cog, compression, ..Default::default() }
}

/// Heights (south row first) with a hole of NaN, about −300 … +300 m.
fn heights(g: &Grid) -> Vec<f32> {
    (0..g.len())
        .map(|i| {
            let (c, r) = ((i as u32 % g.cols) as f32, (i as u32 / g.cols) as f32);
            if (100..140).contains(&(c as u32)) && (50..60).contains(&(r as u32)) {
                return f32::NAN;
            }
            (c * 0.011).sin() * 250.0 + (r * 0.017).cos() * 40.0 + c * 0.01
        })
        .collect()
}

/// Class ids 0..=40 in patches.
fn ids(g: &Grid) -> Vec<f32> {
    (0..g.len()).map(|i| (((i as u32 % g.cols) / 37 + (i as u32 / g.cols) / 23) % 41) as f32).collect()
}

/// The file decodes (through trnbake's reader) to `want` (south row first) within `tol`.
fn decodes_to(path: &Path, want: &[f32], tol: f32) {
    let back = readers::open(path, &Default::default()).unwrap();
    let g = back.source.grid();
    let mut got = vec![0.0f32; g.len()];
    back.source.read_rows(0, g.rows, &mut got).unwrap();
    assert_eq!(got.len(), want.len());
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        assert!((a.is_nan() && b.is_nan()) || (a - b).abs() <= tol, "{}: post {i}: {a} vs {b}", path.display());
    }
    assert_eq!(back.citation.as_deref(), Some(CITATION));
}

/// GDAL's view of a COG: valid, tiled 512², overviews as expected, stored statistics equal
/// to GDAL's own.
/// `compression`: GDAL's name for it, `None` for uncompressed (GDAL then states none).
fn gdal_checks(py: &GdalPython, path: &Path, overviews: &[[u64; 2]], compression: Option<&str>) -> serde_json::Value {
    py.validate_cog(path);
    let v = py.inspect(path);
    let s = &v["structure"];
    assert_eq!(s["LAYOUT"], "COG", "{s}");
    assert_eq!(s["COMPRESSION"].as_str(), compression, "{s}");
    assert_eq!(v["block"], serde_json::json!([512, 512]), "{}", path.display());
    assert_eq!(v["crs"], CITATION, "{}", path.display());
    assert_eq!(v["overviews"], serde_json::json!(overviews), "{}", path.display());
    let (stored, computed) = (v["stored"].as_array().unwrap(), v["computed"].as_array().unwrap());
    assert_eq!(stored.len(), 4, "{}: statistics stored: {stored:?}", path.display());
    for (k, (s, c)) in stored.iter().zip(computed).enumerate() {
        let (s, c) = (s.as_f64().unwrap(), c.as_f64().unwrap());
        assert!((s - c).abs() <= 1e-9 * c.abs().max(1.0), "{}: statistic {k}: stored {s}, GDAL computes {c}", path.display());
    }
    v
}

#[test]
fn every_sample_kind_and_compression_is_a_valid_cog() {
    let dir = tmp("kinds");
    let py = GdalPython::find();
    // 1100 × 700: overviews 550 × 350 and 275 × 175; edge tiles partly outside the grid.
    let g = Grid { cols: 1100, rows: 700, x0: -2200.0, z0: -1400.0, spacing: 4.0 };
    let h = heights(&g);
    let id = ids(&g);
    let (scale, offset) = u16_scale_offset(-300.0, 300.0);
    let hs = MemSource::south_first(g, &h[..]).unwrap();
    let is = MemSource::south_first(g, &id[..]).unwrap();
    for (compression, name) in [(Compression::Deflate, "DEFLATE"), (Compression::Zstd, "ZSTD"), (Compression::Lzw, "LZW"), (Compression::None, "NONE")] {
        let opts = cog(compression);
        let kinds: [(&str, &dyn HeightSource, TiffSample, GeoTiffOptions, f32); 3] = [
            ("f32", &hs, TiffSample::F32, opts, 0.0),
            ("u16", &hs, TiffSample::U16 { scale, offset }, opts, (scale / 2.0) as f32 + 1e-4),
            ("ids", &is, TiffSample::U16 { scale: 1.0, offset: 0.0 }, opts.for_ids(), 0.0),
        ];
        for (kind, src, sample, o, tol) in kinds {
            let p = dir.join(format!("{kind}-{name}.tif"));
            let wf = write_geotiff_from(&p, src, CITATION, sample, &o).unwrap();
            assert_eq!(wf.bytes, std::fs::metadata(&p).unwrap().len());
            decodes_to(&p, if kind == "ids" { &id } else { &h }, tol);
            if let Some(py) = &py {
                let gdal_name = if name == "NONE" { None } else { Some(name) };
                let v = gdal_checks(py, &p, &[[550, 350], [275, 175]], gdal_name);
                if kind == "ids" {
                    // Nearest: the smallest overview holds only ids that exist.
                    for x in v["smallest_values"].as_array().unwrap() {
                        let x = x.as_f64().unwrap();
                        assert!(x.fract() == 0.0 && (0.0..=40.0).contains(&x), "{x} is no id");
                    }
                } else if kind == "f32" {
                    // Average: values between the ids' integers appear (a smooth field).
                    assert!(v["smallest_values"].as_array().unwrap().iter().any(|x| x.as_f64().unwrap().fract() != 0.0));
                }
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The IFDs of a TIFF in file order: (width, height).
fn levels(path: &Path) -> Vec<(u32, u32)> {
    let mut d = tiff::decoder::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap())).unwrap();
    let mut v = vec![d.dimensions().unwrap()];
    while d.more_images() {
        d.next_image().unwrap();
        v.push(d.dimensions().unwrap());
    }
    v
}

#[test]
fn overviews_halve_until_one_tile() {
    let dir = tmp("levels");
    for (n, want) in [(2048u32, vec![2048, 1024, 512]), (2049, vec![2049, 1025, 513, 257]), (512, vec![512]), (300, vec![300])] {
        let g = Grid { cols: n, rows: n, x0: 0.0, z0: 0.0, spacing: 2.0 };
        let h = vec![1.5f32; g.len()];
        let p = dir.join(format!("{n}.tif"));
        trnbake_raster::writers::geotiff::write_geotiff_f32_with(&p, &g, &h, CITATION, &cog(Compression::Deflate)).unwrap();
        let got = levels(&p);
        assert_eq!(got, want.iter().map(|&s| (s, s)).collect::<Vec<_>>(), "{n}² grid");
        assert!(n != 2048 || got.len() >= 3, "a 2048² grid has at least 3 levels");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_stream_writer_takes_bands_south_first_or_north_first() {
    // A band-by-band producer (the surface maps): uneven bands of 100 rows, either order, in
    // both layouts; the file decodes to the same samples as one written from a source.
    let dir = tmp("stream");
    let g = Grid { cols: 700, rows: 1030, x0: 10.0, z0: 20.0, spacing: 1.0 };
    let h = heights(&g);
    let py = GdalPython::find();
    for layout in [TiffLayout::Cog, TiffLayout::Striped] {
        let opts = GeoTiffOptions { layout, ..Default::default() };
        for order in [RowOrder::SouthFirst, RowOrder::NorthFirst] {
            let p = dir.join(format!("{layout:?}-{order:?}.tif"));
            let mut w = GeoTiffStreamWriter::create(&p, &g, CITATION, TiffSample::F32, &opts, order).unwrap();
            let rows: Vec<&[f32]> = match order {
                RowOrder::SouthFirst => h.chunks(g.cols as usize).collect(),
                RowOrder::NorthFirst => h.chunks(g.cols as usize).rev().collect(),
            };
            for band in rows.chunks(100) {
                w.push_rows(&band.concat()).unwrap();
            }
            assert!(!p.exists(), "the file appears only when finished");
            w.finish().unwrap();
            decodes_to(&p, &h, 0.0);
            if let (Some(py), TiffLayout::Cog) = (&py, layout) {
                gdal_checks(py, &p, &[[350, 515], [175, 258]], Some("DEFLATE"));
            }
        }
    }
    // Same bytes whichever way the rows came, for the striped layout written north first
    // and from a source.
    let from_src = dir.join("from-source.tif");
    write_geotiff_from(&from_src, &MemSource::south_first(g, &h[..]).unwrap(), CITATION, TiffSample::F32, &Default::default()).unwrap();
    assert_eq!(std::fs::read(&from_src).unwrap(), std::fs::read(dir.join("Striped-NorthFirst.tif")).unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unfinished_stream_leaves_nothing_behind() {
    let dir = tmp("unfinished");
    let g = Grid { cols: 600, rows: 600, x0: 0.0, z0: 0.0, spacing: 1.0 };
    for layout in [TiffLayout::Cog, TiffLayout::Striped] {
        let p = dir.join("h.tif");
        let mut w =
            GeoTiffStreamWriter::create(&p, &g, CITATION, TiffSample::F32, &GeoTiffOptions { layout, ..Default::default() }, RowOrder::NorthFirst).unwrap();
        w.push_rows(&vec![1.0; 600 * 550]).unwrap();
        drop(w);
        let mut w =
            GeoTiffStreamWriter::create(&p, &g, CITATION, TiffSample::F32, &GeoTiffOptions { layout, ..Default::default() }, RowOrder::NorthFirst).unwrap();
        w.push_rows(&vec![1.0; 600 * 10]).unwrap();
        let e = w.finish().unwrap_err().to_string();
        assert!(e.contains("10 of 600 rows"), "{e}");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "{layout:?}: temp or scratch files left");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bake_and_convert_write_every_geotiff_as_a_cog() {
    let dir = tmp("cli");
    let Some(py) = GdalPython::find() else { return };
    // The demo terrain with its surface-map GeoTIFFs (ids, water levels), heights in both
    // sample types.
    let bake = dir.join("bake");
    run_ok(trnbake().args(["bake", "--backend", "cpu", "--cog", "--format", "tif,tif16", "--maps", "height,splat,flora,water,env", "-q", "-o"]).arg(&bake));
    let mut tifs: Vec<PathBuf> = std::fs::read_dir(&bake).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "tif")).collect();
    tifs.sort();
    let names: Vec<String> = tifs.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    for want in ["height.tif", "height_u16.tif", "shader_id.tif", "env_id.tif", "water_height.tif", "flora_collidable_id.tif"] {
        assert!(names.iter().any(|n| n == want), "{want} not among {names:?}");
    }
    for p in &tifs {
        py.validate_cog(p);
        let v = py.inspect(p);
        assert_eq!(v["structure"]["LAYOUT"], "COG", "{}: {v}", p.display());
        assert!(!v["overviews"].as_array().unwrap().is_empty(), "{}: {v}", p.display());
    }
    // convert --cog --compress: one file, and tiles with their mosaic.
    for (out, compress) in [("c.tif", "zstd"), ("c16.tif", "lzw"), ("t.vrt", "deflate")] {
        let mut c = trnbake();
        c.arg("convert").arg(bake.join("height.tif")).arg(dir.join(out)).args(["--cog", "--compress", compress, "-q"]);
        if out == "c16.tif" {
            c.args(["--format", "tif16"]);
        }
        if out == "t.vrt" {
            c.args(["--tiles", "2"]);
        }
        run_ok(&mut c);
    }
    for name in ["c.tif", "c16.tif", "t_x0_y0.tif", "t_x1_y1.tif"] {
        py.validate_cog(&dir.join(name));
    }
    assert_eq!(py.inspect(&dir.join("c.tif"))["structure"]["COMPRESSION"], "ZSTD");
    assert_eq!(py.inspect(&dir.join("c16.tif"))["structure"]["COMPRESSION"], "LZW");
    std::fs::remove_dir_all(&dir).unwrap();
}
