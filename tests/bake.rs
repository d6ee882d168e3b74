//! End-to-end bakes of the demo terrain: outputs and manifest, shards + merge equal a single
//! bake, and a killed bake resumes from its checkpoints (CPU backend, so it runs anywhere).

mod common;

use common::{tmp_path, trnbake};

use std::path::{Path, PathBuf};
use std::process::Command;

fn bake(out: &Path, extra: &[&str]) {
    let mut c = trnbake();
    c.args(["bake", "--backend", "cpu", "--spacing", "16", "--tile", "48", "--maps", "height", "-q", "-o"]).arg(out).args(extra);
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn demo_bake_writes_outputs_and_manifest() {
    let out = tmp_path("plain");
    bake(&out, &[]);
    for f in ["height.tif", "height.png", "height.pgw", "manifest.json"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["parameters"]["cols"], 257);
    assert_eq!(m["backend"], "cpu");
    assert!(m["max_height"].as_f64().unwrap() > m["min_height"].as_f64().unwrap());
    // height.tif, height.png and the PNG's world file, each with its size and checksum.
    let outputs: Vec<&str> = m["outputs"].as_array().unwrap().iter().map(|o| o["path"].as_str().unwrap()).collect();
    assert_eq!(outputs, ["height.tif", "height.png", "height.pgw"]);
    assert!(!out.join(".trnbake-tiles").exists(), "checkpoints are removed after a finished bake");
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn shards_merge_to_the_single_bake() {
    let (single, s1, s2, merged) = (tmp_path("single"), tmp_path("s1"), tmp_path("s2"), tmp_path("merged"));
    bake(&single, &[]);
    bake(&s1, &["--shard", "1/2"]);
    bake(&s2, &["--shard", "2/2"]);
    let o = trnbake().args(["merge", "-q", "-o"]).arg(&merged).arg(&s1).arg(&s2).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in ["height.tif", "height.png"] {
        assert_eq!(std::fs::read(single.join(f)).unwrap(), std::fs::read(merged.join(f)).unwrap(), "{f} differs");
    }
    // One shard alone cannot be merged.
    let o = trnbake().args(["merge", "-q", "-o"]).arg(tmp_path("partial")).arg(&s1).output().unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing"), "{}", String::from_utf8_lossy(&o.stderr));
    for d in [single, s1, s2, merged] {
        std::fs::remove_dir_all(d).unwrap();
    }
}

#[test]
fn killed_bake_resumes_from_checkpoints() {
    let (fresh, killed) = (tmp_path("fresh"), tmp_path("killed"));
    bake(&fresh, &[]);
    // Half the tiles done: what a bake killed midway leaves (a finished shard 1/2 whose
    // state is turned back into the unsharded bake's).
    bake(&killed, &["--shard", "1/2"]);
    let state_path = killed.join("bake-state.json");
    let mut state: serde_json::Value = serde_json::from_slice(&std::fs::read(&state_path).unwrap()).unwrap();
    state["shard"] = serde_json::Value::Null;
    state["complete"] = false.into();
    std::fs::write(&state_path, serde_json::to_vec(&state).unwrap()).unwrap();
    let o = trnbake().args(["bake", "--backend", "cpu", "--spacing", "16", "--tile", "48", "--maps", "height", "-o"]).arg(&killed).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("resuming: 18 of 36 tiles already done"), "{err}");
    assert_eq!(std::fs::read(fresh.join("height.tif")).unwrap(), std::fs::read(killed.join("height.tif")).unwrap());
    std::fs::remove_dir_all(fresh).unwrap();
    std::fs::remove_dir_all(killed).unwrap();
}

/// The outputs are assembled straight from the tile checkpoints (48-post tiles: a 257² grid
/// is 6 × 6 tiles, the last ones 17 posts wide); every post must be the height `sample` gives.
#[test]
fn outputs_from_checkpoints_equal_sampled_heights() {
    use std::io::Write;
    let out = tmp_path("assembled");
    bake(&out, &["--format", "r32"]);
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["outputs"][0]["row_order"], "north_first");
    let bytes = std::fs::read(out.join("height.r32")).unwrap();
    let got: Vec<f32> = bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let (n, s, w) = (257usize, 16.0f64, -2048.0f64);
    assert_eq!(got.len(), n * n);
    let mut child = trnbake().args(["sample", "--points", "-"]).stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).spawn().unwrap();
    {
        let mut stdin = child.stdin.take().unwrap();
        // File order: north row first.
        for r in (0..n).rev() {
            for c in 0..n {
                writeln!(stdin, "{},{}", w + c as f64 * s, w + r as f64 * s).unwrap();
            }
        }
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    for (i, (line, g)) in text.lines().zip(&got).enumerate() {
        let want: f64 = line.rsplit(',').next().unwrap().parse().unwrap();
        assert!((f64::from(*g) - want).abs() <= 5e-5 + 1e-6, "post {i}: file {g}, sample {want}");
    }
    assert_eq!(text.lines().count(), n * n);
    std::fs::remove_dir_all(&out).unwrap();
}

