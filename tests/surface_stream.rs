//! Issue #23: the surface maps stream by bands. Bands of any height give the same files; a
//! window cut out of a bake equals a region bake of that window for every map; a bake killed
//! while its surface bands compute resumes and finishes byte-identical; and the streamed maps
//! decode to the values the whole-grid writer of the previous version wrote.

mod common;

use common::{tmp_path, trnbake};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every map, the opt-in ones too.
const EVERY_MAP: &str = "height,normals,splat,flora,flora_families,scatter,water,env,color,exclude,smap,preview";

fn bake(trn: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let o = trnbake().args(["bake", "--backend", "cpu", "-q", "--data-root"]).arg(common::swg_root()).arg(trn).arg("-o").arg(out).args(extra).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

/// SHA-256 of every output file (the manifest aside), by name.
fn hashes(dir: &Path) -> BTreeMap<String, String> {
    use sha2::Digest;
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != "manifest.json" && n != ".trnbake.lock"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), trnbake_raster::hex(&sha2::Sha256::digest(std::fs::read(&p).unwrap()))))
        .collect()
}

/// A decoded raster: width, height, samples per pixel, samples (north row first).
struct Raster {
    width: usize,
    height: usize,
    channels: usize,
    samples: Vec<f64>,
}

impl Raster {
    fn at(&self, x: usize, y: usize, ch: usize) -> f64 {
        self.samples[(y * self.width + x) * self.channels + ch]
    }
}

fn decode(path: &Path) -> Raster {
    if path.extension().is_some_and(|e| e == "tif") {
        let mut d = tiff::decoder::Decoder::new(std::fs::File::open(path).unwrap()).unwrap();
        let (w, h) = d.dimensions().unwrap();
        let samples: Vec<f64> = match d.read_image().unwrap() {
            tiff::decoder::DecodingResult::U16(v) => v.into_iter().map(f64::from).collect(),
            tiff::decoder::DecodingResult::F32(v) => v.into_iter().map(f64::from).collect(),
            _ => panic!("{}: unexpected sample type", path.display()),
        };
        return Raster { width: w as usize, height: h as usize, channels: 1, samples };
    }
    let img = image::open(path).unwrap();
    let (w, h) = (img.width() as usize, img.height() as usize);
    let (channels, samples): (usize, Vec<f64>) = match img {
        image::DynamicImage::ImageLuma8(i) => (1, i.into_raw().into_iter().map(f64::from).collect()),
        image::DynamicImage::ImageLuma16(i) => (1, i.into_raw().into_iter().map(f64::from).collect()),
        image::DynamicImage::ImageRgb8(i) => (3, i.into_raw().into_iter().map(f64::from).collect()),
        image::DynamicImage::ImageRgba8(i) => (4, i.into_raw().into_iter().map(f64::from).collect()),
        other => panic!("{}: unexpected PNG type {:?}", path.display(), other.color()),
    };
    Raster { width: w, height: h, channels, samples }
}

