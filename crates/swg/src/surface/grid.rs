//! The surface passes over a whole grid of posts on the CPU (swg-trn §5.2 steps 2–4): normals
//! with their 1-post apron, both passes in parallel blocks with their own culled layer lists,
//! and the water surface. `trnbake_gpu::surface_pass` is the GPU twin of [`evaluate`].

use rayon::prelude::*;

use super::normals::{post_normal, NormalMethod};
use super::{Ground, SurfaceEvaluator, SurfaceResult};
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
        PostSurface {
            shader: r.shader.family,
            splat: r.shader.splat,
            flora: std::array::from_fn(|k| r.flora[k].most_likely()),
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
    let (cols, rows) = (grid.cols as usize, grid.rows as usize);
    let padded = apron_heights(grid, heights, he);
    let (gc0, gr0) = global_post_index(grid, half_width);
    (0..rows * cols)
        .into_par_iter()
        .with_min_len(1024)
        .map(|i| {
            let (c, r) = (i % cols, i / cols);
            let mut h = [[0.0f32; 3]; 3];
            for (dz, hrow) in h.iter_mut().enumerate() {
                // Padded row r + dz is grid row r + dz − 1.
                let at = (r + dz) * (cols + 2) + c;
                hrow.copy_from_slice(&padded[at..at + 3]);
            }
            post_normal(method, &h, grid.spacing as f32, gc0 + c as i64, gr0 + r as i64)
        })
        .collect()
}

/// The grid's heights with a 1-post apron: (cols + 2) × (rows + 2) posts, row-major from the
/// south, padded row/column 0 being grid row/column −1. The apron ring comes from the height
/// pass (exact heights one post outside the grid).
pub fn apron_heights(grid: &Grid, heights: &[f32], he: &HeightEvaluator) -> Vec<f32> {
    let (cols, rows) = (grid.cols as usize, grid.rows as usize);
    assert_eq!(heights.len(), cols * rows);
    let mut ring = Vec::new();
    for c in -1..=cols as i64 {
        ring.push((c, -1));
        ring.push((c, rows as i64));
    }
    for r in 0..rows as i64 {
        ring.push((-1, r));
        ring.push((cols as i64, r));
    }
    let ring_points: Vec<(f32, f32)> = ring
        .iter()
        .map(|&(c, r)| (grid.x0 as f32 + c as f32 * grid.spacing as f32, grid.z0 as f32 + r as f32 * grid.spacing as f32))
        .collect();
    let ring_heights = he.heights_at(&ring_points);
    let stride = cols + 2;
    let mut padded = vec![0.0f32; stride * (rows + 2)];
    for (r, row) in heights.chunks_exact(cols.max(1)).enumerate().take(rows) {
        padded[(r + 1) * stride + 1..(r + 1) * stride + 1 + cols].copy_from_slice(row);
    }
    for (&(c, r), h) in ring.iter().zip(ring_heights) {
        padded[(r + 1) as usize * stride + (c + 1) as usize] = h;
    }
    padded
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
    let cols = grid.cols as usize;
    let mut results = vec![PostSurface::default(); cols * grid.rows as usize];
    let blocks: Vec<(u32, u32)> = (0..grid.rows).step_by(BLOCK as usize).flat_map(|r| (0..grid.cols).step_by(BLOCK as usize).map(move |c| (c, r))).collect();
    let computed: Vec<((u32, u32), Vec<PostSurface>)> = blocks
        .par_iter()
        .map(|&(c0, r0)| {
            let (c1, r1) = ((c0 + BLOCK).min(grid.cols) - 1, (r0 + BLOCK).min(grid.rows) - 1);
            let block = se.grid_block(grid, c0, r0, c1, r1);
            let mut out = Vec::with_capacity(((c1 - c0 + 1) * (r1 - r0 + 1)) as usize);
            for r in r0..=r1 {
                for c in c0..=c1 {
                    let i = r as usize * cols + c as usize;
                    let ground = Ground { height: heights[i], normal: normals[i] };
                    out.push(match passes {
                        PassSelection::Both => se.at_grid_post(&block, c, r, ground).into(),
                        PassSelection::Shader => {
                            let s = se.shader_at_grid_post(&block, c, r, ground);
                            PostSurface { shader: s.family, splat: s.splat, ..Default::default() }
                        }
                    });
                }
            }
            ((c0, r0), out)
        })
        .collect();
    for ((c0, r0), out) in computed {
        let w = ((c0 + BLOCK).min(grid.cols) - c0) as usize;
        for (k, res) in out.into_iter().enumerate() {
            let (dc, dr) = (k % w, k / w);
            results[(r0 as usize + dr) * cols + c0 as usize + dc] = res;
        }
    }
    results
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
