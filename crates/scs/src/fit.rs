//! Fitting a mosaic of bicubic Bezier patches to a heightmap (scs §B.8 option (b)).
//!
//! **Global fit.** The patches of the base size form a tensor-product space of C1 piecewise
//! cubics: per axis, cubic Hermite functions on uniform knots (a value and a derivative per
//! knot), and their tensor product in 2-D (value, ∂x, ∂z, ∂x∂z per knot). Each patch's 4×4
//! Bezier control heights follow from the Hermite data at its four corners, so neighbouring
//! patches share their boundary control rows (C0) and the rows on both sides of a seam are
//! collinear with equal spans (C1) — by construction, not by penalty. Least squares over a
//! full post grid is separable in this space: with the per-axis collocation matrices Aₓ and
//! A_z, min ‖A_z C Aₓᵀ − H‖ is solved as C = (A_zᵀA_z)⁻¹ A_zᵀ H Aₓ (AₓᵀAₓ)⁻¹, two passes
//! of banded (7-diagonal) Cholesky solves, O(posts) time and memory; no dense matrix.
//!
//! **Refinement.** A patch whose worst post misses by more than `max_error` is split into
//! 2×2 children fitted jointly by least squares with the parent's edges held fixed: the
//! children's boundary Hermite data (value and the derivative along the edge, at the edge's
//! knots) are the parent's edge cubic evaluated at 0, ½, 1 — its exact de Casteljau
//! subdivision — while the interior seam and the cross derivatives are free. So a coarse
//! neighbour's edge equals its finer neighbours' edges and no crack opens where sizes meet;
//! children that still miss split again, down to the minimum size.
//!
//! **Holding `max_error`.** The fixed edges are what keep the mosaic watertight, and also what
//! a split cannot improve: a post on a shared edge keeps its error. So when the refined mosaic
//! still misses somewhere, the whole fit is redone with base patches half the size (the global
//! solve then gives every edge more freedom), down to the minimum patch size, and the mosaic
//! with the smallest worst error is kept.
//!
//! **C0 fallback.** Where even that misses (a cliff, or real terrain rougher than a C1 cubic at
//! the minimum size can follow), C1 cannot hold, and the patches that miss are replaced by
//! patches of one post interval with C0 seams: each such cell's corners are its posts, its
//! edges straight between them, except where a cell borders a patch that holds the bound:
//! there the cell's edge is that patch's edge cubic restricted to the cell's interval (exact
//! subdivision, as a split does) and its corners lie on that patch. So every post is either
//! interpolated exactly or lies on a patch within the bound, and the mosaic stays watertight.
//! [`Mosaic::over`] then lists nothing; it stays for a caller to report a miss, were one left.
//!
//! Frame: local metres from the south-west post, x east, z north; patches are indexed
//! `[iz][ix]` with iz northwards. [`super::export`] maps this to SCS's X east, Z south.

// Index loops mirror the matrix formulas they implement.
#![allow(clippy::needless_range_loop)]

use rayon::prelude::*;

/// Heights on a regular grid, row-major, row 0 = south.
#[derive(Clone, Copy)]
pub struct FitGrid<'a> {
    pub cols: usize,
    pub rows: usize,
    pub h: &'a [f32],
}

impl FitGrid<'_> {
    #[inline]
    fn at(&self, c: usize, r: usize) -> f64 {
        f64::from(self.h[r * self.cols + c])
    }
}

/// Fitting parameters, in posts.
#[derive(Clone, Copy, Debug)]
pub struct FitOptions {
    /// Post intervals per base patch (patch size ÷ spacing), ≥ 3.
    pub patch_posts: usize,
    /// Split a patch whose worst post misses by more than this (metres).
    pub max_error: Option<f64>,
    /// Smallest patch a split may produce, in post intervals (≥ 2).
    pub min_patch_posts: usize,
}

/// One patch of the mosaic: posts `c0..=c0+n` × `r0..=r0+n`, control heights `[iz][ix]`
/// (iz northwards), and its fit error over those posts.
#[derive(Clone, Debug, PartialEq)]
pub struct Leaf {
    pub c0: usize,
    pub r0: usize,
    pub n: usize,
    pub bez: [[f64; 4]; 4],
    pub rms: f64,
    pub max: f64,
    /// The post with the largest |error| (grid column, row), and whether it lies on the
    /// patch's edge (shared with a neighbour, so a split keeps it).
    pub worst_post: (usize, usize),
    pub worst_on_edge: bool,
    /// Splits below the base size.
    pub depth: u32,
    /// A patch of one post interval from the C0 fallback (module docs): its edges are C0
    /// seams, not C1.
    pub c0_fallback: bool,
}

/// The fitted mosaic.
pub struct Mosaic {
    /// Base patches along x and z.
    pub nx: usize,
    pub nz: usize,
    pub leaves: Vec<Leaf>,
    /// Post intervals per base patch: the requested size, or a smaller one chosen to hold
    /// `max_error` (module docs).
    pub patch_posts: usize,
    /// Seconds in the global banded solves and in the refinements.
    pub solve_seconds: f64,
    pub refine_seconds: f64,
}

