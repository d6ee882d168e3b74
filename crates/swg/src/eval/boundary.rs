//! Boundary influence (swg-trn §5.4), before the feather function. Mirrored by
//! `kernels/boundary.wgsl`.

use crate::plan::{BoundaryRecord, BOUNDARY_CIRCLE, BOUNDARY_POLYGON, BOUNDARY_POLYLINE, BOUNDARY_RECTANGLE};

/// Raw influence of a circle: linear in squared distance between the inner and outer radius.
#[inline]
pub fn boundary_circle(b: &BoundaryRecord, x: f32, z: f32) -> f32 {
    let [cx, cz, r, a] = b.params;
    let dx = x - cx;
    let dz = z - cz;
    let d2 = dx * dx + dz * dz;
    let r2 = r * r;
    if d2 > r2 {
        return 0.0;
    }
    let ri = (1.0 - a) * r;
    let ri2 = ri * ri;
    if d2 <= ri2 {
        return 1.0;
    }
    1.0 - (d2 - ri2) / (r2 - ri2)
}

/// Raw influence of an axis-aligned rectangle (inclusive edges).
#[inline]
pub fn boundary_rectangle(b: &BoundaryRecord, x: f32, z: f32) -> f32 {
    let [x0, z0, x1, z1] = b.params;
    if x < x0 || x > x1 || z < z0 || z > z1 {
        return 0.0;
    }
    let a = b.extra;
    if a == 0.0 {
        return 1.0;
    }
    let m = a * (x1 - x0).min(z1 - z0) * 0.5;
    let e = (x - x0).min(x1 - x).min(z - z0).min(z1 - z);
    e.min(m) / m
}

/// Squared distance from (x, z) to segment a→b when the foot of the perpendicular lies on
/// it, else `f32::MAX`.
#[inline]
fn segment_foot_distance2(ax: f32, az: f32, bx: f32, bz: f32, x: f32, z: f32) -> f32 {
    let ex = bx - ax;
    let ez = bz - az;
    let len2 = ex * ex + ez * ez;
    if len2 <= 0.0 {
        return f32::MAX;
    }
    let t = ((x - ax) * ex + (z - az) * ez) / len2;
    if !(0.0..=1.0).contains(&t) {
        return f32::MAX;
    }
    let px = ax + t * ex - x;
    let pz = az + t * ez - z;
    px * px + pz * pz
}

/// Raw influence of a polygon: even–odd inside test, then distance to the outline against
/// the feather distance in metres.
#[inline]
pub fn boundary_polygon(b: &BoundaryRecord, points: &[[f32; 2]], x: f32, z: f32) -> f32 {
    let [minx, minz, maxx, maxz] = b.bounds;
    if x < minx || x > maxx || z < minz || z > maxz {
        return 0.0;
    }
    let pts = &points[b.point_start as usize..(b.point_start + b.point_count) as usize];
    if pts.len() < 3 {
        return 0.0;
    }
    let mut inside = false;
    let mut last = pts[pts.len() - 1];
    for &p in pts {
        if ((p[1] <= z && z < last[1]) || (last[1] <= z && z < p[1])) && (z - p[1]) * (last[0] - p[0]) / (last[1] - p[1]) + p[0] > x {
            inside = !inside;
        }
        last = p;
    }
    if !inside {
        return 0.0;
    }
    let a = b.params[0];
    if a == 0.0 {
        return 1.0;
    }
    let a2 = a * a;
    let mut d2 = a2;
    let mut last = pts[pts.len() - 1];
    for &p in pts {
        let dx = p[0] - x;
        let dz = p[1] - z;
        d2 = d2.min(dx * dx + dz * dz);
        d2 = d2.min(segment_foot_distance2(last[0], last[1], p[0], p[1], x, z));
        last = p;
    }
    if (d2 - a2).abs() <= 1e-4 {
        return 1.0;
    }
    d2.sqrt() / a
}

/// Raw influence of an open polyline; `width` acts as a half-width.
#[inline]
pub fn boundary_polyline(b: &BoundaryRecord, points: &[[f32; 2]], x: f32, z: f32) -> f32 {
    let [minx, minz, maxx, maxz] = b.bounds;
    if x < minx || x > maxx || z < minz || z > maxz {
        return 0.0;
    }
    let pts = &points[b.point_start as usize..(b.point_start + b.point_count) as usize];
    let [w, a, _, _] = b.params;
    let w2 = w * w;
    let mut d2 = w2;
    for (i, &p) in pts.iter().enumerate() {
        let dx = p[0] - x;
        let dz = p[1] - z;
        d2 = d2.min(dx * dx + dz * dz);
        if i > 0 {
            let q = pts[i - 1];
            d2 = d2.min(segment_foot_distance2(q[0], q[1], p[0], p[1], x, z));
        }
    }
    if d2 >= w2 {
        return 0.0;
    }
    let inner = (1.0 - a) * w;
    if d2 < inner * inner {
        return 1.0;
    }
    1.0 - (d2.sqrt() - inner) / (w - inner)
}

/// Raw influence of any boundary record.
#[inline]
pub fn boundary_influence(b: &BoundaryRecord, points: &[[f32; 2]], x: f32, z: f32) -> f32 {
    match b.kind {
        BOUNDARY_CIRCLE => boundary_circle(b, x, z),
        BOUNDARY_RECTANGLE => boundary_rectangle(b, x, z),
        BOUNDARY_POLYGON => boundary_polygon(b, points, x, z),
        BOUNDARY_POLYLINE => boundary_polyline(b, points, x, z),
        _ => 0.0,
    }
}

