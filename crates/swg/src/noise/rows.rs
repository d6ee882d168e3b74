//! [`Fractal::value_row`]: F(x, z) for a row of posts, the CPU backend's hot loop.
//!
//! Octave-major over the row: the y half of each octave is shared by the row and the lattice
//! lookups by the posts of one lattice cell; the octave arithmetic and the §6.4 shaping
//! (normalisation, bias and gain with [`pow_f32`](super::pow_f32)) run [`Lanes::WIDTH`] posts at a time
//! (`crate::lanes`: AVX2, SSE2 or scalar). Every lane performs exactly the f32 operations of
//! [`noise2`](super::noise2) and [`Fractal::value`] in their order, so each is bit for bit
//! the per-post value (tested for every width, rule and bias/gain setting).

use super::{fast_floor, s_curve, Fractal, PerlinTables, PERLIN_TABLE_LEN};
use crate::lanes::Lanes;

/// The lattice corners of one noise2 cell column: everything noise2 looks up for a given
/// x lattice index `bx0` at a fixed y row, so a row of posts pays the table lookups once
/// per lattice cell it crosses instead of once per post.
#[derive(Clone, Copy)]
struct CellGradients {
    q00: [f32; 2],
    q10: [f32; 2],
    q01: [f32; 2],
    q11: [f32; 2],
}

impl PerlinTables {
    #[inline]
    fn cell(&self, bx0: usize, by0: usize, by1: usize) -> CellGradients {
        let perm: &[u32; PERLIN_TABLE_LEN] = self.perm[..PERLIN_TABLE_LEN].try_into().expect("perm has 514 entries");
        let g2: &[[f32; 2]; PERLIN_TABLE_LEN] = self.g2[..PERLIN_TABLE_LEN].try_into().expect("g2 has 514 entries");
        let bx1 = (bx0 + 1) & 255;
        let i = perm[bx0 & 255] as usize & 255;
        let j = perm[bx1] as usize & 255;
        CellGradients {
            q00: g2[perm[(i + by0) & 511] as usize & 511],
            q10: g2[perm[(j + by0) & 511] as usize & 511],
            q01: g2[perm[(i + by1) & 511] as usize & 511],
            q11: g2[perm[(j + by1) & 511] as usize & 511],
        }
    }

    /// The cell of lattice column ⌊x⌋ = `fx` (noise2's `(⌊x⌋ + 4096) & 255`; `as i32`
    /// saturates, NaN → 0).
    #[inline(always)]
    fn cell_at(&self, fx: f32, by0: usize, by1: usize) -> CellGradients {
        self.cell(((fx as i32).wrapping_add(4096) & 255) as usize, by0, by1)
    }
}

/// The y half of noise2 for one row of posts: lattice rows, fractions and the fade.
struct RowY {
    by0: usize,
    by1: usize,
    ry0: f32,
    ry1: f32,
    sy: f32,
}

impl RowY {
    #[inline(always)]
    fn new(y: f32) -> Self {
        let fy = fast_floor(y);
        let by0 = ((fy as i32).wrapping_add(4096) & 255) as usize;
        let ry0 = y - fy;
        RowY { by0, by1: (by0 + 1) & 255, ry0, ry1: ry0 - 1.0, sy: s_curve(ry0) }
    }
}

/// The combination rule of §3.5 folding one octave's noise `n` into the sum (scalar).
#[inline(always)]
fn combine<const RULE: i32>(n: f32) -> f32 {
    match RULE {
        2 => 1.0 - n.abs(),
        3 => n.abs(),
        4 => 1.0 - n.clamp(0.0, 1.0),
        5 => n.clamp(0.0, 1.0),
        _ => n,
    }
}

