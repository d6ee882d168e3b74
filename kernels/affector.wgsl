// affector.wgsl — port of crates/swg/src/eval/affector.rs (swg-trn §5.7, §5.8, §5.12): height
// affectors. Same names, same f32 operation order.
//
// Uses the bindings `roads` (5), `points` (6), `road_segments` (7), `road_samples` (8),
// `road_heights` (9) and `fractals` (10).

/// Apply a height operation with value `c` and amount `t` (swg-trn §5.7). Unknown
/// operations leave the height unchanged.
fn height_operation(op: i32, h: f32, c: f32, t: f32) -> f32 {
    switch op {
        case 0i: {
            return h + (c - h) * t;
        }
        case 1i: {
            return h + t * c;
        }
        case 2i: {
            return h - t * c;
        }
        case 3i: {
            return h + (h * c - h) * t;
        }
        default: {
            return h;
        }
    }
}

/// AHTR (swg-trn §5.8) with the floor reading below 0 m.
///
/// `(h − mid) / (high − mid)` can divide by 0 on the CPU: when flat_ratio rounds
/// terrace_height·flat_ratio up to terrace_height (flat_ratio ≈ 1) and h lands above mid
/// through rounding. The CPU then gets target = +inf (a positive value over +0); the same
/// +inf is produced here without dividing. (0 / 0, which would need the numerator to
/// underflow, is left to the GPU's division.)
fn height_terrace(h: f32, flat_ratio: f32, terrace_height: f32, t: f32) -> f32 {
    if (terrace_height <= 0.0) {
        return h;
    }
    // keep(): high − mid = (low + H) − (low + H·f) must not be simplified algebraically.
    let low = keep(terrace_height * floor(h / terrace_height));
    let mid = keep(low + terrace_height * flat_ratio);
    let high = keep(low + terrace_height);
    var target_h: f32;
    if (h <= mid) {
        target_h = low;
    } else {
        let num = terrace_height * (h - mid);
        let den = high - mid;
        if (den == 0.0 && num > 0.0) {
            target_h = f32_inf();
        } else {
            target_h = low + num / den;
        }
    }
    return h + (target_h - h) * t;
}

/// The point of segment a→b nearest to (x, z): vec2(squared distance, parameter u ∈ [0, 1]).
/// Port of `nearest_on_segment` in crates/swg/src/eval/affector.rs.
fn nearest_on_segment(ax: f32, az: f32, bx: f32, bz: f32, x: f32, z: f32) -> vec2<f32> {
    let ex = bx - ax;
    let ez = bz - az;
    let len2 = ex * ex + ez * ez;
    var u = 0.0f;
    if (len2 > 0.0) {
        u = ((x - ax) * ex + (z - az) * ez) / len2;
    }
    u = rclamp(u, 0.0, 1.0);
    let px = ax + u * ex - x;
    let pz = az + u * ez - z;
    return vec2<f32>(px * px + pz * pz, u);
}

/// Where a point lies relative to a road's control polyline (port of `RoadHit` in
/// crates/swg/src/eval/affector.rs); `inside` is false where the CPU's `road_hit` returns `None`.
struct RoadHit {
    inside: bool,
    distance: f32,
    segment: u32,
    t: f32,
    weight: f32,
}

