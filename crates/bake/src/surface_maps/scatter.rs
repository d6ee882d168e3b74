//! `flora_<class>_points.csv`: a deterministic scatter of flora instances from the bands'
//! probabilities.

use super::*;

/// A uniform number in [0, 1) from a post's global indices and a stream (SplitMix64), so a
/// post scatters the same way whichever grid or tile holds it.
pub(super) fn post_random(gc: i64, gr: i64, stream: u64) -> f64 {
    let mut z = (gc as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (gr as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F) ^ stream.wrapping_mul(0x1656_67B1_9E37_79F9);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// `flora_<class>_points.csv` (`x,z,height,family_id`): a deterministic scatter from the
/// probabilities — each post's cell (one spacing wide, centred on the post) holds at most one
/// instance, of family k with probability P(k), at a jittered position in the cell, with the
/// exact ground height there. Not the original client's placement (swg-trn §5.9: its seeds
/// are not public), but the same densities. Written band by band from the south (the rows of
/// the file run south to north, west to east).
pub(super) fn write_scatter(
    outdir: &Path,
    set: &BandSet,
    metas: &[((u32, u32), BandMeta)],
    he: &HeightEvaluator,
    half: f32,
) -> crate::Result<Vec<WrittenFile>> {
    let g = set.grid;
    let cols = g.cols as usize;
    let gc0 = ((g.x0 + f64::from(half)) / g.spacing).round() as i64;
    let gr0 = ((g.z0 + f64::from(half)) / g.spacing).round() as i64;
    let mut files = Vec::new();
    for (class, name) in FLORA_CLASSES.iter().enumerate() {
        let path = outdir.join(format!("flora_{name}_points.csv"));
        trnbake_raster::fsutil::write_atomic_with(&path, |w| {
            use std::io::Write;
            writeln!(w, "x,z,height,family_id")?;
            for ((b0, brows), meta) in metas.iter().rev() {
                let (counts, entries) = set.read_probabilities(*b0, *brows, class, meta)?;
                let mut starts = Vec::with_capacity(counts.len());
                let mut at = 0usize;
                for &c in &counts {
                    starts.push(at);
                    at += usize::from(c);
                }
                let points: Vec<(f32, f32, i32)> = (0..counts.len())
                    .into_par_iter()
                    .filter_map(|i| {
                        let (c, r) = ((i % cols) as i64, (i / cols) as i64 + i64::from(*b0));
                        let (gc, gr) = (gc0 + c, gr0 + r);
                        let stream = class as u64 * 3;
                        let u = post_random(gc, gr, stream);
                        let mut acc = 0.0f64;
                        let family = entries[starts[i]..starts[i] + usize::from(counts[i])].iter().find(|e| {
                            acc += f64::from(e.1);
                            u < acc
                        })?;
                        let (x, z) = g.post(c as u32, r as u32);
                        let jx = (post_random(gc, gr, stream + 1) - 0.5) * g.spacing;
                        let jz = (post_random(gc, gr, stream + 2) - 0.5) * g.spacing;
                        let inside = |v: f32| v.clamp(-half, half);
                        Some((inside(x + jx as f32), inside(z + jz as f32), family.0))
                    })
                    .collect();
                let heights = he.heights_at(&points.iter().map(|p| (p.0, p.1)).collect::<Vec<_>>());
                for (p, h) in points.iter().zip(&heights) {
                    writeln!(w, "{:.3},{:.3},{:.4},{}", p.0, p.1, h, p.2)?;
                }
            }
            Ok(())
        })
        .map_err(crate::error::writing(&path))?;
        files.push(WrittenFile::of_file(&path, "csv")?);
    }
    Ok(files)
}
