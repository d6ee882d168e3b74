//! The surface passes over a whole grid of posts on the CPU (swg-trn §5.2 steps 2–4): normals
//! with their 1-post apron, both passes in parallel blocks with their own culled layer lists,
//! and the water surface. `trnbake_gpu::surface_pass` is the GPU twin of [`evaluate`].

use rayon::prelude::*;

use super::normals::{faces_normals_row, post_normal, NormalMethod};
use super::{most_likely_of, Ground, SurfaceEvaluator, SurfaceResult};
use crate::eval::{Grid, HeightEvaluator};
use crate::water::WaterTables;

/// What the maps keep of one post's [`SurfaceResult`] (the flora stacks reduced to their
/// most likely family), so a grid costs ~90 bytes a post.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PostSurface {
    pub shader: i32,
    pub splat: [(i32, f32); super::SPLAT_LAYERS],
    /// Per flora class: (most likely family, its probability).
    pub flora: [(i32, f32); 4],
    pub environment: i32,
    pub color: [f32; 3],
    pub excluded: bool,
    pub passable: Option<u8>,
}

impl From<SurfaceResult> for PostSurface {
    fn from(r: SurfaceResult) -> Self {
        PostSurface::of(&r)
    }
}

impl PostSurface {
    /// What the maps keep of `r`.
    pub fn of(r: &SurfaceResult) -> Self {
        PostSurface::with_flora(r, std::array::from_fn(|k| r.flora[k].most_likely()))
    }

    /// What the maps keep of `r`, given its flora probabilities `p` (computed once by the
    /// caller, who may keep them too).
    pub fn from_result(r: &SurfaceResult, p: &ClassProbabilities) -> Self {
        PostSurface::with_flora(r, std::array::from_fn(|k| most_likely_of(&p[k])))
    }

    fn with_flora(r: &SurfaceResult, flora: [(i32, f32); 4]) -> Self {
        PostSurface {
            shader: r.shader.family,
            splat: r.shader.splat,
            flora,
            environment: r.environment,
            color: r.color,
            excluded: r.excluded,
            passable: r.passable,
        }
    }
}

/// The per-post results of the surface passes over a grid, row-major from the south.
pub struct SurfaceGrid {
    pub grid: Grid,
    pub normals: Vec<[f32; 3]>,
    pub results: Vec<PostSurface>,
    /// The water surface height per post ([`WaterTables::height_at`]), when a backend has
    /// computed it already (the GPU's water pass); `None` leaves it to `trnbake_bake::surface_maps::write_maps`, which
    /// computes it on the CPU where a map needs it.
    pub water: Option<Vec<Option<f32>>>,
}

/// Side of the blocks the surface pass culls its layer list for.
const BLOCK: u32 = 128;

/// Evaluate normals and both surface passes at every post of `grid`, given its finished
/// `heights` (row-major from the south).
pub fn evaluate(grid: &Grid, heights: &[f32], he: &HeightEvaluator, se: &SurfaceEvaluator, method: NormalMethod) -> SurfaceGrid {
    let normals = grid_normals(grid, heights, he, se.plan.half_width, method);
    let results = surface_results(grid, heights, &normals, se, PassSelection::Both);
    SurfaceGrid { grid: *grid, normals, results, water: None }
}

/// The unit normal of every post (swg-trn §5.2 step 2). Edge posts use heights one post
/// outside the grid, evaluated exactly (the 1-post apron).
pub fn grid_normals(grid: &Grid, heights: &[f32], he: &HeightEvaluator, half_width: f32, method: NormalMethod) -> Vec<[f32; 3]> {
    let padded = apron_heights(grid, heights, he);
    band_normals(grid, 0, grid.rows, &padded, half_width, method)
}

/// The unit normals of rows `r0..r0 + rows` of `grid` from their heights with a 1-post apron
/// (`padded`: (cols + 2) × (rows + 2) posts, row-major from the south, as
/// [`band_apron_heights`] builds them). A post's normal depends only on its 3×3 heights and its
/// global indices, so bands give the normals of the whole grid exactly.
pub fn band_normals(grid: &Grid, r0: u32, rows: u32, padded: &[f32], half_width: f32, method: NormalMethod) -> Vec<[f32; 3]> {
    window_normals(grid, 0, r0, grid.cols, rows, padded, half_width, method)
}

