use trnbake::{bench::*, eval::HeightEvaluator, plan::HeightOptions, trn::Terrain};
fn main() {
    let t = Terrain::load(std::path::Path::new("../shared/data/swg/terrain/tatooine.trn")).unwrap();
    let e = HeightEvaluator::new(&t, &HeightOptions { data_root: Some("../shared/data/swg".into()), ..Default::default() }).unwrap();
    let g = square_grid(-1024.0, -1024.0, 2.0, 512);
    let (s, _) = time_cpu(&e, &g, 128, 1);
    println!("{s}");
}