/// One octave, one post at a time: noise2(xx[l]·fm, y) folded into `acc[l]` by `RULE`. A
/// row shorter than a vector.
#[inline(always)]
fn octave_scalar<const RULE: i32>(tables: &PerlinTables, xx: &[f32], fm: f32, row: &RowY, am: f32, acc: &mut [f32]) {
    let RowY { by0, by1, ry0, ry1, sy } = *row;
    let mut cached_fx = f32::NAN;
    let mut c = tables.cell(0, by0, by1);
    for (x_base, a) in xx.iter().zip(acc.iter_mut()) {
        let x = x_base * fm;
        let fx = fast_floor(x);
        // A NaN fx never equals the cache, and `cell_at` maps it like noise2 does.
        if fx != cached_fx {
            c = tables.cell_at(fx, by0, by1);
            cached_fx = fx;
        }
        let rx0 = x - fx;
        let rx1 = rx0 - 1.0;
        let sx = s_curve(rx0);
        let u = rx0 * c.q00[0] + ry0 * c.q00[1];
        let v = rx1 * c.q10[0] + ry0 * c.q10[1];
        let lo = u + sx * (v - u);
        let u = rx0 * c.q01[0] + ry1 * c.q01[1];
        let v = rx1 * c.q11[0] + ry1 * c.q11[1];
        let hi = u + sx * (v - u);
        let n = lo + sy * (hi - lo);
        *a += combine::<RULE>(n) * am;
    }
}

/// A cell's eight gradient components, each broadcast to every lane.
#[inline(always)]
unsafe fn splat_cell<L: Lanes>(c: &CellGradients) -> [L::F; 8] {
    [
        L::splat(c.q00[0]),
        L::splat(c.q00[1]),
        L::splat(c.q10[0]),
        L::splat(c.q10[1]),
        L::splat(c.q01[0]),
        L::splat(c.q01[1]),
        L::splat(c.q11[0]),
        L::splat(c.q11[1]),
    ]
}

/// One octave, `L::WIDTH` posts at a time, then the tail as one vector overlapping the last
/// (one by one in a row shorter than a vector). The table lookups are
/// broadcast when a vector's posts share one lattice cell (the common case: a cell spans
/// many posts at the octaves real terrains use), blended when they span two, and gathered
/// lane by lane otherwise.
#[inline(always)]
unsafe fn octave_lanes<L: Lanes, const RULE: i32>(tables: &PerlinTables, xx: &[f32], fm: f32, row: &RowY, am: f32, acc: &mut [f32]) {
    assert_eq!(xx.len(), acc.len());
    let w = L::WIDTH;
    let groups = xx.len() / w;
    let RowY { by0, by1, ry0, ry1, sy } = *row;
    let (vfm, vam) = (L::splat(fm), L::splat(am));
    let (vry0, vry1, vsy) = (L::splat(ry0), L::splat(ry1), L::splat(sy));
    let mut cached_fx = f32::NAN;
    let mut cached = splat_cell::<L>(&tables.cell(0, by0, by1));
    for k in 0..groups {
        // SAFETY (loads/stores): lanes k·w .. k·w + w with k < groups lie inside both slices.
        let x = L::mul(L::load(xx.as_ptr().add(k * w)), vfm);
        let fx = L::floor(x);
        let q = cells::<L>(tables, fx, by0, by1, &mut cached_fx, &mut cached);
        let term = octave_term::<L, RULE>(x, fx, &q, vry0, vry1, vsy);
        let a = acc.as_mut_ptr().add(k * w);
        L::store(a, L::add(L::load(a), L::mul(term, vam)));
    }
    let done = groups * w;
    if groups == 0 || done == xx.len() {
        octave_scalar::<RULE>(tables, &xx[done..], fm, row, am, &mut acc[done..]);
        return;
    }
    // The lanes past the last whole vector: the row's last `w` lanes as one more vector,
    // overlapping the one before, its sums kept at the new lanes only. A lane's noise depends
    // on its x alone, so these are the scalar tail's bits at a vector's cost (the short lane
    // ranges the memoised reads ask for made the one-by-one tail ~10 % of the surface walk).
    let last = xx.len() - w;
    let x = L::mul(L::load(xx.as_ptr().add(last)), vfm);
    let fx = L::floor(x);
    // Mostly within the last vector's cell; else gathered (one lookup code path per octave,
    // not a second copy of `cells`).
    let q = if L::all(L::eq(fx, L::splat(cached_fx))) { cached } else { gathered_cells::<L>(tables, fx, by0, by1) };
    let term = octave_term::<L, RULE>(x, fx, &q, vry0, vry1, vsy);
    let a = acc.as_mut_ptr().add(last);
    let old = L::load(a);
    L::store(a, L::select(tail_mask::<L>(xx.len() - done), L::add(old, L::mul(term, vam)), old));
}