/// The lanes of a row of posts (`xs` ascending, all at `z`) outside which `b`'s influence is
/// exactly 0, so the row walk can leave them alone: empty when the row misses the boundary.
/// Circles get a margin of 10⁻⁵·r + 1 cm, enough that every post outside it has a computed
/// d² strictly above r² despite f32 rounding; the others test the very bounds their
/// influence functions test first. Records with non-finite parameters get the whole row.
pub fn boundary_span(b: &BoundaryRecord, xs: &[f32], z: f32) -> std::ops::Range<usize> {
    let whole = 0..xs.len();
    let (x0, x1) = match b.kind {
        BOUNDARY_CIRCLE => {
            let [cx, cz, r, _] = b.params;
            if !(cx.is_finite() && cz.is_finite() && r.is_finite()) {
                return whole;
            }
            let dz = z - cz;
            if dz * dz > r * r {
                return 0..0;
            }
            let reach = r.abs() * (1.0 + 1e-5) + 1e-2;
            (cx - reach, cx + reach)
        }
        BOUNDARY_RECTANGLE | BOUNDARY_POLYGON | BOUNDARY_POLYLINE => {
            let [minx, minz, maxx, maxz] = if b.kind == BOUNDARY_RECTANGLE { b.params } else { b.bounds };
            if !b.params.iter().chain(&b.bounds).all(|v| v.is_finite()) {
                return whole;
            }
            if z < minz || z > maxz {
                return 0..0;
            }
            (minx, maxx)
        }
        _ => return whole,
    };
    let lo = xs.partition_point(|&x| x < x0);
    let hi = xs.partition_point(|&x| x <= x1).max(lo);
    lo..hi
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(kind: u32, params: [f32; 4], extra: f32, start: u32, count: u32, bounds: [f32; 4]) -> BoundaryRecord {
        BoundaryRecord { kind, params, extra, point_start: start, point_count: count, bounds, ..Default::default() }
    }

    #[test]
    fn circle_falls_off_in_squared_distance() {
        let c = rec(BOUNDARY_CIRCLE, [0.0, 0.0, 10.0, 0.5], 0.0, 0, 0, [-10.0, -10.0, 10.0, 10.0]);
        assert_eq!(boundary_circle(&c, 4.0, 3.0), 1.0);
        assert_eq!(boundary_circle(&c, 10.0, 0.0), 0.0);
        assert_eq!(boundary_circle(&c, 10.01, 0.0), 0.0);
        // d² = 62.5 halfway between ri² = 25 and r² = 100
        let d = 62.5f32.sqrt();
        assert!((boundary_circle(&c, d, 0.0) - 0.5).abs() < 1e-6);
    }

    #[test]
    fn rectangle_edges() {
        let r = rec(BOUNDARY_RECTANGLE, [0.0, 0.0, 100.0, 40.0], 0.5, 0, 0, [0.0, 0.0, 100.0, 40.0]);
        assert_eq!(boundary_rectangle(&r, 50.0, 20.0), 1.0);
        assert_eq!(boundary_rectangle(&r, 5.0, 20.0), 0.5); // m = 0.5·40/2 = 10
        assert_eq!(boundary_rectangle(&r, 0.0, 20.0), 0.0);
        assert_eq!(boundary_rectangle(&r, -0.1, 20.0), 0.0);
        let hard = rec(BOUNDARY_RECTANGLE, [0.0, 0.0, 100.0, 40.0], 0.0, 0, 0, [0.0; 4]);
        assert_eq!(boundary_rectangle(&hard, 0.0, 0.0), 1.0);
    }

    #[test]
    fn polygon_inside_and_feather_distance() {
        let pts = [[0.0, 0.0], [100.0, 0.0], [100.0, 100.0], [0.0, 100.0]];
        let p = rec(BOUNDARY_POLYGON, [20.0, 0.0, 0.0, 0.0], 0.0, 0, 4, [0.0, 0.0, 100.0, 100.0]);
        assert_eq!(boundary_polygon(&p, &pts, 50.0, 50.0), 1.0);
        assert!((boundary_polygon(&p, &pts, 10.0, 50.0) - 0.5).abs() < 1e-6);
        assert_eq!(boundary_polygon(&p, &pts, 150.0, 50.0), 0.0);
        // Concave: a U shape has its notch outside.
        let u = [[0.0, 0.0], [30.0, 0.0], [30.0, 20.0], [20.0, 20.0], [20.0, 10.0], [10.0, 10.0], [10.0, 20.0], [0.0, 20.0]];
        let pu = rec(BOUNDARY_POLYGON, [0.0; 4], 0.0, 0, 8, [0.0, 0.0, 30.0, 20.0]);
        assert_eq!(boundary_polygon(&pu, &u, 15.0, 15.0), 0.0);
        assert_eq!(boundary_polygon(&pu, &u, 5.0, 15.0), 1.0);
    }

    #[test]
    fn polyline_half_width() {
        let pts = [[0.0, 0.0], [100.0, 0.0]];
        let l = rec(BOUNDARY_POLYLINE, [10.0, 0.5, 0.0, 0.0], 0.0, 0, 2, [-10.0, -10.0, 110.0, 10.0]);
        assert_eq!(boundary_polyline(&l, &pts, 50.0, 4.0), 1.0);
        assert!((boundary_polyline(&l, &pts, 50.0, 7.5) - 0.5).abs() < 1e-6);
        assert_eq!(boundary_polyline(&l, &pts, 50.0, 10.0), 0.0);
        assert_eq!(boundary_polyline(&l, &pts, 105.0, 0.0), 1.0); // round cap via the vertex distance
    }
}
