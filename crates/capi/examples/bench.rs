//! Points per second of the C API, as an emulator would call it: `trnbake_height_at` on one
//! thread and the batch `trnbake_heights` (all cores) over the same random points on a terrain,
//! and `trnbake_bake_region` (all cores) over a grid of as many posts spanning the map; the
//! batch `trnbake_slopes` over the same points; and `trnbake_lines_of_sight` (0.5 m step) on
//! 10,000 random segments against a dense 0.25 m reference (issue #40). A
//! benchmark to run by hand, not a timed test:
//!
//! ```text
//! cargo run --release -p trnbake-capi --example bench -- [FILE.trn [DATA_ROOT]] [--points N]
//! ```
//!
//! Default: `../shared/data/swg/terrain/tatooine.trn` from the workspace root, 200 000 points.

use std::ffi::{CStr, CString};
use std::time::Instant;

use trnbake::*;

fn main() {
    let mut files = Vec::new();
    let mut n = 200_000usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--points" {
            n = args.next().and_then(|v| v.parse().ok()).expect("--points N");
        } else {
            files.push(a);
        }
    }
    let trn = files.first().cloned().unwrap_or_else(|| "../shared/data/swg/terrain/tatooine.trn".into());
    let root = files.get(1).map(|r| CString::new(r.as_str()).unwrap());

    let t0 = Instant::now();
    let path = CString::new(trn.as_str()).unwrap();
    let t = unsafe { trnbake_terrain_open(path.as_ptr(), root.as_ref().map_or(std::ptr::null(), |r| r.as_ptr())) };
    if t.is_null() {
        eprintln!("cannot open {trn}: {}", unsafe { CStr::from_ptr(trnbake_last_error()) }.to_string_lossy());
        std::process::exit(1);
    }
    let open_s = t0.elapsed().as_secs_f64();
    let width = unsafe { trnbake_map_width(t) };

    // Uniform points over the map from a fixed LCG: the same points every run, no rand crate.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((state >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * width
    };
    let xs: Vec<f32> = (0..n).map(|_| next()).collect();
    let zs: Vec<f32> = (0..n).map(|_| next()).collect();

    let t0 = Instant::now();
    let single: Vec<f32> = xs.iter().zip(&zs).map(|(&x, &z)| unsafe { trnbake_height_at(t, x, z) }).collect();
    let single_s = t0.elapsed().as_secs_f64();

    let mut batch = vec![0.0f32; n];
    let t0 = Instant::now();
    let rc = unsafe { trnbake_heights(t, n, xs.as_ptr(), zs.as_ptr(), batch.as_mut_ptr()) };
    let batch_s = t0.elapsed().as_secs_f64();
    assert_eq!(rc, 0);
    assert!(single.iter().zip(&batch).all(|(a, b)| a.to_bits() == b.to_bits()), "batch != single calls");

    // A square region of about the same number of posts over the whole map, so it samples the
    // same layers as the random points (a small region near one spot would flatter it).
    let side = (n as f64).sqrt().ceil() as u32;
    let mut region = vec![0.0f32; side as usize * side as usize];
    let spacing = f64::from(width) / f64::from(side);
    let t0 = Instant::now();
    let rc = unsafe { trnbake_bake_region(t, -f64::from(width) / 2.0, -f64::from(width) / 2.0, spacing, side, side, region.as_mut_ptr(), region.len()) };
    let region_s = t0.elapsed().as_secs_f64();
    assert_eq!(rc, 0);

    let mut slopes = vec![0.0f32; n];
    let t0 = Instant::now();
    let rc = unsafe { trnbake_slopes(t, n, xs.as_ptr(), zs.as_ptr(), slopes.as_mut_ptr()) };
    let slopes_s = t0.elapsed().as_secs_f64();
    assert_eq!(rc, 0);

    // Segments of up to 300 m from 1.7 m above the ground (eye height) to 1.7 m above another
    // point: the line-of-sight question of a server, at 0.5 m and at the 0.25 m reference.
    let nseg = 10_000usize;
    let mut segs = Vec::with_capacity(nseg * 6);
    for i in 0..nseg {
        let (ax, az) = (xs[i] * 0.95, zs[i] * 0.95);
        let (bx, bz) = ((ax + next() / width * 600.0).clamp(-width / 2.0, width / 2.0), (az + next() / width * 600.0).clamp(-width / 2.0, width / 2.0));
        let (ha, hb) = unsafe { (trnbake_height_at(t, ax, az), trnbake_height_at(t, bx, bz)) };
        segs.extend([ax, ha + 1.7, az, bx, hb + 1.7, bz]);
    }
    let (mut los, mut dense) = (vec![0i32; nseg], vec![0i32; nseg]);
    let t0 = Instant::now();
    assert_eq!(unsafe { trnbake_lines_of_sight(t, nseg, segs.as_ptr(), 0.5, los.as_mut_ptr()) }, 0);
    let los_s = t0.elapsed().as_secs_f64();
    assert_eq!(unsafe { trnbake_lines_of_sight(t, nseg, segs.as_ptr(), 0.25, dense.as_mut_ptr()) }, 0);
    let agree = los.iter().zip(&dense).filter(|(a, b)| a == b).count();
    let clear = los.iter().filter(|&&v| v == 1).count();

    let threads = std::thread::available_parallelism().map_or(1, |p| p.get());
    println!("{trn}: opened in {open_s:.2} s, map {width} m, {threads} cores");
    println!("trnbake_height_at, 1 thread:      {n} points in {single_s:.3} s = {:.3} M points/s", n as f64 / single_s / 1e6);
    println!("trnbake_heights, all cores:       {n} points in {batch_s:.3} s = {:.3} M points/s", n as f64 / batch_s / 1e6);
    println!("trnbake_bake_region, all cores:   {side}x{side} posts over the map in {region_s:.3} s = {:.3} M posts/s", region.len() as f64 / region_s / 1e6);
    println!("trnbake_slopes, all cores:        {n} points in {slopes_s:.3} s = {:.3} M points/s", n as f64 / slopes_s / 1e6);
    println!(
        "trnbake_lines_of_sight, 0.5 m:    {nseg} segments ({clear} clear) in {los_s:.3} s = {:.0} segments/s; agree with 0.25 m sampling: {agree} of {nseg}",
        nseg as f64 / los_s
    );
    unsafe { trnbake_terrain_free(t) };
}
