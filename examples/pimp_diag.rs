use trnbake::plan::HeightOptions;
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let t = trnbake::trn::Terrain::load(a[1].as_ref()).unwrap();
    let opts = HeightOptions { data_root: Some("../shared/data/swg".into()), ..Default::default() };
    let e = trnbake::eval::HeightEvaluator::new(&t, &opts).unwrap();
    let s = trnbake::surface::SurfaceEvaluator::new(&t, &opts, Default::default()).unwrap();
    let pimp = t.flora_map.as_ref().unwrap();
    let w = pimp.control.width;
    let cell = t.header.map_width / w as f32;
    let half = t.header.map_width * 0.5;
    let lo: f32 = a[2].parse().unwrap();
    let mut pick = trnbake::fidelity::CellPicker::new(1);
    let mut hist = std::collections::BTreeMap::new();
    let mut n = 0;
    for _ in 0..20000 {
        let (col, row) = (pick.below(w as u64) as u32, pick.below(w as u64) as u32);
        let (x, z) = (-half + (col as f32 + 0.5) * cell, -half + (row as f32 + 0.5) * cell);
        let mut h = [[0.0f32; 3]; 3];
        for dz in 0..3 { for dx in 0..3 { h[dz][dx] = e.height_at(x + (dx as f32 - 1.0) * 2.0, z + (dz as f32 - 1.0) * 2.0); } }
        let normal = trnbake::surface::normals::post_normal(Default::default(), &h, 2.0, ((x + half) / 2.0) as i64, ((z + half) / 2.0) as i64);
        let r = s.at(x, z, trnbake::surface::Ground { height: h[1][1], normal });
        let (f, p) = r.flora[0].most_likely();
        if p >= lo && f != 0 {
            n += 1;
            let truth = pimp.get(col, row).unwrap();
            *hist.entry((f, truth, format!("{:?}", r.flora[0].0))).or_insert(0) += 1;
        }
    }
    println!("{n} cells");
    for (k, v) in hist { if v > 2 { println!("{v:5} pred {} truth {} stack {}", k.0, k.1, k.2); } }
}