/// The cell gradients of the `L::WIDTH` posts whose x lattice columns are `fx`: the cached
/// cell's (`cached_fx`, `cached`) when they all lie in it, broadcast when they share another,
/// blended when they span two (the second cached: the next vector's), else gathered lane by
/// lane.
#[inline(always)]
unsafe fn cells<L: Lanes>(tables: &PerlinTables, fx: L::F, by0: usize, by1: usize, cached_fx: &mut f32, cached: &mut [L::F; 8]) -> [L::F; 8] {
    let w = L::WIDTH;
    if L::all(L::eq(fx, L::splat(*cached_fx))) {
        *cached
    } else {
        let fxs = L::to_arr(fx);
        let (first, last) = (fxs.as_ref()[0], fxs.as_ref()[w - 1]);
        let is_first = L::eq(fx, L::splat(first));
        if L::all(is_first) {
            *cached_fx = first;
            *cached = splat_cell::<L>(&tables.cell_at(first, by0, by1));
            *cached
        } else if L::all(L::or(is_first, L::eq(fx, L::splat(last)))) {
            // Two cells: the vector crosses one lattice line. Keep the second cell, the
            // next vector's.
            let a = splat_cell::<L>(&tables.cell_at(first, by0, by1));
            *cached_fx = last;
            *cached = splat_cell::<L>(&tables.cell_at(last, by0, by1));
            let mut q = a;
            for (qi, ci) in q.iter_mut().zip(*cached) {
                *qi = L::select(is_first, *qi, ci);
            }
            q
        } else {
            gathered_cells::<L>(tables, fx, by0, by1)
        }
    }
}

/// The cell gradients of each lane's lattice column `fx`, looked up lane by lane.
#[inline(always)]
unsafe fn gathered_cells<L: Lanes>(tables: &PerlinTables, fx: L::F, by0: usize, by1: usize) -> [L::F; 8] {
    let mut parts = [L::Arr::default(); 8];
    for (lane, &f) in L::to_arr(fx).as_ref().iter().enumerate() {
        let c = tables.cell_at(f, by0, by1);
        let comps = [c.q00[0], c.q00[1], c.q10[0], c.q10[1], c.q01[0], c.q01[1], c.q11[0], c.q11[1]];
        for (part, v) in parts.iter_mut().zip(comps) {
            part.as_mut()[lane] = v;
        }
    }
    let mut q = [L::splat(0.0); 8];
    for (qi, part) in q.iter_mut().zip(&parts) {
        *qi = L::from_arr(part);
    }
    q
}

/// The lanes of a vector that are its last `tail` ones (a mask for [`Lanes::select`]).
#[inline(always)]
unsafe fn tail_mask<L: Lanes>(tail: usize) -> L::F {
    let mut index = L::Arr::default();
    for (k, v) in index.as_mut().iter_mut().enumerate() {
        *v = k as f32;
    }
    L::ge(L::from_arr(&index), L::splat((L::WIDTH - tail) as f32))
}

