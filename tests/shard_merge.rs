//! Issue #36: every map on a cluster. A bake split into N shards (`--shard K/N`) and merged
//! (`trnbake merge`) writes the very files of the unsharded bake, byte for byte, for every map,
//! any N, tile and band size, with `--cog`, and on the GPU backend; merge names a missing or
//! foreign shard by its K/N and folder. And (#37 item 1) checkpoints carry their bake and place:
//! a tile or band file of another bake, or of another tile or band, is never trusted.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::{run_ok as run, tmp_path as tmp, trnbake};

/// Every map of the catalogue, the opt-in ones too.
fn every_map() -> String {
    trnbake_swg::maps::MAPS.iter().map(|m| m.name).collect::<Vec<_>>().join(",")
}

fn bake(trn: Option<&Path>, out: &Path, args: &[&str]) -> Output {
    let mut c = trnbake();
    c.args(["bake", "-q", "--data-root"]).arg(common::swg_root());
    if let Some(t) = trn {
        c.arg(t);
    }
    run(c.args(args).arg("-o").arg(out))
}

fn merge(out: &Path, shards: &[PathBuf]) -> Output {
    trnbake().args(["merge", "-q", "-o"]).arg(out).args(shards).output().unwrap()
}

/// Every file of `dir` but the lock, by name, with its bytes; the manifest without its timings.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != ".trnbake.lock"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let mut bytes = std::fs::read(&p).unwrap();
            if name == "manifest.json" {
                let mut m: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
                m.as_object_mut().unwrap().remove("timing");
                bytes = serde_json::to_vec_pretty(&m).unwrap();
            }
            (name, bytes)
        })
        .collect()
}

/// Assert that `got` holds the files of `want`, byte for byte (`manifest`: the manifests too).
fn assert_same_files(want: &Path, got: &Path, manifest: bool, what: &str) {
    let (mut a, mut b) = (files(want), files(got));
    if !manifest {
        a.remove("manifest.json");
        b.remove("manifest.json");
    }
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>(), "{what}: other files");
    for (name, bytes) in &a {
        assert!(bytes == &b[name], "{what}: {name} differs from the unsharded bake's");
    }
}

/// Bake `trn` into `n` shard folders with `args`, and merge them into `out`.
fn shards_and_merge(trn: Option<&Path>, name: &str, n: u32, args: &[&str]) -> (Vec<PathBuf>, PathBuf) {
    let shards: Vec<PathBuf> = (1..=n).map(|k| tmp(&format!("{name}-{k}of{n}"))).collect();
    for (k, dir) in shards.iter().enumerate() {
        let shard = format!("{}/{n}", k + 1);
        let mut a = args.to_vec();
        a.extend(["--shard", &shard]);
        bake(trn, dir, &a);
    }
    let out = tmp(&format!("{name}-merged{n}"));
    let o = merge(&out, &shards);
    assert!(o.status.success(), "merge of {n} shards: {}", String::from_utf8_lossy(&o.stderr));
    (shards, out)
}

