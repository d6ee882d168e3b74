//! Issue 37 "No silent surprises", the output folder and what the bake says about it:
//!
//! * item 2: stale-file removal never deletes through a symbolic link or outside the folder;
//! * item 8: the maps of a killed earlier bake are removed by the next bake into the folder
//!   (its manifest in progress planned them), and map-named files no manifest lists are named
//!   in a note;
//! * item 11: a finished bake leaves no `.trnbake.lock`, and the folder lock still keeps a
//!   second bake out;
//! * item 13: `--preset unity` says that it resampled the grid, `--preset unreal --format tif`
//!   that it wrote no `height.png`;
//! * item 14: every georeferenced PNG map has its world file, listed in the manifest (the
//!   8 m chunks of `smap.png` theirs), and the catalogue names every file a bake writes;
//! * item 16: errors name the path the user can act on (a clashing `.trnbake-tiles` or
//!   `manifest.json`, an unwritable folder rather than its lock file, a full disk in the
//!   surface stage), and a damaged surface band is recomputed with a note.

mod common;

use common::{output_text, run_ok, text, tmp, trnbake};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A CPU bake of the demo terrain into `out` with `extra` flags.
fn bake(out: &Path, extra: &[&str]) -> Command {
    let mut c = trnbake();
    c.args(["bake", "--backend", "cpu", "-o"]).arg(out).args(extra);
    c
}

fn manifest(out: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap()
}

fn listed(m: &serde_json::Value) -> Vec<String> {
    m["outputs"].as_array().unwrap().iter().map(|o| o["path"].as_str().unwrap().to_string()).collect()
}

/// The file names in `dir` (no folders), sorted.
fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| e.file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

/// Item 2: a manifest listing `lnk/file.txt` (`lnk` a symlink to a folder outside OUT), a
/// symlink `evil.tif` to a file outside, and `../outside.txt` gets none of them deleted.
#[cfg(unix)]
#[test]
fn stale_removal_never_deletes_through_a_symlink_or_outside_the_folder() {
    let root = tmp("symlink-stale");
    let (out, outside) = (root.join("out"), root.join("outside"));
    std::fs::create_dir_all(&outside).unwrap();
    run_ok(&mut bake(&out, &["--spacing", "32", "--maps", "height", "--format", "tif", "-q"]));
    for f in ["file.txt", "victim.txt"] {
        std::fs::write(outside.join(f), b"not yours").unwrap();
    }
    std::fs::write(root.join("outside.txt"), b"not yours").unwrap();
    std::os::unix::fs::symlink(&outside, out.join("lnk")).unwrap();
    std::os::unix::fs::symlink(outside.join("victim.txt"), out.join("evil.tif")).unwrap();
    let mut m = manifest(&out);
    for p in ["lnk/file.txt", "evil.tif", "../outside.txt"] {
        m["outputs"].as_array_mut().unwrap().push(serde_json::json!({ "path": p }));
    }
    std::fs::write(out.join("manifest.json"), serde_json::to_vec_pretty(&m).unwrap()).unwrap();
    run_ok(&mut bake(&out, &["--spacing", "32", "--maps", "height", "--format", "r32", "-q"]));
    assert!(outside.join("file.txt").is_file(), "a file outside OUT was deleted through the symlink lnk");
    assert!(outside.join("victim.txt").is_file(), "the target of the symlink evil.tif was deleted");
    assert!(root.join("outside.txt").is_file(), "a file beside OUT was deleted");
    assert!(!out.join("height.tif").exists(), "the earlier bake's own stale output is still removed");
    std::fs::remove_dir_all(&root).unwrap();
}