/// One octave's folded noise at `L::WIDTH` posts: noise2 at x (whose floor is `fx`) on the
/// row's lattice row, from the cell gradients `q`, folded by `RULE` (§3.5).
#[inline(always)]
unsafe fn octave_term<L: Lanes, const RULE: i32>(x: L::F, fx: L::F, q: &[L::F; 8], vry0: L::F, vry1: L::F, vsy: L::F) -> L::F {
    let (one, two, three, zero) = (L::splat(1.0), L::splat(2.0), L::splat(3.0), L::splat(0.0));
    let rx0 = L::sub(x, fx);
    let rx1 = L::sub(rx0, one);
    let sx = L::mul(L::mul(rx0, rx0), L::sub(three, L::mul(two, rx0)));
    let u = L::add(L::mul(rx0, q[0]), L::mul(vry0, q[1]));
    let v = L::add(L::mul(rx1, q[2]), L::mul(vry0, q[3]));
    let lo = L::add(u, L::mul(sx, L::sub(v, u)));
    let u = L::add(L::mul(rx0, q[4]), L::mul(vry1, q[5]));
    let v = L::add(L::mul(rx1, q[6]), L::mul(vry1, q[7]));
    let hi = L::add(u, L::mul(sx, L::sub(v, u)));
    let n = L::add(lo, L::mul(vsy, L::sub(hi, lo)));
    // f32::clamp(n, 0, 1) keeps NaN: max(0, n) and min(1, ·) return their second operand
    // when a comparison is unordered.
    match RULE {
        2 => L::sub(one, L::abs(n)),
        3 => L::abs(n),
        4 => L::sub(one, L::min(one, L::max(zero, n))),
        5 => L::min(one, L::max(zero, n)),
        _ => n,
    }
}

// No closures in the lane code: a closure is compiled without its enclosing function's
// `#[target_feature]`, so the AVX2 intrinsics inside it would become calls.

/// The unbiased exponent field of f32 bit patterns.
#[inline(always)]
unsafe fn exponent_of<L: Lanes>(bits: L::I) -> L::I {
    L::sub_i(L::and_i(L::shr::<23>(bits), L::splat_i(255)), L::splat_i(127))
}

/// The mantissa of f32 bit patterns with the exponent of 1, a value in [1, 2).
#[inline(always)]
unsafe fn mantissa_of<L: Lanes>(bits: L::I) -> L::F {
    L::from_bits(L::or_i(L::and_i(bits, L::splat_i(0x007f_ffff)), L::splat_i(0x3f80_0000)))
}

/// [`pow_f32`](super::pow_f32) of `L::WIDTH` bases to one exponent, each scalar branch a lane mask.
// The literals are pow_f32's, digit for digit.
#[allow(clippy::approx_constant)]
#[inline(always)]
unsafe fn pow_lanes<L: Lanes>(x: L::F, y: f32) -> L::F {
    let one = L::splat(1.0);
    if y == 0.0 {
        return one;
    }
    let zero = L::splat(0.0);
    let positive = L::gt(x, zero);
    // !(x > 0): 0 for positive exponents, +inf otherwise (the scalar's early return).
    let not_positive_value = if y > 0.0 { zero } else { L::splat(f32::INFINITY) };
    let is_one = L::eq(x, one);

    // log2(x) = e + log2(m), m ∈ [√½, √2).
    let bits = L::bits(x);
    let e_normal = exponent_of::<L>(bits);
    // Subnormal x (e = −127): renormalise x·2^23.
    let b2 = L::bits(L::mul(x, L::splat(8_388_608.0)));
    let subnormal = L::eq_i(e_normal, L::splat_i(-127));
    let e = L::select_i(subnormal, L::sub_i(exponent_of::<L>(b2), L::splat_i(23)), e_normal);
    let m = L::select(L::from_bits(subnormal), mantissa_of::<L>(b2), mantissa_of::<L>(bits));
    let above = L::gt(m, L::splat(1.414_213_5));
    let m = L::select(above, L::mul(m, L::splat(0.5)), m);
    // e + 1 where `above` (the mask is −1 there).
    let e = L::sub_i(e, L::bits(above));

    let t = L::div(L::sub(m, one), L::add(m, one));
    let t2 = L::mul(t, t);
    // 2/ln 2 · (t + t³/3 + t⁵/5 + t⁷/7 + t⁹/9), Horner as in pow_f32.
    let s = L::add(L::splat(0.142_857_15), L::mul(t2, L::splat(0.111_111_11)));
    let s = L::add(L::splat(0.2), L::mul(t2, s));
    let s = L::add(L::splat(0.333_333_34), L::mul(t2, s));
    let series = L::mul(t, L::add(one, L::mul(t2, s)));
    let log2x = L::add(L::to_f(e), L::mul(series, L::splat(2.885_39)));

    // 2^z = 2^i · 2^f.
    let z = L::mul(L::splat(y), log2x);
    let overflow = L::ge(z, L::splat(128.0));
    let underflow = L::lt(z, L::splat(-126.0));
    // floor(z) for the lanes that reach it (z ∈ [−126, 128)); other lanes are replaced below.
    let truncated = L::to_f(L::truncate(z));
    let i = L::sub(truncated, L::and(L::gt(truncated, z), one));
    let f = L::mul(L::sub(z, i), L::splat(0.693_147_2));
    let s = L::add(L::splat(0.000_198_412_7), L::mul(f, L::splat(0.000_024_801_587)));
    let s = L::add(L::splat(0.001_388_888_9), L::mul(f, s));
    let s = L::add(L::splat(0.008_333_334), L::mul(f, s));
    let s = L::add(L::splat(0.041_666_668), L::mul(f, s));
    let s = L::add(L::splat(0.166_666_67), L::mul(f, s));
    let s = L::add(L::splat(0.5), L::mul(f, s));
    let s = L::add(one, L::mul(f, s));
    let p = L::add(one, L::mul(f, s));
    let scale = L::from_bits(L::shl::<23>(L::add_i(L::truncate(i), L::splat_i(127))));
    let r = L::mul(p, scale);
    let r = L::select(underflow, zero, r);
    let r = L::select(overflow, L::splat(f32::INFINITY), r);
    let r = L::select(is_one, one, r);
    L::select(positive, r, not_positive_value)
}