/// Bands of 128 rows and one band for the whole grid give byte-identical files; a window cut
/// out of the bake equals a region bake of the window for every map (normals and the FSLP
/// neighbourhoods read across band and region edges exactly). The preview is left out of the
/// window check: its height tint spans each bake's own height range (so does height.png's
/// scale).
#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn bands_are_seamless_and_a_window_equals_a_region_bake() {
    let Some(trn) = common::real_file("terrain/tatooine.trn") else { return };
    let (small, whole, window) = (tmp_path("bands-128"), tmp_path("bands-whole"), tmp_path("bands-window"));
    // Full tatooine at 32 m: 513² posts; 128-row bands make 5 of them.
    bake(&trn, &small, &["--spacing", "32", "--maps", EVERY_MAP, "--band-rows", "128"]);
    bake(&trn, &whole, &["--spacing", "32", "--maps", EVERY_MAP, "--band-rows", "1024"]);
    let (a, b) = (hashes(&small), hashes(&whole));
    assert!(a.len() > 30, "every map written: {a:?}");
    assert_eq!(a, b, "128-row bands and one band give the same files");
    let m: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(small.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["timing"]["surface"]["bands_computed"], 5, "{}", m["timing"]);

    // The window: posts 100..=260 east, 170..=300 north of the south-west corner.
    let (c0, r0, c1, r1) = (100usize, 170usize, 260usize, 300usize);
    let pos = |k: usize| -8192 + 32 * k as i64;
    let region = format!("{},{},{},{}", pos(c0), pos(r0), pos(c1), pos(r1));
    bake(&trn, &window, &["--spacing", "32", "--maps", EVERY_MAP, "--band-rows", "128", "--region", &region]);
    let full_rows = 513usize;
    let legend = |dir: &Path| -> BTreeMap<i64, (String, usize)> {
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("splat_legend.json")).unwrap()).unwrap();
        v["channels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["family_id"].as_i64().unwrap(),
                    (c["image"].as_str().unwrap().to_string(), ["r", "g", "b", "a"].iter().position(|x| *x == c["channel"]).unwrap()),
                )
            })
            .collect()
    };
    let (full_legend, window_legend) = (legend(&small), legend(&window));
    let mut checked = 0;
    for name in hashes(&window).keys() {
        let is_raster = name.ends_with(".tif") || name.ends_with(".png");
        // The preview's tint and height.png's 16-bit scale span each bake's own height range;
        // SMAP's chunks are checked by their own test (`smap_chunks`).
        if !is_raster || name == "preview.png" || name == "height.png" || name == "smap.png" {
            continue;
        }
        let w = decode(&window.join(name));
        assert_eq!((w.width, w.height), (c1 - c0 + 1, r1 - r0 + 1), "{name}");
        // Splat channels are assigned per bake: compare family by family.
        let channels: Vec<(PathBuf, usize, usize)> = if name.starts_with("splat_") {
            window_legend.iter().filter(|(_, (img, _))| img == name).map(|(f, (_, ch))| (small.join(&full_legend[f].0), *ch, full_legend[f].1)).collect()
        } else {
            (0..w.channels).map(|ch| (small.join(name), ch, ch)).collect()
        };
        for (full_path, wch, fch) in channels {
            let f = decode(&full_path);
            for y in 0..w.height {
                for x in 0..w.width {
                    // File row 0 is the north edge in both.
                    let (fx, fy) = (c0 + x, full_rows - 1 - (r0 + w.height - 1 - y));
                    assert_eq!(w.at(x, y, wch).to_bits(), f.at(fx, fy, fch).to_bits(), "{name} channel {wch} at window post ({x}, {y})");
                }
            }
            checked += 1;
        }
    }
    assert!(checked > 20, "{checked} maps compared");
    // The window's scatter points are the full bake's points of the window's posts.
    for class in ["collidable", "noncollidable", "radial_near", "radial_far"] {
        let name = format!("flora_{class}_points.csv");
        let full: std::collections::HashSet<String> = std::fs::read_to_string(small.join(&name)).unwrap().lines().map(String::from).collect();
        for line in std::fs::read_to_string(window.join(&name)).unwrap().lines() {
            assert!(full.contains(line), "{name}: {line} is not in the full bake's scatter");
        }
    }
    for d in [small, whole, window] {
        std::fs::remove_dir_all(d).unwrap();
    }
}