/// [`band_normals`] of a window: the posts of columns `c0..c0 + cols` and rows `r0..r0 + rows`
/// of `grid`, from their heights with a 1-post apron ((cols + 2) × (rows + 2), row-major from
/// the south), with the quad diagonals of their global indices.
pub fn window_normals(grid: &Grid, c0: u32, r0: u32, cols: u32, rows: u32, padded: &[f32], half_width: f32, method: NormalMethod) -> Vec<[f32; 3]> {
    let (cols, rows) = (cols as usize, rows as usize);
    assert_eq!(padded.len(), (cols + 2) * (rows + 2), "heights with a 1-post apron");
    let (gc0, gr0) = global_post_index(grid, half_width);
    let (gc0, gr0) = (gc0 + i64::from(c0), gr0 + i64::from(r0));
    let spacing = grid.spacing as f32;
    let mut out = vec![[0.0f32; 3]; rows * cols];
    let width = crate::lanes::width();
    out.par_chunks_mut(cols.max(1)).enumerate().for_each(|(r, row)| {
        // Padded row r + dz is window row r + dz − 1.
        let padded_row = |dz: usize| &padded[(r + dz) * (cols + 2)..(r + dz + 1) * (cols + 2)];
        match method {
            NormalMethod::Faces => {
                faces_normals_row(width, [padded_row(0), padded_row(1), padded_row(2)], spacing, (gc0 + gr0 + r as i64).rem_euclid(2) == 0, row)
            }
            NormalMethod::Central => {
                for (c, o) in row.iter_mut().enumerate() {
                    let h = [0, 1, 2].map(|dz| {
                        let p = padded_row(dz);
                        [p[c], p[c + 1], p[c + 2]]
                    });
                    *o = post_normal(method, &h, spacing, gc0 + c as i64, gr0 + r as i64);
                }
            }
        }
    });
    out
}

/// The grid's heights with a 1-post apron: (cols + 2) × (rows + 2) posts, row-major from the
/// south, padded row/column 0 being grid row/column −1. The apron ring comes from the height
/// pass (exact heights one post outside the grid).
pub fn apron_heights(grid: &Grid, heights: &[f32], he: &HeightEvaluator) -> Vec<f32> {
    let cols = grid.cols as usize;
    assert_eq!(heights.len(), cols * grid.rows as usize);
    let read = |r: u32, n: u32, out: &mut [f32]| {
        out.copy_from_slice(&heights[r as usize * cols..(r + n) as usize * cols]);
        Ok::<(), std::convert::Infallible>(())
    };
    match band_apron_heights(grid, 0, grid.rows, he, read) {
        Ok(padded) => padded,
        Err(never) => match never {},
    }
}

/// The heights of rows `r0..r0 + rows` of `grid` with a 1-post apron ((cols + 2) × (rows + 2)
/// posts, row-major from the south; padded row 0 is grid row r0 − 1). Posts inside the grid
/// come from `read(first_row, row_count, out)` (whole grid rows, south first: the finished
/// height pass), posts outside it are evaluated exactly, as the whole-grid apron does — so a
/// band's apron equals the whole grid's at every post.
pub fn band_apron_heights<E>(
    grid: &Grid,
    r0: u32,
    rows: u32,
    he: &HeightEvaluator,
    mut read: impl FnMut(u32, u32, &mut [f32]) -> Result<(), E>,
) -> Result<Vec<f32>, E> {
    let (cols, stride) = (grid.cols as usize, grid.cols as usize + 2);
    assert!(rows > 0 && r0 + rows <= grid.rows, "the band lies inside the grid");
    let mut padded = vec![0.0f32; stride * (rows as usize + 2)];
    // Grid rows inside the padded band: r0 − 1 (if any) to r0 + rows (if any).
    let first = r0.saturating_sub(1);
    let last = (r0 + rows + 1).min(grid.rows);
    let mut inside = vec![0.0f32; cols * (last - first) as usize];
    read(first, last - first, &mut inside)?;
    for (k, row) in inside.chunks_exact(cols.max(1)).enumerate() {
        let pr = (first + k as u32 + 1 - r0) as usize;
        padded[pr * stride + 1..pr * stride + 1 + cols].copy_from_slice(row);
    }
    // The posts outside the grid: columns −1 and cols of every padded row, and rows −1 and
    // grid.rows when the band touches the grid's south or north edge.
    let mut ring: Vec<(i64, i64)> = Vec::new();
    let (pr0, pr1) = (i64::from(r0) - 1, i64::from(r0 + rows));
    for r in pr0..=pr1 {
        if r < 0 || r >= i64::from(grid.rows) {
            ring.extend((-1..=cols as i64).map(|c| (c, r)));
        } else {
            ring.push((-1, r));
            ring.push((cols as i64, r));
        }
    }
    let ring_points: Vec<(f32, f32)> =
        ring.iter().map(|&(c, r)| (grid.x0 as f32 + c as f32 * grid.spacing as f32, grid.z0 as f32 + r as f32 * grid.spacing as f32)).collect();
    let ring_heights = he.heights_anywhere(&ring_points);
    for (&(c, r), h) in ring.iter().zip(ring_heights) {
        padded[(r - pr0) as usize * stride + (c + 1) as usize] = h;
    }
    Ok(padded)
}

