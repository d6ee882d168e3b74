//! The one file of `scs` that uses the SWG model and evaluator (the bridge the module graph
//! test allows): exact heights of a region of a `.trn`, its data root found as `bake` finds it.

use std::path::{Path, PathBuf};

use crate::export::PostGrid;

/// Heights of a `.trn` at posts `west_x + i·spacing`, `south_z + j·spacing` (SWG world
/// metres, x east, z north, origin at the map centre), row-major, row 0 = south, on the CPU.
pub fn swg_heights(path: &Path, grid: PostGrid, data_root: Option<PathBuf>, roads: bool) -> anyhow::Result<Vec<f32>> {
    let terrain = crate::swg::Terrain::load(path)?;
    let data_root = data_root.or_else(|| crate::swg::default_data_root(path));
    let opts = crate::plan::HeightOptions { roads, data_root, ..Default::default() };
    let eval = crate::eval::HeightEvaluator::new(&terrain, &opts)?;
    let g = crate::eval::Grid { x0: grid.west_x, z0: grid.south_z, spacing: grid.spacing, cols: grid.cols, rows: grid.rows };
    crate::bake::heights_in_memory(&eval, &g, None)
}

/// True when `path` looks like a SWG terrain (`.trn` extension or an IFF `FORM` header).
pub fn is_trn(path: &Path) -> bool {
    if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("trn")) {
        return true;
    }
    let mut head = [0u8; 4];
    std::fs::File::open(path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head)).is_ok() && &head == b"FORM"
}