/// A bake killed (SIGKILL) while its surface bands compute resumes from its band checkpoints
/// and finishes with the files of an uninterrupted bake.
#[cfg(unix)]
#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn a_killed_surface_bake_resumes_byte_identical() {
    let Some(trn) = common::real_file("terrain/tatooine.trn") else { return };
    let (killed, clean) = (tmp_path("surface-killed"), tmp_path("surface-clean"));
    let args = ["--spacing", "16", "--maps", "height,normals,splat,flora,preview", "--band-rows", "128"];
    let mut child =
        trnbake().args(["bake", "--backend", "cpu", "-q", "--data-root"]).arg(common::swg_root()).arg(&trn).arg("-o").arg(&killed).args(args).spawn().unwrap();
    // Kill it once its first surface band is checkpointed.
    let tiles = killed.join(".trnbake-tiles");
    let t0 = std::time::Instant::now();
    let band_done = || std::fs::read_dir(&tiles).into_iter().flatten().flatten().any(|e| e.file_name().to_string_lossy().starts_with("surface-"));
    while !band_done() && t0.elapsed().as_secs() < 120 {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !killed.join("preview.png").exists() || !std::fs::read_to_string(killed.join("manifest.json")).unwrap_or_default().contains("\"complete\""),
        "the bake finished before it was killed"
    );
    let o = trnbake().args(["bake", "--backend", "cpu", "--data-root"]).arg(common::swg_root()).arg(&trn).arg("-o").arg(&killed).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("resuming the surface maps"), "{err}");
    bake(&trn, &clean, &args);
    assert_eq!(hashes(&killed), hashes(&clean));
    for d in [killed, clean] {
        std::fs::remove_dir_all(d).unwrap();
    }
}

/// SHA-256 of a raster's decoded samples (as f64 bits), so two encodings of the same values
/// compare equal.
fn values_digest(path: &Path) -> String {
    use sha2::Digest;
    let r = decode(path);
    let mut h = sha2::Sha256::new();
    h.update(format!("{}x{}x{}", r.width, r.height, r.channels));
    for v in &r.samples {
        h.update(v.to_bits().to_le_bytes());
    }
    trnbake_raster::hex(&h.finalize())
}

/// The streamed maps decode to the values the whole-grid writer of trnbake 8e68351 wrote
/// (every map at 8 m on tatooine and dathomir; the digests are of that version's outputs,
/// decoded). `TRNBAKE_PRINT_DIGESTS=DIR` prints the digests of a folder's maps instead.
#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn streamed_maps_decode_to_the_whole_grid_values() {
    if let Ok(dir) = std::env::var("TRNBAKE_PRINT_DIGESTS") {
        for name in hashes(Path::new(&dir)).keys().filter(|n| n.ends_with(".tif") || n.ends_with(".png")) {
            println!("(\"{name}\", \"{}\"),", values_digest(&Path::new(&dir).join(name)));
        }
        return;
    }
    for (planet, expected) in [("tatooine", TATOOINE_8M), ("dathomir", DATHOMIR_8M)] {
        let Some(trn) = common::real_file(&format!("terrain/{planet}.trn")) else { return };
        let out = tmp_path(&format!("values-{planet}"));
        bake(&trn, &out, &["--spacing", "8", "--maps", "height,normals,splat,flora,water,env,color,exclude,smap,preview"]);
        // splat_preview.png is newer than that version (issue #25); it is a function of the
        // splat bytes pinned here.
        let pinned = |n: &&String| (n.ends_with(".tif") || n.ends_with(".png")) && n.as_str() != "splat_preview.png";
        let got: BTreeMap<String, String> = hashes(&out).keys().filter(pinned).map(|n| (n.clone(), values_digest(&out.join(n)))).collect();
        let want: BTreeMap<String, String> = expected.iter().map(|(n, d)| (n.to_string(), d.to_string())).collect();
        assert_eq!(got, want, "{planet} at 8 m");
        std::fs::remove_dir_all(out).unwrap();
    }
}