/// Global post indices of the grid's first post, counted from the map's south-west edge:
/// they fix the quad diagonals of the normals (swg-trn §5.1).
pub fn global_post_index(grid: &Grid, half_width: f32) -> (i64, i64) {
    let half = f64::from(half_width);
    (((grid.x0 + half) / grid.spacing).round() as i64, ((grid.z0 + half) / grid.spacing).round() as i64)
}

/// Which traversals [`surface_results`] runs (the benchmark times them apart).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassSelection {
    /// The shader pass only (swg-trn §5.2 step 3).
    Shader,
    /// The shader pass, then the flora / environment / colour / exclude / passable pass.
    Both,
}

/// Both surface passes (or the shader pass alone) at every post, in parallel blocks with
/// their own culled layer lists.
pub fn surface_results(grid: &Grid, heights: &[f32], normals: &[[f32; 3]], se: &SurfaceEvaluator, passes: PassSelection) -> Vec<PostSurface> {
    let view = HeightsView { data: heights, stride: grid.cols as usize, origin: 0 };
    band_results(grid, 0, grid.rows, view, normals, se, passes, false).results
}

/// Every family's placement probability at one post, per flora class: `[class] → [(family,
/// probability)]`, sorted by family ([`super::FloraStack::probabilities`]).
pub type ClassProbabilities = [Vec<(i32, f32)>; 4];

/// The surface passes' results over some rows of a grid.
pub struct BandResults {
    /// One a post, row-major from the south.
    pub results: Vec<PostSurface>,
    /// Every family's probability per post and class, when asked for (the per-family flora
    /// maps and the scatter need more than the most likely family).
    pub probabilities: Option<Vec<ClassProbabilities>>,
}

/// The heights of a band of posts inside a larger buffer: post (c, r) of the band is
/// `data[origin + r · stride + c]` (a padded band: stride cols + 2, origin stride + 1).
#[derive(Clone, Copy)]
pub struct HeightsView<'a> {
    pub data: &'a [f32],
    pub stride: usize,
    pub origin: usize,
}

impl HeightsView<'_> {
    /// The view of a band padded with its 1-post apron ([`band_apron_heights`]).
    pub fn padded<'p>(grid: &Grid, padded: &'p [f32]) -> HeightsView<'p> {
        let stride = grid.cols as usize + 2;
        HeightsView { data: padded, stride, origin: stride + 1 }
    }

    /// The height of post (c, r) of the band.
    pub fn at(&self, c: usize, r: usize) -> f32 {
        self.data[self.origin + r * self.stride + c]
    }

    /// The heights of the posts east, west, north and south of post (c, r) of a padded band
    /// (whose apron holds the neighbours of its edge posts).
    pub fn cross(&self, c: usize, r: usize) -> [f32; 4] {
        let i = self.origin + r * self.stride + c;
        [self.data[i + 1], self.data[i - 1], self.data[i + self.stride], self.data[i - self.stride]]
    }
}

