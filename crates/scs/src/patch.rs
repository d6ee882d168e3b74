//! Bicubic Bezier patch geometry: the on-disk order of the 16 control points, evaluation and
//! the inverse of a patch's ground-plane mapping (for rasterizing).

// Index loops mirror the Bernstein sums.
#![allow(clippy::needless_range_loop)]

use super::codec::{BezierPatchItem, Node};

/// Where control point (ix, iz) lies in the item's 16-point array: `CONTROL_POINT_ORDER[iz][ix]`,
/// with ix stepping along +X (east) and iz along +Z (south, SCS convention), i.e. rows of
/// constant Z, X running fastest. scs §B.8 warns that TruckLib mirrors one axis when
/// reading and writing, and that the true order must be checked with one editor round
/// trip: if the editor shows the patch mirrored, this table is the ONE place to change
/// (e.g. to `[[12, 13, 14, 15], [8, 9, 10, 11], [4, 5, 6, 7], [0, 1, 2, 3]]`); the writer,
/// the reader-side evaluator and the rasterizer all go through it.
pub const CONTROL_POINT_ORDER: [[usize; 4]; 4] = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15]];

/// Cubic Bernstein weights at t.
#[inline]
pub fn bernstein(t: f64) -> [f64; 4] {
    let s = 1.0 - t;
    [s * s * s, 3.0 * s * s * t, 3.0 * s * t * t, t * t * t]
}

/// Their derivatives.
#[inline]
pub fn bernstein_d(t: f64) -> [f64; 4] {
    let s = 1.0 - t;
    [-3.0 * s * s, 3.0 * s * s - 6.0 * s * t, 6.0 * s * t - 3.0 * t * t, 3.0 * t * t]
}

/// A patch in world coordinates (node position added), f64, indexed `[iz][ix]`.
#[derive(Clone, Debug, PartialEq)]
pub struct WorldPatch {
    pub points: [[[f64; 3]; 4]; 4],
}

impl WorldPatch {
    /// The control net of an item whose node is `node` (control points are relative to it).
    pub fn from_item(item: &BezierPatchItem, node: &Node) -> WorldPatch {
        let o = node.position_m();
        let mut points = [[[0.0; 3]; 4]; 4];
        for (iz, row) in points.iter_mut().enumerate() {
            for (ix, p) in row.iter_mut().enumerate() {
                let c = item.control[CONTROL_POINT_ORDER[iz][ix]];
                *p = [o[0] + f64::from(c[0]), o[1] + f64::from(c[1]), o[2] + f64::from(c[2])];
            }
        }
        WorldPatch { points }
    }

    /// Point at (u along ix, v along iz).
    pub fn eval(&self, u: f64, v: f64) -> [f64; 3] {
        let (bu, bv) = (bernstein(u), bernstein(v));
        let mut p = [0.0; 3];
        for iz in 0..4 {
            for ix in 0..4 {
                let w = bu[ix] * bv[iz];
                for k in 0..3 {
                    p[k] += w * self.points[iz][ix][k];
                }
            }
        }
        p
    }

    /// Ground-plane bounds (min X, min Z, max X, max Z) of the control net (the patch lies
    /// inside its convex hull).
    pub fn xz_bounds(&self) -> [f64; 4] {
        let mut b = [f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY];
        for p in self.points.iter().flatten() {
            b[0] = b[0].min(p[0]);
            b[1] = b[1].min(p[2]);
            b[2] = b[2].max(p[0]);
            b[3] = b[3].max(p[2]);
        }
        b
    }

    /// The (u, v) whose ground position is (x, z), by Newton's method from the bilinear guess
    /// (exact in one step for the affine nets `scs export` writes); `None` when it does not
    /// converge or lands outside [0, 1]² by more than `tol`.
    pub fn invert_xz(&self, x: f64, z: f64, tol: f64) -> Option<(f64, f64)> {
        let c = |iz: usize, ix: usize| (self.points[iz][ix][0], self.points[iz][ix][2]);
        let (p00, p10, p01) = (c(0, 0), c(0, 3), c(3, 0));
        // Initial guess from the corner frame.
        let (ax, az) = (p10.0 - p00.0, p10.1 - p00.1);
        let (bx, bz) = (p01.0 - p00.0, p01.1 - p00.1);
        let det = ax * bz - az * bx;
        if det.abs() < 1e-12 {
            return None;
        }
        let (dx, dz) = (x - p00.0, z - p00.1);
        let mut u = (dx * bz - dz * bx) / det;
        let mut v = (ax * dz - az * dx) / det;
        for _ in 0..12 {
            let (bu, bv, du, dv) = (bernstein(u), bernstein(v), bernstein_d(u), bernstein_d(v));
            let (mut px, mut pz, mut xu, mut zu, mut xv, mut zv) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
            for iz in 0..4 {
                for ix in 0..4 {
                    let (qx, qz) = c(iz, ix);
                    px += bu[ix] * bv[iz] * qx;
                    pz += bu[ix] * bv[iz] * qz;
                    xu += du[ix] * bv[iz] * qx;
                    zu += du[ix] * bv[iz] * qz;
                    xv += bu[ix] * dv[iz] * qx;
                    zv += bu[ix] * dv[iz] * qz;
                }
            }
            let (ex, ez) = (x - px, z - pz);
            let j = xu * zv - xv * zu;
            if j.abs() < 1e-12 {
                return None;
            }
            let (su, sv) = ((ex * zv - ez * xv) / j, (xu * ez - zu * ex) / j);
            u += su;
            v += sv;
            if su.abs() < 1e-13 && sv.abs() < 1e-13 {
                break;
            }
        }
        let inside = |t: f64| t >= -tol && t <= 1.0 + tol;
        (u.is_finite() && v.is_finite() && inside(u) && inside(v)).then(|| (u.clamp(0.0, 1.0), v.clamp(0.0, 1.0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_order_is_a_permutation() {
        let mut seen = [false; 16];
        for k in CONTROL_POINT_ORDER.iter().flatten() {
            assert!(!seen[*k]);
            seen[*k] = true;
        }
        // X fastest: the second point on disk is one step east of the first.
        assert_eq!(CONTROL_POINT_ORDER[0][1], 1);
        assert_eq!(CONTROL_POINT_ORDER[1][0], 4);
    }

    #[test]
    fn invert_round_trips_on_a_curved_net() {
        let mut p = WorldPatch { points: [[[0.0; 3]; 4]; 4] };
        for iz in 0..4 {
            for ix in 0..4 {
                let w = (ix * iz) as f64 * 0.7;
                p.points[iz][ix] = [ix as f64 * 10.0 + w, (ix + iz) as f64, iz as f64 * 10.0 - w * 0.5];
            }
        }
        for &(u, v) in &[(0.1, 0.2), (0.9, 0.5), (0.0, 1.0), (0.5, 0.5)] {
            let q = p.eval(u, v);
            let (a, b) = p.invert_xz(q[0], q[2], 1e-9).unwrap();
            assert!((a - u).abs() < 1e-9 && (b - v).abs() < 1e-9, "{u},{v} -> {a},{b}");
        }
        assert!(p.invert_xz(-50.0, -50.0, 1e-6).is_none());
    }
}
