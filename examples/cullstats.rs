use trnbake::{eval::HeightEvaluator, plan::*, trn::Terrain};
fn main() {
    let t = Terrain::load(std::path::Path::new("../shared/data/swg/terrain/tatooine.trn")).unwrap();
    let e = HeightEvaluator::new(&t, &HeightOptions { data_root: Some("../shared/data/swg".into()), ..Default::default() }).unwrap();
    let p = &e.plan;
    for (x, z) in [(-1000.0f32, -1000.0f32), (0.0, 0.0), (500.0, -700.0), (-5000.0, 3000.0)] {
        let tl = p.tile_layers([x, z, x + 256.0, z + 256.0]);
        let mut fr = 0; let mut ff = 0; let mut fams = std::collections::BTreeSet::new(); let mut bnd = 0; let mut filt = 0;
        for tlay in &tl.layers {
            let l = &p.layers[tlay.layer as usize];
            bnd += tlay.boundary_count;
            for f in &p.filters[l.filter_start as usize..(l.filter_start + l.filter_count) as usize] { filt += 1; if f.kind == FILTER_FRACTAL { ff += 1; fams.insert(f.family); } }
            for a in &p.affectors[l.affector_start as usize..(l.affector_start + l.affector_count) as usize] { if a.kind == AFFECTOR_HEIGHT_FRACTAL { fr += 1; fams.insert(a.index); } }
        }
        let oct: i32 = fams.iter().map(|&f| p.fractals[f as usize].params.octaves).sum();
        println!("tile at ({x},{z}): layers {} boundaries {} filters {} (fractal {ff}) AHFR {fr} unique families {} total octaves {}", tl.layers.len(), bnd, filt, fams.len(), oct);
    }
}
