//! Lanes: one vector abstraction over the CPU's SIMD widths, so the row kernels of the CPU
//! backend (fractal octaves and shaping in `noise`, boundary and filter lanes in
//! `eval::walk_strip`) are written once and run 8 posts at a time with AVX2, 4 with SSE2 (the
//! x86-64 baseline) or 1 on other targets.
//!
//! Every operation is the IEEE single-precision operation of the scalar code (`addps` is
//! `+`, `divps` is `/`, `sqrtps` is `sqrt`, `cvttps2dq` is `as i32` for in-range values); no
//! FMA is ever formed (Rust never contracts `a * b + c`, and none is called here). So a lane
//! computes bit for bit what the per-post reference computes, whatever the width (tests in
//! `noise` and `eval::walk_strip` check every width against the scalar code), which keeps the CPU
//! backend the exact oracle of the GPU kernels (gpu.md §3.5).
//!
//! NaN conventions, as on x86: `min(a, b)`/`max(a, b)` return `b` when either is NaN;
//! comparisons with a NaN are false.
//!
//! Which width runs is chosen once per process ([`width`]): AVX2 when the CPU has it, else
//! SSE2; `TRNBAKE_LANES=scalar|sse2|avx2` forces one (benchmarks, tests).

use std::sync::OnceLock;

/// A SIMD width: vectors of `WIDTH` f32 lanes (`F`) and i32 lanes (`I`). All methods are
/// `unsafe`: call them only where the CPU has the width's instructions (see [`width`]).
#[allow(clippy::missing_safety_doc)]
pub trait Lanes: Copy {
    const WIDTH: usize;
    type F: Copy;
    type I: Copy;
    /// `WIDTH` f32 values in memory.
    type Arr: Copy + Default + AsRef<[f32]> + AsMut<[f32]>;

    unsafe fn splat(v: f32) -> Self::F;
    /// `WIDTH` values from `p` (unaligned).
    unsafe fn load(p: *const f32) -> Self::F;
    unsafe fn store(p: *mut f32, v: Self::F);
    unsafe fn add(a: Self::F, b: Self::F) -> Self::F;
    unsafe fn sub(a: Self::F, b: Self::F) -> Self::F;
    unsafe fn mul(a: Self::F, b: Self::F) -> Self::F;
    unsafe fn div(a: Self::F, b: Self::F) -> Self::F;
    unsafe fn sqrt(a: Self::F) -> Self::F;
    /// `a < b ? a : b` (so `b` when either is NaN).
    unsafe fn min(a: Self::F, b: Self::F) -> Self::F;
    /// `a > b ? a : b` (so `b` when either is NaN).
    unsafe fn max(a: Self::F, b: Self::F) -> Self::F;
    unsafe fn and(a: Self::F, b: Self::F) -> Self::F;
    unsafe fn or(a: Self::F, b: Self::F) -> Self::F;
    /// `!a & b`.
    unsafe fn andnot(a: Self::F, b: Self::F) -> Self::F;
    /// `mask ? a : b` per lane; `mask` lanes are all ones or all zeros (a comparison).
    unsafe fn select(mask: Self::F, a: Self::F, b: Self::F) -> Self::F;
    unsafe fn lt(a: Self::F, b: Self::F) -> Self::F;
    unsafe fn le(a: Self::F, b: Self::F) -> Self::F;
    unsafe fn gt(a: Self::F, b: Self::F) -> Self::F;
    unsafe fn ge(a: Self::F, b: Self::F) -> Self::F;
    unsafe fn eq(a: Self::F, b: Self::F) -> Self::F;
    /// Bit k set when lane k of the mask is set.
    unsafe fn mask_bits(mask: Self::F) -> u32;

