//! Rounding to a small integer range without libm: `x.round().clamp(0, max) as u32` for f32
//! and f64. On the x86-64 baseline (SSE2) `f32::round` and `f64::round` are calls to libm's
//! `roundf`/`round` (no SSE2 instruction rounds halves away from zero), and the writers and the
//! surface walk round once or more a post: the calls were ≈ 1.6 % of an every-map bake's CPU
//! (docs/src/performance.md). Clamped first (rounding after the clamp gives the same in
//! `[0, max]`: `max` is a whole number, and below 0 both give 0), then the whole part plus one
//! where the fraction — exact, as the value is below 2^16 in f32 and 2^32 in f64 — is at least
//! a half. NaN stays NaN through the clamp, casts to 0 and compares false: 0, as
//! `NaN.round() as u32` is.

/// `x.round().clamp(0.0, max) as u32`, halves away from zero, NaN → 0.
#[inline]
pub fn round_clamped(x: f32, max: u16) -> u32 {
    let y = x.clamp(0.0, f32::from(max));
    let whole = y as u32;
    whole + u32::from(y - whole as f32 >= 0.5)
}

/// [`round_clamped`] of an f64, into any u32 range.
#[inline]
pub fn round_clamped_f64(x: f64, max: u32) -> u32 {
    let y = x.clamp(0.0, f64::from(max));
    let whole = y as u32;
    whole + u32::from(y - f64::from(whole) >= 0.5)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values around every half and whole number of the range (the neighbouring floats
    /// included), out of range, infinities and NaN, against `round` then clamp.
    #[test]
    fn round_clamped_is_round_then_clamp() {
        for max in [0u16, 1, 2, 7, 255, 1000, u16::MAX] {
            check(max, u32::from(max));
        }
        check(u16::MAX, (1 << 24) - 1);
        check(u16::MAX, u32::MAX);
    }

    /// [`round_clamped`] with `max` and [`round_clamped_f64`] with `max64`.
    fn check(max: u16, max64: u32) {
        let mut xs32 = vec![-1e30f32, -70000.0, -1.5, -0.5, -0.0, 0.0, 1e30, f32::INFINITY, f32::NEG_INFINITY, f32::NAN];
        let mut xs64 = vec![-1e300f64, -70000.0, -1.5, -0.5, -0.0, 0.0, 1e300, f64::INFINITY, f64::NEG_INFINITY, f64::NAN];
        let top = u32::from(max) + 2;
        for i in (0..=top.min(3000)).chain(u32::from(max).saturating_sub(3)..=top) {
            for base in [i as f32, i as f32 + 0.5] {
                xs32.extend([base, base.next_down(), base.next_up()]);
            }
        }
        let top64 = u64::from(max64) + 2;
        for i in (0..=top64.min(3000)).chain(u64::from(max64).saturating_sub(3)..=top64) {
            for base in [i as f64, i as f64 + 0.5] {
                xs64.extend([base, base.next_down(), base.next_up()]);
            }
        }
        for x in xs32 {
            let want = x.round().clamp(0.0, f32::from(max)) as u32;
            assert_eq!(round_clamped(x, max), want, "f32 {x:e} max {max}");
        }
        for x in xs64 {
            let want = x.round().clamp(0.0, f64::from(max64)) as u32;
            assert_eq!(round_clamped_f64(x, max64), want, "f64 {x:e} max {max64}");
        }
    }
}