/// The gain step of §6.4: 0 below 0.001, 1 above 0.999, else the two half-curves
/// `0.5·(2r)^g` and `1 − 0.5·(2(1 − r))^g`.
#[inline(always)]
unsafe fn gain_lanes<L: Lanes>(r: L::F, exponent: f32) -> L::F {
    let (one, half, two) = (L::splat(1.0), L::splat(0.5), L::splat(2.0));
    let low_half = L::lt(r, half);
    let base = L::select(low_half, L::mul(two, r), L::mul(two, L::sub(one, r)));
    let p = pow_lanes::<L>(base, exponent);
    let curve = L::select(low_half, L::mul(half, p), L::sub(one, L::mul(half, p)));
    let curve = L::select(L::gt(r, L::splat(0.999)), one, curve);
    L::select(L::lt(r, L::splat(0.001)), L::splat(0.0), curve)
}

impl Fractal {
    /// F at (xs\[l\], z) for every lane into `out`, bit for bit equal to [`Fractal::value`]
    /// per lane, at the process's lane width (`crate::lanes::width`).
    pub fn value_row(&self, xs: &[f32], z: f32, out: &mut [f32]) {
        crate::with_lanes!(|L; f: &Fractal, xs: &[f32], z: f32, out: &mut [f32]| -> () { f.value_row_with::<L>(xs, z, out) }, self, xs, z, out)
    }

    /// [`Fractal::value_row`] at the lane width `L`.
    ///
    /// # Safety
    /// The CPU must have `L`'s instructions.
    #[inline(always)]
    pub(crate) unsafe fn value_row_with<L: Lanes>(&self, xs: &[f32], z: f32, out: &mut [f32]) {
        assert_eq!(xs.len(), out.len());
        // `out` holds the octave accumulators, then the results.
        self.accumulate_lanes::<L>(xs, z, out);
        self.shape_lanes::<L>(out);
    }

