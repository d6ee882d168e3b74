// noise.wgsl — line-by-line port of crates/swg/src/noise.rs (`fast_floor`, `noise2`, `Fractal::value`
// as `fractal_value`), swg-trn §6.3–§6.5. Same f32 operation order, no fma.
//
// Uses the bindings `perm` (11) and `gradients` (12): each fractal family owns
// PERLIN_TABLE_LEN (514) entries of each, starting at `FractalRecord::table_offset`.
//
// Only +, −, ×, ÷, comparisons, floor, bit operations and exact f32↔i32 conversions: the
// bias/gain power is `pow_f32` (below), not WGSL's `pow`, so lavapipe reproduces the CPU bit
// for bit. On other GPUs the usual caveats apply: fused a·b + c and flushed subnormals.

/// ⌊x⌋ as crates/swg/src/noise.rs computes it (the truncation trick behind the |x| < 2^23 guard); NaN
/// and ±inf are returned unchanged. Exact like WGSL's `floor`, and kept as a port so that
/// −0 gives +0 as in Rust (`floor(-0.0)` is −0) — unless the compiler turns f32(i32(x))
/// into trunc(x) (NIR does, as an inexact rewrite), which only changes the sign of that
/// zero and no height.
fn fast_floor(x: f32) -> f32 {
    if (!(abs(x) < 8388608.0)) {
        return x;
    }
    let t = f32(i32(x));
    if (t > x) {
        return t - 1.0;
    }
    return t;
}

/// Rust's saturating `f as i32` for an f32 `f`. WGSL's `i32(f)` clamps to
/// [−2^31, 2^31 − 128] (the largest f32 below 2^31) and is undefined for NaN, so the
/// out-of-range and NaN cases are spelt out: ≥ 2^31 → i32::MAX, ≤ −2^31 → i32::MIN,
/// NaN → 0, as Rust does.
fn saturating_i32(f: f32) -> i32 {
    if (abs(f) < 2147483648.0) {
        return i32(f);
    }
    if (f > 0.0) {
        return 2147483647i;
    }
    if (f < 0.0) {
        return i32(-2147483648);
    }
    return 0i;
}

/// Lattice index `((fx as i32).wrapping_add(4096) & 255)` of crates/swg/src/noise.rs, in u32 (the
/// low 8 bits of a wrapping i32 add and of a wrapping u32 add are the same).
fn lattice_index(fx: f32) -> u32 {
    return (bitcast<u32>(saturating_i32(fx)) + 4096u) & 255u;
}

/// Cubic fade s(t) = t²(3 − 2t) (swg-trn §6.3).
fn s_curve(t: f32) -> f32 {
    return t * t * (3.0 - 2.0 * t);
}

/// Classic 2-D Perlin noise of crates/swg/src/noise.rs `noise2`, with the family's tables at
/// `table_offset` in `perm` / `gradients`.
fn noise2(table_offset: u32, x: f32, y: f32) -> f32 {
    let fx = fast_floor(x);
    let fy = fast_floor(y);
    let bx0 = lattice_index(fx);
    let by0 = lattice_index(fy);
    let bx1 = (bx0 + 1u) & 255u;
    let by1 = (by0 + 1u) & 255u;
    let rx0 = x - fx;
    let ry0 = y - fy;
    let rx1 = rx0 - 1.0;
    let ry1 = ry0 - 1.0;

    let i = perm[table_offset + bx0] & 255u;
    let j = perm[table_offset + bx1] & 255u;
    let b00 = perm[table_offset + ((i + by0) & 511u)] & 511u;
    let b10 = perm[table_offset + ((j + by0) & 511u)] & 511u;
    let b01 = perm[table_offset + ((i + by1) & 511u)] & 511u;
    let b11 = perm[table_offset + ((j + by1) & 511u)] & 511u;

    let sx = s_curve(rx0);
    let sy = s_curve(ry0);

    // keep(): without it NIR rewrites (rx1·q0 + ry0·q1) − u as (rx1·q0 − u) + ry0·q1
    // (measured: 18 % of lavapipe results off by an ulp).
    var q = gradients[table_offset + b00];
    var u = keep(rx0 * q[0] + ry0 * q[1]);
    q = gradients[table_offset + b10];
    var v = keep(rx1 * q[0] + ry0 * q[1]);
    let a = u + sx * (v - u);

    q = gradients[table_offset + b01];
    u = keep(rx0 * q[0] + ry1 * q[1]);
    q = gradients[table_offset + b11];
    v = keep(rx1 * q[0] + ry1 * q[1]);
    let b = u + sx * (v - u);

    return a + sy * (b - a);
}

