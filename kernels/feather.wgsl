// feather.wgsl — port of crates/swg/src/eval/feather.rs (swg-trn §5.4, §5.5): `feather` and
// `feathered_range`, same names, same f32 operation order.

/// Feather function applied to a raw influence or filter value t (swg-trn §5.4).
///
/// One deliberate difference: for type 2 with t < 0 the CPU computes sqrt(t) = NaN, which
/// its callers then drop (`amount.max(NaN)` keeps amount, and `NaN > 0` is false), i.e. the
/// NaN acts like 0. WGSL's sqrt of a negative value is undefined, so 0 is returned instead.
/// Only a boundary (a polygon with a negative feather distance) can produce t < 0; filter
/// values are never negative, so this gives the same heights as the CPU.
fn feather(feather_type: i32, t: f32) -> f32 {
    switch feather_type {
        case 0i: {
            return t;
        }
        case 1i: {
            return t * t;
        }
        case 2i: {
            if (t < 0.0) {
                return 0.0;
            }
            return sqrt(t);
        }
        case 3i: {
            return t * t * (3.0 - 2.0 * t);
        }
        default: {
            return 0.0;
        }
    }
}

/// The feathered interpolant I(v; lo, hi, a) of swg-trn §5.5: 0 outside the open interval,
/// linear ramps of width (hi − lo)·a/2 at both ends, 1 in between. The divisions only run
/// when d > 0 (d = 0 falls through to 1, as on the CPU), so no guard is needed.
fn feathered_range(v: f32, lo: f32, hi: f32, a: f32) -> f32 {
    if (!(lo < v && v < hi)) {
        return 0.0;
    }
    // keep(): (x·a)·0.5 may become (x·0.5)·a (the same value unless it under/overflows).
    let d = keep((hi - lo) * a) * 0.5;
    if (v < lo + d) {
        return (v - lo) / d;
    } else if (v > hi - d) {
        return (hi - v) / d;
    } else {
        return 1.0;
    }
}
