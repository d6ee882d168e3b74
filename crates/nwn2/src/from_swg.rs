//! The one file of `nwn2` that uses the SWG model and evaluator (`trnbake_swg::model`, `trnbake_swg::eval`,
//! `trnbake_swg::water`; the bridge the module graph test allows): heights at the area's vertices
//! themselves (no resampling) and the water level of each megatile.

use std::path::Path;

use trnbake_swg::eval::{Grid, HeightEvaluator};
use trnbake_swg::model::{LoadError, Terrain};
use trnbake_swg::plan::{HeightOptions, PlanError};
use trnbake_swg::surface::grid::{grid_normals, surface_results, PassSelection};
use trnbake_swg::surface::normals::NormalMethod;
use trnbake_swg::surface::{SurfaceEvaluator, SurfaceOptions};
use trnbake_swg::water::WaterTables;

use super::export::Blend;
use super::walkmesh::VERTEX_SPACING;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SwgError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("{}: {error}", path.display())]
    Plan { path: std::path::PathBuf, error: Box<PlanError> },
}

/// A loaded SWG terrain ready to be sampled.
pub struct SwgSource {
    path: std::path::PathBuf,
    terrain: Terrain,
    eval: HeightEvaluator,
    opts: HeightOptions,
}

impl SwgSource {
    pub fn open(path: &Path, opts: &HeightOptions) -> Result<SwgSource, SwgError> {
        let terrain = Terrain::load(path)?;
        // Without --data-root, a .trn in a `terrain/` folder finds its bitmaps as `bake` does.
        let mut opts = opts.clone();
        if opts.data_root.is_none() {
            opts.data_root = trnbake_swg::model::default_data_root(path);
        }
        let opts = &opts;
        let eval = HeightEvaluator::new(&terrain, opts).map_err(|error| SwgError::Plan { path: path.into(), error: Box::new(error) })?;
        Ok(SwgSource { path: path.into(), terrain, eval, opts: opts.clone() })
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

    /// Blend weights from the SWG shader pass (swg-trn §5.10 splat weights) on `res × res`
    /// cells per megatile, evaluated at the cell centres: the `max_textures` most common
    /// shader families (by summed weight) become the channels, in that order, renormalised
    /// to 255 per cell (channel 0 where no family applies). Returns the families (id, name).
    pub fn splat(&self, x0: f64, z0: f64, w: u32, h: u32, res: u32, max_textures: usize) -> Result<(Vec<(i32, String)>, Blend), SwgError> {
        let se = SurfaceEvaluator::new(&self.terrain, &self.opts, SurfaceOptions::default())
            .map_err(|error| SwgError::Plan { path: self.path.clone(), error: Box::new(error) })?;
        let cell = 40.0 / f64::from(res);
        let grid = Grid { x0: x0 + cell / 2.0, z0: z0 + cell / 2.0, spacing: cell, cols: res * w, rows: res * h };
        let mut heights = vec![0f32; grid.cols as usize * grid.rows as usize];
        self.eval.grid_region(&grid, 0, 0, grid.cols, grid.rows, 64, &mut heights);
        let normals = grid_normals(&grid, &heights, &self.eval, se.plan.half_width, NormalMethod::Faces);
        let posts = surface_results(&grid, &heights, &normals, &se, PassSelection::Shader);
        let mut totals: Vec<(i32, f64)> = Vec::new();
        for p in &posts {
            for &(f, wt) in &p.splat {
                if f != 0 && wt > 0.0 {
                    match totals.iter_mut().find(|e| e.0 == f) {
                        Some(e) => e.1 += f64::from(wt),
                        None => totals.push((f, f64::from(wt))),
                    }
                }
            }
        }
        totals.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        totals.truncate(max_textures.clamp(1, 6));
        let chosen: Vec<i32> = totals.iter().map(|e| e.0).collect();
        let weights = posts
            .iter()
            .map(|p| {
                let mut share = [0f32; 6];
                for (k, f) in chosen.iter().enumerate() {
                    share[k] = p.splat.iter().filter(|e| e.0 == *f).map(|e| e.1.max(0.0)).sum();
                }
                to_bytes(share)
            })
            .collect();
        let families = self.terrain.generator.shader_families.families();
        let named = chosen.iter().map(|&id| (id, families.iter().find(|f| f.id == id).map_or_else(String::new, |f| f.name.clone()))).collect();
        Ok((named, Blend { res, weights }))
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

/// Shares → bytes summing to 255 (largest remainder); all to channel 0 when there are none.
fn to_bytes(share: [f32; 6]) -> [u8; 6] {
    let total: f32 = share.iter().sum();
    if !(total > 0.0) {
        return [255, 0, 0, 0, 0, 0];
    }
    let exact = share.map(|s| s / total * 255.0);
    let mut out = exact.map(|e| e.floor() as u8);
    let given: u32 = out.iter().map(|&b| u32::from(b)).sum();
    let mut order: Vec<usize> = (0..6).collect();
    order.sort_by(|&a, &b| (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor())).then(a.cmp(&b)));
    for &k in order.iter().take(255u32.saturating_sub(given) as usize) {
        out[k] += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn splat_bytes_sum_to_255() {
        assert_eq!(super::to_bytes([0.0; 6]), [255, 0, 0, 0, 0, 0]);
        let b = super::to_bytes([1.0, 1.0, 1.0, 0.0, 0.0, 0.0]);
        assert_eq!(b.iter().map(|&x| u32::from(x)).sum::<u32>(), 255);
        assert_eq!(b, [85, 85, 85, 0, 0, 0]);
        let b = super::to_bytes([0.3, 0.7, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(b.iter().map(|&x| u32::from(x)).sum::<u32>(), 255);
        assert_eq!(b, [77, 178, 0, 0, 0, 0]);
    }
}