/// x^y for x ≥ 0 from +, −, ×, ÷, floor and bit operations only: line-by-line port of
/// `pow_f32` in crates/swg/src/noise.rs, so that CPU and GPU agree bit for bit (WGSL's `pow` and
/// libm's `powf` differ in the last bits). Float literals carry the `f` suffix so that naga
/// rounds them straight to f32, as rustc does (an unsuffixed literal goes through f64).
/// A GPU that flushes subnormals differs for subnormal x (the CPU renormalises it).
fn pow_f32(x: f32, y: f32) -> f32 {
    if (y == 0.0) {
        return 1.0;
    }
    if (!(x > 0.0)) {
        // x = 0 (or a NaN that cannot arise here): 0 for positive exponents, as powf.
        if (y > 0.0) {
            return 0.0;
        }
        return f32_inf();
    }
    if (x == 1.0) {
        return 1.0;
    }
    // log2(x) = e + log2(m), m ∈ [√½, √2), with the atanh series in t = (m − 1)/(m + 1).
    let bits = bitcast<u32>(x);
    var e = i32((bits >> 23u) & 255u) - 127i;
    var m = bitcast<f32>((bits & 0x007fffffu) | 0x3f800000u);
    if (e == -127i) {
        // Subnormal x: renormalise (x·2^23 is normal).
        let b2 = bitcast<u32>(x * 8388608.0f);
        e = i32((b2 >> 23u) & 255u) - 127i - 23i;
        m = bitcast<f32>((b2 & 0x007fffffu) | 0x3f800000u);
    }
    if (m > 1.4142135f) {
        m *= 0.5f;
        e += 1i;
    }
    // m + 1 ≥ 1.7, so the division is safe.
    let t = (m - 1.0f) / (m + 1.0f);
    let t2 = t * t;
    // 2/ln 2 · (t + t³/3 + t⁵/5 + t⁷/7 + t⁹/9)
    // keep(): (t·P)·#c would otherwise become (t·#c)·P.
    let series = keep(t * (1.0f + t2 * (0.33333334f + t2 * (0.2f + t2 * (0.14285715f + t2 * 0.11111111f)))));
    let log2x = f32(e) + series * 2.88539f;
    // 2^z = 2^i · 2^f, f ∈ [0, 1), 2^f = exp(f ln 2) by its Taylor series to degree 8.
    let z = y * log2x;
    if (z >= 128.0f) {
        return f32_inf();
    }
    if (z < -126.0f) {
        return 0.0;
    }
    let i = floor(z);
    let f = (z - i) * 0.6931472f;
    let p = 1.0f
        + f * (1.0f
            + f * (0.5f
                + f * (0.16666667f
                    + f * (0.041666668f + f * (0.008333334f + f * (0.0013888889f + f * (0.0001984127f + f * 0.000024801587f)))))));
    return p * bitcast<f32>(u32(i32(i) + 127i) << 23u);
}

/// F(x, z) in [0, 1] of swg-trn §6.4: port of `Fractal::value` in crates/swg/src/noise.rs. `norm`,
/// `bias_exponent` and `gain_exponent` come precomputed from the CPU (no `ln` here).
fn fractal_value(p: FractalRecord, x: f32, z: f32) -> f32 {
    let xx = x * p.frequency_x + p.offset_x;
    let zz = z * p.frequency_z + p.offset_z;
    var acc = 0.0f;
    var fm = 1.0f;
    var am = 1.0f;
    let rule = p.combination_rule;
    for (var k = 0i; k < p.octaves; k++) {
        let n = noise2(p.table_offset, xx * fm, zz * fm);
        switch rule {
            case 2i: {
                acc += (1.0 - abs(n)) * am;
            }
            case 3i: {
                acc += abs(n) * am;
            }
            case 4i: {
                acc += (1.0 - rclamp(n, 0.0, 1.0)) * am;
            }
            case 5i: {
                acc += rclamp(n, 0.0, 1.0) * am;
            }
            default: {
                acc += n * am;
            }
        }
        fm *= p.octave_frequency_multiplier;
        am *= p.amplitude;
    }
    var r: f32;
    if (rule >= 2i && rule <= 5i) {
        r = acc * p.norm;
    } else {
        r = (acc * p.norm + 1.0) * 0.5;
    }
    if (p.use_bias != 0u) {
        // swg-trn §6.4: clamp so a negative base cannot give NaN.
        r = pow_f32(rmax(r, 0.0), p.bias_exponent);
    }
    if (p.use_gain != 0u) {
        if (r < 0.001f) {
            return 0.0;
        } else if (r > 0.999f) {
            return 1.0;
        } else {
            let g = p.gain_exponent;
            if (r < 0.5) {
                return 0.5 * pow_f32(2.0 * r, g);
            } else {
                return 1.0 - 0.5 * pow_f32(2.0 * (1.0 - r), g);
            }
        }
    } else {
        return r;
    }
}
