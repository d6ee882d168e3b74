//! The SMAP rough-terrain rule of swg-trn §2.3 (8 m chunks, their 3×3 tile corners): shared by
//! the `smap` map of a bake and the SMAP fidelity check.

use rayon::prelude::*;

use crate::eval::{Grid, HeightEvaluator};

/// The SMAP rough-terrain rule of swg-trn §2.3 over the 8 m chunks that lie inside the grid:
/// a chunk is rough when its 3×3 tile-corner posts (4 m apart) span more than 4 m.
/// Returns (chunk cols, chunk rows, west x, south z, bits, row-major from the south).
pub fn smap_chunks(g: &Grid, he: &HeightEvaluator, half: f32) -> (u32, u32, f64, f64, Vec<bool>) {
    let chunk = 8.0f64;
    let half = f64::from(half);
    let x1 = g.x0 + f64::from(g.cols.saturating_sub(1)) * g.spacing;
    let z1 = g.z0 + f64::from(g.rows.saturating_sub(1)) * g.spacing;
    let c0 = ((g.x0 + half) / chunk).ceil() as i64;
    let r0 = ((g.z0 + half) / chunk).ceil() as i64;
    let c1 = ((x1 + half) / chunk - 1.0).floor() as i64;
    let r1 = ((z1 + half) / chunk - 1.0).floor() as i64;
    let (cc, rr) = ((c1 - c0 + 1).max(0) as u32, (r1 - r0 + 1).max(0) as u32);
    let west = -half + c0 as f64 * chunk;
    let south = -half + r0 as f64 * chunk;
    let bits: Vec<bool> = (0..cc as usize * rr as usize)
        .into_par_iter()
        .with_min_len(64)
        .map(|i| {
            let (c, r) = ((i % cc as usize) as f64, (i / cc as usize) as f64);
            let corners = smap_corner_points((west + c * chunk) as f32, (south + r * chunk) as f32, chunk as f32);
            smap_rough(&corners.map(|(x, z)| he.height_at(x, z)))
        })
        .collect();
    (cc, rr, west, south, bits)
}

/// The 3×3 tile-corner posts of the chunk with south-west corner (x0, z0) (swg-trn §2.3).
pub fn smap_corner_points(x0: f32, z0: f32, chunk_width: f32) -> [(f32, f32); 9] {
    std::array::from_fn(|i| (x0 + (i % 3) as f32 * chunk_width * 0.5, z0 + (i / 3) as f32 * chunk_width * 0.5))
}

/// The SMAP rule (swg-trn §2.3): rough when the corner heights span more than 4 m.
pub fn smap_rough(corner_heights: &[f32]) -> bool {
    let lo = corner_heights.iter().copied().fold(f32::MAX, f32::min);
    let hi = corner_heights.iter().copied().fold(f32::MIN, f32::max);
    hi - lo > 4.0
}
