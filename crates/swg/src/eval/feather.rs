//! Feather functions and the feathered interpolant (swg-trn §5.4, §5.5).
//! Mirrored by `kernels/feather.wgsl` (same names, same operation order).

/// Feather function applied to a raw influence or filter value t ∈ [0, 1] (swg-trn §5.4).
#[inline]
pub fn feather(feather_type: i32, t: f32) -> f32 {
    match feather_type {
        0 => t,
        1 => t * t,
        2 => t.sqrt(),
        3 => t * t * (3.0 - 2.0 * t),
        _ => 0.0,
    }
}

/// The feathered interpolant I(v; lo, hi, a) of swg-trn §5.5: 0 outside the open interval,
/// linear ramps of width (hi − lo)·a/2 at both ends, 1 in between.
#[inline]
pub fn feathered_range(v: f32, lo: f32, hi: f32, a: f32) -> f32 {
    if !(lo < v && v < hi) {
        return 0.0;
    }
    let d = (hi - lo) * a * 0.5;
    if v < lo + d {
        (v - lo) / d
    } else if v > hi - d {
        (hi - v) / d
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feather_functions() {
        assert_eq!(feather(0, 0.25), 0.25);
        assert_eq!(feather(1, 0.5), 0.25);
        assert_eq!(feather(2, 0.25), 0.5);
        assert_eq!(feather(3, 0.5), 0.5);
        assert_eq!(feather(3, 1.0), 1.0);
        assert_eq!(feather(7, 0.5), 0.0);
    }

    #[test]
    fn interpolant() {
        assert_eq!(feathered_range(5.0, 0.0, 10.0, 0.0), 1.0);
        assert_eq!(feathered_range(0.0, 0.0, 10.0, 0.5), 0.0);
        assert_eq!(feathered_range(10.0, 0.0, 10.0, 0.5), 0.0);
        assert_eq!(feathered_range(1.25, 0.0, 10.0, 0.5), 0.5);
        assert_eq!(feathered_range(8.75, 0.0, 10.0, 0.5), 0.5);
        assert_eq!(feathered_range(5.0, 0.0, 10.0, 0.5), 1.0);
    }
}
