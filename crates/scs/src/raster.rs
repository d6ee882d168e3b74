//! Map → height grid (`scs rasterize`).
//!
//! Bezier patches are evaluated exactly: each post is located in its patch by inverting the
//! patch's ground-plane mapping and the height is the Bezier surface there. Terrain items are
//! approximate (scs §B.8 item 1): the profile curves and noise are proprietary, so a Terrain
//! item contributes its Hermite spine's height (§B.7, tangents rot·(0, 0, −L), node offsets
//! added), spread across each side's width, plus nothing for profile or noise; such posts are
//! counted and the sidecar marks the raster approximate.
//!
//! When the map was written by `scs export`, its `manifest.json` gives the source grid and
//! the SCS origin, and the raster lands on the source's posts in the source's coordinates.
//! Otherwise the raster is in SCS world metres: x = X (east), y = −Z (SCS Z points south),
//! so north-up images show the map as the game's top view.

use std::collections::HashMap;
use std::path::Path;

use rayon::prelude::*;

use super::codec::{Item, Node, TerrainItem};
use super::export::{Manifest, MANIFEST};
use super::map::{Map, MapError};
use super::patch::WorldPatch;
use trnbake_raster::Grid;

/// Post (x, z) → SCS (X, Z).
type ToScs = Box<dyn Fn(f64, f64) -> (f64, f64) + Sync>;

/// What came out.
pub struct Raster {
    pub grid: Grid,
    /// Row-major, row 0 = south; NaN where no item covers the post.
    pub heights: Vec<f32>,
    /// True when the grid is in the export's source coordinates (from `manifest.json`).
    pub source_georef: bool,
    pub citation: String,
    pub patches: usize,
    pub terrain_items: usize,
    /// Posts whose height came from a Terrain item (approximate).
    pub approximate_posts: usize,
    pub covered_posts: usize,
}

/// Most posts a raster may have (hostile bounds in a map).
pub const MAX_POSTS: u64 = 1 << 30;

/// A Terrain item's approximate geometry (scs §B.7/§B.8 item 1): the quad grid's vertices
/// along the Hermite spine and across each side, at the spine's height plus the vertex
/// offsets; profiles and noise are not modelled (not public).
struct Strip {
    /// (X, Y, Z, unit lateral (right) X, Z) per column vertex (station).
    stations: Vec<[f64; 5]>,
    right: SideGrid,
    left: SideGrid,
}

/// One side: row edges outwards from the spine and the height offset of every vertex.
struct SideGrid {
    /// Lateral distance of vertex row j (edges[0] = 0 at the spine).
    edges: Vec<f64>,
    /// `dy[i · edges.len() + j]`: height offset of vertex (station i, row j).
    dy: Vec<f64>,
}

/// Row edges of a side of `size` metres with `rows` rows: the widths 1, 1, 1, 2, 6, 6, 10, …
/// (§B.6), the last row clipped to the size (how the game clips it is not documented).
fn side_edges(size: f64, rows: usize) -> Vec<f64> {
    const W: [f64; 15] = [1.0, 1.0, 1.0, 2.0, 6.0, 6.0, 10.0, 10.0, 10.0, 20.0, 40.0, 50.0, 50.0, 50.0, 100.0];
    let mut e = vec![0.0];
    for j in 0..rows {
        let next = e[j] + W.get(j).copied().unwrap_or(100.0);
        e.push(if j + 1 == rows { size.max(e[j]) } else { next.min(size.max(e[j])) });
    }
    e
}

/// Vertex offsets of a side. Assumed (not settled, scs §B.6): `x` is the column (along the
/// strip), `y` the row counted from the spine, and `data` is relative to the unmodified
/// vertex (the 2020 wiki); only the height component is used.
fn side_grid(size_m: f64, q: &super::codec::QuadInfo, stations: usize) -> SideGrid {
    let edges = side_edges(size_m, q.size_x as usize);
    let nrow = edges.len();
    let mut dy = vec![0.0; stations * nrow];
    for o in &q.offsets {
        let (i, j) = (o.x as usize, o.y as usize);
        if i < stations && j < nrow && o.data[1].is_finite() {
            dy[i * nrow + j] = f64::from(o.data[1]);
        }
    }
    SideGrid { edges, dy }
}