fn remove(dirs: impl IntoIterator<Item = PathBuf>) {
    for d in dirs {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn every_map_of_two_planets_merges_to_the_unsharded_bake_for_1_3_and_7_shards() {
    for (file, spacing) in [("terrain/tatooine.trn", "16"), ("terrain/dathomir.trn", "32")] {
        let Some(trn) = common::real_file(file) else { return };
        let every = every_map();
        let args = ["--backend", "cpu", "--spacing", spacing, "--maps", &every, "--tile", "200", "--band-rows", "128"];
        let single = tmp(&format!("single-{spacing}"));
        bake(Some(&trn), &single, &args);
        assert!(single.join("splat_0.png").is_file() && single.join("flora_collidable_points.csv").is_file(), "every map is there");
        for n in [1, 3, 7] {
            let (shards, merged) = shards_and_merge(Some(&trn), &format!("planet{spacing}"), n, &args);
            assert_same_files(&single, &merged, true, &format!("{file} at {spacing} m, {n} shards"));
            remove(shards.into_iter().chain([merged]));
        }
        // Other tile and band sizes give the same maps (the manifest records the tile size).
        let other = ["--backend", "cpu", "--spacing", spacing, "--maps", &every, "--tile", "96", "--band-rows", "256"];
        let (shards, merged) = shards_and_merge(Some(&trn), &format!("planet{spacing}-other"), 3, &other);
        assert_same_files(&single, &merged, false, &format!("{file} at {spacing} m, 3 shards of other tiles and bands"));
        remove(shards.into_iter().chain([merged, single]));
    }
}

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn cloud_optimized_maps_merge_to_the_unsharded_bake() {
    let Some(trn) = common::real_file("terrain/tatooine.trn") else { return };
    let args = ["--backend", "cpu", "--spacing", "32", "--cog", "--compress", "zstd", "--tile", "64", "--band-rows", "128"];
    let single = tmp("cog-single");
    bake(Some(&trn), &single, &args);
    let (shards, merged) = shards_and_merge(Some(&trn), "cog", 3, &args);
    assert_same_files(&single, &merged, true, "--cog, 3 shards");
    remove(shards.into_iter().chain([merged, single]));
}

#[test]
#[cfg_attr(no_gpu_adapter, ignore = "needs a GPU adapter")]
fn gpu_shards_merge_to_the_unsharded_gpu_bake() {
    if common::gpu().is_none() {
        return;
    }
    // The demo terrain (every rule kind) at 32 m: 129² posts, bands of 128 rows.
    let args = ["--backend", "gpu", "--spacing", "32", "--maps", "auto,flora_families", "--tile", "48", "--band-rows", "128"];
    let single = tmp("gpu-single");
    bake(None, &single, &args);
    let (shards, merged) = shards_and_merge(None, "gpu", 3, &args);
    assert_same_files(&single, &merged, true, "GPU backend, 3 shards");
    remove(shards.into_iter().chain([merged, single]));
}

#[test]
fn merge_names_a_missing_or_foreign_shard_and_refuses_foreign_checkpoints() {
    let args = ["--backend", "cpu", "--spacing", "16", "--tile", "48", "--band-rows", "128"];
    let shards: Vec<PathBuf> = (1..=3).map(|k| tmp(&format!("refuse-{k}"))).collect();
    for (k, dir) in shards.iter().enumerate() {
        let shard = format!("{}/3", k + 1);
        bake(None, dir, &[&args[..], &["--shard", &shard]].concat());
    }
    let out = tmp("refuse-out");
    // Shard 2 left out.
    let o = merge(&out, &[shards[0].clone(), shards[2].clone()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("shard 2/3 is missing"), "{err}");
    // A shard of another bake (other surface options) in place of shard 2.
    let foreign = tmp("refuse-foreign");
    bake(None, &foreign, &[&args[..], &["--shard", "2/3", "--feather-clamp", "ignore"]].concat());
    let o = merge(&out, &[shards[0].clone(), foreign.clone(), shards[2].clone()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("shard 2/3") && err.contains(&foreign.display().to_string()) && err.contains("another bake"), "{err}");
    // A shard given twice.
    let o = merge(&out, &[shards[0].clone(), shards[0].clone(), shards[2].clone()]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("given twice"), "{}", String::from_utf8_lossy(&o.stderr));
    // The foreign shard's band files copied into shard 2: right checksums, another bake.
    let bands = |dir: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join(".trnbake-tiles"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("surface-"))
            .collect();
        v.sort();
        v
    };
    let good = shards[1].join(".trnbake-tiles");
    let saved = tmp("refuse-saved");
    std::fs::create_dir_all(&saved).unwrap();
    for b in bands(&shards[1]) {
        std::fs::copy(&b, saved.join(b.file_name().unwrap())).unwrap();
    }
    for b in bands(&foreign) {
        std::fs::copy(&b, good.join(b.file_name().unwrap())).unwrap();
    }
    let o = merge(&out, &shards);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("belongs to another bake or place") && err.contains("shard 2/3"), "{err}");
    assert!(!out.join("splat_0.png").exists() && !out.join("preview.png").exists(), "no map from a foreign band");
    for b in std::fs::read_dir(&saved).unwrap() {
        let b = b.unwrap().path();
        std::fs::copy(&b, good.join(b.file_name().unwrap())).unwrap();
    }
    // Two tiles of one shard swapped: right sizes and checksums, wrong places.
    let mut tiles: Vec<PathBuf> = std::fs::read_dir(&good).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "f32")).collect();
    tiles.sort();
    let same_size: Vec<&PathBuf> = tiles.iter().filter(|p| std::fs::metadata(p).unwrap().len() == std::fs::metadata(&tiles[0]).unwrap().len()).collect();
    assert!(same_size.len() >= 2, "two tiles of one size to swap");
    let (a, b) = (std::fs::read(same_size[0]).unwrap(), std::fs::read(same_size[1]).unwrap());
    std::fs::write(same_size[0], &b).unwrap();
    std::fs::write(same_size[1], &a).unwrap();
    let o = merge(&out, &shards);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("belongs to another bake or place"), "{err}");
    std::fs::write(same_size[0], &a).unwrap();
    std::fs::write(same_size[1], &b).unwrap();
    let o = merge(&out, &shards);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    remove(shards.into_iter().chain([out, foreign, saved]));
}

