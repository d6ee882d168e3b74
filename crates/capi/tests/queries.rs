//! The server queries of the C API (slope, normal, height range, line of sight; single and
//! batch) against the Rust ones of `trnbake_swg::query`, on the demo terrain: the same values,
//! from any number of threads, and off-map input as NaN / negative returns with a message.

use std::ffi::{CStr, CString};
use std::ptr::null;

use trnbake::*;
use trnbake_swg::eval::HeightEvaluator;
use trnbake_swg::plan::HeightOptions;

fn last_error() -> Option<String> {
    let p = trnbake_last_error();
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

struct Handle(*mut TrnbakeTerrain);
// SAFETY: the C API promises a handle may be shared by threads (TrnbakeTerrain is Sync).
unsafe impl Sync for Handle {}
unsafe impl Send for Handle {}

fn demo() -> (Handle, HeightEvaluator) {
    let terrain = trnbake_swg::model::json::demo_terrain();
    let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("capi-queries-{:?}.trn", std::thread::current().id()));
    std::fs::write(&path, terrain.to_bytes()).unwrap();
    let p = CString::new(path.to_str().unwrap()).unwrap();
    let t = unsafe { trnbake_terrain_open(p.as_ptr(), null()) };
    assert!(!t.is_null(), "{:?}", last_error());
    (Handle(t), HeightEvaluator::new(&terrain, &HeightOptions::default()).unwrap())
}

fn points(n: usize, half: f32) -> Vec<(f32, f32)> {
    let mut s = 7u64;
    let mut next = || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * half
    };
    (0..n).map(|_| (next(), next())).collect()
}

#[test]
fn slopes_and_normals_match_the_rust_queries_single_batch_and_threaded() {
    let (t, e) = demo();
    let half = e.half_width();
    let pts = points(2000, half * 0.99);
    let (xs, zs): (Vec<f32>, Vec<f32>) = pts.iter().copied().unzip();
    let mut batch = vec![0.0f32; pts.len()];
    assert_eq!(unsafe { trnbake_slopes(t.0, pts.len(), xs.as_ptr(), zs.as_ptr(), batch.as_mut_ptr()) }, 0);
    let mut max_slope = 0.0f32;
    for (i, &(x, z)) in pts.iter().enumerate() {
        let rust = e.slope_at(x, z).unwrap();
        assert_eq!(unsafe { trnbake_slope_at(t.0, x, z) }.to_bits(), rust.to_bits());
        assert_eq!(batch[i].to_bits(), rust.to_bits());
        let mut n = [0.0f32; 3];
        assert_eq!(unsafe { trnbake_normal_at(t.0, x, z, n.as_mut_ptr()) }, 0);
        assert_eq!(n, e.normal_at(x, z).unwrap());
        max_slope = max_slope.max(rust);
    }
    assert!(max_slope > 1.0, "the demo terrain has slopes: {max_slope}");
    // Threads share the handle; each sees its own errors.
    std::thread::scope(|s| {
        for k in 0..4 {
            let (t, e, pts) = (&t, &e, &pts);
            s.spawn(move || {
                for &(x, z) in pts.iter().skip(k).step_by(4) {
                    assert_eq!(unsafe { trnbake_slope_at(t.0, x, z) }, e.slope_at(x, z).unwrap());
                }
                assert!(unsafe { trnbake_slope_at(t.0, half * 2.0, 0.0) }.is_nan());
                assert!(last_error().unwrap().contains("off the map"));
            });
        }
    });
    // Off the map: NaN and a message, single and batch.
    assert!(unsafe { trnbake_slope_at(t.0, half + 1.0, 0.0) }.is_nan());
    assert!(last_error().unwrap().contains("off the map"));
    let (xs, zs) = ([0.0f32, half * 3.0, 1.0], [0.0f32, 0.0, 2.0]);
    let mut out = [0.0f32; 3];
    assert_eq!(unsafe { trnbake_slopes(t.0, 3, xs.as_ptr(), zs.as_ptr(), out.as_mut_ptr()) }, 1);
    assert!(out[1].is_nan() && out[0] == e.slope_at(0.0, 0.0).unwrap() && out[2] == e.slope_at(1.0, 2.0).unwrap());
    assert!(last_error().unwrap().starts_with("1 of 3 points are off the map"));
    let mut n = [9.0f32; 3];
    assert!(unsafe { trnbake_normal_at(t.0, f32::NAN, 0.0, n.as_mut_ptr()) } < 0 && n == [9.0; 3]);
    unsafe { trnbake_terrain_free(t.0) };
}

#[test]
fn height_range_and_line_of_sight_match_the_rust_queries() {
    let (t, e) = demo();
    let (mut lo, mut hi) = (0.0f32, 0.0f32);
    assert_eq!(unsafe { trnbake_height_range(t.0, -200.0, -150.0, 120.0, 90.0, 3.0, &mut lo, &mut hi) }, 0);
    let r = e.height_range(-200.0, -150.0, 120.0, 90.0, 3.0).unwrap();
    assert_eq!((lo, hi), (r.min, r.max));
    assert!(hi > lo);
    assert!(unsafe { trnbake_height_range(t.0, 0.0, 0.0, 1e6, 1.0, 1.0, &mut lo, &mut hi) } < 0);
    assert!(last_error().unwrap().contains("off the map"));
    assert!(unsafe { trnbake_height_range(t.0, 0.0, 0.0, 1.0, 1.0, -1.0, &mut lo, &mut hi) } < 0);
    assert!(last_error().unwrap().contains("spacing"));

    // Segments from 1.7 m above the ground to points around: some clear, some blocked.
    let pts = points(400, e.half_width() * 0.5);
    let mut segs = Vec::new();
    for w in pts.chunks(2) {
        let (a, b) = (w[0], w[1]);
        segs.extend([a.0, e.height_at(a.0, a.1) + 1.7, a.1, b.0, e.height_at(b.0, b.1) + 1.7, b.1]);
    }
    let n = segs.len() / 6;
    let mut out = vec![7i32; n];
    assert_eq!(unsafe { trnbake_lines_of_sight(t.0, n, segs.as_ptr(), 0.5, out.as_mut_ptr()) }, 0);
    let mut clear = 0;
    for (i, s) in segs.chunks(6).enumerate() {
        let rust = e.line_of_sight([s[0], s[1], s[2]], [s[3], s[4], s[5]], 0.5).unwrap();
        assert_eq!(out[i], i32::from(rust));
        assert_eq!(unsafe { trnbake_line_of_sight(t.0, s[0], s[1], s[2], s[3], s[4], s[5], 0.5) }, i32::from(rust));
        clear += usize::from(rust);
    }
    assert!(clear > 0 && clear < n, "both answers occur: {clear} of {n} clear");
    // One end off the map: -1 for that segment, the others set.
    segs[0] = 1e7;
    assert_eq!(unsafe { trnbake_lines_of_sight(t.0, n, segs.as_ptr(), 0.5, out.as_mut_ptr()) }, 1);
    assert_eq!(out[0], -1);
    assert!(last_error().unwrap().contains("segment 0"));
    assert!(unsafe { trnbake_lines_of_sight(t.0, n, segs.as_ptr(), 0.0, out.as_mut_ptr()) } < 0);
    unsafe { trnbake_terrain_free(t.0) };
}