impl Mosaic {
    /// The patches whose worst post misses by more than `max_error`.
    pub fn over(&self, max_error: f64) -> Vec<&Leaf> {
        self.leaves.iter().filter(|l| l.max > max_error).collect()
    }

    /// The worst |error| of any patch.
    pub fn max_error(&self) -> f64 {
        self.leaves.iter().map(|l| l.max).fold(0.0, f64::max)
    }
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FitError {
    #[error("a patch must span at least 3 post intervals (got {0}); use a larger --patch or a finer grid")]
    PatchTooSmall(usize),
    #[error("the region ({cols}×{rows} posts) is smaller than one patch of {n} post intervals")]
    RegionTooSmall { cols: usize, rows: usize, n: usize },
    #[error("the heightmap has {count} nodata/non-finite posts inside the region (first at column {col}, row {row} from the south-west)")]
    NonFinite { count: usize, col: usize, row: usize },
    #[error("the least-squares system is not positive definite (degenerate sampling)")]
    Singular,
}

/// Cubic Hermite basis at t: [H00, H10, H01, H11] for [f0, d0, f1, d1] with derivatives
/// scaled by the segment length (d = h·f').
#[inline]
pub fn hermite(t: f64) -> [f64; 4] {
    let (t2, t3) = (t * t, t * t * t);
    [2.0 * t3 - 3.0 * t2 + 1.0, t3 - 2.0 * t2 + t, -2.0 * t3 + 3.0 * t2, t3 - t2]
}

/// Hermite [f0, d0, f1, d1] → Bezier [b0, b1, b2, b3].
const HERMITE_TO_BEZIER: [[f64; 4]; 4] = [[1.0, 0.0, 0.0, 0.0], [1.0, 1.0 / 3.0, 0.0, 0.0], [0.0, 0.0, 1.0, -1.0 / 3.0], [0.0, 0.0, 1.0, 0.0]];

/// Bezier heights `[iz][ix]` from a 4×4 Hermite block `g[z dof][x dof]`: B = M G Mᵀ.
pub fn bezier_from_hermite(g: &[[f64; 4]; 4]) -> [[f64; 4]; 4] {
    let m = &HERMITE_TO_BEZIER;
    let mut b = [[0.0; 4]; 4];
    for iz in 0..4 {
        for ix in 0..4 {
            let mut s = 0.0;
            for a in 0..4 {
                for c in 0..4 {
                    s += m[iz][a] * g[a][c] * m[ix][c];
                }
            }
            b[iz][ix] = s;
        }
    }
    b
}

/// Height of a Bezier patch `[iz][ix]` at (u along x, v along z).
#[inline]
pub fn eval_bezier(b: &[[f64; 4]; 4], u: f64, v: f64) -> f64 {
    let (bu, bv) = (super::patch::bernstein(u), super::patch::bernstein(v));
    let mut s = 0.0;
    for iz in 0..4 {
        s += bv[iz] * (bu[0] * b[iz][0] + bu[1] * b[iz][1] + bu[2] * b[iz][2] + bu[3] * b[iz][3]);
    }
    s
}

/// Value and partial derivatives (∂/∂u, ∂/∂v) of a Bezier patch.
fn eval_bezier_d(b: &[[f64; 4]; 4], u: f64, v: f64) -> (f64, f64, f64) {
    use super::patch::{bernstein, bernstein_d};
    let (bu, bv, du, dv) = (bernstein(u), bernstein(v), bernstein_d(u), bernstein_d(v));
    let (mut f, mut fu, mut fv) = (0.0, 0.0, 0.0);
    for iz in 0..4 {
        for ix in 0..4 {
            f += bu[ix] * bv[iz] * b[iz][ix];
            fu += du[ix] * bv[iz] * b[iz][ix];
            fv += bu[ix] * dv[iz] * b[iz][ix];
        }
    }
    (f, fu, fv)
}

/// A symmetric positive definite band matrix with 3 sub-diagonals, factored in place
/// (Cholesky, L stored by row: `l[i][d] = L[i][i-d]`).
struct Band7 {
    l: Vec<[f64; 4]>,
}

impl Band7 {
    fn factor(mut a: Vec<[f64; 4]>) -> Result<Band7, FitError> {
        let m = a.len();
        let mean_diag = a.iter().map(|r| r[0]).sum::<f64>() / m.max(1) as f64;
        // A relative ridge of 1e-12 only guards against round-off; it moves no fitted height
        // measurably (the exactness test holds 1e-4 m).
        let ridge = 1e-12 * mean_diag.max(1e-300);
        for r in &mut a {
            r[0] += ridge;
        }
        for i in 0..m {
            for d in (0..4).rev() {
                if d > i {
                    continue;
                }
                let j = i - d;
                let mut s = a[i][d];
                for k in i.saturating_sub(3)..j {
                    s -= a[i][i - k] * a[j][j - k];
                }
                if d == 0 {
                    if !(s > 0.0) {
                        return Err(FitError::Singular);
                    }
                    a[i][0] = s.sqrt();
                } else {
                    a[i][d] = s / a[j][0];
                }
            }
        }
        Ok(Band7 { l: a })
    }