    unsafe fn splat_i(v: i32) -> Self::I;
    /// `as i32` for values inside the i32 range (x86's 0x8000_0000 outside).
    unsafe fn truncate(a: Self::F) -> Self::I;
    unsafe fn to_f(a: Self::I) -> Self::F;
    unsafe fn bits(a: Self::F) -> Self::I;
    unsafe fn from_bits(a: Self::I) -> Self::F;
    unsafe fn shr<const N: i32>(a: Self::I) -> Self::I;
    unsafe fn shl<const N: i32>(a: Self::I) -> Self::I;
    unsafe fn and_i(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn or_i(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn add_i(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn sub_i(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn eq_i(a: Self::I, b: Self::I) -> Self::I;

    /// Every lane of the mask set.
    #[inline(always)]
    unsafe fn all(mask: Self::F) -> bool {
        Self::mask_bits(mask) == (1u32 << Self::WIDTH) - 1
    }
    /// Some lane of the mask set.
    #[inline(always)]
    unsafe fn any(mask: Self::F) -> bool {
        Self::mask_bits(mask) != 0
    }
    #[inline(always)]
    unsafe fn to_arr(a: Self::F) -> Self::Arr {
        let mut o = Self::Arr::default();
        Self::store(o.as_mut().as_mut_ptr(), a);
        o
    }
    #[inline(always)]
    unsafe fn from_arr(a: &Self::Arr) -> Self::F {
        Self::load(a.as_ref().as_ptr())
    }
    /// |a| (clears the sign bit, like `f32::abs`).
    #[inline(always)]
    unsafe fn abs(a: Self::F) -> Self::F {
        Self::and(a, Self::from_bits(Self::splat_i(0x7fff_ffff)))
    }
    /// `mask ? a : b` on integer lanes.
    #[inline(always)]
    unsafe fn select_i(mask: Self::I, a: Self::I, b: Self::I) -> Self::I {
        Self::bits(Self::select(Self::from_bits(mask), Self::from_bits(a), Self::from_bits(b)))
    }
    /// `noise::fast_floor` per lane: ⌊x⌋ for |x| < 2^23, x itself otherwise (already an
    /// integer, or NaN).
    #[inline(always)]
    unsafe fn floor(x: Self::F) -> Self::F {
        let one = Self::splat(1.0);
        let t = Self::to_f(Self::truncate(x));
        let t = Self::sub(t, Self::and(Self::gt(t, x), one));
        let small = Self::lt(Self::abs(x), Self::splat(8_388_608.0));
        Self::select(small, t, x)
    }
}

/// The width the row kernels run at in this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    Scalar,
    #[cfg(target_arch = "x86_64")]
    Sse2,
    #[cfg(target_arch = "x86_64")]
    Avx2,
}

impl Width {
    pub fn name(self) -> &'static str {
        match self {
            Width::Scalar => "scalar",
            #[cfg(target_arch = "x86_64")]
            Width::Sse2 => "sse2",
            #[cfg(target_arch = "x86_64")]
            Width::Avx2 => "avx2",
        }
    }

    /// Every width this CPU can run (for tests that compare them).
    pub fn available() -> Vec<Width> {
        let mut v = vec![Width::Scalar];
        #[cfg(target_arch = "x86_64")]
        {
            v.push(Width::Sse2);
            if std::arch::is_x86_feature_detected!("avx2") {
                v.push(Width::Avx2);
            }
        }
        v
    }
}

/// The widest width the CPU has, unless `TRNBAKE_LANES` names another one it has (an
/// unknown or unavailable name is ignored with a warning).
pub fn width() -> Width {
    static CHOSEN: OnceLock<Width> = OnceLock::new();
    *CHOSEN.get_or_init(|| {
        let available = Width::available();
        let best = *available.last().expect("scalar is always available");
        match std::env::var("TRNBAKE_LANES") {
            Ok(name) => available.iter().copied().find(|w| w.name() == name.trim()).unwrap_or_else(|| {
                tracing::warn!("TRNBAKE_LANES={name}: not one of this CPU's widths; using {}", best.name());
                best
            }),
            Err(_) => best,
        }
    })
}

/// One lane: the portable fallback, and the reference the vector widths are tested against.
#[derive(Clone, Copy)]
pub struct Scalar;

#[inline(always)]
fn mask_of(b: bool) -> f32 {
    f32::from_bits(if b { u32::MAX } else { 0 })
}

impl Lanes for Scalar {
    const WIDTH: usize = 1;
    type F = f32;
    type I = i32;
    type Arr = [f32; 1];

    #[inline(always)]
    unsafe fn splat(v: f32) -> f32 {
        v
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> f32 {
        p.read_unaligned()
    }
    #[inline(always)]
    unsafe fn store(p: *mut f32, v: f32) {
        p.write_unaligned(v)
    }
    #[inline(always)]
    unsafe fn add(a: f32, b: f32) -> f32 {
        a + b
    }
    #[inline(always)]
    unsafe fn sub(a: f32, b: f32) -> f32 {
        a - b
    }
    #[inline(always)]
    unsafe fn mul(a: f32, b: f32) -> f32 {
        a * b
    }
    #[inline(always)]
    unsafe fn div(a: f32, b: f32) -> f32 {
        a / b
    }
    #[inline(always)]
    unsafe fn sqrt(a: f32) -> f32 {
        a.sqrt()
    }
    #[inline(always)]
    unsafe fn min(a: f32, b: f32) -> f32 {
        if a < b {
            a
        } else {
            b
        }
    }
    #[inline(always)]
    unsafe fn max(a: f32, b: f32) -> f32 {
        if a > b {
            a
        } else {
            b
        }
    }
    #[inline(always)]
    unsafe fn and(a: f32, b: f32) -> f32 {
        f32::from_bits(a.to_bits() & b.to_bits())
    }
    #[inline(always)]
    unsafe fn or(a: f32, b: f32) -> f32 {
        f32::from_bits(a.to_bits() | b.to_bits())
    }
    #[inline(always)]
    unsafe fn andnot(a: f32, b: f32) -> f32 {
        f32::from_bits(!a.to_bits() & b.to_bits())
    }
    #[inline(always)]
    unsafe fn select(mask: f32, a: f32, b: f32) -> f32 {
        if mask.to_bits() != 0 {
            a
        } else {
            b
        }
    }
    #[inline(always)]
    unsafe fn lt(a: f32, b: f32) -> f32 {
        mask_of(a < b)
    }
    #[inline(always)]
    unsafe fn le(a: f32, b: f32) -> f32 {
        mask_of(a <= b)
    }
    #[inline(always)]
    unsafe fn gt(a: f32, b: f32) -> f32 {
        mask_of(a > b)
    }
    #[inline(always)]
    unsafe fn ge(a: f32, b: f32) -> f32 {
        mask_of(a >= b)
    }
    #[inline(always)]
    unsafe fn eq(a: f32, b: f32) -> f32 {
        mask_of(a == b)
    }
    #[inline(always)]
    unsafe fn mask_bits(mask: f32) -> u32 {
        mask.to_bits() >> 31
    }
    #[inline(always)]
    unsafe fn splat_i(v: i32) -> i32 {
        v
    }
    #[inline(always)]
    unsafe fn truncate(a: f32) -> i32 {
        // x86's "integer indefinite" outside the range, as the vector widths give.
        if a.is_nan() || !(a.abs() < 2_147_483_648.0) {
            i32::MIN
        } else {
            a as i32
        }
    }
    #[inline(always)]
    unsafe fn to_f(a: i32) -> f32 {
        a as f32
    }
    #[inline(always)]
    unsafe fn bits(a: f32) -> i32 {
        a.to_bits() as i32
    }
    #[inline(always)]
    unsafe fn from_bits(a: i32) -> f32 {
        f32::from_bits(a as u32)
    }
    #[inline(always)]
    unsafe fn shr<const N: i32>(a: i32) -> i32 {
        ((a as u32) >> N) as i32
    }
    #[inline(always)]
    unsafe fn shl<const N: i32>(a: i32) -> i32 {
        ((a as u32) << N) as i32
    }
    #[inline(always)]
    unsafe fn and_i(a: i32, b: i32) -> i32 {
        a & b
    }
    #[inline(always)]
    unsafe fn or_i(a: i32, b: i32) -> i32 {
        a | b
    }
    #[inline(always)]
    unsafe fn add_i(a: i32, b: i32) -> i32 {
        a.wrapping_add(b)
    }
    #[inline(always)]
    unsafe fn sub_i(a: i32, b: i32) -> i32 {
        a.wrapping_sub(b)
    }
    #[inline(always)]
    unsafe fn eq_i(a: i32, b: i32) -> i32 {
        if a == b {
            -1
        } else {
            0
        }
    }
}

#[cfg(target_arch = "x86_64")]
pub use x86::{Avx2, Sse2};

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::Lanes;
    use std::arch::x86_64::*;

    /// Four lanes with SSE2 (every x86-64 CPU).
    #[derive(Clone, Copy)]
    pub struct Sse2;

    /// Eight lanes with AVX2 (call only from `#[target_feature(enable = "avx2")]` code).
    #[derive(Clone, Copy)]
    pub struct Avx2;

    impl Lanes for Sse2 {
        const WIDTH: usize = 4;
        type F = __m128;
        type I = __m128i;
        type Arr = [f32; 4];

        #[inline(always)]
        unsafe fn splat(v: f32) -> __m128 {
            _mm_set1_ps(v)
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> __m128 {
            _mm_loadu_ps(p)
        }
        #[inline(always)]
        unsafe fn store(p: *mut f32, v: __m128) {
            _mm_storeu_ps(p, v)
        }
        #[inline(always)]
        unsafe fn add(a: __m128, b: __m128) -> __m128 {
            _mm_add_ps(a, b)
        }
        #[inline(always)]
        unsafe fn sub(a: __m128, b: __m128) -> __m128 {
            _mm_sub_ps(a, b)
        }
        #[inline(always)]
        unsafe fn mul(a: __m128, b: __m128) -> __m128 {
            _mm_mul_ps(a, b)
        }
        #[inline(always)]
        unsafe fn div(a: __m128, b: __m128) -> __m128 {
            _mm_div_ps(a, b)
        }
        #[inline(always)]
        unsafe fn sqrt(a: __m128) -> __m128 {
            _mm_sqrt_ps(a)
        }
        #[inline(always)]
        unsafe fn min(a: __m128, b: __m128) -> __m128 {
            _mm_min_ps(a, b)
        }
        #[inline(always)]
        unsafe fn max(a: __m128, b: __m128) -> __m128 {
            _mm_max_ps(a, b)
        }
        #[inline(always)]
        unsafe fn and(a: __m128, b: __m128) -> __m128 {
            _mm_and_ps(a, b)
        }
        #[inline(always)]
        unsafe fn or(a: __m128, b: __m128) -> __m128 {
            _mm_or_ps(a, b)
        }
        #[inline(always)]
        unsafe fn andnot(a: __m128, b: __m128) -> __m128 {
            _mm_andnot_ps(a, b)
        }
        #[inline(always)]
        unsafe fn select(mask: __m128, a: __m128, b: __m128) -> __m128 {
            _mm_or_ps(_mm_and_ps(mask, a), _mm_andnot_ps(mask, b))
        }
        #[inline(always)]
        unsafe fn lt(a: __m128, b: __m128) -> __m128 {
            _mm_cmplt_ps(a, b)
        }
        #[inline(always)]
        unsafe fn le(a: __m128, b: __m128) -> __m128 {
            _mm_cmple_ps(a, b)
        }
        #[inline(always)]
        unsafe fn gt(a: __m128, b: __m128) -> __m128 {
            _mm_cmpgt_ps(a, b)
        }
        #[inline(always)]
        unsafe fn ge(a: __m128, b: __m128) -> __m128 {
            _mm_cmpge_ps(a, b)
        }
        #[inline(always)]
        unsafe fn eq(a: __m128, b: __m128) -> __m128 {
            _mm_cmpeq_ps(a, b)
        }
        #[inline(always)]
        unsafe fn mask_bits(mask: __m128) -> u32 {
            _mm_movemask_ps(mask) as u32
        }
        #[inline(always)]
        unsafe fn splat_i(v: i32) -> __m128i {
            _mm_set1_epi32(v)
        }
        #[inline(always)]
        unsafe fn truncate(a: __m128) -> __m128i {
            _mm_cvttps_epi32(a)
        }
        #[inline(always)]
        unsafe fn to_f(a: __m128i) -> __m128 {
            _mm_cvtepi32_ps(a)
        }
        #[inline(always)]
        unsafe fn bits(a: __m128) -> __m128i {
            _mm_castps_si128(a)
        }
        #[inline(always)]
        unsafe fn from_bits(a: __m128i) -> __m128 {
            _mm_castsi128_ps(a)
        }
        #[inline(always)]
        unsafe fn shr<const N: i32>(a: __m128i) -> __m128i {
            _mm_srli_epi32::<N>(a)
        }
        #[inline(always)]
        unsafe fn shl<const N: i32>(a: __m128i) -> __m128i {
            _mm_slli_epi32::<N>(a)
        }
        #[inline(always)]
        unsafe fn and_i(a: __m128i, b: __m128i) -> __m128i {
            _mm_and_si128(a, b)
        }
        #[inline(always)]
        unsafe fn or_i(a: __m128i, b: __m128i) -> __m128i {
            _mm_or_si128(a, b)
        }
        #[inline(always)]
        unsafe fn add_i(a: __m128i, b: __m128i) -> __m128i {
            _mm_add_epi32(a, b)
        }
        #[inline(always)]
        unsafe fn sub_i(a: __m128i, b: __m128i) -> __m128i {
            _mm_sub_epi32(a, b)
        }
        #[inline(always)]
        unsafe fn eq_i(a: __m128i, b: __m128i) -> __m128i {
            _mm_cmpeq_epi32(a, b)
        }
    }

    impl Lanes for Avx2 {
        const WIDTH: usize = 8;
        type F = __m256;
        type I = __m256i;
        type Arr = [f32; 8];

        #[inline(always)]
        unsafe fn splat(v: f32) -> __m256 {
            _mm256_set1_ps(v)
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> __m256 {
            _mm256_loadu_ps(p)
        }
        #[inline(always)]
        unsafe fn store(p: *mut f32, v: __m256) {
            _mm256_storeu_ps(p, v)
        }
        #[inline(always)]
        unsafe fn add(a: __m256, b: __m256) -> __m256 {
            _mm256_add_ps(a, b)
        }
        #[inline(always)]
        unsafe fn sub(a: __m256, b: __m256) -> __m256 {
            _mm256_sub_ps(a, b)
        }
        #[inline(always)]
        unsafe fn mul(a: __m256, b: __m256) -> __m256 {
            _mm256_mul_ps(a, b)
        }
        #[inline(always)]
        unsafe fn div(a: __m256, b: __m256) -> __m256 {
            _mm256_div_ps(a, b)
        }
        #[inline(always)]
        unsafe fn sqrt(a: __m256) -> __m256 {
            _mm256_sqrt_ps(a)
        }
        #[inline(always)]
        unsafe fn min(a: __m256, b: __m256) -> __m256 {
            _mm256_min_ps(a, b)
        }
        #[inline(always)]
        unsafe fn max(a: __m256, b: __m256) -> __m256 {
            _mm256_max_ps(a, b)
        }
        #[inline(always)]
        unsafe fn and(a: __m256, b: __m256) -> __m256 {
            _mm256_and_ps(a, b)
        }
        #[inline(always)]
        unsafe fn or(a: __m256, b: __m256) -> __m256 {
            _mm256_or_ps(a, b)
        }
        #[inline(always)]
        unsafe fn andnot(a: __m256, b: __m256) -> __m256 {
            _mm256_andnot_ps(a, b)
        }
        #[inline(always)]
        unsafe fn select(mask: __m256, a: __m256, b: __m256) -> __m256 {
            _mm256_blendv_ps(b, a, mask)
        }
        #[inline(always)]
        unsafe fn lt(a: __m256, b: __m256) -> __m256 {
            _mm256_cmp_ps::<_CMP_LT_OQ>(a, b)
        }
        #[inline(always)]
        unsafe fn le(a: __m256, b: __m256) -> __m256 {
            _mm256_cmp_ps::<_CMP_LE_OQ>(a, b)
        }
        #[inline(always)]
        unsafe fn gt(a: __m256, b: __m256) -> __m256 {
            _mm256_cmp_ps::<_CMP_GT_OQ>(a, b)
        }
        #[inline(always)]
        unsafe fn ge(a: __m256, b: __m256) -> __m256 {
            _mm256_cmp_ps::<_CMP_GE_OQ>(a, b)
        }
        #[inline(always)]
        unsafe fn eq(a: __m256, b: __m256) -> __m256 {
            _mm256_cmp_ps::<_CMP_EQ_OQ>(a, b)
        }
        #[inline(always)]
        unsafe fn mask_bits(mask: __m256) -> u32 {
            _mm256_movemask_ps(mask) as u32
        }
        #[inline(always)]
        unsafe fn splat_i(v: i32) -> __m256i {
            _mm256_set1_epi32(v)
        }
        #[inline(always)]
        unsafe fn truncate(a: __m256) -> __m256i {
            _mm256_cvttps_epi32(a)
        }
        #[inline(always)]
        unsafe fn to_f(a: __m256i) -> __m256 {
            _mm256_cvtepi32_ps(a)
        }
        #[inline(always)]
        unsafe fn bits(a: __m256) -> __m256i {
            _mm256_castps_si256(a)
        }
        #[inline(always)]
        unsafe fn from_bits(a: __m256i) -> __m256 {
            _mm256_castsi256_ps(a)
        }
        #[inline(always)]
        unsafe fn shr<const N: i32>(a: __m256i) -> __m256i {
            _mm256_srli_epi32::<N>(a)
        }
        #[inline(always)]
        unsafe fn shl<const N: i32>(a: __m256i) -> __m256i {
            _mm256_slli_epi32::<N>(a)
        }
        #[inline(always)]
        unsafe fn and_i(a: __m256i, b: __m256i) -> __m256i {
            _mm256_and_si256(a, b)
        }
        #[inline(always)]
        unsafe fn or_i(a: __m256i, b: __m256i) -> __m256i {
            _mm256_or_si256(a, b)
        }
        #[inline(always)]
        unsafe fn add_i(a: __m256i, b: __m256i) -> __m256i {
            _mm256_add_epi32(a, b)
        }
        #[inline(always)]
        unsafe fn sub_i(a: __m256i, b: __m256i) -> __m256i {
            _mm256_sub_epi32(a, b)
        }
        #[inline(always)]
        unsafe fn eq_i(a: __m256i, b: __m256i) -> __m256i {
            _mm256_cmpeq_epi32(a, b)
        }
    }
}

/// Run `$body` with `$L` bound to the lanes type of [`width()`]: AVX2 inside a
/// `#[target_feature(enable = "avx2")]` function (so everything `$body` inlines is compiled
/// for AVX2, including the scalar loops LLVM auto-vectorises), SSE2 or scalar otherwise.
/// `$body` sees only its parameters (`name: type`, bound to the values after it), as it
/// is compiled into a function of its own.
#[macro_export]
macro_rules! with_lanes {
    (|$L:ident; $($arg:ident : $ty:ty),*| -> $ret:ty $body:block, $($val:expr),*) => {{
        #[inline(always)]
        unsafe fn run<$L: $crate::lanes::Lanes>($($arg: $ty),*) -> $ret $body
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        unsafe fn run_avx2($($arg: $ty),*) -> $ret {
            run::<$crate::lanes::Avx2>($($arg),*)
        }
        let ($($arg,)*) = ($($val,)*);
        match $crate::lanes::width() {
            // SAFETY: `width()` returns Avx2 only when the CPU has it; SSE2 is part of
            // x86-64; the scalar lanes need nothing.
            #[cfg(target_arch = "x86_64")]
            $crate::lanes::Width::Avx2 => unsafe { run_avx2($($arg),*) },
            #[cfg(target_arch = "x86_64")]
            $crate::lanes::Width::Sse2 => unsafe { run::<$crate::lanes::Sse2>($($arg),*) },
            $crate::lanes::Width::Scalar => unsafe { run::<$crate::lanes::Scalar>($($arg),*) },
        }
    }};
}

/// [`with_lanes!`] for an explicit width (tests comparing widths).
#[macro_export]
macro_rules! with_lanes_at {
    ($w:expr, |$L:ident; $($arg:ident : $ty:ty),*| -> $ret:ty $body:block, $($val:expr),*) => {{
        #[inline(always)]
        unsafe fn run<$L: $crate::lanes::Lanes>($($arg: $ty),*) -> $ret $body
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        unsafe fn run_avx2($($arg: $ty),*) -> $ret {
            run::<$crate::lanes::Avx2>($($arg),*)
        }
        let ($($arg,)*) = ($($val,)*);
        match $w {
            #[cfg(target_arch = "x86_64")]
            $crate::lanes::Width::Avx2 => {
                assert!(std::arch::is_x86_feature_detected!("avx2"), "this CPU has no AVX2");
                unsafe { run_avx2($($arg),*) }
            }
            #[cfg(target_arch = "x86_64")]
            $crate::lanes::Width::Sse2 => unsafe { run::<$crate::lanes::Sse2>($($arg),*) },
            $crate::lanes::Width::Scalar => unsafe { run::<$crate::lanes::Scalar>($($arg),*) },
        }
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ⌊x⌋ for |x| < 2^23, x itself otherwise (`noise::fast_floor`, restated so this module
    /// imports nothing).
    fn floor_reference(x: f32) -> f32 {
        if !(x.abs() < 8_388_608.0) {
            return x;
        }
        let t = (x as i32) as f32;
        if t > x {
            t - 1.0
        } else {
            t
        }
    }

    /// Each width's primitives against the scalar ones, on values with NaNs, zeros of both
    /// signs, infinities and the integer-range edges.
    #[test]
    fn every_width_agrees_with_scalar_primitives() {
        let values = [0.0f32, -0.0, 1.0, -1.0, 0.5, -2.5, 2.5, 1e-40, -1e-40, 8_388_607.5, -8_388_608.5, 3e9, -3e9, f32::INFINITY, f32::NEG_INFINITY, f32::NAN];
        for w in Width::available() {
            let out: Vec<[u32; 8]> = with_lanes_at!(w, |L; values: &[f32]| -> Vec<[u32; 8]> {
                let n = L::WIDTH;
                let mut rows = Vec::new();
                for a in values {
                    for b in values {
                        let mut ra = vec![0.0f32; n];
                        ra.fill(*a);
                        let mut rb = vec![0.0f32; n];
                        rb.fill(*b);
                        let va = L::load(ra.as_ptr());
                        let vb = L::load(rb.as_ptr());
                        let first = |v: L::F| L::to_arr(v).as_ref()[0].to_bits();
                        rows.push([
                            first(L::add(va, vb)),
                            first(L::div(va, vb)),
                            first(L::min(va, vb)),
                            first(L::max(va, vb)),
                            first(L::select(L::lt(va, vb), va, vb)),
                            first(L::floor(va)),
                            L::mask_bits(L::eq(va, vb)) & 1,
                            first(L::sqrt(va)),
                        ]);
                    }
                }
                rows
            }, &values);
            // The scalar operations each lane must reproduce (x86 min/max: `b` when unordered).
            let reference: Vec<[u32; 8]> = values
                .iter()
                .flat_map(|&a| {
                    values.iter().map(move |&b| {
                        [
                            (a + b).to_bits(),
                            (a / b).to_bits(),
                            (if a < b { a } else { b }).to_bits(),
                            (if a > b { a } else { b }).to_bits(),
                            (if a < b { a } else { b }).to_bits(),
                            floor_reference(a).to_bits(),
                            u32::from(a == b),
                            a.sqrt().to_bits(),
                        ]
                    })
                })
                .collect();
            for (k, (g, r)) in out.iter().zip(&reference).enumerate() {
                for j in 0..8 {
                    let (gf, rf) = (f32::from_bits(g[j]), f32::from_bits(r[j]));
                    assert!(g[j] == r[j] || (j != 6 && gf.is_nan() && rf.is_nan()), "{} op {j} on pair {k}: {gf:e} vs {rf:e}", w.name());
                }
            }
        }
    }
}
