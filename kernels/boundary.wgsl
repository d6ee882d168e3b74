// boundary.wgsl — port of crates/swg/src/eval/boundary.rs (swg-trn §5.4): raw boundary influence
// before the feather function. Same names, same f32 operation order.
//
// Uses the binding `points` (6): polygon / polyline vertices (x, z).

/// Raw influence of a circle: linear in squared distance between the inner and outer radius.
/// The division runs only when ri² < d² ≤ r², so its denominator is > 0.
fn boundary_circle(b: BoundaryRecord, x: f32, z: f32) -> f32 {
    let cx = b.params[0];
    let cz = b.params[1];
    let r = b.params[2];
    let a = b.params[3];
    let dx = x - cx;
    let dz = z - cz;
    // keep(): d2 − ri2 below must not be reassociated into (dx² − ri2) + dz².
    let d2 = keep(dx * dx + dz * dz);
    let r2 = r * r;
    if (d2 > r2) {
        return 0.0;
    }
    let ri = (1.0 - a) * r;
    let ri2 = ri * ri;
    if (d2 <= ri2) {
        return 1.0;
    }
    return 1.0 - (d2 - ri2) / (r2 - ri2);
}

/// Raw influence of an axis-aligned rectangle (inclusive edges).
///
/// Guard not in the Rust: with a feather (a > 0) and a zero-width or zero-height rectangle,
/// m = 0 and the CPU returns e.min(0) / 0 = 0 / 0 = NaN, which `height_at_point` then drops
/// (`amount.max(NaN)`, `NaN > 0`), i.e. it acts as influence 0. WGSL division by zero is not
/// IEEE-defined, so 0 is returned here; the heights are the same.
fn boundary_rectangle(b: BoundaryRecord, x: f32, z: f32) -> f32 {
    let x0 = b.params[0];
    let z0 = b.params[1];
    let x1 = b.params[2];
    let z1 = b.params[3];
    if (x < x0 || x > x1 || z < z0 || z > z1) {
        return 0.0;
    }
    let a = b.extra;
    if (a == 0.0) {
        return 1.0;
    }
    // keep(): (a·w)·0.5 may become (a·0.5)·w (the same value unless it under/overflows).
    let m = keep(a * rmin(x1 - x0, z1 - z0)) * 0.5;
    let e = rmin(rmin(rmin(x - x0, x1 - x), z - z0), z1 - z);
    if (m == 0.0) {
        return 0.0;
    }
    return rmin(e, m) / m;
}

/// Squared distance from (x, z) to segment a→b when the foot of the perpendicular lies on
/// it, else F32_MAX. The division is guarded by `len2 <= 0` as in the Rust.
fn segment_foot_distance2(ax: f32, az: f32, bx: f32, bz: f32, x: f32, z: f32) -> f32 {
    let ex = bx - ax;
    let ez = bz - az;
    let len2 = ex * ex + ez * ez;
    if (len2 <= 0.0) {
        return F32_MAX;
    }
    let t = ((x - ax) * ex + (z - az) * ez) / len2;
    if (!(0.0 <= t && t <= 1.0)) {
        return F32_MAX;
    }
    let px = ax + t * ex - x;
    let pz = az + t * ez - z;
    return px * px + pz * pz;
}

/// Raw influence of a polygon: even–odd inside test, then distance to the outline against
/// the feather distance in metres. The crossing division runs only for edges that straddle
/// z (so last.z ≠ p.z); the final one only when a ≠ 0.
fn boundary_polygon(b: BoundaryRecord, x: f32, z: f32) -> f32 {
    let minx = b.bounds[0];
    let minz = b.bounds[1];
    let maxx = b.bounds[2];
    let maxz = b.bounds[3];
    if (x < minx || x > maxx || z < minz || z > maxz) {
        return 0.0;
    }
    let start = b.point_start;
    let count = b.point_count;
    if (count < 3u) {
        return 0.0;
    }
    var inside = false;
    var last = points[start + count - 1u];
    for (var k = 0u; k < count; k++) {
        let p = points[start + k];
        if (((p[1] <= z && z < last[1]) || (last[1] <= z && z < p[1]))
            && (z - p[1]) * (last[0] - p[0]) / (last[1] - p[1]) + p[0] > x) {
            inside = !inside;
        }
        last = p;
    }
    if (!inside) {
        return 0.0;
    }
    let a = b.params[0];
    if (a == 0.0) {
        return 1.0;
    }
    let a2 = a * a;
    var d2 = a2;
    last = points[start + count - 1u];
    for (var k = 0u; k < count; k++) {
        let p = points[start + k];
        let dx = p[0] - x;
        let dz = p[1] - z;
        d2 = rmin(d2, dx * dx + dz * dz);
        d2 = rmin(d2, segment_foot_distance2(last[0], last[1], p[0], p[1], x, z));
        last = p;
    }
    if (abs(d2 - a2) <= 1e-4f) {
        return 1.0;
    }
    return sqrt(d2) / a;
}

/// Raw influence of an open polyline; `width` acts as a half-width. The final division runs
/// only when inner² ≤ d² < w², which implies w − inner ≠ 0.
fn boundary_polyline(b: BoundaryRecord, x: f32, z: f32) -> f32 {
    let minx = b.bounds[0];
    let minz = b.bounds[1];
    let maxx = b.bounds[2];
    let maxz = b.bounds[3];
    if (x < minx || x > maxx || z < minz || z > maxz) {
        return 0.0;
    }
    let start = b.point_start;
    let count = b.point_count;
    let w = b.params[0];
    let a = b.params[1];
    let w2 = w * w;
    var d2 = w2;
    for (var k = 0u; k < count; k++) {
        let p = points[start + k];
        let dx = p[0] - x;
        let dz = p[1] - z;
        d2 = rmin(d2, dx * dx + dz * dz);
        if (k > 0u) {
            let q = points[start + k - 1u];
            d2 = rmin(d2, segment_foot_distance2(q[0], q[1], p[0], p[1], x, z));
        }
    }
    if (d2 >= w2) {
        return 0.0;
    }
    let inner = (1.0 - a) * w;
    if (d2 < inner * inner) {
        return 1.0;
    }
    return 1.0 - (sqrt(d2) - inner) / (w - inner);
}

/// Raw influence of any boundary record.
fn boundary_influence(b: BoundaryRecord, x: f32, z: f32) -> f32 {
    switch b.kind {
        case BOUNDARY_CIRCLE: {
            return boundary_circle(b, x, z);
        }
        case BOUNDARY_RECTANGLE: {
            return boundary_rectangle(b, x, z);
        }
        case BOUNDARY_POLYGON: {
            return boundary_polygon(b, x, z);
        }
        case BOUNDARY_POLYLINE: {
            return boundary_polyline(b, x, z);
        }
        default: {
            return 0.0;
        }
    }
}