    fn solve(&self, b: &mut [f64]) {
        let m = self.l.len();
        for i in 0..m {
            let mut s = b[i];
            for k in i.saturating_sub(3)..i {
                s -= self.l[i][i - k] * b[k];
            }
            b[i] = s / self.l[i][0];
        }
        for i in (0..m).rev() {
            let mut s = b[i];
            for k in i + 1..(i + 4).min(m) {
                s -= self.l[k][k - i] * b[k];
            }
            b[i] = s / self.l[i][0];
        }
    }
}

/// Per-axis collocation: for sample j of `n·k + 1`, its first DOF and 4 basis values.
fn collocation(n: usize, k: usize) -> Vec<(usize, [f64; 4])> {
    (0..=n * k)
        .map(|j| {
            let seg = (j / k).min(n - 1);
            let t = (j - seg * k) as f64 / k as f64;
            (2 * seg, hermite(t))
        })
        .collect()
}

fn normal_matrix(coll: &[(usize, [f64; 4])], m: usize) -> Vec<[f64; 4]> {
    let mut a = vec![[0.0; 4]; m];
    for &(d0, w) in coll {
        for p in 0..4 {
            for q in 0..=p {
                a[d0 + p][p - q] += w[p] * w[q];
            }
        }
    }
    a
}

/// The global C1 fit of base patches of `k` post intervals; Hermite data `g[z dof][x dof]`.
fn global_fit(grid: FitGrid, nx: usize, nz: usize, k: usize) -> Result<Vec<Vec<f64>>, FitError> {
    let (mx, mz) = (2 * (nx + 1), 2 * (nz + 1));
    let (cx, cz) = (collocation(nx, k), collocation(nz, k));
    let fx = Band7::factor(normal_matrix(&cx, mx))?;
    let fz = Band7::factor(normal_matrix(&cz, mz))?;
    // Pass 1: every post row against the x basis, solved along x.
    let y: Vec<Vec<f64>> = (0..=nz * k)
        .into_par_iter()
        .map(|r| {
            let mut t = vec![0.0; mx];
            for (c, &(d0, w)) in cx.iter().enumerate() {
                let h = grid.at(c, r);
                for p in 0..4 {
                    t[d0 + p] += w[p] * h;
                }
            }
            fx.solve(&mut t);
            t
        })
        .collect();
    // Pass 2: A_zᵀ Y, solved along z, one x DOF column at a time.
    let mut t2 = vec![vec![0.0; mz]; mx];
    for (r, &(d0, w)) in cz.iter().enumerate() {
        for (col, t) in t2.iter_mut().enumerate() {
            let v = y[r][col];
            for p in 0..4 {
                t[d0 + p] += w[p] * v;
            }
        }
    }
    t2.par_iter_mut().for_each(|t| fz.solve(t));
    // Transpose to g[z][x].
    let mut g = vec![vec![0.0; mx]; mz];
    for (xd, t) in t2.iter().enumerate() {
        for (zd, &v) in t.iter().enumerate() {
            g[zd][xd] = v;
        }
    }
    Ok(g)
}

/// The error of one patch over its posts, with where its worst post is.
struct PatchError {
    rms: f64,
    max: f64,
    worst: (usize, usize),
    on_edge: bool,
}

impl PatchError {
    fn of(grid: FitGrid, c0: usize, r0: usize, n: usize, bez: &[[f64; 4]; 4]) -> PatchError {
        let (mut ss, mut mx, mut worst) = (0.0, 0.0f64, (0, 0));
        for r in 0..=n {
            for c in 0..=n {
                let e = (eval_bezier(bez, c as f64 / n as f64, r as f64 / n as f64) - grid.at(c0 + c, r0 + r)).abs();
                ss += e * e;
                if e > mx {
                    mx = e;
                    worst = (c, r);
                }
            }
        }
        let on_edge = worst.0 == 0 || worst.1 == 0 || worst.0 == n || worst.1 == n;
        PatchError { rms: (ss / ((n + 1) * (n + 1)) as f64).sqrt(), max: mx, worst: (c0 + worst.0, r0 + worst.1), on_edge }
    }