    /// The octave sums of §6.4 (before the shaping) at (xs\[l\], z) into `out`, octave-major.
    #[inline(always)]
    unsafe fn accumulate_lanes<L: Lanes>(&self, xs: &[f32], z: f32, out: &mut [f32]) {
        let p = &self.params;
        out.fill(0.0);
        let mut xx = [0.0f32; 256];
        let zz = z * p.frequency_z + p.offset_z;
        for (xs, out) in xs.chunks(xx.len()).zip(out.chunks_mut(256)) {
            let xx = &mut xx[..xs.len()];
            for (d, &x) in xx.iter_mut().zip(xs) {
                *d = x * p.frequency_x + p.offset_x;
            }
            let mut fm = 1.0f32;
            let mut am = 1.0f32;
            for _ in 0..p.octaves.max(0) {
                let row = RowY::new(zz * fm);
                match p.combination_rule {
                    2 => octave_lanes::<L, 2>(&self.tables, xx, fm, &row, am, out),
                    3 => octave_lanes::<L, 3>(&self.tables, xx, fm, &row, am, out),
                    4 => octave_lanes::<L, 4>(&self.tables, xx, fm, &row, am, out),
                    5 => octave_lanes::<L, 5>(&self.tables, xx, fm, &row, am, out),
                    _ => octave_lanes::<L, 0>(&self.tables, xx, fm, &row, am, out),
                }
                fm *= p.octave_frequency_multiplier;
                am *= p.amplitude;
            }
        }
    }

    /// [`Fractal::shape`] of `L::WIDTH` octave sums.
    #[inline(always)]
    unsafe fn shape_vector<L: Lanes>(&self, acc: L::F) -> L::F {
        let p = &self.params;
        let (one, half) = (L::splat(1.0), L::splat(0.5));
        let norm = L::splat(self.norm);
        let mut r = if matches!(p.combination_rule, 2..=5) { L::mul(acc, norm) } else { L::mul(L::add(L::mul(acc, norm), one), half) };
        if p.use_bias {
            // `f32::max(r, 0)` is 0 for a NaN r, as `max(r, 0)` is (second operand).
            r = pow_lanes::<L>(L::max(r, L::splat(0.0)), self.bias_exponent);
        }
        if p.use_gain {
            r = gain_lanes::<L>(r, self.gain_exponent);
        }
        r
    }

