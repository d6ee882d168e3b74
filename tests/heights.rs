//! Height-pass vectors of swg-trn §9.3 and §5.6 (issue: CPU height reference).

mod common;
use trnbake_swg::eval::HeightEvaluator;
use trnbake_swg::model::Terrain;
use trnbake_swg::plan::HeightOptions;

fn evaluator(rel: &str, opts: HeightOptions) -> Option<HeightEvaluator> {
    let path = common::real_file(rel)?;
    let t = Terrain::load(&path).unwrap();
    let opts = HeightOptions { data_root: Some(common::swg_root()), ..opts };
    Some(HeightEvaluator::new(&t, &opts).unwrap())
}

const TATOOINE_VECTORS: [(f32, f32, f64); 10] = [
    (0.0, 0.0, 195.0000),
    (3528.0, -4804.0, 4.0399),
    (-2600.0, -5500.0, 0.0),
    (-1290.0, -3590.0, 12.0),
    (1000.0, 1000.0, 7.5117),
    (-4000.0, 6300.0, 60.0),
    (-6000.0, -6200.0, 90.0),
    (5000.0, 5000.0, 57.0),
    (-7000.0, 7000.0, 213.7331),
    (7500.0, -100.0, 91.6952),
];

fn check(e: &HeightEvaluator, x: f32, z: f32, want: f64, tol: f64) {
    let got = e.height_at(x, z) as f64;
    assert!((got - want).abs() <= tol, "h({x}, {z}) = {got}, expected {want} ± {tol}");
}

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn tatooine_0015_heights_with_bitmap_gain() {
    let Some(e) = evaluator("terrain/tatooine.trn", HeightOptions::default()) else { return };
    for (x, z, want) in TATOOINE_VECTORS {
        check(&e, x, z, want, 1e-3);
    }
}

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn tatooine_0015_without_bitmap_gain() {
    let Some(e) = evaluator("terrain/tatooine.trn", HeightOptions { bitmap_gain: false, ..Default::default() }) else { return };
    check(&e, 3528.0, -4804.0, 3.0399, 1e-3);
}

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn tatooine_pre_cu_heights() {
    let Some(e) = evaluator("extra/tatooine_pre_cu.trn", HeightOptions::default()) else { return };
    for (x, z, want) in TATOOINE_VECTORS {
        let want = if (x, z) == (3528.0, -4804.0) { 4.5100 } else { want };
        check(&e, x, z, want, 1e-3);
    }
}

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn test_terrain_known_heights() {
    let Some(e) = evaluator("extra/test_terrain.trn", HeightOptions::default()) else { return };
    check(&e, -238.0, -166.0, 30.36765, 0.01);
    check(&e, -45.1, 49.0, 83.294, 0.1);
}

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn point_and_batch_queries_agree() {
    let Some(e) = evaluator("terrain/tatooine.trn", HeightOptions::default()) else { return };
    let pts: Vec<(f32, f32)> = TATOOINE_VECTORS.iter().map(|v| (v.0, v.1)).collect();
    let batch = e.heights_at(&pts);
    for (p, h) in pts.iter().zip(batch) {
        assert_eq!(e.height_at(p.0, p.1).to_bits(), h.to_bits());
    }
}

/// Off the map there is no ground (issue 37 item 5): `try_height_at` is an `OffMap` error
/// naming the point and the extent, `height_at` and `heights_at` give NaN there, the edges are
/// on the map, and `check_region` refuses a region wholly off the map or with absurd posts.
#[test]
fn off_map_points_have_no_height() {
    use trnbake_swg::eval::{Grid, OffMap};
    let t = trnbake_swg::model::json::demo_terrain();
    let e = HeightEvaluator::new(&t, &HeightOptions::default()).unwrap();
    let half = e.half_width();
    assert_eq!(f64::from(half), t.header.half_width());
    let err = e.try_height_at(99999.0, 0.0).unwrap_err();
    assert_eq!(err, OffMap::Point { x: 99999.0, z: 0.0, half });
    assert_eq!(err.to_string(), format!("99999,0 is off the map ({})", t.header.extent_text()));
    assert!(e.height_at(99999.0, 0.0).is_nan());
    assert!(e.height_at(0.0, f32::NAN).is_nan());
    assert!(e.try_height_at(f32::INFINITY, 0.0).is_err());
    // The edges and corners are on the map, and agree with the unchecked evaluation.
    for (x, z) in [(half, half), (-half, -half), (0.0, half), (12.5, -3.0)] {
        assert_eq!(e.try_height_at(x, z).unwrap().to_bits(), e.height_anywhere(x, z).to_bits(), "({x}, {z})");
    }
    assert!(e.height_anywhere(99999.0, 0.0).is_finite(), "the rules still answer past the edge");
    let hs = e.heights_at(&[(0.0, 0.0), (half + 1.0, 0.0), (1.0, 1.0)]);
    assert!(hs[0].is_finite() && hs[1].is_nan() && hs[2].is_finite());
    let mut out = [0.0f32; 3];
    assert_eq!(e.heights_at_into(&[(0.0, 0.0), (half + 1.0, 0.0), (1.0, -99999.0)], &mut out), 2);
    assert_eq!(out[0].to_bits(), hs[0].to_bits());

    let grid = |x0: f64, z0: f64, spacing: f64| Grid { cols: 4, rows: 4, x0, z0, spacing };
    assert!(matches!(e.check_region(&grid(99999.0, 0.0, 1.0)), Err(OffMap::Region { .. })));
    assert!(matches!(e.check_region(&grid(1e300, 0.0, 1.0)), Err(OffMap::NotFinite { .. })));
    assert!(matches!(e.check_region(&grid(-1e300, -1e300, 1e300)), Err(OffMap::NotFinite { .. })));
    let msg = e.check_region(&grid(99999.0, 0.0, 1.0)).unwrap_err().to_string();
    assert!(msg.contains("lies entirely off the map"), "{msg}");
    assert_eq!(e.check_region(&grid(f64::from(half) - 2.0, 0.0, 1.0)), Ok(()), "reaching past the edge is baked");
}