/// `bake --preset unity --tiles 2`: engine tiles straight from the bake, settings in the manifest.
#[test]
fn preset_tiles_from_a_bake() {
    let out = tmp_path("unity");
    bake(&out, &["--preset", "unity", "--tiles", "2"]);
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    let names: Vec<&str> = m["outputs"].as_array().unwrap().iter().map(|o| o["path"].as_str().unwrap()).collect();
    assert_eq!(names, ["height_x0_y0.raw", "height_x1_y0.raw", "height_x0_y1.raw", "height_x1_y1.raw"]);
    for n in &names {
        assert_eq!(std::fs::metadata(out.join(n)).unwrap().len(), 129 * 129 * 2, "{n}");
    }
    assert_eq!(m["export"]["engine"]["heightmap_resolution"], 129);
    assert_eq!(m["export"]["tiles"]["stride"], serde_json::json!([128, 128]));
    assert_eq!(m["outputs"][0]["row_order"], "south_first");
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn bad_arguments_are_user_errors() {
    for args in [
        vec!["bake", "--region", "1,2,3"],
        vec!["bake", "--spacing", "-2"],
        vec!["bake", "--shard", "3/2"],
        vec!["bake", "--format", "jpg"],
        vec!["bake", "--preset", "unity", "--region", "0,0,160,80", "--spacing", "16"],
        vec!["bake", "--preset", "unreal", "--size", "8193"],
        vec!["bake", "--size", "1025"],
        vec!["bake", "--tiles", "0"],
        vec!["convert", "/nonexistent/in.ter", "out.tif"],
        vec!["sample", "--at", "1"],
        vec!["info", "/nonexistent/x.trn"],
    ] {
        let o = trnbake().args(&args).output().unwrap();
        assert!(!o.status.success(), "{args:?} succeeded");
        assert_eq!(o.status.code(), Some(1), "{args:?}: {:?}", o.status);
        assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"), "{args:?} panicked");
    }
}

/// Run `c` to completion, failing (and killing it) if it is still running after `limit`: a
/// watchdog against a hung bake, not a timing (a healthy run takes a second or two).
fn run_with_watchdog(mut c: Command, limit: std::time::Duration) -> std::process::Output {
    let mut child = c.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("the bake did not finish within {limit:?}: a writer is waiting on rows no thread computes");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

// The streamed writers (Float32 formats written while the bands compute) must not hold the
// threads the compute needs: with a single rayon worker, a writer waiting on a worker for rows
// deadlocked (found by the export tests). And what they write must equal the outputs written
// after the compute (a one-shard bake merged: the non-streamed path), for every format.
#[test]
fn streamed_outputs_finish_on_one_thread_and_equal_the_merged_outputs() {
    let formats = "tif,r32,png,tif16,ter,r16";
    let (streamed, shard, merged) = (tmp_path("streamed"), tmp_path("shard11"), tmp_path("merged11"));
    let mut c = trnbake();
    c.env("RAYON_NUM_THREADS", "1")
        .args(["bake", "--backend", "cpu", "--spacing", "16", "--tile", "48", "--maps", "height", "-q", "--format", formats, "-o"])
        .arg(&streamed);
    let o = run_with_watchdog(c, std::time::Duration::from_secs(120));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    bake(&shard, &["--shard", "1/1"]);
    let o = trnbake().args(["merge", "-q", "--format", formats, "-o"]).arg(&merged).arg(&shard).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in ["height.tif", "height.r32", "height.png", "height_u16.tif", "height.ter", "height.r16"] {
        assert_eq!(std::fs::read(streamed.join(f)).unwrap(), std::fs::read(merged.join(f)).unwrap(), "{f} differs");
    }
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(streamed.join("manifest.json")).unwrap()).unwrap();
    let mm: serde_json::Value = serde_json::from_slice(&std::fs::read(merged.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["export"]["height_min"], mm["export"]["height_min"]);
    assert_eq!(m["min_height"], mm["min_height"]);
    for d in [streamed, shard, merged] {
        std::fs::remove_dir_all(d).unwrap();
    }
}

/// A missing bitmap: the library says what to change in its own terms, the command line adds
/// its flags as a hint, for a point sample and for a bake alike.
#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn a_missing_bitmap_names_the_library_fix_and_the_flags() {
    let Some(trn) = common::real_file("terrain/tatooine.trn") else { return };
    let empty = tmp_path("no-bitmaps");
    std::fs::create_dir_all(&empty).unwrap();
    let sample = trnbake().args(["sample", "--at", "0,0", "--data-root"]).arg(&empty).arg(&trn).output().unwrap();
    let out = tmp_path("no-bitmaps-bake");
    let bake = trnbake()
        .args(["bake", "--backend", "cpu", "--spacing", "512", "--maps", "height", "-q", "-o"])
        .arg(&out)
        .arg("--data-root")
        .arg(&empty)
        .arg(&trn)
        .output()
        .unwrap();
    for (what, o) in [("sample", sample), ("bake", bake)] {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{what}: {err}");
        let error_line = err.lines().find(|l| l.starts_with("error:")).unwrap_or_default();
        assert!(error_line.contains("set the data root") && !error_line.contains("--"), "{what}: the library's message has no flags: {err}");
        assert!(err.contains("hint: pass --data-root DIR so that `"), "{what}: {err}");
    }
    let _ = std::fs::remove_dir_all(&empty);
    let _ = std::fs::remove_dir_all(&out);
}

/// Turns a finished shard 1/2 into what an unsharded bake killed midway leaves.
fn as_killed_unsharded(dir: &Path) {
    let state_path = dir.join("bake-state.json");
    let mut state: serde_json::Value = serde_json::from_slice(&std::fs::read(&state_path).unwrap()).unwrap();
    state["shard"] = serde_json::Value::Null;
    state["complete"] = false.into();
    std::fs::write(&state_path, serde_json::to_vec(&state).unwrap()).unwrap();
}

/// Overwrites the first checkpoint tile of `dir` with zeros at its own size: what a power loss
/// can leave of a tile renamed into place without fsync.
fn zero_a_tile(dir: &Path) -> PathBuf {
    let mut tiles: Vec<PathBuf> = std::fs::read_dir(dir.join(".trnbake-tiles")).unwrap().map(|e| e.unwrap().path()).collect();
    tiles.sort();
    let t = tiles.into_iter().next().expect("a checkpoint tile");
    let len = std::fs::metadata(&t).unwrap().len();
    std::fs::write(&t, vec![0u8; len as usize]).unwrap();
    t
}

/// Issue #26 case 1: checkpoints baked with other inputs (here an empty data root with
/// missing bitmaps read as black) are not resumed when the data root changes; the bake starts
/// afresh and equals an uninterrupted bake with the real data.
#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn resume_refuses_checkpoints_of_other_inputs() {
    let Some(trn) = common::real_file("terrain/tatooine.trn") else { return };
    let root = common::swg_root();
    let empty = tmp_path("resume-empty-root");
    std::fs::create_dir_all(&empty).unwrap();
    let (fresh, killed) = (tmp_path("resume-inputs-fresh"), tmp_path("resume-inputs-killed"));
    let run = |out: &Path, data_root: &Path, extra: &[&str]| {
        let o = trnbake()
            .args(["bake", "--backend", "cpu", "--spacing", "256", "--tile", "16", "--maps", "height", "--format", "tif", "-o"])
            .arg(out)
            .arg("--data-root")
            .arg(data_root)
            .arg(&trn)
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    run(&fresh, &root, &[]);
    run(&killed, &empty, &["--missing-bitmaps", "zero", "--shard", "1/2", "-q"]);
    as_killed_unsharded(&killed);
    let err = run(&killed, &root, &[]);
    assert!(err.contains("belong to a different bake: its heights come from other inputs") && err.contains("starting afresh"), "{err}");
    assert!(!err.contains("resuming"), "{err}");
    assert_eq!(std::fs::read(fresh.join("height.tif")).unwrap(), std::fs::read(killed.join("height.tif")).unwrap());
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(fresh.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["parameters"]["plan_sha256"].as_str().map(str::len), Some(64), "the manifest records the plan's fingerprint");
    for d in [empty, fresh, killed] {
        std::fs::remove_dir_all(d).unwrap();
    }
}

/// Issue #26 case 3: a checkpoint tile of the right size but zeroed is not trusted: a resumed
/// bake recomputes it (and says so), and `merge` refuses a shard holding one.
#[test]
fn damaged_checkpoint_tiles_are_recomputed_and_refused_by_merge() {
    let (fresh, killed) = (tmp_path("damaged-fresh"), tmp_path("damaged-killed"));
    bake(&fresh, &[]);
    bake(&killed, &["--shard", "1/2"]);
    as_killed_unsharded(&killed);
    zero_a_tile(&killed);
    let o = trnbake().args(["bake", "--backend", "cpu", "--spacing", "16", "--tile", "48", "--maps", "height", "-o"]).arg(&killed).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("is damaged (size or checksum); recomputing it"), "{err}");
    assert!(err.contains("resuming: 17 of 36 tiles already done"), "{err}");
    for f in ["height.tif", "height.png"] {
        assert_eq!(std::fs::read(fresh.join(f)).unwrap(), std::fs::read(killed.join(f)).unwrap(), "{f} differs");
    }

    let (s1, s2, merged) = (tmp_path("damaged-s1"), tmp_path("damaged-s2"), tmp_path("damaged-merged"));
    bake(&s1, &["--shard", "1/2"]);
    bake(&s2, &["--shard", "2/2"]);
    let bad = zero_a_tile(&s1);
    let o = trnbake().args(["merge", "-q", "-o"]).arg(&merged).arg(&s1).arg(&s2).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("is damaged in") && err.contains(&bad.display().to_string()), "{err}");
    assert!(!merged.join("height.tif").exists(), "no mosaic from a damaged shard");
    for d in [fresh, killed, s1, s2] {
        std::fs::remove_dir_all(d).unwrap();
    }
    let _ = std::fs::remove_dir_all(merged);
}

