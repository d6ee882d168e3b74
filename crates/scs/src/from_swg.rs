//! The one file of `scs` that uses the SWG model and evaluator (the bridge the module graph
//! test allows): exact heights of a region of a `.trn`, its data root found as `bake` finds it.

use std::path::{Path, PathBuf};

use trnbake_swg::grid::Grid;

/// Heights of a `.trn` at posts `west_x + i·spacing`, `south_z + j·spacing` (SWG world
/// metres, x east, z north, origin at the map centre), row-major, row 0 = south, on the CPU.
pub fn swg_heights(path: &Path, grid: Grid, data_root: Option<PathBuf>, roads: bool) -> Result<Vec<f32>, SwgInputError> {
    let terrain = trnbake_swg::model::Terrain::load(path)?;
    let data_root = data_root.or_else(|| trnbake_swg::model::default_data_root(path));
    let opts = trnbake_swg::plan::HeightOptions { roads, data_root, ..Default::default() };
    let eval = trnbake_swg::eval::HeightEvaluator::new(&terrain, &opts)?;
    Ok(eval.grid_heights(&grid))
}

/// Why the heights of a `.trn` could not be had: the file, or the plan (a missing bitmap).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SwgInputError {
    #[error(transparent)]
    Load(#[from] trnbake_swg::model::LoadError),
    #[error(transparent)]
    Plan(#[from] trnbake_swg::plan::PlanError),
}

/// True when `path` looks like a SWG terrain (`.trn` extension or an IFF `FORM` header).
pub fn is_trn(path: &Path) -> bool {
    if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("trn")) {
        return true;
    }
    let mut head = [0u8; 4];
    std::fs::File::open(path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head)).is_ok() && &head == b"FORM"
}