    fn leaf(self, c0: usize, r0: usize, n: usize, bez: [[f64; 4]; 4], depth: u32) -> Leaf {
        Leaf { c0, r0, n, bez, rms: self.rms, max: self.max, worst_post: self.worst, worst_on_edge: self.on_edge, depth, c0_fallback: false }
    }
}

/// Dense Cholesky solve of a small SPD system (`a` row-major n×n), with a tiny ridge.
fn dense_solve(mut a: Vec<f64>, mut b: Vec<f64>, n: usize) -> Result<Vec<f64>, FitError> {
    let mean = (0..n).map(|i| a[i * n + i]).sum::<f64>() / n as f64;
    for i in 0..n {
        a[i * n + i] += 1e-10 * mean.max(1e-300);
    }
    for j in 0..n {
        let mut s = a[j * n + j];
        for k in 0..j {
            s -= a[j * n + k] * a[j * n + k];
        }
        if !(s > 0.0) {
            return Err(FitError::Singular);
        }
        let d = s.sqrt();
        a[j * n + j] = d;
        for i in j + 1..n {
            let mut s = a[i * n + j];
            for k in 0..j {
                s -= a[i * n + k] * a[j * n + k];
            }
            a[i * n + j] = s / d;
        }
    }
    for i in 0..n {
        let mut s = b[i];
        for k in 0..i {
            s -= a[i * n + k] * b[k];
        }
        b[i] = s / a[i * n + i];
    }
    for i in (0..n).rev() {
        let mut s = b[i];
        for k in i + 1..n {
            s -= a[k * n + i] * b[k];
        }
        b[i] = s / a[i * n + i];
    }
    Ok(b)
}

/// Split `leaf` into 2×2 children fitted with its edges fixed (module docs).
fn split(grid: FitGrid, leaf: &Leaf) -> Result<[Leaf; 4], FitError> {
    let kc = leaf.n / 2;
    // DOF (knot a along z, b along x, kind 0 f / 1 dx / 2 dz / 3 dxz) → index.
    let idx = |a: usize, b: usize, kind: usize| 4 * (3 * a + b) + kind;
    let mut fixed: [Option<f64>; 36] = [None; 36];
    for a in 0..3 {
        for b in 0..3 {
            let (f, fu, fv) = eval_bezier_d(&leaf.bez, b as f64 / 2.0, a as f64 / 2.0);
            let on_z_edge = a != 1; // south/north edge: runs along x
            let on_x_edge = b != 1; // west/east edge: runs along z
            if on_z_edge || on_x_edge {
                fixed[idx(a, b, 0)] = Some(f);
            }
            if on_z_edge {
                fixed[idx(a, b, 1)] = Some(fu / 2.0);
            }
            if on_x_edge {
                fixed[idx(a, b, 2)] = Some(fv / 2.0);
            }
        }
    }
    let free: Vec<usize> = (0..36).filter(|&i| fixed[i].is_none()).collect();
    let mut pos = [usize::MAX; 36];
    for (p, &i) in free.iter().enumerate() {
        pos[i] = p;
    }
    let nf = free.len();
    let mut ata = vec![0.0; nf * nf];
    let mut atb = vec![0.0; nf];
    let seg = |j: usize| -> (usize, [f64; 4]) {
        let s = (j / kc).min(1);
        (s, hermite((j - s * kc) as f64 / kc as f64))
    };
    let mut dofs = [0usize; 16];
    let mut w = [0.0f64; 16];
    for r in 0..=leaf.n {
        let (sa, hz) = seg(r);
        for c in 0..=leaf.n {
            let (sb, hx) = seg(c);
            let mut rhs = grid.at(leaf.c0 + c, leaf.r0 + r);
            for za in 0..4 {
                for xb in 0..4 {
                    let kind = (za & 1) * 2 + (xb & 1);
                    let d = idx(sa + za / 2, sb + xb / 2, kind);
                    let wt = hz[za] * hx[xb];
                    dofs[za * 4 + xb] = d;
                    w[za * 4 + xb] = wt;
                    if let Some(v) = fixed[d] {
                        rhs -= wt * v;
                    }
                }
            }
            for p in 0..16 {
                let ip = pos[dofs[p]];
                if ip == usize::MAX {
                    continue;
                }
                atb[ip] += w[p] * rhs;
                for q in 0..16 {
                    let iq = pos[dofs[q]];
                    if iq != usize::MAX {
                        ata[ip * nf + iq] += w[p] * w[q];
                    }
                }
            }
        }
    }
    let sol = dense_solve(ata, atb, nf)?;
    let val = |d: usize| fixed[d].unwrap_or_else(|| sol[pos[d]]);
    let mut out = Vec::with_capacity(4);
    for ca in 0..2 {
        for cb in 0..2 {
            let mut g = [[0.0; 4]; 4];
            for (za, row) in g.iter_mut().enumerate() {
                for (xb, v) in row.iter_mut().enumerate() {
                    *v = val(idx(ca + za / 2, cb + xb / 2, (za & 1) * 2 + (xb & 1)));
                }
            }
            let bez = bezier_from_hermite(&g);
            let (c0, r0) = (leaf.c0 + cb * kc, leaf.r0 + ca * kc);
            out.push(PatchError::of(grid, c0, r0, kc, &bez).leaf(c0, r0, kc, bez, leaf.depth + 1));
        }
    }
    Ok(out.try_into().expect("four children"))
}

fn refine(grid: FitGrid, leaf: Leaf, opts: &FitOptions, out: &mut Vec<Leaf>) -> Result<(), FitError> {
    let can_split = leaf.n.is_multiple_of(2) && leaf.n / 2 >= opts.min_patch_posts.max(2);
    match opts.max_error {
        Some(m) if leaf.max > m && can_split => {
            for child in split(grid, &leaf)? {
                refine(grid, child, opts, out)?;
            }
            Ok(())
        }
        _ => {
            out.push(leaf);
            Ok(())
        }
    }
}

/// Fit the mosaic to the posts of `grid` (which must hold no NaN). The region used is the
/// largest whole number of base patches from the south-west post. With `max_error`, base
/// patches are halved while the mosaic misses and they can be (module docs).
pub fn fit(grid: FitGrid, opts: &FitOptions) -> Result<Mosaic, FitError> {
    let mut best = fit_c1(grid, opts)?;
    if let Some(m) = opts.max_error {
        let t = std::time::Instant::now();
        c0_fallback(grid, &mut best, m);
        best.refine_seconds += t.elapsed().as_secs_f64();
    }
    Ok(best)
}

/// The C1 mosaic (module docs: global fit, refinement, smaller base patches).
fn fit_c1(grid: FitGrid, opts: &FitOptions) -> Result<Mosaic, FitError> {
    let mut best = fit_at(grid, opts.patch_posts, opts)?;
    let Some(m) = opts.max_error else { return Ok(best) };
    let mut k = opts.patch_posts;
    let (mut solve, mut refine) = (best.solve_seconds, best.refine_seconds);
    while best.max_error() > m && k / 2 >= opts.min_patch_posts.max(3) {
        k /= 2;
        let next = fit_at(grid, k, opts)?;
        solve += next.solve_seconds;
        refine += next.refine_seconds;
        if next.max_error() < best.max_error() {
            best = next;
        }
    }
    best.solve_seconds = solve;
    best.refine_seconds = refine;
    Ok(best)
}

/// The control points of the cubic Bezier `p` restricted to `t0..t1` (its blossom at
/// (t0,t0,t0), (t0,t0,t1), (t0,t1,t1), (t1,t1,t1)): the same curve, exactly.
fn restrict(p: [f64; 4], t0: f64, t1: f64) -> [f64; 4] {
    let blossom = |a: f64, b: f64, c: f64| {
        let l1: [f64; 3] = std::array::from_fn(|i| p[i] + a * (p[i + 1] - p[i]));
        let l2: [f64; 2] = std::array::from_fn(|i| l1[i] + b * (l1[i + 1] - l1[i]));
        l2[0] + c * (l2[1] - l2[0])
    };
    [blossom(t0, t0, t0), blossom(t0, t0, t1), blossom(t0, t1, t1), blossom(t1, t1, t1)]
}

/// The C0 fallback (module docs): every leaf over `max_error` becomes one-post cells.
fn c0_fallback(grid: FitGrid, m: &mut Mosaic, max_error: f64) {
    use std::collections::{HashMap, HashSet};
    if !m.leaves.iter().any(|l| l.max > max_error) {
        return;
    }
    let (bad, good): (Vec<Leaf>, Vec<Leaf>) = std::mem::take(&mut m.leaves).into_iter().partition(|l| l.max > max_error);
    // The posts on the boundaries of the leaves that miss.
    let mut rim: HashSet<(usize, usize)> = HashSet::new();
    for l in &bad {
        for i in 0..=l.n {
            rim.extend([(l.c0 + i, l.r0), (l.c0 + i, l.r0 + l.n), (l.c0, l.r0 + i), (l.c0 + l.n, l.r0 + i)]);
        }
    }
    // From the leaves that hold the bound and touch them: the height of each boundary post,
    // and each one-post piece of their edge cubics (`along_x[(c, r)]`: from post (c, r) to
    // (c + 1, r); `along_z[(c, r)]`: to (c, r + 1)).
    let mut vertex: HashMap<(usize, usize), f64> = HashMap::new();
    let mut along_x: HashMap<(usize, usize), [f64; 4]> = HashMap::new();
    let mut along_z: HashMap<(usize, usize), [f64; 4]> = HashMap::new();
    for l in &good {
        let n = l.n;
        let touches = (0..=n).any(|i| [(l.c0 + i, l.r0), (l.c0 + i, l.r0 + n), (l.c0, l.r0 + i), (l.c0 + n, l.r0 + i)].iter().any(|p| rim.contains(p)));
        if !touches {
            continue;
        }
        let b = &l.bez;
        let column = |ix: usize| [b[0][ix], b[1][ix], b[2][ix], b[3][ix]];
        for i in 0..n {
            let (t0, t1) = (i as f64 / n as f64, (i + 1) as f64 / n as f64);
            for (row, r) in [(b[0], l.r0), (b[3], l.r0 + n)] {
                let piece = restrict(row, t0, t1);
                along_x.insert((l.c0 + i, r), piece);
                vertex.insert((l.c0 + i, r), piece[0]);
                vertex.insert((l.c0 + i + 1, r), piece[3]);
            }
            for (col, c) in [(column(0), l.c0), (column(3), l.c0 + n)] {
                let piece = restrict(col, t0, t1);
                along_z.insert((c, l.r0 + i), piece);
                vertex.insert((c, l.r0 + i), piece[0]);
                vertex.insert((c, l.r0 + i + 1), piece[3]);
            }
        }
    }
    let v = |c: usize, r: usize| vertex.get(&(c, r)).copied().unwrap_or_else(|| grid.at(c, r));
    // An edge from corner value a to b: the neighbour's piece (its ends set to the corners,
    // which equal them up to rounding), or the straight line.
    let edge = |piece: Option<&[f64; 4]>, a: f64, b: f64| match piece {
        Some(p) => [a, p[1], p[2], b],
        None => [a, a + (b - a) / 3.0, a + 2.0 * (b - a) / 3.0, b],
    };
    let mut cells = Vec::new();
    for l in &bad {
        for r in l.r0..l.r0 + l.n {
            for c in l.c0..l.c0 + l.n {
                let (v00, v10, v01, v11) = (v(c, r), v(c + 1, r), v(c, r + 1), v(c + 1, r + 1));
                let south = edge(along_x.get(&(c, r)), v00, v10);
                let north = edge(along_x.get(&(c, r + 1)), v01, v11);
                let west = edge(along_z.get(&(c, r)), v00, v01);
                let east = edge(along_z.get(&(c + 1, r)), v10, v11);
                let mut bez = [[0.0; 4]; 4];
                bez[0] = south;
                bez[3] = north;
                for iz in 0..4 {
                    bez[iz][0] = west[iz];
                    bez[iz][3] = east[iz];
                }
                // The interior: the discrete Coons patch of the four edges.
                for iz in 1..3 {
                    for ix in 1..3 {
                        let (u, w) = (ix as f64 / 3.0, iz as f64 / 3.0);
                        let loft_z = (1.0 - w) * bez[0][ix] + w * bez[3][ix];
                        let loft_x = (1.0 - u) * bez[iz][0] + u * bez[iz][3];
                        let bilinear = (1.0 - u) * (1.0 - w) * v00 + u * (1.0 - w) * v10 + (1.0 - u) * w * v01 + u * w * v11;
                        bez[iz][ix] = loft_z + loft_x - bilinear;
                    }
                }
                let mut leaf = PatchError::of(grid, c, r, 1, &bez).leaf(c, r, 1, bez, l.depth + 1);
                leaf.c0_fallback = true;
                cells.push(leaf);
            }
        }
    }
    m.leaves = good;
    m.leaves.extend(cells);
}

/// [`fit`] at one base patch size of `k` post intervals.
fn fit_at(grid: FitGrid, k: usize, opts: &FitOptions) -> Result<Mosaic, FitError> {
    if k < 3 {
        return Err(FitError::PatchTooSmall(k));
    }
    let (nx, nz) = ((grid.cols.saturating_sub(1)) / k, (grid.rows.saturating_sub(1)) / k);
    if nx == 0 || nz == 0 {
        return Err(FitError::RegionTooSmall { cols: grid.cols, rows: grid.rows, n: k });
    }
    let bad: Vec<usize> = (0..=nz * k)
        .flat_map(|r| (0..=nx * k).map(move |c| (r, c)))
        .filter(|&(r, c)| !grid.at(c, r).is_finite())
        .map(|(r, c)| r * grid.cols + c)
        .take(1)
        .collect();
    if let Some(&first) = bad.first() {
        let count = (0..=nz * k).map(|r| (0..=nx * k).filter(|&c| !grid.at(c, r).is_finite()).count()).sum();
        return Err(FitError::NonFinite { count, col: first % grid.cols, row: first / grid.cols });
    }
    let t0 = std::time::Instant::now();
    let g = global_fit(grid, nx, nz, k)?;
    let solve_seconds = t0.elapsed().as_secs_f64();
    let t1 = std::time::Instant::now();
    let base: Vec<(usize, usize)> = (0..nz).flat_map(|pz| (0..nx).map(move |px| (pz, px))).collect();
    let parts: Vec<Result<Vec<Leaf>, FitError>> = base
        .par_iter()
        .map(|&(pz, px)| {
            let mut h = [[0.0; 4]; 4];
            for (za, row) in h.iter_mut().enumerate() {
                for (xb, v) in row.iter_mut().enumerate() {
                    *v = g[2 * pz + za][2 * px + xb];
                }
            }
            let bez = bezier_from_hermite(&h);
            let (c0, r0) = (px * k, pz * k);
            let mut out = Vec::new();
            refine(grid, PatchError::of(grid, c0, r0, k, &bez).leaf(c0, r0, k, bez, 0), opts, &mut out)?;
            Ok(out)
        })
        .collect();
    let mut leaves = Vec::with_capacity(base.len());
    for p in parts {
        leaves.extend(p?);
    }
    Ok(Mosaic { nx, nz, leaves, patch_posts: k, solve_seconds, refine_seconds: t1.elapsed().as_secs_f64() })
}

/// Overall RMS and max |error| of a mosaic, each post counted once.
pub fn mosaic_error(grid: FitGrid, m: &Mosaic, k: usize) -> (f64, f64, usize) {
    let (last_c, last_r) = (m.nx * k, m.nz * k);
    let parts: Vec<(f64, f64, usize)> = m
        .leaves
        .par_iter()
        .map(|l| {
            let (mut ss, mut mx, mut n) = (0.0, 0.0f64, 0usize);
            let rr = if l.r0 + l.n == last_r { l.n + 1 } else { l.n };
            let cc = if l.c0 + l.n == last_c { l.n + 1 } else { l.n };
            for r in 0..rr {
                for c in 0..cc {
                    let e = eval_bezier(&l.bez, c as f64 / l.n as f64, r as f64 / l.n as f64) - grid.at(l.c0 + c, l.r0 + r);
                    ss += e * e;
                    mx = mx.max(e.abs());
                    n += 1;
                }
            }
            (ss, mx, n)
        })
        .collect();
    let (ss, mx, n) = parts.iter().fold((0.0, 0.0f64, 0), |a, p| (a.0 + p.0, a.1.max(p.1), a.2 + p.2));
    ((ss / n.max(1) as f64).sqrt(), mx, n)
}

/// For comparison only (`scs bench`): RMS and max of independent per-patch least squares
/// (16 free control heights per patch, no continuity: the patches would not meet). The gap
/// to [`mosaic_error`] is the price of a watertight C1 mosaic. Each post counted once.
pub fn independent_patch_error(grid: FitGrid, k: usize) -> (f64, f64) {
    let (nx, nz) = ((grid.cols - 1) / k, (grid.rows - 1) / k);
    // Bernstein collocation B ((k+1)×4) and (BᵀB)⁻¹Bᵀ, shared by every patch and both axes.
    let b: Vec<[f64; 4]> = (0..=k).map(|j| super::patch::bernstein(j as f64 / k as f64)).collect();
    let mut btb = vec![0.0; 16];
    for w in &b {
        for p in 0..4 {
            for q in 0..4 {
                btb[p * 4 + q] += w[p] * w[q];
            }
        }
    }
    let pinv: Vec<[f64; 4]> = b
        .iter()
        .map(|w| {
            let x = dense_solve(btb.clone(), w.to_vec(), 4).expect("Bernstein normal matrix is SPD");
            [x[0], x[1], x[2], x[3]]
        })
        .collect();
    let parts: Vec<(f64, f64, usize)> = (0..nz * nx)
        .into_par_iter()
        .map(|i| {
            let (pz, px) = (i / nx, i % nx);
            let (c0, r0) = (px * k, pz * k);
            // C = P H Pᵀ with P = (BᵀB)⁻¹Bᵀ (rows: z, columns: x).
            let mut t = vec![[0.0; 4]; k + 1];
            for (r, tr) in t.iter_mut().enumerate() {
                for (c, pc) in pinv.iter().enumerate() {
                    let h = grid.at(c0 + c, r0 + r);
                    for q in 0..4 {
                        tr[q] += pc[q] * h;
                    }
                }
            }
            let mut bez = [[0.0; 4]; 4];
            for (r, tr) in t.iter().enumerate() {
                for p in 0..4 {
                    for q in 0..4 {
                        bez[p][q] += pinv[r][p] * tr[q];
                    }
                }
            }
            let rr = if pz + 1 == nz { k + 1 } else { k };
            let cc = if px + 1 == nx { k + 1 } else { k };
            let (mut ss, mut mx) = (0.0, 0.0f64);
            for r in 0..rr {
                for c in 0..cc {
                    let e = eval_bezier(&bez, c as f64 / k as f64, r as f64 / k as f64) - grid.at(c0 + c, r0 + r);
                    ss += e * e;
                    mx = mx.max(e.abs());
                }
            }
            (ss, mx, rr * cc)
        })
        .collect();
    let (ss, mx, n) = parts.iter().fold((0.0, 0.0f64, 0), |a, p| (a.0 + p.0, a.1.max(p.1), a.2 + p.2));
    ((ss / n.max(1) as f64).sqrt(), mx)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid_of(cols: usize, rows: usize, f: impl Fn(f64, f64) -> f64) -> Vec<f32> {
        let mut v = Vec::with_capacity(cols * rows);
        for r in 0..rows {
            for c in 0..cols {
                v.push(f(c as f64, r as f64) as f32);
            }
        }
        v
    }

    #[test]
    fn independent_fit_is_exact_on_a_bicubic_and_bounds_the_mosaic() {
        let h = grid_of(33, 33, |x, z| 0.001 * x * x * z - 0.02 * z * z + x);
        let g = FitGrid { cols: 33, rows: 33, h: &h };
        assert!(independent_patch_error(g, 16).1 < 1e-3);
        let h = grid_of(65, 65, |x, z| ((x * 0.4).sin() * (z * 0.3).cos()) * 8.0);
        let g = FitGrid { cols: 65, rows: 65, h: &h };
        let m = fit(g, &FitOptions { patch_posts: 16, max_error: None, min_patch_posts: 4 }).unwrap();
        // More freedom per patch: never worse than the constrained mosaic.
        assert!(independent_patch_error(g, 16).0 <= mosaic_error(g, &m, 16).0 + 1e-12);
    }

    #[test]
    fn band_solver_matches_dense() {
        let coll = collocation(5, 4);
        let a = normal_matrix(&coll, 12);
        let f = Band7::factor(a.clone()).unwrap();
        let mut b: Vec<f64> = (0..12).map(|i| (i as f64).sin()).collect();
        let orig = b.clone();
        f.solve(&mut b);
        // A·x == b
        for i in 0..12 {
            let mut s = 0.0;
            for j in 0..12 {
                let (p, q) = if i >= j { (i, i - j) } else { (j, j - i) };
                if q < 4 {
                    s += a[p][q] * b[j];
                }
            }
            assert!((s - orig[i]).abs() < 1e-9, "row {i}: {s} vs {}", orig[i]);
        }
    }

    #[test]
    fn shared_rows_and_collinear_seams() {
        let h = grid_of(65, 49, |x, z| (x * 0.13).sin() * 20.0 + (z * 0.07).cos() * 15.0 + x * z * 0.01);
        let m = fit(FitGrid { cols: 65, rows: 49, h: &h }, &FitOptions { patch_posts: 16, max_error: None, min_patch_posts: 4 }).unwrap();
        assert_eq!((m.nx, m.nz, m.leaves.len()), (4, 3, 12));
        let at = |px: usize, pz: usize| &m.leaves[pz * 4 + px].bez;
        for pz in 0..3 {
            for px in 0..3 {
                let (a, b) = (at(px, pz), at(px + 1, pz));
                for iz in 0..4 {
                    assert!((a[iz][3] - b[iz][0]).abs() < 1e-9, "C0");
                    assert!(((a[iz][3] - a[iz][2]) - (b[iz][1] - b[iz][0])).abs() < 1e-9, "C1");
                }
            }
        }
    }

    #[test]
    fn refinement_keeps_edges_and_lowers_error() {
        let h = grid_of(65, 65, |x, z| ((x * 0.4).sin() * (z * 0.3).cos()) * 8.0);
        let g = FitGrid { cols: 65, rows: 65, h: &h };
        let coarse = fit(g, &FitOptions { patch_posts: 32, max_error: None, min_patch_posts: 4 }).unwrap();
        // The refinement alone, at the requested base size (`fit` may also halve the base).
        let fine = fit_at(g, 32, &FitOptions { patch_posts: 32, max_error: Some(0.05), min_patch_posts: 4 }).unwrap();
        assert!(fine.leaves.len() > coarse.leaves.len());
        assert!(mosaic_error(g, &fine, 32).0 < mosaic_error(g, &coarse, 32).0 * 0.5);
        // Every leaf's edge equals the coarse parent's edge where it lies on a base-patch
        // boundary (the parent's edge is fixed).
        for l in &fine.leaves {
            let base = &coarse.leaves[(l.r0 / 32) * 2 + l.c0 / 32];
            if l.r0 % 32 == 0 {
                for s in 0..=10 {
                    let u = s as f64 / 10.0;
                    let x = (l.c0 % 32) as f64 + u * l.n as f64;
                    let a = eval_bezier(&l.bez, u, 0.0);
                    let b = eval_bezier(&base.bez, x / 32.0, 0.0);
                    assert!((a - b).abs() < 1e-9, "{a} vs {b}");
                }
            }
        }
    }

    #[test]
    fn smaller_base_patches_hold_max_error_where_splits_cannot() {
        let h = grid_of(129, 129, |x, z| ((x * 0.4).sin() * (z * 0.3).cos()) * 8.0);
        let g = FitGrid { cols: 129, rows: 129, h: &h };
        let opts = FitOptions { patch_posts: 32, max_error: Some(0.05), min_patch_posts: 4 };
        let split_only = fit_at(g, 32, &opts).unwrap();
        assert!(split_only.max_error() > 0.05, "splits alone keep the base edges' error: {}", split_only.max_error());
        let m = fit(g, &opts).unwrap();
        assert!(m.patch_posts < 32 && m.max_error() <= 0.05, "base {} max {}", m.patch_posts, m.max_error());
        assert!(m.over(0.05).is_empty());
        // Every post of the fitted region is within the bound, each counted once.
        assert!(mosaic_error(g, &m, m.patch_posts).1 <= 0.05);
    }
}