fn sha256_hex(path: &Path) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(std::fs::read(path).unwrap()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Names of our temp files (`.NAME.PID.partial`) under `dir` and its checkpoint folder.
fn temp_files(dir: &Path) -> Vec<String> {
    [dir.to_path_buf(), dir.join(".trnbake-tiles")]
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".partial"))
        .collect()
}

/// Waits until `pred` holds (polling), at most `limit`.
fn wait_until(limit: std::time::Duration, mut pred: impl FnMut() -> bool) -> bool {
    let t0 = std::time::Instant::now();
    while t0.elapsed() < limit {
        if pred() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}

/// Issue #26 cases 6 and 8: one owner per output folder (a second bake fails at once naming
/// the holder's PID), and SIGTERM / SIGINT end a bake cleanly: exit 143 / 130, no temp file
/// left, and a word on what was kept for the resume, which then works.
#[cfg(unix)]
#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn one_bake_per_folder_and_signals_end_a_bake_cleanly() {
    let Some(trn) = common::real_file("terrain/tatooine.trn") else { return };
    let out = tmp_path("owner");
    // The whole planet at 2 m, heights only: long enough to be interrupted.
    let long_bake = || {
        let mut c = trnbake();
        c.args(["bake", "--backend", "cpu", "--spacing", "2", "--tile", "512", "--maps", "height", "--format", "tif,r32", "-o"])
            .arg(&out)
            .arg("--data-root")
            .arg(common::swg_root())
            .arg(&trn)
            .stderr(std::process::Stdio::piped());
        c.spawn().unwrap()
    };
    for (signal, code, name) in [("TERM", 143, "SIGTERM"), ("INT", 130, "SIGINT")] {
        let first = long_bake();
        let lock = out.join(".trnbake.lock");
        let pid = first.id().to_string();
        assert!(wait_until(std::time::Duration::from_secs(60), || std::fs::read_to_string(&lock).is_ok_and(|s| s == pid)), "the bake never took its folder");
        // A second bake into the same folder: refused at once, naming the holder.
        let o = trnbake().args(["bake", "--backend", "cpu", "--spacing", "64", "--maps", "height", "-q", "-o"]).arg(&out).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains(&format!("is in use by another trnbake (PID {pid})")), "{err}");
        // Let it write for a moment (tiles and streamed outputs under way), then signal it.
        std::thread::sleep(std::time::Duration::from_millis(800));
        Command::new("kill").arg(format!("-{signal}")).arg(&pid).status().unwrap();
        let o = first.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{name}: {err}");
        assert!(err.contains(&format!("interrupted ({name})")) && err.contains("run the same command again to resume"), "{err}");
        assert_eq!(temp_files(&out), Vec::<String>::new(), "{name} left temp files");
        assert!(!out.join("manifest.json").exists() || std::fs::read_to_string(out.join("manifest.json")).unwrap().contains("in progress"));
    }
    std::fs::remove_dir_all(&out).unwrap();
}

