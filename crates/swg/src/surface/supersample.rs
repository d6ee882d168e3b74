//! Area-mean flora for coarse maps (`bake --flora-supersample N`; issue #27 part 3).
//!
//! A flora map's post at spacing s stands for the s × s square around it, but the walk at
//! the post reads one point of it: on a 16 m map the slope filters see the ground 16 m apart
//! and a thin rock band either covers the post or not. The original tool placed one object
//! somewhere in each 16 m cell (swg-trn §2.6), so what a coarse post can promise is the mean
//! of the per-point chances over its square. Here each post's square is split into n × n
//! equal sub-squares whose centres (the sub-posts, s/n apart) are walked like posts of a
//! fine grid: exact heights from the height pass, normals from the neighbouring sub-posts at
//! the sub-spacing (swg-trn §5.2 step 2), FSLP's neighbourhood likewise (the tree slopes of
//! `SlopeHeight::Tree`), and each sub-post's stack reading (swg-trn §5.9) averaged into the
//! post. With n = 1 the sub-posts are the posts themselves.

use rayon::prelude::*;

use super::grid::grid_normals;
use super::normals::NormalMethod;
use super::{Ground, SurfaceEvaluator};
use crate::eval::{Grid, HeightEvaluator};

/// Every family's placement probability at one post, per flora class (the order of
/// [`crate::plan::FLORA_CLASSES`]), sorted by family id.
pub type FloraChances = [Vec<(i32, f32)>; 4];

/// Sub-posts a side of the blocks walked together (as the surface grid's blocks): each
/// block culls its own layer list and shares its slope traces.
const SUB_BLOCK: u32 = 128;

/// The n × n sub-posts of posts [c0, c0 + cols) × [r0, r0 + rows) of `grid` as one grid,
/// `grid.spacing / n` apart, row-major from the south: post (c, r)'s sub-posts are
/// sub-columns [c·n, c·n + n) and sub-rows [r·n, r·n + n), counted from (c0, r0). For n = 1
/// and (c0, r0) = (0, 0) it is `grid` itself.
pub fn sub_post_grid(grid: &Grid, n: u32, c0: u32, r0: u32, cols: u32, rows: u32) -> Grid {
    let n = n.max(1);
    // The first sub-square's centre, in posts from post (c0, r0): 0 when n = 1.
    let shift = 0.5 / f64::from(n) - 0.5;
    Grid {
        x0: grid.x0 + (f64::from(c0) + shift) * grid.spacing,
        z0: grid.z0 + (f64::from(r0) + shift) * grid.spacing,
        spacing: grid.spacing / f64::from(n),
        cols: cols * n,
        rows: rows * n,
    }
}

/// Each post's flora chances per class, averaged over its n × n sub-posts (see the module
/// docs), row-major from the south. A post's sub-posts always lie in one block, so its value
/// does not depend on how the grid is split.
pub fn flora_supersampled(grid: &Grid, he: &HeightEvaluator, se: &SurfaceEvaluator, method: NormalMethod, n: u32) -> Vec<FloraChances> {
    flora_supersampled_rows(grid, he, se, method, n, 0, grid.rows)
}

/// [`flora_supersampled`] at the posts of rows `r0..r0 + rows` only (a band of a streamed
/// bake), row-major from the south.
pub fn flora_supersampled_rows(
    grid: &Grid,
    he: &HeightEvaluator,
    se: &SurfaceEvaluator,
    method: NormalMethod,
    n: u32,
    r0: u32,
    rows: u32,
) -> Vec<FloraChances> {
    let n = n.max(1);
    let side = (SUB_BLOCK / n).max(1);
    let end = r0 + rows;
    let blocks: Vec<(u32, u32)> = (r0..end).step_by(side as usize).flat_map(|r| (0..grid.cols).step_by(side as usize).map(move |c| (c, r))).collect();
    let computed: Vec<Vec<FloraChances>> =
        blocks.par_iter().map(|&(c0, br)| block_chances(grid, he, se, method, n, c0, br, side.min(grid.cols - c0), side.min(end - br))).collect();
    let mut out = vec![FloraChances::default(); grid.cols as usize * rows as usize];
    for (&(c0, br), block) in blocks.iter().zip(computed) {
        let cols = side.min(grid.cols - c0) as usize;
        for (k, chances) in block.into_iter().enumerate() {
            out[((br - r0) as usize + k / cols) * grid.cols as usize + c0 as usize + k % cols] = chances;
        }
    }
    out
}

/// The posts [c0, c0 + cols) × [r0, r0 + rows) of [`flora_supersampled`], row-major.
fn block_chances(
    grid: &Grid,
    he: &HeightEvaluator,
    se: &SurfaceEvaluator,
    method: NormalMethod,
    n: u32,
    c0: u32,
    r0: u32,
    cols: u32,
    rows: u32,
) -> Vec<FloraChances> {
    let sub = sub_post_grid(grid, n, c0, r0, cols, rows);
    let heights = he.grid_heights(&sub);
    let normals = grid_normals(&sub, &heights, he, se.plan.half_width, method);
    let block = se.grid_block(&sub, 0, 0, sub.cols - 1, sub.rows - 1);
    let mut sums = vec![FloraChances::default(); cols as usize * rows as usize];
    for r in 0..sub.rows {
        for c in 0..sub.cols {
            let i = r as usize * sub.cols as usize + c as usize;
            let result = se.at_grid_post(&block, c, r, Ground { height: heights[i], normal: normals[i] });
            let post = &mut sums[(r / n) as usize * cols as usize + (c / n) as usize];
            for (class, stack) in post.iter_mut().zip(&result.flora) {
                for (family, p) in stack.probabilities() {
                    match class.iter_mut().find(|e| e.0 == family) {
                        Some(e) => e.1 += p,
                        None => class.push((family, p)),
                    }
                }
            }
        }
    }
    // The mean, as `fidelity::pimp_cell_chances` takes it over a cell's samples.
    let count = (n * n) as f32;
    for class in sums.iter_mut().flat_map(|post| post.iter_mut()) {
        for e in class.iter_mut() {
            e.1 /= count;
        }
        class.sort_by_key(|e| e.0);
    }
    sums
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_posts_split_each_post_square_evenly() {
        let g = Grid { x0: -8.0, z0: 100.0, spacing: 16.0, cols: 3, rows: 2 };
        assert_eq!(sub_post_grid(&g, 1, 0, 0, 3, 2), g);
        let s = sub_post_grid(&g, 4, 1, 1, 2, 1);
        // Post (1, 1) at (8, 116) covers [0, 16] × [108, 124]: sub-posts at 2, 6, 10, 14 m.
        assert_eq!((s.x0, s.z0, s.spacing, s.cols, s.rows), (2.0, 110.0, 4.0, 8, 4));
        assert_eq!(s.post(4, 0).0, 18.0, "the next post's first sub-post");
    }
}
