//! Height affectors (swg-trn §5.7, §5.8, §5.12). Mirrored by `kernels/affector.wgsl`.

use super::feather::feather;
use crate::plan::{AffectorRecord, BakePlan, RoadRecord, AFFECTOR_HEIGHT_CONSTANT, AFFECTOR_HEIGHT_FRACTAL, AFFECTOR_HEIGHT_TERRACE, AFFECTOR_ROAD};

/// Apply a height operation with value `c` and amount `t` (swg-trn §5.7). Unknown
/// operations leave the height unchanged.
#[inline]
pub fn height_operation(op: i32, h: f32, c: f32, t: f32) -> f32 {
    match op {
        0 => h + (c - h) * t,
        1 => h + t * c,
        2 => h - t * c,
        3 => h + (h * c - h) * t,
        _ => h,
    }
}

/// AHTR (swg-trn §5.8) with the floor reading below 0 m.
#[inline]
pub fn height_terrace(h: f32, flat_ratio: f32, terrace_height: f32, t: f32) -> f32 {
    if terrace_height <= 0.0 {
        return h;
    }
    let low = terrace_height * (h / terrace_height).floor();
    let mid = low + terrace_height * flat_ratio;
    let high = low + terrace_height;
    let target = if h <= mid { low } else { low + terrace_height * (h - mid) / (high - mid) };
    h + (target - h) * t
}

/// The point of segment a→b nearest to (x, z): (squared distance, parameter u ∈ [0, 1]).
/// `nearest_on_segment` in kernels/affector.wgsl is its twin.
#[inline]
pub fn nearest_on_segment(ax: f32, az: f32, bx: f32, bz: f32, x: f32, z: f32) -> (f32, f32) {
    let ex = bx - ax;
    let ez = bz - az;
    let len2 = ex * ex + ez * ez;
    let mut u = if len2 > 0.0 { ((x - ax) * ex + (z - az) * ez) / len2 } else { 0.0 };
    u = u.clamp(0.0, 1.0);
    let px = ax + u * ex - x;
    let pz = az + u * ez - z;
    (px * px + pz * pz, u)
}

/// Where a point lies relative to a road's control polyline (swg-trn §5.12): the distance,
/// the nearest control segment, the projection parameter on it and the feathered weight.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RoadHit {
    pub distance: f32,
    pub segment: usize,
    pub t: f32,
    /// 1 within (1 − a)·halfWidth of the centreline, then the feather function of
    /// (halfWidth − d)/(a·halfWidth) (the recommended model's step 3).
    pub weight: f32,
}

/// The road's [`RoadHit`] at (x, z), or `None` outside half its width (or for a road with
/// fewer than two control points). Shared by the height model and the shader parts of roads,
/// rivers and ribbons.
pub fn road_hit(plan: &BakePlan, r: &RoadRecord, x: f32, z: f32) -> Option<RoadHit> {
    road_hit_among(plan, r, 0..road_points(plan, r).len().saturating_sub(1), x, z)
}

/// The control points of road `r`.
fn road_points<'p>(plan: &'p BakePlan, r: &RoadRecord) -> &'p [[f32; 2]] {
    &plan.points[r.point_start as usize..(r.point_start + r.point_count) as usize]
}

/// How far from a segment's bounding box (along an axis) a point can still be nearest to it
/// within half the road's width ([`road_hit`]'s step 1).
fn road_reach(r: &RoadRecord) -> f32 {
    r.half_width * 1.001 + 1.0
}

/// The control segments of road `r` (ascending) whose bounding boxes are within reach of
/// some post of a row at `z` from x = `x0` to `x1` (into `out`, cleared first): the only
/// ones [`road_hit`] measures at those posts, found once for the row
/// ([`road_hit_among`] then gives the same hits, bit for bit).
pub fn road_segments_near(plan: &BakePlan, r: &RoadRecord, (x0, x1): (f32, f32), z: f32, out: &mut Vec<u32>) {
    out.clear();
    let pts = road_points(plan, r);
    let reach = road_reach(r);
    for s in 0..pts.len().saturating_sub(1) {
        let (a, b) = (pts[s], pts[s + 1]);
        // What `road_hit_among` tests a post with, at the row's nearest post on each side.
        if !(x0 - a[0].max(b[0]) > reach || a[0].min(b[0]) - x1 > reach || z - a[1].max(b[1]) > reach || a[1].min(b[1]) - z > reach) {
            out.push(s as u32);
        }
    }
}