/// #37 item 1: with no state file to tell, a bake into a folder holding another bake's tiles
/// and bands (a killed naboo shard) and swapped bands of its own recomputes them all.
#[test]
fn checkpoints_of_another_bake_or_place_are_recomputed() {
    let (Some(tatooine), Some(naboo)) = (common::real_file("terrain/tatooine.trn"), common::real_file("terrain/naboo.trn")) else { return };
    let args = ["--backend", "cpu", "--spacing", "64", "--tile", "48", "--band-rows", "128"];
    let fresh = tmp("identity-fresh");
    bake(Some(&tatooine), &fresh, &args);
    let dir = tmp("identity-killed");
    // A killed naboo bake: its tiles and bands, and no state file.
    bake(Some(&naboo), &dir, &[&args[..], &["--shard", "1/1"]].concat());
    std::fs::remove_file(dir.join("bake-state.json")).unwrap();
    let o = bake(Some(&tatooine), &dir, &args.iter().copied().filter(|a| *a != "-q").collect::<Vec<_>>());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("resuming"), "nothing of naboo is resumed: {err}");
    assert_same_files(&fresh, &dir, true, "over a killed naboo bake");

    // A tatooine shard 1/1 whose two bands are swapped, resumed as the unsharded bake.
    let killed = tmp("identity-swapped");
    bake(Some(&tatooine), &killed, &[&args[..], &["--shard", "1/1"]].concat());
    let state_path = killed.join("bake-state.json");
    let mut state: serde_json::Value = serde_json::from_slice(&std::fs::read(&state_path).unwrap()).unwrap();
    state["shard"] = serde_json::Value::Null;
    state["complete"] = false.into();
    std::fs::write(&state_path, serde_json::to_vec(&state).unwrap()).unwrap();
    let mut bands: Vec<PathBuf> =
        std::fs::read_dir(killed.join(".trnbake-tiles")).unwrap().map(|e| e.unwrap().path()).filter(|p| p.to_string_lossy().contains("surface-")).collect();
    bands.sort();
    assert!(bands.len() >= 2, "two bands to swap: {bands:?}");
    let (a, b) = (std::fs::read(&bands[0]).unwrap(), std::fs::read(&bands[1]).unwrap());
    std::fs::write(&bands[0], &b).unwrap();
    std::fs::write(&bands[1], &a).unwrap();
    let mut c = trnbake();
    c.args(["bake", "--data-root"]).arg(common::swg_root()).arg(&tatooine).args(args).arg("-o").arg(&killed);
    let o = run(&mut c);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.matches("belongs to another bake or place; recomputing it").count() >= 2, "{err}");
    assert_same_files(&fresh, &killed, true, "swapped bands");
    remove([fresh, dir, killed]);
}
