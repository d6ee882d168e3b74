//! Fidelity against the original tool's baked ground truth (swg-trn §2.6, §9.2):
//! PFPM flora heights on every 0015 planet, WMAP water on yavin4.

mod common;
use trnbake_swg::eval::HeightEvaluator;
use trnbake_swg::fidelity::{check_pfpm, check_wmap};
use trnbake_swg::model::Terrain;

fn load(name: &str) -> Option<(Terrain, HeightEvaluator)> {
    let t = common::planet(name)?;
    let e = HeightEvaluator::new(&t, &common::real_options()).unwrap();
    Some((t, e))
}

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn pfpm_heights_match_on_every_0015_planet() {
    for name in ["tatooine", "naboo", "yavin4", "dathomir", "mustafar", "kashyyyk_main", "09"] {
        let Some((t, e)) = load(name) else { continue };
        let r = check_pfpm(&t, &e, 1000, 1).expect("0015 files carry PIMP/PFPM");
        eprintln!("{name}: PFPM {}/{} ({:.2} %)", r.passed, r.cells, 100.0 * r.rate());
        assert!(r.cells >= 42, "{name}: too few flora cells sampled ({})", r.cells);
        assert!(r.rate() >= 0.999, "{name}: PFPM pass rate {:.4} < 99.9 %: {:?}", r.rate(), &r.misses[..r.misses.len().min(5)]);
    }
}

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn wmap_water_bits_match_on_yavin4() {
    let Some((t, e)) = load("yavin4") else { return };
    let r = check_wmap(&t, &e, 1000, 9, 1).expect("yavin4 has global water and baked maps");
    eprintln!("yavin4: WMAP {}/{}", r.agree, r.chunks);
    assert!(r.rate() >= 0.99, "WMAP agreement {:.4}: {:?}", r.rate(), r.misses);
}
