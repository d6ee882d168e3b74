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
    // The corners are posts of a 4 m lattice from (west, south). When that lattice's f32
    // positions are exact (integer metres well inside f32's integers, as on every map) they
    // equal the corner points' own, so the lattice is evaluated by bands with the row
    // evaluator (bit-identical to `height_at`, and ~20× faster than nine points a chunk).
    let exact = |v: f64| v.fract() == 0.0 && v.abs() < f64::from(1u32 << 22);
    let bits: Vec<bool> = if exact(west) && exact(south) && exact(west + f64::from(cc) * chunk) && exact(south + f64::from(rr) * chunk) {
        let lattice = Grid { x0: west, z0: south, spacing: chunk / 2.0, cols: 2 * cc + 1, rows: 2 * rr + 1 };
        let lc = lattice.cols as usize;
        let mut bits = Vec::with_capacity(cc as usize * rr as usize);
        const BAND_CHUNKS: u32 = 128;
        for b0 in (0..rr).step_by(BAND_CHUNKS as usize) {
            let chunks = BAND_CHUNKS.min(rr - b0);
            let rows = 2 * chunks + 1;
            let mut h = vec![0.0f32; lc * rows as usize];
            he.grid_region(&lattice, 0, 2 * b0, lattice.cols, rows, crate::eval::CPU_CULL_BLOCK, &mut h);
            let band: Vec<bool> = (0..cc as usize * chunks as usize)
                .into_par_iter()
                .with_min_len(1024)
                .map(|i| {
                    let (c, r) = (i % cc as usize, i / cc as usize);
                    let corners: [f32; 9] = std::array::from_fn(|k| h[(2 * r + k / 3) * lc + 2 * c + k % 3]);
                    smap_rough(&corners)
                })
                .collect();
            bits.extend(band);
        }
        bits
    } else {
        (0..cc as usize * rr as usize)
            .into_par_iter()
            .with_min_len(64)
            .map(|i| {
                let (c, r) = ((i % cc as usize) as f64, (i / cc as usize) as f64);
                let corners = smap_corner_points((west + c * chunk) as f32, (south + r * chunk) as f32, chunk as f32);
                smap_rough(&corners.map(|(x, z)| he.height_anywhere(x, z)))
            })
            .collect()
    };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lattice_path_gives_the_points_reading() {
        // The demo terrain at a spacing whose chunks take the lattice path, against nine
        // points a chunk.
        let t = crate::model::json::demo_terrain();
        let he = HeightEvaluator::new(&t, &Default::default()).unwrap();
        let half = he.plan.half_width;
        let g = Grid { x0: -1000.0, z0: -600.0, spacing: 2.0, cols: 301, rows: 560 };
        let (cc, rr, west, south, bits) = smap_chunks(&g, &he, half);
        assert!(cc > 0 && rr > 128, "more than one band of chunks: {cc} x {rr}");
        let mut rough = 0;
        for (i, &b) in bits.iter().enumerate() {
            let (c, r) = ((i % cc as usize) as f64, (i / cc as usize) as f64);
            let corners = smap_corner_points((west + c * 8.0) as f32, (south + r * 8.0) as f32, 8.0);
            assert_eq!(b, smap_rough(&corners.map(|(x, z)| he.height_anywhere(x, z))), "chunk {i}");
            rough += usize::from(b);
        }
        assert!(rough > 0 && rough < bits.len(), "a mix of rough and smooth chunks: {rough} of {}", bits.len());
    }
}