/// Both surface passes (or the shader pass alone) at the posts of rows `r0..r0 + rows` of
/// `grid`, in parallel blocks of `BLOCK`² (128²) posts (counted from the grid's south-west post,
/// so a band whose `r0` is a multiple of `BLOCK` culls exactly as the whole grid does) with
/// their own culled layer lists; `normals` are the band's, row-major from the south.
#[allow(clippy::too_many_arguments)]
pub fn band_results(
    grid: &Grid,
    r0: u32,
    rows: u32,
    heights: HeightsView,
    normals: &[[f32; 3]],
    se: &SurfaceEvaluator,
    passes: PassSelection,
    probabilities: bool,
) -> BandResults {
    let cols = grid.cols as usize;
    let n = cols * rows as usize;
    assert_eq!(normals.len(), n, "one normal a post of the band");
    let r_end = r0 + rows;
    let first_block_row = r0 - r0 % BLOCK;
    let mut results = vec![PostSurface::default(); n];
    let mut all_probs: Vec<ClassProbabilities> = if probabilities { vec![Default::default(); n] } else { Vec::new() };
    // Each block's part of the band, written in place: per band row it holds, the row's
    // segment of its columns (and of the probabilities), south first. Blocks run in parallel
    // and own disjoint segments, so no block's results are gathered afterwards.
    struct BlockRows<'a> {
        c0: u32,
        rows: (u32, u32),
        results: Vec<&'a mut [PostSurface]>,
        probs: Vec<&'a mut [ClassProbabilities]>,
    }
    let col_blocks = grid.cols.div_ceil(BLOCK) as usize;
    let mut blocks: Vec<BlockRows> = (first_block_row..r_end)
        .step_by(BLOCK as usize)
        .flat_map(|br| {
            (0..grid.cols).step_by(BLOCK as usize).map(move |c0| BlockRows {
                c0,
                rows: (br.max(r0), (br + BLOCK).min(r_end) - 1),
                results: Vec::new(),
                probs: Vec::new(),
            })
        })
        .collect();
    // The block of band row `row`'s `k`-th BLOCK-wide segment, for each segment of `buffer`.
    fn each_segment<'a, T>(buffer: &'a mut [T], cols: usize, block_of: impl Fn(usize, usize) -> usize, mut place: impl FnMut(usize, &'a mut [T])) {
        for (row, segments) in buffer.chunks_mut(cols).enumerate() {
            for (k, segment) in segments.chunks_mut(BLOCK as usize).enumerate() {
                place(block_of(row, k), segment);
            }
        }
    }
    let block_of = |row: usize, segment: usize| ((r0 + row as u32 - first_block_row) / BLOCK) as usize * col_blocks + segment;
    each_segment(&mut results, cols, block_of, |b, segment| blocks[b].results.push(segment));
    each_segment(&mut all_probs, cols, block_of, |b, segment| blocks[b].probs.push(segment));
    blocks.par_iter_mut().for_each(|part| {
        let (c0, (ra, rb)) = (part.c0, part.rows);
        let c1 = (c0 + BLOCK).min(grid.cols) - 1;
        let block = se.grid_block(grid, c0, ra, c1, rb);
        let ground = |c: u32, r: u32| {
            let (bc, br) = (c as usize, (r - r0) as usize);
            Ground { height: heights.at(bc, br), normal: normals[br * cols + bc] }
        };
        // What the maps keep of the result of post c0 + j of band row `r`.
        let mut keep = |r: u32, j: usize, res: &SurfaceResult| {
            let k = (r - ra) as usize;
            part.results[k][j] = match passes {
                PassSelection::Both if probabilities => {
                    let p: ClassProbabilities = std::array::from_fn(|class| res.flora[class].probabilities());
                    let post = PostSurface::from_result(res, &p);
                    part.probs[k][j] = p;
                    post
                }
                PassSelection::Both => PostSurface::of(res),
                PassSelection::Shader => PostSurface { shader: res.shader.family, splat: res.shader.splat, ..Default::default() },
            };
        };
        let width = (c1 - c0 + 1) as usize;
        if se.walks_rows() {
            // The tree walk, a row of the block at a time (both passes in one walk).
            se.block_rows(&block, (c0, ra, c1, rb), ground, |r, row| {
                assert_eq!(row.len(), width, "one result a post of the block's row");
                row.iter().enumerate().for_each(|(j, res)| keep(r, j, res));
            });
        } else {
            for r in ra..=rb {
                for (j, c) in (c0..=c1).enumerate() {
                    let res = match passes {
                        PassSelection::Both => se.at_grid_post(&block, c, r, ground(c, r)),
                        PassSelection::Shader => SurfaceResult { shader: se.shader_at_grid_post(&block, c, r, ground(c, r)), ..Default::default() },
                    };
                    keep(r, j, &res);
                }
            }
        }
    });
    BandResults { results, probabilities: probabilities.then_some(all_probs) }
}

/// The water surface height at every post of `grid`, row-major from the south, on the CPU
/// (the reference of `trnbake_gpu::water_pass`).
pub fn water_levels(g: &Grid, water: &WaterTables) -> Vec<Option<f32>> {
    let cols = g.cols as usize;
    (0..cols * g.rows as usize)
        .into_par_iter()
        .map(|i| {
            let (x, z) = g.post((i % cols) as u32, (i / cols) as u32);
            water.height_at(x, z)
        })
        .collect()
}