const TATOOINE_8M: &[(&str, &str)] = &[
    ("color.png", "b347f7a11159778477ecc2d28f42af38ed0a2b595bd53d1b71759c70b2117281"),
    ("env_id.tif", "00873c00df5d9c059c83c472612d824e060dfb6c908701bfb655ed9415929cac"),
    ("exclude.png", "43073f07b55bfcbed250e53aaeccfc652c34ed7f356887bdf82223bac4057b02"),
    ("flora_collidable_density.png", "dea33d68c21c13f570419116ed6cede6a89a7edc2824c650e1ceab699ca78f14"),
    ("flora_collidable_id.tif", "5810bee06f3a29f0dde40150755f4054422b57cdceaed34d618ac1f0e71a730c"),
    ("flora_noncollidable_density.png", "fa9d8809c87af874606cda4b545505771f74df1c8a7df677a8872e23b72b4ee2"),
    ("flora_noncollidable_id.tif", "806a3a7d211bfc166f6eb1cf0b75e52f7c7095be93c455edac87c86b3619a99f"),
    ("flora_radial_far_density.png", "a558511796121509a53ee30deadc10787efd1620c339f04484d9124cafef90d6"),
    ("flora_radial_far_id.tif", "b283b6e60b22b9e2c7fbfe29524cf65fafc237d2ec445816f21ac26de7881416"),
    ("flora_radial_near_density.png", "4de2e5358aa561e4fc78d1ff1f0373c2928f247505d6c15e4f45b92ff177a9f5"),
    ("flora_radial_near_id.tif", "a2950d70467fc623aa11c47e74da4e4781c4baca0bea3e9ba3f48507abc5fcad"),
    ("height.png", "f163280e83ae1de0b9168f9311276a7235517040aa765732504010871cfad298"),
    ("height.tif", "0e937f7015dfe2076130cfcc4ee6a19231787ea4c2c0d06ab794da2d3664d3b9"),
    ("normals.png", "4c35925f433c96ec80395a8867269459f38c6ec0e9826100597bf5562e2cf7aa"),
    ("passable.png", "8e387e175a3be2e244e934a759494c7183c30dec3bd2e8dc7b9a1d30c7017104"),
    ("preview.png", "a1fd2aed6493d5e707020fed7bee218a3b4359f2b01125cc1a9fb00d6fce5c6a"),
    ("shader_id.tif", "2954d8c089a70cfe2c2a1721ef6b2cc7d943ef01675c3ead6dc83b316fe1797a"),
    ("smap.png", "7d20ea0e6300d61369ca3d102174eb4bb3088419479f082aa87902e4d4d69ba1"),
    ("splat_0.png", "06331064d0e0d38e03c773ea7fa3ffac55fcf2ac992f54f031fd3ce73deb4e2e"),
    ("splat_1.png", "bd781bd131a6bcdcf7879f50567b98bb5328256f071f79495b3982df8a4db7b0"),
    ("splat_2.png", "318abe877f9f707ad43ee2b0a6f242ba714c68bc9f935fd994019ea94e731ba1"),
    ("splat_3.png", "92434b5656c0339bbb4b631fb03e314cfb30f219e1000a945e3e17a835a6d21e"),
    ("water_height.tif", "8c67a8143e7752eedde4dfcc0013b3449b172b6bdb4324c742b163e2e8d9344e"),
    ("water_mask.png", "437a8a99e59eda1579e8751024fb222a0054839260bfd76344722f70819d2b0c"),
];
const DATHOMIR_8M: &[(&str, &str)] = &[
    ("color.png", "b72021ac7c6f2833ca4cf1d1485dd355aab42554e1f4e74743510b7cee6076bd"),
    ("env_id.tif", "e0e78f2880982a33ced8a82aeb07c3a759c01ecb6f779bb2b2ca08283b0c5b82"),
    ("exclude.png", "921cf61be9a224a7256fa1c9cc3a20cb06b4814c5eb5e2b8a967adf045bf88c6"),
    ("flora_collidable_density.png", "8cc3087dd858383faff8f46f8fdc180dcfa24100b616127fafe7e383e9d9d61e"),
    ("flora_collidable_id.tif", "6a52af323bdbebf6d408296c958a267d8a14beda2f8d9a013a3ecc90dbe5fa3c"),
    ("flora_noncollidable_density.png", "0def19a1b9bda8d18e4d8243abddd5f7da1298ad4849836d236437201d6caf61"),
    ("flora_noncollidable_id.tif", "ea526f5f5a6ee61631f7e01121a1778d84af0b18f846c43478ffab7193f2b56a"),
    ("flora_radial_far_density.png", "224f57397d41f330eaf2b8a0296d1eb3bd703e4e909c8b3faff511c763edc245"),
    ("flora_radial_far_id.tif", "675cb258301b2d6e32672a0b0495e4be043ce4d6f682ac6e4552558522473894"),
    ("flora_radial_near_density.png", "969fe4f77ffb2612b2f5e01e18e677dcbbd896bd2bfaad65d0a92228c741b10d"),
    ("flora_radial_near_id.tif", "9c8594ab85396e82bad3503834f99547b0fa3403ae89b8de55ca2933bdbff3c1"),
    ("height.png", "9b54fc7a22e6394a9bd12ed04f62f9b355fe68c415940febb06050d4cb077b94"),
    ("height.tif", "4f81a55c29fc27611b0f8273cc19fb4b765df846f16e836578d703550ed87353"),
    ("normals.png", "f8ce3c0f6bff5175582262bf87c60dedd2dc630a970db98c6cd6daf9c6bdf555"),
    ("passable.png", "8e387e175a3be2e244e934a759494c7183c30dec3bd2e8dc7b9a1d30c7017104"),
    ("preview.png", "24e596923f870e469859f8550f4d571431c4a1eadb101119b7952a681a86ba9c"),
    ("shader_id.tif", "b8bbeffb27668fce66f96680cf09da0286f87603d1c051ab0a773cd7828dab38"),
    ("smap.png", "885910f52b34bac7f4fe4e128cb71abe844551935a6bc32865a40951b6470cea"),
    ("splat_0.png", "21f36732d7545ba52576306b2c79e74a6846c9e622499cedfe962017f9b29422"),
    ("splat_1.png", "38a2c568672055b3236f84a7c0345c1cd68d11b6b426fd529b4a1c66f4aacd25"),
    ("splat_2.png", "9d977648ec44af250656fbffd6202c8ff1724a188d6ac22b9b365699f436bb52"),
    ("splat_3.png", "e82650e7758dd6b479fcff439dc0d1a3b08a94b7f404930be91dfc826639af94"),
    ("splat_4.png", "2bfa880a5c6e2b2c611cbca37bc5d1ccd2af965309324a4a51bd88eea133725c"),
    ("splat_5.png", "2f7d8711e05c6b35b7d2677ffb075e0314f189cf2f192678eec02755893b6d60"),
    ("splat_6.png", "4d06b5ada46e79c03484db9a7c55f04a765c6e292afb1b01fbd126a93feb2285"),
    ("water_height.tif", "2baaf8f621195c1224456aef74fbc3af8e055dd2eef8f6763cbbf1c9ca27b528"),
    ("water_mask.png", "0e12c24293991173d04b03c02c55c4c63681ca3ecb714941751c148de8ee50b7"),
];