/// `then(the segments of road r near a row's span of posts)` ([`road_segments_near`]), in a
/// list the thread keeps (the row walks ask once a row and road).
pub fn with_road_segments_near<R>(plan: &BakePlan, r: &RoadRecord, span: (f32, f32), z: f32, then: impl FnOnce(&[u32]) -> R) -> R {
    thread_local! {
        static NEAR: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    NEAR.with_borrow_mut(|near| {
        road_segments_near(plan, r, span, z, near);
        then(near)
    })
}

/// [`road_hit`] measuring only `segments` (ascending; those left out must be out of reach
/// of (x, z), as [`road_segments_near`]'s are).
pub fn road_hit_among(plan: &BakePlan, r: &RoadRecord, segments: impl Iterator<Item = usize>, x: f32, z: f32) -> Option<RoadHit> {
    let pts = road_points(plan, r);
    if pts.len() < 2 {
        return None;
    }
    // 1. Nearest control segment and the projection parameter on it. A segment whose bounding
    // box lies farther than `reach` along an axis is skipped: its distance exceeds half the
    // width by more than any rounding of `nearest_on_segment` (≪ 1 m at map coordinates), so
    // it can be neither the nearest of a point within half the width (the only case with a
    // hit) nor tie with it; the result is the same bit for bit, and a point far from the road
    // (most of the map, for a road on a layer without a boundary) costs a few compares a
    // segment.
    let reach = road_reach(r);
    let mut best_d2 = f32::MAX;
    let mut best_seg = 0usize;
    let mut best_t = 0.0f32;
    for s in segments {
        let (a, b) = (pts[s], pts[s + 1]);
        if x - a[0].max(b[0]) > reach || a[0].min(b[0]) - x > reach || z - a[1].max(b[1]) > reach || a[1].min(b[1]) - z > reach {
            continue;
        }
        let (d2, u) = nearest_on_segment(a[0], a[1], b[0], b[1], x, z);
        if d2 < best_d2 {
            best_d2 = d2;
            best_seg = s;
            best_t = u;
        }
    }
    let d = best_d2.sqrt();
    let hw = r.half_width;
    if d >= hw {
        return None;
    }
    let a = r.feather_amount;
    let weight = if d <= (1.0 - a) * hw { 1.0 } else { feather(r.feather_type, ((hw - d) / (a * hw)).clamp(0.0, 1.0)) };
    Some(RoadHit { distance: d, segment: best_seg, t: best_t, weight })
}

/// Road/river height (swg-trn §5.12 recommended model, \[I\]): distance to the control
/// polyline, the profile height of the nearest segment's HDTA samples (or the fixed heights),
/// a feathered blend within half the width.
pub fn height_road(plan: &BakePlan, r: &RoadRecord, h: f32, t: f32, x: f32, z: f32) -> f32 {
    height_road_at(plan, r, road_hit(plan, r, x, z), h, t, x, z)
}

/// [`height_road`] measuring only `segments` of the road ([`road_hit_among`]).
pub fn height_road_among(plan: &BakePlan, r: &RoadRecord, segments: impl Iterator<Item = usize>, h: f32, t: f32, x: f32, z: f32) -> f32 {
    height_road_at(plan, r, road_hit_among(plan, r, segments, x, z), h, t, x, z)
}

/// [`height_road`] at a point where the road's hit is `hit`.
#[inline(always)]
fn height_road_at(plan: &BakePlan, r: &RoadRecord, hit: Option<RoadHit>, h: f32, t: f32, x: f32, z: f32) -> f32 {
    let Some(hit) = hit else { return h };
    let (best_seg, best_t) = (hit.segment, hit.t);
    // 2. Road height at the projection.
    let road_h = if r.fixed_heights != 0 {
        let hs = &plan.road_heights[r.heights_start as usize..];
        hs[best_seg] + (hs[best_seg + 1] - hs[best_seg]) * best_t
    } else {
        let [start, count] = plan.road_segments[r.segment_start as usize + best_seg];
        let samples = &plan.road_samples[start as usize..(start + count) as usize];
        match samples.len() {
            0 => return h,
            1 => samples[0][1],
            _ => {
                let mut best = (f32::MAX, samples[0][1]);
                for w in samples.windows(2) {
                    let (a, b) = (w[0], w[1]);
                    let (d2, u) = nearest_on_segment(a[0], a[2], b[0], b[2], x, z);
                    if d2 < best.0 {
                        best = (d2, a[1] + (b[1] - a[1]) * u);
                    }
                }
                best.1
            }
        }
    } - r.depth;
    // 3.–4. Feathered weight (road_hit), blend.
    h + (road_h - h) * hit.weight * t
}

/// Apply one height affector with amount `t` > 0.
#[inline]
pub fn apply_height_affector(plan: &BakePlan, a: &AffectorRecord, h: f32, t: f32, x: f32, z: f32) -> f32 {
    match a.kind {
        AFFECTOR_HEIGHT_CONSTANT => height_operation(a.operation, h, a.value, t),
        AFFECTOR_HEIGHT_FRACTAL => match plan.fractals.get(a.index as usize) {
            Some(f) => height_operation(a.operation, h, f.value(x, z) * a.value, t),
            None => h,
        },
        AFFECTOR_HEIGHT_TERRACE => height_terrace(h, a.value, a.value2, t),
        AFFECTOR_ROAD => match plan.roads.get(a.index as usize) {
            Some(r) => height_road(plan, r, h, t, x, z),
            None => h,
        },
        _ => h,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `road_hit` skips the segments whose bounding box is out of reach; the hit is the one of
    /// every segment's distance, bit for bit, at points near and far from winding roads of
    /// several widths (at the rim of half the width above all). So is the hit among the
    /// segments `road_segments_near` finds for a span of a row around the point.
    #[test]
    fn road_hits_skip_only_segments_out_of_reach() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f32 / (1u64 << 53) as f32
        };
        let every_segment = |plan: &BakePlan, r: &RoadRecord, x: f32, z: f32| -> Option<RoadHit> {
            let pts = &plan.points[r.point_start as usize..(r.point_start + r.point_count) as usize];
            let mut best = (f32::MAX, 0usize, 0.0f32);
            for s in 0..pts.len() - 1 {
                let (d2, u) = nearest_on_segment(pts[s][0], pts[s][1], pts[s + 1][0], pts[s + 1][1], x, z);
                if d2 < best.0 {
                    best = (d2, s, u);
                }
            }
            let (d, hw, a) = (best.0.sqrt(), r.half_width, r.feather_amount);
            (d < hw).then(|| RoadHit {
                distance: d,
                segment: best.1,
                t: best.2,
                weight: if d <= (1.0 - a) * hw { 1.0 } else { feather(r.feather_type, ((hw - d) / (a * hw)).clamp(0.0, 1.0)) },
            })
        };
        let (mut hits, mut misses, mut narrowed) = (0, 0, 0);
        let mut near = Vec::new();
        for half_width in [0.5f32, 4.0, 12.5, 60.0] {
            let mut plan = BakePlan::default();
            let mut p = [next() * 16000.0 - 8000.0, next() * 16000.0 - 8000.0];
            for _ in 0..40 {
                plan.points.push(p);
                p = [p[0] + next() * 400.0 - 200.0, p[1] + next() * 400.0 - 200.0];
            }
            let road = RoadRecord { point_count: 40, half_width, feather_amount: 0.5, ..Default::default() };
            for k in 0..20_000 {
                // Around a control point: on it, at the rim of half the width, or farther out.
                let c = plan.points[k % 40];
                let r = match k % 4 {
                    0 => next() * half_width,
                    1 => half_width * (0.999 + 0.002 * next()),
                    2 => half_width + next() * 3.0,
                    _ => next() * 600.0,
                };
                let angle = next() * std::f32::consts::TAU;
                let (x, z) = (c[0] + r * angle.cos(), c[1] + r * angle.sin());
                let want = every_segment(&plan, &road, x, z);
                assert_eq!(road_hit(&plan, &road, x, z), want, "({x}, {z}), half width {half_width}");
                // A row's segments near a span of posts around this one hit it the same.
                let (west, east) = (next() * 300.0, next() * 300.0);
                road_segments_near(&plan, &road, (x - west, x + east), z, &mut near);
                let among = road_hit_among(&plan, &road, near.iter().map(|&s| s as usize), x, z);
                assert_eq!(among, want, "({x}, {z}) among {near:?}, half width {half_width}");
                narrowed += usize::from(near.len() < 39);
                if want.is_some() {
                    hits += 1;
                } else {
                    misses += 1;
                }
            }
        }
        assert!(hits > 20_000 && misses > 20_000, "{hits} hits, {misses} misses");
        assert!(narrowed > 60_000, "the rows' segment lists left out segments {narrowed} times");
    }

    #[test]
    fn operations() {
        assert_eq!(height_operation(0, 10.0, 20.0, 0.5), 15.0);
        assert_eq!(height_operation(1, 10.0, 20.0, 0.5), 20.0);
        assert_eq!(height_operation(2, 10.0, 20.0, 0.5), 0.0);
        assert_eq!(height_operation(3, 10.0, 2.0, 0.5), 15.0);
        assert_eq!(height_operation(4, 10.0, 2.0, 0.5), 10.0);
    }

    #[test]
    fn terrace_floor_below_zero() {
        // H = 10, f = 0.5: h = 3 → low 0, mid 5 → 0; h = 7.5 → 0 + 10·2.5/5 = 5.
        assert_eq!(height_terrace(3.0, 0.5, 10.0, 1.0), 0.0);
        assert_eq!(height_terrace(7.5, 0.5, 10.0, 1.0), 5.0);
        // Below 0 the floor reading: h = −3 → low −10, mid −5, → −10 + 10·2/5 = −6.
        assert_eq!(height_terrace(-3.0, 0.5, 10.0, 1.0), -6.0);
        assert_eq!(height_terrace(-3.0, 0.5, 0.0, 1.0), -3.0);
    }
}
