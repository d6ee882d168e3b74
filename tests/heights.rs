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