/// Item 8: a bake of every map killed (-9) once its first maps are written leaves a manifest in
/// progress that plans them; a finished `--maps height` bake into the folder then removes them
/// (no file is left that its manifest does not list) and says so.
#[cfg(unix)]
#[test]
fn the_maps_of_a_killed_bake_are_removed_by_the_next_one() {
    let out = tmp("killed-maps");
    let maps = ["normals.png", "color.png", "preview.png", "splat_0.png", "water_mask.png", "exclude.png"];
    let mut child = bake(&out, &["--spacing", "4", "--maps", "auto,flora_families", "-q"]).spawn().unwrap();
    let start = std::time::Instant::now();
    while !maps.iter().any(|m| out.join(m).exists()) && start.elapsed() < std::time::Duration::from_secs(300) {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let _ = child.kill();
    let _ = child.wait();
    let m = manifest(&out);
    assert_eq!(m["status"], "in progress", "the bake finished before it was killed; the test did not test anything");
    assert!(m["planned_outputs"].as_array().is_some_and(|a| a.iter().any(|p| p == "normals.png")), "{m}");
    let left: Vec<String> = files_in(&out).into_iter().filter(|f| f.ends_with(".png") && f != "height.png").collect();
    assert!(!left.is_empty(), "the killed bake left no map");

    let o = run_ok(&mut bake(&out, &["--spacing", "32", "--maps", "height"]));
    let err = text(&o.stderr);
    assert!(err.contains("of the previous bake"), "{err}");
    let m = manifest(&out);
    assert_eq!(m["status"], "complete");
    let mut expected = listed(&m);
    expected.push("manifest.json".into());
    expected.sort();
    assert_eq!(files_in(&out), expected, "files of the killed bake were left beside the new one");
    std::fs::remove_dir_all(&out).unwrap();
}

/// Item 8: files named like maps of the catalogue that no manifest lists (an older run's, a
/// copy) are kept and named in a note; other files are not named.
#[test]
fn map_files_no_manifest_lists_are_named_in_a_note() {
    let out = tmp("unlisted");
    std::fs::write(out.join("normals.png"), b"an older run's").unwrap();
    std::fs::write(out.join("splat_3.pgw"), b"an older run's").unwrap();
    std::fs::write(out.join("notes.txt"), b"mine").unwrap();
    let o = run_ok(&mut bake(&out, &["--spacing", "32", "--maps", "height"]));
    let err = text(&o.stderr);
    assert!(err.contains("no manifest lists") && err.contains("normals.png, splat_3.pgw"), "{err}");
    assert!(!err.contains("notes.txt"), "{err}");
    for f in ["normals.png", "splat_3.pgw", "notes.txt"] {
        assert!(out.join(f).is_file(), "{f} was removed");
    }
    std::fs::remove_dir_all(&out).unwrap();
}

/// Item 11: a finished bake (and a finished merge) leaves no lock file; while a folder is held,
/// a second bake is refused, and after the holder is done the next one takes it.
#[test]
fn finished_folders_keep_no_lock_file_and_the_lock_still_holds() {
    let root = tmp("lock");
    let out = root.join("out");
    run_ok(&mut bake(&out, &["--spacing", "32", "--maps", "height", "-q"]));
    assert!(!out.join(".trnbake.lock").exists(), "a finished bake left its lock file");
    let (s1, s2, merged) = (root.join("s1"), root.join("s2"), root.join("merged"));
    run_ok(&mut bake(&s1, &["--spacing", "32", "--maps", "height", "--shard", "1/2", "-q"]));
    run_ok(&mut bake(&s2, &["--spacing", "32", "--maps", "height", "--shard", "2/2", "-q"]));
    run_ok(trnbake().args(["merge", "-q", "-o"]).arg(&merged).arg(&s1).arg(&s2));
    for d in [&s1, &s2, &merged] {
        assert!(!d.join(".trnbake.lock").exists(), "{} kept its lock file", d.display());
    }

    // Held by this process: refused; released: the lock file goes and the next bake runs.
    for _ in 0..2 {
        let held = trnbake_bake::folder::OutputFolder::claim(&out, None, &trnbake_swg::report::NullReporter).unwrap();
        let o = bake(&out, &["--spacing", "32", "--maps", "height", "-q"]).output().unwrap();
        assert!(!o.status.success() && text(&o.stderr).contains("in use"), "{}", output_text(&o));
        drop(held);
        assert!(!out.join(".trnbake.lock").exists());
    }
    run_ok(&mut bake(&out, &["--spacing", "32", "--maps", "height", "-q"]));
    std::fs::remove_dir_all(&root).unwrap();
}

/// Item 13: `--preset unity` on a 1001-post grid says it wrote a 513-post heightmap;
/// `--preset unreal --format tif` says it wrote no `height.png`; a plain bake says neither.
#[test]
fn presets_say_what_they_change() {
    let out = tmp("presets");
    let region = ["--region", "-1000,-1000,1000,1000", "--spacing", "2", "--maps", "height"];
    let o = run_ok(&mut bake(&out.join("unity"), &[&region[..], &["--preset", "unity"]].concat()));
    let err = text(&o.stderr);
    assert!(err.contains("1001×1001") && err.contains("513×513") && err.contains("--preset unity"), "{err}");
    let o = run_ok(&mut bake(&out.join("unreal"), &[&region[..], &["--preset", "unreal", "--format", "tif"]].concat()));
    let err = text(&o.stderr);
    assert!(err.contains("no height.png"), "{err}");
    let o = run_ok(&mut bake(&out.join("plain"), &region));
    let err = text(&o.stderr);
    assert!(!err.contains("note: --preset"), "{err}");
    std::fs::remove_dir_all(&out).unwrap();
}

/// Item 14: every georeferenced PNG map of a bake (splat, its preview, flora densities and
/// families, masks, colour, normals, preview) has a world file equal to `height.pgw`, listed in
/// the manifest right after its PNG.
#[test]
fn every_georeferenced_png_has_a_world_file() {
    let out = tmp("world-files");
    run_ok(&mut bake(&out, &["--spacing", "16", "--maps", "auto,flora_families", "-q"]));
    let names = listed(&manifest(&out));
    let height_pgw = std::fs::read(out.join("height.pgw")).unwrap();
    let pngs: Vec<&String> = names.iter().filter(|n| n.ends_with(".png")).collect();
    for want in
        ["normals.png", "splat_0.png", "splat_preview.png", "preview.png", "flora_collidable_density.png", "water_mask.png", "exclude.png", "passable.png"]
    {
        assert!(pngs.iter().any(|p| *p == want), "the demo bake wrote no {want}: {names:?}");
    }
    assert!(pngs.iter().any(|p| p.contains("_family_")), "no flora family map: {names:?}");
    for (k, n) in names.iter().enumerate() {
        if !n.ends_with(".png") {
            continue;
        }
        let pgw = n.replace(".png", ".pgw");
        assert_eq!(names.get(k + 1), Some(&pgw), "{n} is not followed by its world file in the manifest");
        assert_eq!(std::fs::read(out.join(&pgw)).unwrap(), height_pgw, "{pgw} places its map elsewhere than height.pgw");
    }
    std::fs::remove_dir_all(&out).unwrap();
}

/// Items 8 and 14: every file a bake writes (every map, every height format, tiles, the
/// engines' packings) is named by its map's file patterns in the catalogue, which is what a
/// manifest in progress plans; a file the catalogue missed would outlive a killed bake with no
/// note. `smap.png`, whose pixels are 8 m chunks, has the world file of its chunks.
#[test]
fn the_catalogue_names_every_file_a_bake_writes() {
    use trnbake_swg::maps::MAPS;
    let root = tmp("catalogue");
    let all: Vec<&str> = MAPS.iter().map(|m| m.name).collect();
    let all = all.join(",");
    let runs: [&[&str]; 4] =
        [&["--format", "tif,tif16,ter,png,raw,r16,r32"], &["--format", "tif,tif16,png", "--tiles", "2"], &["--preset", "unreal"], &["--preset", "unity"]];
    for (k, extra) in runs.iter().enumerate() {
        let out = root.join(k.to_string());
        run_ok(&mut bake(&out, &[&["--spacing", "32", "--maps", &all, "-q"][..], extra].concat()));
        let m = manifest(&out);
        assert_eq!(m["status"], "complete");
        let mut names = files_in(&out);
        names.retain(|n| n != "manifest.json");
        assert_eq!(
            names,
            {
                let mut l = listed(&m);
                l.sort();
                l
            },
            "the manifest does not list what the bake wrote"
        );
        for n in &names {
            let ok = MAPS.iter().any(|map| map.files.iter().any(|p| trnbake_bake::folder::pattern_matches(p, n)));
            assert!(ok, "{n} (bake {extra:?}) matches no file pattern of the map catalogue");
        }
    }
    let out = root.join("0");
    let smap: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("smap.json")).unwrap()).unwrap();
    let (west, south, rows) = (smap["west_x"].as_f64().unwrap(), smap["south_z"].as_f64().unwrap(), smap["rows"].as_f64().unwrap());
    let pgw: Vec<f64> = std::fs::read_to_string(out.join("smap.pgw")).unwrap().lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(pgw, [8.0, 0.0, 0.0, -8.0, west + 4.0, south + rows * 8.0 - 4.0], "smap.pgw does not place the chunks");
    std::fs::remove_dir_all(&root).unwrap();
}