/// The road's `RoadHit` at (x, z) (swg-trn §5.12 steps 1 and 3): the nearest control segment,
/// the projection parameter on it and the feathered weight; not inside beyond half the width
/// or for a road with fewer than two control points. Port of `road_hit`, shared by the height
/// model and the shader parts of roads, rivers and ribbons.
fn road_hit(r: RoadRecord, x: f32, z: f32) -> RoadHit {
    var hit = RoadHit(false, 0.0, 0u, 0.0, 0.0);
    let pstart = r.point_start;
    let pcount = r.point_count;
    if (pcount < 2u) {
        return hit;
    }
    // 1. Nearest control segment and the projection parameter on it.
    var best_d2 = F32_MAX;
    var best_seg = 0u;
    var best_t = 0.0f;
    for (var s = 0u; s < pcount - 1u; s++) {
        let a = points[pstart + s];
        let b = points[pstart + s + 1u];
        let near = nearest_on_segment(a[0], a[1], b[0], b[1], x, z);
        if (near[0] < best_d2) {
            best_d2 = near[0];
            best_seg = s;
            best_t = near[1];
        }
    }
    let d = sqrt(best_d2);
    let hw = r.half_width;
    if (d >= hw) {
        return hit;
    }
    // 3. Feathered weight. Reached with 0 ≤ d < hw and d > (1 − a)·hw, so a·hw > 0 unless
    //    it underflows; then the CPU gets (hw − d) / 0 = +inf, clamped to 1, reproduced here.
    let a = r.feather_amount;
    var w: f32;
    if (d <= (1.0 - a) * hw) {
        w = 1.0;
    } else {
        let den = a * hw;
        var q: f32;
        if (den == 0.0) {
            q = 1.0;
        } else {
            q = rclamp((hw - d) / den, 0.0, 1.0);
        }
        w = feather(r.feather_type, q);
    }
    hit = RoadHit(true, d, best_seg, best_t, w);
    return hit;
}

/// Road/river height (swg-trn §5.12 recommended model, [I]): distance to the control
/// polyline, the profile height of the nearest segment's HDTA samples (or the fixed heights),
/// a feathered blend within half the width. Port of `height_road`.
fn height_road(r: RoadRecord, h: f32, t: f32, x: f32, z: f32) -> f32 {
    let hit = road_hit(r, x, z);
    if (!hit.inside) {
        return h;
    }
    let best_seg = hit.segment;
    let best_t = hit.t;
    // 2. Road height at the projection.
    var road_h: f32;
    if (r.fixed_heights != 0u) {
        let h0 = road_heights[r.heights_start + best_seg];
        let h1 = road_heights[r.heights_start + best_seg + 1u];
        road_h = h0 + (h1 - h0) * best_t;
    } else {
        let seg = road_segments[r.segment_start + best_seg];
        let start = seg[0];
        let count = seg[1];
        if (count == 0u) {
            return h;
        } else if (count == 1u) {
            road_h = road_samples[start][1];
        } else {
            var best_0 = F32_MAX;
            var best_1 = road_samples[start][1];
            for (var k = 0u; k < count - 1u; k++) {
                let a = road_samples[start + k];
                let b = road_samples[start + k + 1u];
                let near = nearest_on_segment(a[0], a[2], b[0], b[2], x, z);
                if (near[0] < best_0) {
                    best_0 = near[0];
                    best_1 = a[1] + (b[1] - a[1]) * near[1];
                }
            }
            road_h = best_1;
        }
    }
    road_h = road_h - r.depth;
    // 3.–4. Feathered weight (road_hit), blend.
    return h + (road_h - h) * hit.weight * t;
}

/// Apply one height affector with amount `t` > 0.
fn apply_height_affector(a: AffectorRecord, h: f32, t: f32, x: f32, z: f32) -> f32 {
    switch a.kind {
        case AFFECTOR_HEIGHT_CONSTANT: {
            return height_operation(a.operation, h, a.value, t);
        }
        case AFFECTOR_HEIGHT_FRACTAL: {
            if (a.index >= arrayLength(&fractals)) {
                return h;
            }
            let f = fractals[a.index];
            return height_operation(a.operation, h, fractal_value(f, x, z) * a.value, t);
        }
        case AFFECTOR_HEIGHT_TERRACE: {
            return height_terrace(h, a.value, a.value2, t);
        }
        case AFFECTOR_ROAD: {
            if (a.index >= arrayLength(&roads)) {
                return h;
            }
            let r = roads[a.index];
            return height_road(r, h, t, x, z);
        }
        default: {
            return h;
        }
    }
}
