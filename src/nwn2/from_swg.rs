//! The one file that uses the SWG model and evaluator (`crate::trn`, `crate::eval`,
//! `crate::water`): heights at the area's vertices themselves (no resampling) and the water
//! level of each megatile. When the SWG model moves to `crate::swg`, only this file changes.

use std::path::Path;

use crate::eval::{Grid, HeightEvaluator};
use crate::plan::{HeightOptions, PlanError};
use crate::trn::{LoadError, Terrain};
use crate::water::WaterTables;

use super::walkmesh::VERTEX_SPACING;

#[derive(Debug, thiserror::Error)]
pub enum SwgError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("{}: {error}", path.display())]
    Plan { path: std::path::PathBuf, error: PlanError },
}

/// A loaded SWG terrain ready to be sampled.
pub struct SwgSource {
    terrain: Terrain,
    eval: HeightEvaluator,
}

impl SwgSource {
    pub fn open(path: &Path, opts: &HeightOptions) -> Result<SwgSource, SwgError> {
        let terrain = Terrain::load(path)?;
        let eval = HeightEvaluator::new(&terrain, opts).map_err(|error| SwgError::Plan { path: path.into(), error })?;
        Ok(SwgSource { terrain, eval })
    }

    /// The map's extent in world metres: (−size/2, −size/2, size/2, size/2).
    pub fn map_half_width(&self) -> f64 {
        f64::from(self.terrain.header.map_width) / 2.0
    }

    /// Heights of `cols × rows` vertices at 5/3 m spacing from world (x0, z0), row-major from
    /// the south: evaluated at each vertex, in parallel blocks.
    pub fn heights(&self, x0: f64, z0: f64, cols: u32, rows: u32) -> Vec<f32> {
        let grid = Grid { x0, z0, spacing: VERTEX_SPACING, cols, rows };
        let mut out = vec![0f32; cols as usize * rows as usize];
        self.eval.grid_region(&grid, 0, 0, cols, rows, 64, &mut out);
        out
    }

    /// Water level of each `w × h` megatile (row-major) whose ground dips below the SWG water
    /// (highest level over the megatile's vertices), or `None`.
    pub fn water(&self, x0: f64, z0: f64, w: u32, h: u32, heights: &[f32]) -> Vec<Option<f32>> {
        let tables = WaterTables::new(&self.terrain);
        let cols = 24 * w + 1;
        let mut out = Vec::with_capacity((w * h) as usize);
        for my in 0..h {
            for mx in 0..w {
                let mut level: Option<f32> = None;
                let mut wet = false;
                for r in (my * 24..=my * 24 + 24).step_by(4) {
                    for c in (mx * 24..=mx * 24 + 24).step_by(4) {
                        let (x, z) = ((x0 + f64::from(c) * VERTEX_SPACING) as f32, (z0 + f64::from(r) * VERTEX_SPACING) as f32);
                        if let Some(l) = tables.has_any().then(|| tables.height_at(x, z)).flatten() {
                            level = Some(level.map_or(l, |m: f32| m.max(l)));
                            wet |= heights[(r * cols + c) as usize] < l;
                        }
                    }
                }
                out.push(if wet { level } else { None });
            }
        }
        out
    }
}