    /// [`Fractal::shape`] of every value, in place, `L::WIDTH` at a time, then the tail (as
    /// `octave_lanes`' tail).
    #[inline(always)]
    unsafe fn shape_lanes<L: Lanes>(&self, values: &mut [f32]) {
        let w = L::WIDTH;
        let groups = values.len() / w;
        for k in 0..groups {
            let ptr = values.as_mut_ptr().add(k * w);
            L::store(ptr, self.shape_vector::<L>(L::load(ptr)));
        }
        let tail = values.len() - groups * w;
        if groups == 0 {
            for r in values.iter_mut() {
                *r = self.shape(*r);
            }
        } else if tail > 0 {
            // The last `w` lanes as one vector (as `octave_lanes`' tail), the new ones kept.
            let ptr = values.as_mut_ptr().add(values.len() - w);
            let old = L::load(ptr);
            L::store(ptr, L::select(tail_mask::<L>(tail), self.shape_vector::<L>(old), old));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lanes::Width;
    use crate::noise::pow_f32;

    /// Bases covering every exponent (subnormals, normals, huge, inf, NaN, signs) with a few
    /// mantissas each, and the [0, 1] values the fractal feeds pow.
    fn bases() -> Vec<f32> {
        let mut v = Vec::new();
        for exp in 0u32..=255 {
            for mant in [0u32, 1, 0x1234, 0x35_04f3, 0x35_04f4, 0x40_0000, 0x7f_ffff] {
                for sign in [0u32, 1] {
                    v.push(f32::from_bits(sign << 31 | exp << 23 | mant));
                }
            }
        }
        for k in 0..=4000 {
            v.push(k as f32 / 4000.0);
        }
        v.extend([1.0, 0.5, 0.999, 0.001, 1.000_000_1, 0.999_999_94]);
        v
    }

    const EXPONENTS: [f32; 14] = [0.0, -0.0, 0.1, 0.5, 0.736_965_6, 1.0, 1.736_965_6, 3.3, 20.0, 200.0, -1.0, -7.5, f32::INFINITY, f32::NAN];

    fn same(a: f32, b: f32) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    /// (pow, bias, gain) of every base at every exponent, computed `L::WIDTH` at a time.
    fn curves_at(w: Width) -> Vec<[f32; 3]> {
        crate::with_lanes_at!(w, |L; xs: &[f32]| -> Vec<[f32; 3]> {
            let mut out = Vec::new();
            for &y in &EXPONENTS {
                for chunk in xs.chunks(L::WIDTH) {
                    let mut arr = L::Arr::default();
                    arr.as_mut().fill(0.25);
                    arr.as_mut()[..chunk.len()].copy_from_slice(chunk);
                    let v = L::from_arr(&arr);
                    let pow = L::to_arr(pow_lanes::<L>(v, y));
                    let bias = L::to_arr(pow_lanes::<L>(L::max(v, L::splat(0.0)), y));
                    let gain = L::to_arr(gain_lanes::<L>(v, y));
                    for k in 0..chunk.len() {
                        out.push([pow.as_ref()[k], bias.as_ref()[k], gain.as_ref()[k]]);
                    }
                }
            }
            out
        }, &bases())
    }

    #[test]
    fn pow_bias_gain_lanes_equal_the_scalar_code_bit_for_bit() {
        let xs = bases();
        let want: Vec<[f32; 3]> = EXPONENTS
            .iter()
            .flat_map(|&y| {
                xs.iter().map(move |&r| {
                    let gain = if r < 0.001 {
                        0.0
                    } else if r > 0.999 {
                        1.0
                    } else if r < 0.5 {
                        0.5 * pow_f32(2.0 * r, y)
                    } else {
                        1.0 - 0.5 * pow_f32(2.0 * (1.0 - r), y)
                    };
                    [pow_f32(r, y), pow_f32(r.max(0.0), y), gain]
                })
            })
            .collect();
        for w in Width::available() {
            let got = curves_at(w);
            assert_eq!(got.len(), want.len());
            for (k, (g, e)) in got.iter().zip(&want).enumerate() {
                let (x, y) = (xs[k % xs.len()], EXPONENTS[k / xs.len()]);
                for (j, what) in ["pow", "bias", "gain"].iter().enumerate() {
                    assert!(same(g[j], e[j]), "{}: {what}({x:e} [{:#x}], {y}) = {:e}, scalar {:e}", w.name(), x.to_bits(), g[j], e[j]);
                }
            }
        }
    }

    /// value_row at every width against the per-post value, for every rule and bias/gain
    /// setting, at frequencies where vectors straddle one, two or many lattice cells.
    #[test]
    fn value_row_equals_value_at_every_width() {
        for w in Width::available() {
            for rule in 0..=6 {
                for (use_bias, use_gain) in [(false, false), (true, false), (false, true), (true, true)] {
                    for (freq, spacing) in [(0.01f32, 2.0f32), (0.37, 1.0), (0.0007, 16.0), (1.3, 0.25), (0.06, 2.0)] {
                        let mut p = super::super::tests::variant(rule, use_bias, use_gain, 3);
                        p.frequency_x = freq;
                        p.frequency_z = freq * 0.7;
                        p.offset_x = 12.5;
                        let f = Fractal::new(p);
                        let row: Vec<f32> = (0..603).map(|k| -4100.0 + k as f32 * spacing).collect();
                        // Whole rows and short ones: fewer lanes than a vector, and every
                        // remainder past whole vectors (the overlapping last vector).
                        for (xs, z) in [-8000.0f32, -0.5, 333.3].into_iter().flat_map(|z| [603, 1, 3, 7, 8, 9, 12, 15, 17].map(|n| (&row[row.len() - n..], z)))
                        {
                            let out = crate::with_lanes_at!(w, |L; f: &Fractal, xs: &[f32], z: f32| -> Vec<f32> {
                                let mut out = vec![0.0; xs.len()];
                                f.value_row_with::<L>(xs, z, &mut out);
                                out
                            }, &f, xs, z);
                            for (&x, &v) in xs.iter().zip(&out) {
                                assert_eq!(
                                    v.to_bits(),
                                    f.value(x, z).to_bits(),
                                    "{} rule {rule} bias {use_bias} gain {use_gain} freq {freq} at ({x}, {z})",
                                    w.name()
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}