/// Issue #26 case 2: a manifest on disk never describes files it does not match. A re-bake
/// with other settings is killed (-9) at several points; after each kill, a manifest that
/// says "complete" lists exactly the files on disk (every SHA-256 matches), and otherwise it
/// says "in progress".
#[cfg(unix)]
#[test]
fn a_killed_rebake_never_leaves_a_manifest_that_lies() {
    let out = tmp_path("manifest-honest");
    let args = |gain: &str| -> Vec<String> {
        ["bake", "--backend", "cpu", "--spacing", "4", "--tile", "128", "--bitmap-gain", gain, "-q", "-o"]
            .iter()
            .map(|s| s.to_string())
            .chain([out.display().to_string()])
            .collect()
    };
    let o = trnbake().args(args("on")).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut saw_in_progress = false;
    for (k, ms) in [30u64, 120, 250, 400, 700, 1000, 1500].into_iter().enumerate() {
        let gain = if k % 2 == 0 { "off" } else { "on" };
        let mut child = trnbake().args(args(gain)).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(ms));
        let _ = child.kill();
        let _ = child.wait();
        let text = std::fs::read_to_string(out.join("manifest.json")).unwrap_or_default();
        if text.is_empty() {
            continue;
        }
        let m: serde_json::Value = serde_json::from_str(&text).unwrap();
        match m["status"].as_str() {
            Some("complete") => {
                for o in m["outputs"].as_array().unwrap() {
                    let p = out.join(o["path"].as_str().unwrap());
                    assert_eq!(sha256_hex(&p), o["sha256"].as_str().unwrap(), "kill at {ms} ms: {} does not match the manifest", p.display());
                }
            }
            Some("in progress") => saw_in_progress = true,
            other => panic!("kill at {ms} ms: manifest status {other:?}"),
        }
    }
    assert!(saw_in_progress, "no kill landed inside a re-bake; the test did not test anything");
    std::fs::remove_dir_all(&out).unwrap();
}

