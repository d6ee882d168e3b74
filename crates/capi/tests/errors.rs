//! The C API's error paths, called from Rust exactly as C calls them: NULL pointers, short
//! buffers, bad regions, missing and damaged files. None may crash; each returns its error
//! value and leaves a message. Runs on the built-in demo terrain, written to a temporary file.

use std::ffi::{CStr, CString};
use std::path::PathBuf;
use std::ptr::{null, null_mut};

use trnbake::*;

fn last_error() -> Option<String> {
    let p = trnbake_last_error();
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

fn c(s: &str) -> CString {
    CString::new(s).unwrap()
}

fn tmp(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// The demo terrain as a `.trn` file, opened through the C API.
fn demo() -> *mut TrnbakeTerrain {
    // Written once, under this process's own name and renamed into place whole: the tests
    // run on parallel threads, and this binary runs twice in CI (with and without the
    // `navmesh` feature) over the same folder; a file rewritten while another opened it
    // once read as empty.
    static PATH: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let path = PATH.get_or_init(|| {
        let path = tmp(&format!("capi-demo-{}.trn", std::process::id()));
        let partial = path.with_extension("partial");
        std::fs::write(&partial, trnbake_swg::model::json::demo_terrain().to_bytes()).unwrap();
        std::fs::rename(&partial, &path).unwrap();
        path
    });
    let t = unsafe { trnbake_terrain_open(c(path.to_str().unwrap()).as_ptr(), null()) };
    assert!(!t.is_null(), "{:?}", last_error());
    assert_eq!(last_error(), None);
    t
}

#[test]
fn null_pointers_are_errors() {
    unsafe {
        assert!(trnbake_terrain_open(null(), null()).is_null());
        assert_eq!(last_error().as_deref(), Some("path is NULL"));

        assert!(trnbake_height_at(null(), 1.0, 2.0).is_nan());
        assert_eq!(last_error().as_deref(), Some("the terrain handle is NULL"));
        assert!(trnbake_map_width(null()).is_nan());
        assert!(last_error().is_some());

        let (xs, zs, mut out) = ([0.0f32; 4], [0.0f32; 4], [0.0f32; 4]);
        assert_ne!(trnbake_heights(null(), 4, xs.as_ptr(), zs.as_ptr(), out.as_mut_ptr()), 0);
        let mut w = 0.0f32;
        assert!(trnbake_water_height_at(null(), 0.0, 0.0, &mut w) < 0);
        assert_ne!(trnbake_bake_region(null(), 0.0, 0.0, 1.0, 2, 2, out.as_mut_ptr(), 4), 0);

        let t = demo();
        assert_ne!(trnbake_heights(t, 4, null(), zs.as_ptr(), out.as_mut_ptr()), 0);
        assert_eq!(last_error().as_deref(), Some("xs is NULL"));
        assert_ne!(trnbake_heights(t, 4, xs.as_ptr(), null(), out.as_mut_ptr()), 0);
        assert_eq!(last_error().as_deref(), Some("zs is NULL"));
        assert_ne!(trnbake_heights(t, 4, xs.as_ptr(), zs.as_ptr(), null_mut()), 0);
        assert_eq!(last_error().as_deref(), Some("out is NULL"));
        assert!(trnbake_water_height_at(t, 0.0, 0.0, null_mut()) < 0);
        assert_eq!(last_error().as_deref(), Some("out is NULL"));
        assert_ne!(trnbake_bake_region(t, 0.0, 0.0, 1.0, 2, 2, null_mut(), 4), 0);
        assert_eq!(last_error().as_deref(), Some("out is NULL"));

        // A successful call clears the message; freeing NULL is a no-op.
        assert!(trnbake_height_at(t, 0.0, 0.0).is_finite());
        assert_eq!(last_error(), None);
        trnbake_terrain_free(null_mut());
        trnbake_terrain_free(t);
    }
}

#[test]
fn short_buffers_and_bad_regions_are_errors() {
    unsafe {
        let t = demo();
        let mut out = vec![f32::NAN; 12];
        assert_ne!(trnbake_bake_region(t, -10.0, -10.0, 5.0, 4, 3, out.as_mut_ptr(), 11), 0);
        let e = last_error().unwrap();
        assert!(e.contains("holds 11 floats") && e.contains("4x3") && e.contains("needs 12"), "{e}");
        assert!(out.iter().all(|h| h.is_nan()), "nothing is written on error");

        assert_ne!(trnbake_bake_region(t, -10.0, -10.0, 5.0, 0, 3, out.as_mut_ptr(), 12), 0);
        // Said once (issue 37 item 16: not "empty grid 0x3: empty grid 0x3").
        let e = last_error().unwrap();
        assert_eq!(e.matches("empty grid 0x3").count(), 1, "{e}");
        assert_ne!(trnbake_bake_region(t, -10.0, -10.0, 0.0, 4, 3, out.as_mut_ptr(), 12), 0);
        assert!(last_error().unwrap().contains("spacing"));
        assert_ne!(trnbake_bake_region(t, -10.0, -10.0, f64::NAN, 4, 3, out.as_mut_ptr(), 12), 0);
        assert_ne!(trnbake_bake_region(t, f64::INFINITY, -10.0, 1.0, 4, 3, out.as_mut_ptr(), 12), 0);
        assert!(last_error().unwrap().contains("origin"));

        // A larger buffer is fine: the region fills its first cols*rows floats, row 0 south.
        let mut big = vec![f32::NAN; 20];
        assert_eq!(trnbake_bake_region(t, -10.0, -10.0, 5.0, 4, 3, big.as_mut_ptr(), 20), 0);
        assert!(big[..12].iter().all(|h| h.is_finite()) && big[12..].iter().all(|h| h.is_nan()));
        for j in 0..3 {
            for i in 0..4 {
                let h = trnbake_height_at(t, -10.0 + 5.0 * i as f32, -10.0 + 5.0 * j as f32);
                assert_eq!(big[j * 4 + i].to_bits(), h.to_bits(), "post ({i}, {j})");
            }
        }
        trnbake_terrain_free(t);
    }
}

#[test]
fn batches_equal_single_calls_and_may_be_in_place() {
    unsafe {
        let t = demo();
        let w = trnbake_map_width(t);
        assert!(w > 0.0);
        let n = 1000;
        let mut xs: Vec<f32> = (0..n).map(|i| -w / 2.0 + w * (i as f32 * 0.618_034).fract()).collect();
        let zs: Vec<f32> = (0..n).map(|i| -w / 2.0 + w * (i as f32 * 0.414_213_5).fract()).collect();
        let single: Vec<f32> = xs.iter().zip(&zs).map(|(&x, &z)| trnbake_height_at(t, x, z)).collect();
        let mut out = vec![0.0f32; n];
        assert_eq!(trnbake_heights(t, n, xs.as_ptr(), zs.as_ptr(), out.as_mut_ptr()), 0);
        assert_eq!(out.iter().map(|h| h.to_bits()).collect::<Vec<_>>(), single.iter().map(|h| h.to_bits()).collect::<Vec<_>>());
        // `out` may be `xs`: the points are read first.
        assert_eq!(trnbake_heights(t, n, xs.as_ptr(), zs.as_ptr(), xs.as_mut_ptr()), 0);
        assert_eq!(xs, out);
        assert_eq!(trnbake_heights(t, 0, xs.as_ptr(), zs.as_ptr(), out.as_mut_ptr()), 0);
        trnbake_terrain_free(t);
    }
}

#[test]
fn missing_and_damaged_files_name_the_file() {
    unsafe {
        let missing = tmp("no-such-planet.trn");
        assert!(trnbake_terrain_open(c(missing.to_str().unwrap()).as_ptr(), null()).is_null());
        let e = last_error().unwrap();
        assert!(e.contains("no-such-planet.trn"), "{e}");

        // A file cut short: the message names the file and where in it the reader stopped.
        let bytes = trnbake_swg::model::json::demo_terrain().to_bytes();
        let cut = tmp("capi-cut.trn");
        std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
        assert!(trnbake_terrain_open(c(cut.to_str().unwrap()).as_ptr(), null()).is_null());
        let e = last_error().unwrap();
        assert!(e.contains("capi-cut.trn") && e.contains("offset"), "{e}");
    }
}

/// Off the map there is no ground: a single call gives NaN with the error set, a batch NaN at
/// those points (the others set) and their count, a region wholly off the map or with posts
/// that overflow single precision is refused (issue 37 item 5).
#[test]
fn off_map_points_and_regions_are_refused() {
    unsafe {
        let t = demo();
        let w = trnbake_map_width(t);
        let half = w / 2.0;
        assert!(trnbake_height_at(t, 99999.0, 0.0).is_nan());
        let e = last_error().unwrap();
        assert!(e.contains("99999,0 is off the map") && e.contains(&format!("from {} to {half} m", -half)), "{e}");
        assert!(trnbake_height_at(t, 0.0, -half - 1.0).is_nan());
        assert!(trnbake_height_at(t, f32::NAN, 0.0).is_nan());
        assert!(last_error().unwrap().contains("off the map"));
        // The edges are on the map.
        assert!(trnbake_height_at(t, half, -half).is_finite());
        assert_eq!(last_error(), None);
        let mut wh = 0.0f32;
        assert!(trnbake_water_height_at(t, 99999.0, 0.0, &mut wh) < 0);
        assert!(last_error().unwrap().contains("off the map"));

        // A batch: NaN where off the map, the count returned, the first point named.
        let xs = [0.0f32, 99999.0, 10.0, -99999.0];
        let zs = [0.0f32, 0.0, 10.0, 5.0];
        let mut out = [0.0f32; 4];
        assert_eq!(trnbake_heights(t, 4, xs.as_ptr(), zs.as_ptr(), out.as_mut_ptr()), 2);
        assert!(out[1].is_nan() && out[3].is_nan());
        assert_eq!(out[0].to_bits(), trnbake_height_at(t, 0.0, 0.0).to_bits());
        assert_eq!(out[2].to_bits(), trnbake_height_at(t, 10.0, 10.0).to_bits());
        assert_eq!(trnbake_heights(t, 4, xs.as_ptr(), zs.as_ptr(), out.as_mut_ptr()), 2);
        let e = last_error().unwrap();
        assert!(e.contains("2 of 4 points are off the map") && e.contains("99999,0"), "{e}");

        // Regions: wholly off the map, or absurd, are refused; reaching past the edge is baked.
        let mut buf = vec![f32::NAN; 16];
        assert_ne!(trnbake_bake_region(t, 99999.0, 0.0, 1.0, 4, 4, buf.as_mut_ptr(), 16), 0);
        assert!(last_error().unwrap().contains("entirely off the map"), "{:?}", last_error());
        assert!(buf.iter().all(|h| h.is_nan()), "nothing is written on error");
        assert_ne!(trnbake_bake_region(t, 1e300, 0.0, 1.0, 4, 4, buf.as_mut_ptr(), 16), 0);
        assert!(last_error().is_some());
        assert_ne!(trnbake_bake_region(t, -1e300, -1e300, 1e300, 4, 4, buf.as_mut_ptr(), 16), 0);
        assert!(last_error().unwrap().contains("not finite"), "{:?}", last_error());
        let x0 = f64::from(half) - 2.0;
        assert_eq!(trnbake_bake_region(t, x0, 0.0, 1.0, 4, 4, buf.as_mut_ptr(), 16), 0);
        assert!(buf.iter().all(|h| h.is_finite()));
        trnbake_terrain_free(t);
    }
}

/// Issue 37 item 9: a point count larger than memory is an error return, not an abort of the
/// host (2^58 points: the copy's allocation failed, SIGABRT) nor a panic printed on its
/// stderr (2^61 − 1: a capacity overflow); a panic caught inside a call prints nothing either.
/// Run in a child process, whose stderr is checked to be empty.
#[test]
fn huge_point_lists_are_errors_with_nothing_on_stderr() {
    const TEST: &str = "huge_point_lists_are_errors_with_nothing_on_stderr";
    if std::env::var_os("TRNBAKE_CAPI_CHILD").is_none() {
        let o = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", TEST, "--nocapture", "--test-threads=1"])
            .env("TRNBAKE_CAPI_CHILD", "1")
            .output()
            .unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        assert!(o.status.success(), "the child failed ({:?}):\n{stdout}\n{stderr}", o.status);
        assert!(stdout.contains("1 passed"), "{stdout}");
        assert_eq!(stderr, "", "the library wrote on the host's stderr");
        return;
    }
    unsafe {
        let t = demo();
        let (xs, zs, mut out) = ([0.0f32; 4], [0.0f32; 4], [0.0f32; 4]);
        for n in [1usize << 58, (1usize << 61) - 1, usize::MAX / 8, usize::MAX] {
            let rc = trnbake_heights(t, n, xs.as_ptr(), zs.as_ptr(), out.as_mut_ptr());
            assert!(rc < 0, "n = {n}: {rc}");
            let e = last_error().unwrap();
            assert!(e.contains(&format!("the point list of {n} floats is larger than memory can hold")), "{e}");
        }
        // The handle still works, and a caught panic is an error return with nothing printed.
        assert!(trnbake_height_at(t, 0.0, 0.0).is_finite());
        assert_eq!(guard("test_fn", -1, || -> Result<i32, CapiError> { panic!("boom") }), -1);
        assert_eq!(last_error().as_deref(), Some("panic inside test_fn: boom"));
        trnbake_terrain_free(t);
    }
}