/// The GPU backend streams the same bands: the demo baked on the GPU in 128-row bands (three
/// of them, the GPU's tiles cut at each band) writes the CPU's files byte for byte (lavapipe).
#[test]
#[cfg_attr(no_gpu_adapter, ignore = "needs a GPU adapter")]
fn gpu_bands_write_the_cpu_files() {
    if common::gpu().is_none() {
        return;
    }
    let (gpu, cpu) = (tmp_path("bands-gpu"), tmp_path("bands-cpu"));
    let run = |backend: &str, out: &Path| {
        let o = trnbake()
            .args([
                "bake",
                "--backend",
                backend,
                "-q",
                "--spacing",
                "16",
                "--band-rows",
                "128",
                "--maps",
                "height,normals,splat,flora,water,env,color,exclude,preview",
                "-o",
            ])
            .arg(out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{backend}: {}", String::from_utf8_lossy(&o.stderr));
        let m: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
        assert_eq!(m["surface_maps_backend"], backend);
        assert_eq!(m["timing"]["surface"]["bands_computed"], 3, "{}", m["timing"]);
    };
    run("gpu", &gpu);
    run("cpu", &cpu);
    assert_eq!(hashes(&gpu), hashes(&cpu));
    for d in [gpu, cpu] {
        std::fs::remove_dir_all(d).unwrap();
    }
}