/// Issue #26 case 7: outputs of an earlier bake that a new bake into the same folder does not
/// write are removed (only files the earlier manifest listed), with a notice.
#[test]
fn a_rebake_removes_the_earlier_outputs_it_does_not_write() {
    let out = tmp_path("stale");
    bake(&out, &["--format", "tif,ter"]);
    assert!(out.join("height.ter").is_file());
    std::fs::write(out.join("notes.txt"), b"mine").unwrap();
    let o = trnbake().args(["bake", "--backend", "cpu", "--spacing", "32", "--maps", "height", "--format", "tif", "-o"]).arg(&out).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("removed 1 file(s) of the previous bake"), "{err}");
    assert!(!out.join("height.ter").exists(), "the earlier .ter is stale");
    assert!(out.join("notes.txt").is_file(), "a file no manifest listed is never touched");
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["status"], "complete");
    let listed: Vec<&str> = m["outputs"].as_array().unwrap().iter().map(|o| o["path"].as_str().unwrap()).collect();
    assert_eq!(listed, ["height.tif"]);
    std::fs::remove_dir_all(&out).unwrap();
}

/// Issue #26 fault tests: `merge` killed (-9) at several points leaves no manifest that lies
/// and no truncated output under a final name (every output a complete manifest lists
/// matches its SHA-256), and a re-run then finishes equal to the unsharded bake.
#[cfg(unix)]
#[test]
fn a_killed_merge_leaves_nothing_wrong_visible() {
    let (single, s1, s2, merged) = (tmp_path("kmerge-single"), tmp_path("kmerge-s1"), tmp_path("kmerge-s2"), tmp_path("kmerge-out"));
    // 1025² posts in every height format: a merge long enough to be killed midway.
    let bake4 = |out: &Path, extra: &[&str]| {
        let o = trnbake()
            .args(["bake", "--backend", "cpu", "--spacing", "4", "--tile", "128", "--maps", "height", "--format", "tif,tif16,png,ter,r16,r32", "-q", "-o"])
            .arg(out)
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    bake4(&single, &[]);
    bake4(&s1, &["--shard", "1/2"]);
    bake4(&s2, &["--shard", "2/2"]);
    let merge = || {
        let mut c = trnbake();
        c.args(["merge", "-q", "--format", "tif,tif16,png,ter,r16,r32", "-o"]).arg(&merged).arg(&s1).arg(&s2);
        c
    };
    let mut unfinished = 0;
    for ms in [20u64, 60, 120, 200, 300] {
        let mut child = merge().spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(ms));
        let _ = child.kill();
        let _ = child.wait();
        let complete = std::fs::read_to_string(merged.join("manifest.json")).is_ok_and(|t| t.contains("\"status\": \"complete\""));
        unfinished += usize::from(merged.is_dir() && !complete);
        if let Ok(text) = std::fs::read_to_string(merged.join("manifest.json")) {
            let m: serde_json::Value = serde_json::from_str(&text).unwrap();
            if m["status"] == "complete" {
                for o in m["outputs"].as_array().unwrap() {
                    let p = merged.join(o["path"].as_str().unwrap());
                    assert_eq!(sha256_hex(&p), o["sha256"].as_str().unwrap(), "merge killed at {ms} ms: {} does not match", p.display());
                }
            } else {
                assert_eq!(m["status"], "in progress");
            }
        }
    }
    assert!(unfinished > 0, "no kill landed inside a merge; the test did not test anything");
    let o = merge().output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(temp_files(&merged), Vec::<String>::new(), "the finished merge swept the killed runs' temp files");
    for f in ["height.tif", "height.png", "height.ter", "height.r32"] {
        assert_eq!(std::fs::read(single.join(f)).unwrap(), std::fs::read(merged.join(f)).unwrap(), "{f} differs");
    }
    for d in [single, s1, s2, merged] {
        std::fs::remove_dir_all(d).unwrap();
    }
}

/// Issue #26 fault test: a full disk (a 256 KiB tmpfs; skipped where mounting needs privileges
/// this machine lacks) fails the bake with exit 1 and an error that says so, and leaves no
/// temp file and no manifest that claims complete.
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_fails_cleanly() {
    let mnt = tmp_path("full-disk");
    std::fs::create_dir_all(&mnt).unwrap();
    let mounted = Command::new("mount").args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"]).arg(&mnt).status().is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("skipping a_full_disk_fails_cleanly: cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN)");
        let _ = std::fs::remove_dir_all(&mnt);
        return;
    }
    let out = mnt.join("out");
    let o = trnbake().args(["bake", "--backend", "cpu", "--spacing", "8", "--maps", "height", "--format", "tif,png", "-q", "-o"]).arg(&out).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let leftovers = temp_files(&out);
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap_or_default();
    let _ = Command::new("umount").arg(&mnt).status();
    let _ = std::fs::remove_dir_all(&mnt);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.to_lowercase().contains("no space left"), "{err}");
    assert_eq!(leftovers, Vec::<String>::new(), "temp files left on the full disk");
    assert!(!manifest.contains("\"complete\""), "a failed bake wrote a complete manifest: {manifest}");
}
