use trnbake::{bench::*, eval::HeightEvaluator, plan::HeightOptions, trn::Terrain};
fn main() {
    let t = Terrain::load(std::path::Path::new("../shared/data/swg/terrain/tatooine.trn")).unwrap();
    let e = HeightEvaluator::new(&t, &HeightOptions { data_root: Some("../shared/data/swg".into()), ..Default::default() }).unwrap();
    println!("layers in height plan: {}, affectors {}", e.plan.layers.len(), e.plan.affectors.len());
    for (name, g, block) in [("16m full", square_grid(-8192.0, -8192.0, 16.0, 1025), 64), ("2m region", square_grid(-1024.0, -1024.0, 2.0, 1024), 128), ("2m region nocull", square_grid(-1024.0, -1024.0, 2.0, 1024), 1024)] {
        let (s, _) = time_cpu(&e, &g, block, 1);
        println!("{name}: {:.3} s, {:.2} M posts/s", s, (g.cols as f64 * g.rows as f64) / s / 1e6);
    }
}