/// A failed bake's stderr, asserting exit 1 and no panic.
fn failed(o: &Output) -> String {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// Item 16: a file named `.trnbake-tiles`, or a folder named `manifest.json`, is refused
/// naming it, before anything is written.
#[test]
fn clashing_names_are_refused_naming_the_path() {
    let root = tmp("clash");
    let (a, b) = (root.join("a"), root.join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::write(a.join(".trnbake-tiles"), b"mine").unwrap();
    let err = failed(&bake(&a, &["--spacing", "32", "--maps", "height"]).output().unwrap());
    assert!(err.contains(&a.join(".trnbake-tiles").display().to_string()) && err.contains("in the way"), "{err}");
    std::fs::create_dir_all(b.join("manifest.json")).unwrap();
    let err = failed(&bake(&b, &["--spacing", "32", "--maps", "height"]).output().unwrap());
    assert!(err.contains(&b.join("manifest.json").display().to_string()) && err.contains("in the way"), "{err}");
    assert!(!b.join("height.tif").exists());
    std::fs::remove_dir_all(&root).unwrap();
}

/// Mounts a tmpfs with `opts` at a fresh folder, or `None` (a printed skip) where mounting
/// needs privileges this machine lacks.
#[cfg(target_os = "linux")]
fn tmpfs(name: &str, opts: &str) -> Option<PathBuf> {
    let mnt = tmp(name);
    if Command::new("mount").args(["-t", "tmpfs", "-o", opts, "tmpfs"]).arg(&mnt).status().is_ok_and(|s| s.success()) {
        return Some(mnt);
    }
    eprintln!("skipping: cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN)");
    let _ = std::fs::remove_dir_all(&mnt);
    None
}

#[cfg(target_os = "linux")]
fn unmount(mnt: &Path) {
    let _ = Command::new("umount").arg(mnt).status();
    let _ = std::fs::remove_dir_all(mnt);
}

/// Item 16: a folder that cannot be written (a read-only file system; root ignores
/// permissions) is named, not the lock file inside it.
#[cfg(target_os = "linux")]
#[test]
fn an_unwritable_folder_is_named_not_its_lock_file() {
    let Some(mnt) = tmpfs("read-only", "ro,size=64k") else { return };
    let o = bake(&mnt, &["--spacing", "32", "--maps", "height"]).output().unwrap();
    unmount(&mnt);
    let err = failed(&o);
    assert!(err.contains(&format!("cannot write into {}", mnt.display())) && !err.contains(".trnbake.lock"), "{err}");
}

/// Item 16: a full disk in the surface stage (a tmpfs that holds the heights but not the
/// surface maps) names the file it could not write.
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_in_the_surface_stage_names_the_file() {
    let Some(mnt) = tmpfs("full-surface", "size=1m") else { return };
    let out = mnt.join("out");
    let o = bake(&out, &["--spacing", "16", "--maps", "auto,flora_families", "--format", "tif"]).output().unwrap();
    let heights_written = out.join("height.tif").is_file();
    unmount(&mnt);
    let err = failed(&o);
    assert!(heights_written, "the disk filled before the surface stage: {err}");
    assert!(err.to_lowercase().contains("no space left"), "{err}");
    assert!(err.contains(&format!("cannot write {}", out.display())), "the error names no file: {err}");
}

/// Item 16: a damaged surface band left by a killed bake is recomputed with a note, and the
/// maps equal a bake that was never interrupted.
#[test]
fn a_damaged_surface_band_is_recomputed_with_a_note() {
    let root = tmp("damaged-band");
    let (fresh, killed) = (root.join("fresh"), root.join("killed"));
    let args = ["--spacing", "16", "--band-rows", "128", "--maps", "normals,color", "-q"];
    run_ok(&mut bake(&fresh, &args));
    // A finished shard 1/1 holds every tile and band: what a bake killed after its surface
    // stage leaves, once its state says unsharded and unfinished.
    run_ok(&mut bake(&killed, &[&args[..], &["--shard", "1/1"]].concat()));
    let state_path = killed.join("bake-state.json");
    let mut state: serde_json::Value = serde_json::from_slice(&std::fs::read(&state_path).unwrap()).unwrap();
    state["shard"] = serde_json::Value::Null;
    state["complete"] = false.into();
    std::fs::write(&state_path, serde_json::to_vec(&state).unwrap()).unwrap();
    let mut bands: Vec<PathBuf> = std::fs::read_dir(killed.join(".trnbake-tiles"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("surface-"))
        .collect();
    bands.sort();
    let band = bands.first().expect("a band checkpoint");
    let len = std::fs::metadata(band).unwrap().len();
    std::fs::write(band, vec![0u8; len as usize]).unwrap();
    let o = run_ok(&mut bake(&killed, &args[..args.len() - 1]));
    let err = text(&o.stderr);
    assert!(err.contains("note: the checkpoint of the surface band") && err.contains("is damaged"), "{err}");
    for f in ["normals.png", "color.png"] {
        assert_eq!(std::fs::read(fresh.join(f)).unwrap(), std::fs::read(killed.join(f)).unwrap(), "{f} differs");
    }
    std::fs::remove_dir_all(&root).unwrap();
}