fn quat_rotate(q: [f32; 4], v: [f64; 3]) -> [f64; 3] {
    let [w, x, y, z] = q.map(f64::from);
    // v' = v + 2w (u×v) + 2 u×(u×v), u = (x, y, z)
    let u = [x, y, z];
    let cross = |a: [f64; 3], b: [f64; 3]| [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
    let t = cross(u, v).map(|c| 2.0 * c);
    let c2 = cross(u, t);
    [v[0] + w * t[0] + c2[0], v[1] + w * t[1] + c2[1], v[2] + w * t[2] + c2[2]]
}

fn terrain_strip(t: &TerrainItem, n0: &Node, n1: &Node) -> Option<Strip> {
    let l = f64::from(t.length);
    if !(l.is_finite() && l > 0.0 && l < 1e5) {
        return None;
    }
    let p0 = n0.position_m();
    let p1 = n1.position_m();
    let p0 = [0, 1, 2].map(|k| p0[k] + f64::from(t.node0_offset[k]));
    let p1 = [0, 1, 2].map(|k| p1[k] + f64::from(t.node1_offset[k]));
    let m0 = quat_rotate(n0.rotation, [0.0, 0.0, -l]);
    let m1 = quat_rotate(n1.rotation, [0.0, 0.0, -l]);
    // Columns from the quad grid (falling back to ceil(L / step)).
    let cols = match t.quad_right.size_y.max(t.quad_left.size_y) as usize {
        0 => super::inspect::terrain_cols(t).clamp(1, 100_000) as usize,
        c => c,
    };
    let mut stations = Vec::with_capacity(cols + 1);
    for i in 0..=cols {
        // Uniform t: whether the game spaces stations by arc length is unknown (§B.7).
        let s = i as f64 / cols as f64;
        let (s2, s3) = (s * s, s * s * s);
        let h = [2.0 * s3 - 3.0 * s2 + 1.0, s3 - 2.0 * s2 + s, -2.0 * s3 + 3.0 * s2, s3 - s2];
        let hd = [6.0 * s2 - 6.0 * s, 3.0 * s2 - 4.0 * s + 1.0, -6.0 * s2 + 6.0 * s, 3.0 * s2 - 2.0 * s];
        let p = [0, 1, 2].map(|k| h[0] * p0[k] + h[1] * m0[k] + h[2] * p1[k] + h[3] * m1[k]);
        let d = [0, 1, 2].map(|k| hd[0] * p0[k] + hd[1] * m0[k] + hd[2] * p1[k] + hd[3] * m1[k]);
        let len = (d[0] * d[0] + d[2] * d[2]).sqrt();
        if !(len > 0.0) {
            return None;
        }
        // Right of the travel direction (X east, Z south, Y up): (−dZ, dX).
        stations.push([p[0], p[1], p[2], -d[2] / len, d[0] / len]);
    }
    let n = stations.len();
    Some(Strip {
        right: side_grid(f64::from(t.right.size) / 10.0, &t.quad_right, n),
        left: side_grid(f64::from(t.left.size) / 10.0, &t.quad_left, n),
        stations,
    })
}

impl Strip {
    fn reach(&self) -> f64 {
        self.right.edges.last().copied().unwrap_or(0.0).max(self.left.edges.last().copied().unwrap_or(0.0))
    }

    /// Height at (x, z) if inside the strip: bilinear over the vertex grid of the segment
    /// whose perpendicular foot is nearest.
    fn height_at(&self, x: f64, z: f64) -> Option<f64> {
        let mut best: Option<(f64, f64)> = None;
        for (i, w) in self.stations.windows(2).enumerate() {
            let (a, b) = (w[0], w[1]);
            let (ex, ez) = (b[0] - a[0], b[2] - a[2]);
            let ll = ex * ex + ez * ez;
            if ll <= 0.0 {
                continue;
            }
            let s = ((x - a[0]) * ex + (z - a[2]) * ez) / ll;
            if !(-1e-9..=1.0 + 1e-9).contains(&s) {
                continue;
            }
            let s = s.clamp(0.0, 1.0);
            let (px, pz) = (a[0] + s * ex, a[2] + s * ez);
            let lat = (x - px) * (a[3] * (1.0 - s) + b[3] * s) + (z - pz) * (a[4] * (1.0 - s) + b[4] * s);
            let side = if lat >= 0.0 { &self.right } else { &self.left };
            let d = lat.abs();
            let nrow = side.edges.len();
            if nrow < 2 || d > side.edges[nrow - 1] + 1e-9 {
                continue;
            }
            let j = (0..nrow - 1).rev().find(|&j| side.edges[j] <= d).unwrap_or(0);
            let span = side.edges[j + 1] - side.edges[j];
            let wj = if span > 0.0 { ((d - side.edges[j]) / span).clamp(0.0, 1.0) } else { 0.0 };
            let v = |ii: usize, jj: usize| side.dy[ii * nrow + jj];
            let off = (1.0 - s) * ((1.0 - wj) * v(i, j) + wj * v(i, j + 1)) + s * ((1.0 - wj) * v(i + 1, j) + wj * v(i + 1, j + 1));
            let y = a[1] * (1.0 - s) + b[1] * s + off;
            if best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, y));
            }
        }
        best.map(|b| b.1)
    }
}

/// Rasterize the map at `mbd`; `spacing` overrides the grid spacing (default: the export's
/// source spacing, else 1 m).
pub fn rasterize(mbd: &Path, spacing: Option<f64>) -> Result<Raster, MapError> {
    let map = Map::load(mbd)?;
    let mut nodes: HashMap<u64, Node> = HashMap::new();
    for s in map.sectors.values() {
        for (_, f) in s.item_files() {
            for n in &f.nodes {
                nodes.insert(n.uid, *n);
            }
        }
    }
    let mut patches: Vec<WorldPatch> = Vec::new();
    let mut strips: Vec<Strip> = Vec::new();
    let mut terrain_items = 0;
    for s in map.sectors.values() {
        for (_, f) in s.item_files() {
            for it in &f.items {
                match it {
                    Item::BezierPatch(b) => {
                        if let Some(n) = nodes.get(&b.node) {
                            patches.push(WorldPatch::from_item(b, n));
                        }
                    }
                    Item::Terrain(t) => {
                        terrain_items += 1;
                        if let (Some(a), Some(b)) = (nodes.get(&t.node0), nodes.get(&t.node1)) {
                            strips.extend(terrain_strip(t, a, b));
                        }
                    }
                    Item::Model(_) => {}
                }
            }
        }
    }
    // The export's georeference, when this map is one.
    let manifest: Option<Manifest> = mbd
        .parent()
        .map(|d| d.join(MANIFEST))
        .and_then(|p| std::fs::read(p).ok())
        .and_then(|b| serde_json::from_slice::<Manifest>(&b).ok())
        .filter(|m| mbd.file_name().is_some_and(|n| n.to_string_lossy() == m.map));

    let mut bounds = [f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY];
    for p in &patches {
        let b = p.xz_bounds();
        bounds = [bounds[0].min(b[0]), bounds[1].min(b[1]), bounds[2].max(b[2]), bounds[3].max(b[3])];
    }
    for s in &strips {
        let w = s.reach();
        for st in &s.stations {
            bounds = [bounds[0].min(st[0] - w), bounds[1].min(st[2] - w), bounds[2].max(st[0] + w), bounds[3].max(st[2] + w)];
        }
    }
    let bad = |m: String| MapError::Layout { path: mbd.to_path_buf(), message: m };
    // Post grid and the map from post (x, z) to SCS (X, Z).
    let (grid, to_scs, source_georef, citation): (Grid, ToScs, bool, String) = match &manifest {
        Some(m) => {
            let g = m.georef.grid;
            let grid = match spacing {
                Some(sp) => {
                    let (w, h) = (g.east_x() - g.x0, g.north_z() - g.z0);
                    Grid { cols: (w / sp).floor() as u32 + 1, rows: (h / sp).floor() as u32 + 1, x0: g.x0, z0: g.z0, spacing: sp }
                }
                None => g,
            };
            let (ox, oz, wx, nz) = (m.georef.origin[0], m.georef.origin[1], g.x0, g.north_z());
            let cit = m.georef.citation.clone().unwrap_or_else(|| format!("source coordinates of {} (x east, y north, metres)", m.input));
            (grid, Box::new(move |x, z| (ox + (x - wx), oz + (nz - z))), true, cit)
        }
        None => {
            if !bounds[0].is_finite() {
                return Err(bad("no Bezier patch or Terrain item with resolvable nodes to rasterize".into()));
            }
            let sp = spacing.unwrap_or(1.0);
            let x0 = (bounds[0] / sp).floor() * sp;
            let zs = (bounds[1] / sp).floor() * sp;
            let cols = ((bounds[2] - x0) / sp).ceil() as u64 + 1;
            let rows = ((bounds[3] - zs) / sp).ceil() as u64 + 1;
            if cols.saturating_mul(rows) > MAX_POSTS {
                return Err(bad(format!("{cols}×{rows} posts at {sp} m is over the {MAX_POSTS}-post limit; give a larger --spacing")));
            }
            // y = −Z: grid z north = −SCS Z.
            let grid = Grid { cols: cols as u32, rows: rows as u32, x0, z0: -(zs + (rows - 1) as f64 * sp), spacing: sp };
            (grid, Box::new(|x, z| (x, -z)), false, "SCS world coordinates: x = X (east), y = -Z (SCS Z points south), metres".to_string())
        }
    };
    if !(grid.spacing.is_finite() && grid.spacing > 0.0) || u64::from(grid.cols) * u64::from(grid.rows) > MAX_POSTS {
        return Err(bad(format!("unusable raster grid {}×{} at {} m", grid.cols, grid.rows, grid.spacing)));
    }
    // Buckets of patches by ground bounds.
    let cell = patches
        .iter()
        .map(|p| {
            let b = p.xz_bounds();
            (b[2] - b[0]).max(b[3] - b[1])
        })
        .fold(1.0f64, f64::max);
    let mut buckets: HashMap<(i64, i64), Vec<u32>> = HashMap::new();
    for (i, p) in patches.iter().enumerate() {
        let b = p.xz_bounds();
        for bx in (b[0] / cell).floor() as i64..=(b[2] / cell).floor() as i64 {
            for bz in (b[1] / cell).floor() as i64..=(b[3] / cell).floor() as i64 {
                buckets.entry((bx, bz)).or_default().push(i as u32);
            }
        }
    }
    let cols = grid.cols as usize;
    let mut heights = vec![f32::NAN; grid.len()];
    let counts: Vec<(usize, usize)> = heights
        .par_chunks_mut(cols)
        .enumerate()
        .map(|(r, row)| {
            let (mut covered, mut approx) = (0, 0);
            for (c, h) in row.iter_mut().enumerate() {
                let (x, z) = (grid.x0 + c as f64 * grid.spacing, grid.z0 + r as f64 * grid.spacing);
                let (sx, sz) = to_scs(x, z);
                let key = ((sx / cell).floor() as i64, (sz / cell).floor() as i64);
                let mut found = None;
                if let Some(list) = buckets.get(&key) {
                    for &i in list {
                        let p = &patches[i as usize];
                        let b = p.xz_bounds();
                        if sx < b[0] - 1e-6 || sx > b[2] + 1e-6 || sz < b[1] - 1e-6 || sz > b[3] + 1e-6 {
                            continue;
                        }
                        if let Some((u, v)) = p.invert_xz(sx, sz, 1e-9) {
                            found = Some(p.eval(u, v)[1]);
                            break;
                        }
                    }
                }
                if found.is_none() {
                    for s in &strips {
                        if let Some(y) = s.height_at(sx, sz) {
                            found = Some(y);
                            approx += 1;
                            break;
                        }
                    }
                }
                if let Some(y) = found {
                    *h = y as f32;
                    covered += 1;
                }
            }
            (covered, approx)
        })
        .collect();
    let (covered_posts, approximate_posts) = counts.iter().fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    Ok(Raster { grid, heights, source_georef, citation, patches: patches.len(), terrain_items, approximate_posts, covered_posts })
}
