//! Lane forms (`crate::lanes`) of the per-post functions the row walk of [`super::walk_strip`]
//! spends its time in: feather functions and the feathered interpolant (§5.4, §5.5), the
//! height operations (§5.7), and the circle and rectangle influences (§5.4). Each computes,
//! per lane, exactly the f32 operations of its scalar twin ([`super::feather`],
//! [`super::affector::height_operation`], [`super::boundary`]) with the branches as masks;
//! the tests below compare every width with the scalar functions bit for bit.

use crate::lanes::Lanes;
use crate::plan::BoundaryRecord;

/// [`super::feather::feather`] per lane.
#[inline(always)]
pub(crate) unsafe fn feather<L: Lanes>(feather_type: i32, t: L::F) -> L::F {
    match feather_type {
        0 => t,
        1 => L::mul(t, t),
        2 => L::sqrt(t),
        3 => L::mul(L::mul(t, t), L::sub(L::splat(3.0), L::mul(L::splat(2.0), t))),
        _ => L::splat(0.0),
    }
}

/// [`super::feather::feathered_range`] per lane.
#[inline(always)]
pub(crate) unsafe fn feathered_range<L: Lanes>(v: L::F, lo: f32, hi: f32, a: f32) -> L::F {
    let (vlo, vhi) = (L::splat(lo), L::splat(hi));
    let inside = L::and(L::lt(vlo, v), L::lt(v, vhi));
    let d = (hi - lo) * a * 0.5;
    let vd = L::splat(d);
    let rising = L::div(L::sub(v, vlo), vd);
    let falling = L::div(L::sub(vhi, v), vd);
    let r = L::select(L::lt(v, L::splat(lo + d)), rising, L::select(L::gt(v, L::splat(hi - d)), falling, L::splat(1.0)));
    L::select(inside, r, L::splat(0.0))
}

/// [`super::affector::height_operation`] where `t > 0`, `h` elsewhere.
#[inline(always)]
pub(crate) unsafe fn height_operation<L: Lanes>(op: i32, h: L::F, c: L::F, t: L::F) -> L::F {
    let new = match op {
        0 => L::add(h, L::mul(L::sub(c, h), t)),
        1 => L::add(h, L::mul(t, c)),
        2 => L::sub(h, L::mul(t, c)),
        3 => L::add(h, L::mul(L::sub(L::mul(h, c), h), t)),
        _ => return h,
    };
    L::select(L::gt(t, L::splat(0.0)), new, h)
}

/// [`super::boundary::boundary_circle`] per lane (posts at `x`, all at `z`).
#[inline(always)]
pub(crate) unsafe fn circle<L: Lanes>(b: &BoundaryRecord, x: L::F, z: f32) -> L::F {
    let [cx, cz, r, a] = b.params;
    let dx = L::sub(x, L::splat(cx));
    let dz = z - cz;
    let d2 = L::add(L::mul(dx, dx), L::splat(dz * dz));
    let r2 = r * r;
    let ri = (1.0 - a) * r;
    let ri2 = ri * ri;
    let ramp = L::sub(L::splat(1.0), L::div(L::sub(d2, L::splat(ri2)), L::splat(r2 - ri2)));
    let inner = L::select(L::le(d2, L::splat(ri2)), L::splat(1.0), ramp);
    L::select(L::gt(d2, L::splat(r2)), L::splat(0.0), inner)
}

/// [`super::boundary::boundary_rectangle`] per lane.
#[inline(always)]
pub(crate) unsafe fn rectangle<L: Lanes>(b: &BoundaryRecord, x: L::F, z: f32) -> L::F {
    let [x0, z0, x1, z1] = b.params;
    let zero = L::splat(0.0);
    if z < z0 || z > z1 {
        return zero;
    }
    let outside = L::or(L::lt(x, L::splat(x0)), L::gt(x, L::splat(x1)));
    let a = b.extra;
    if a == 0.0 {
        return L::select(outside, zero, L::splat(1.0));
    }
    let m = a * (x1 - x0).min(z1 - z0) * 0.5;
    // (x − x0).min(x1 − x).min(z − z0).min(z1 − z): no operand is NaN for finite posts,
    // where f32::min and the lanes' min agree.
    let e = L::min(L::min(L::min(L::sub(x, L::splat(x0)), L::sub(L::splat(x1), x)), L::splat(z - z0)), L::splat(z1 - z));
    let v = L::div(L::min(e, L::splat(m)), L::splat(m));
    L::select(outside, zero, v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::affector::height_operation as height_operation_scalar;
    use crate::eval::boundary::{boundary_circle, boundary_rectangle};
    use crate::eval::feather::{feather as feather_scalar, feathered_range as feathered_range_scalar};
    use crate::lanes::Width;
    use crate::plan::{BOUNDARY_CIRCLE, BOUNDARY_RECTANGLE};

    fn same(a: f32, b: f32) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    /// `$e` (an expression of the lane vector `$v`) over `$xs`, a vector at a time.
    macro_rules! lanes_of {
        ($w:expr, $xs:expr, |$L:ident, $v:ident| $e:expr) => {
            crate::with_lanes_at!($w, |$L; xs: &[f32]| -> Vec<f32> {
                let mut out = Vec::new();
                for chunk in xs.chunks($L::WIDTH) {
                    let mut arr = $L::Arr::default();
                    arr.as_mut()[..chunk.len()].copy_from_slice(chunk);
                    let $v = $L::from_arr(&arr);
                    out.extend_from_slice(&$L::to_arr($e).as_ref()[..chunk.len()]);
                }
                out
            }, $xs)
        };
    }

    fn inputs() -> Vec<f32> {
        let mut v: Vec<f32> = (-300..=1300).map(|k| k as f32 / 1000.0).collect();
        v.extend([0.0, -0.0, 1.0, f32::INFINITY, -f32::INFINITY, 1e-30, 0.3333333]);
        v
    }

    #[test]
    fn feather_and_interpolant_equal_scalar() {
        let xs = inputs();
        for w in Width::available() {
            for ft in 0..5 {
                let got = match ft {
                    0 => lanes_of!(w, &xs, |L, v| feather::<L>(0, v)),
                    1 => lanes_of!(w, &xs, |L, v| feather::<L>(1, v)),
                    2 => lanes_of!(w, &xs, |L, v| feather::<L>(2, v)),
                    3 => lanes_of!(w, &xs, |L, v| feather::<L>(3, v)),
                    _ => lanes_of!(w, &xs, |L, v| feather::<L>(4, v)),
                };
                for (g, &x) in got.iter().zip(&xs) {
                    assert!(same(*g, feather_scalar(ft, x)), "{} feather {ft} of {x}", w.name());
                }
            }
            for (lo, hi, a) in [(0.0f32, 1.0f32, 0.5f32), (0.2, 0.7, 0.0), (0.1, 0.9, 1.0), (0.5, 0.5, 0.3), (0.9, 0.1, 0.2)] {
                let got = crate::with_lanes_at!(w, |L; xs: &[f32], lo: f32, hi: f32, a: f32| -> Vec<f32> {
                    let mut out = Vec::new();
                    for chunk in xs.chunks(L::WIDTH) {
                        let mut arr = L::Arr::default();
                        arr.as_mut()[..chunk.len()].copy_from_slice(chunk);
                        out.extend_from_slice(&L::to_arr(feathered_range::<L>(L::from_arr(&arr), lo, hi, a)).as_ref()[..chunk.len()]);
                    }
                    out
                }, &xs, lo, hi, a);
                for (g, &x) in got.iter().zip(&xs) {
                    assert!(same(*g, feathered_range_scalar(x, lo, hi, a)), "{} I({x}; {lo}, {hi}, {a})", w.name());
                }
            }
        }
    }

    #[test]
    fn height_operations_equal_scalar() {
        let hs: Vec<f32> = (-50..50).map(|k| k as f32 * 7.31).collect();
        for w in Width::available() {
            for op in 0..5 {
                for (c, t) in [(12.5f32, 0.25f32), (-3.0, 1.0), (0.7, 0.0), (100.0, 0.999)] {
                    let got = crate::with_lanes_at!(w, |L; hs: &[f32], op: i32, c: f32, t: f32| -> Vec<f32> {
                        let mut out = Vec::new();
                        for chunk in hs.chunks(L::WIDTH) {
                            let mut arr = L::Arr::default();
                            arr.as_mut()[..chunk.len()].copy_from_slice(chunk);
                            let r = height_operation::<L>(op, L::from_arr(&arr), L::splat(c), L::splat(t));
                            out.extend_from_slice(&L::to_arr(r).as_ref()[..chunk.len()]);
                        }
                        out
                    }, &hs, op, c, t);
                    for (g, &h) in got.iter().zip(&hs) {
                        let want = if t > 0.0 { height_operation_scalar(op, h, c, t) } else { h };
                        assert!(same(*g, want), "{} op {op} h {h} c {c} t {t}", w.name());
                    }
                }
            }
        }
    }

    #[test]
    fn circle_and_rectangle_equal_scalar() {
        let xs: Vec<f32> = (0..700).map(|k| -350.0 + k as f32 * 1.0).collect();
        let circles = [[10.0f32, 5.0, 200.0, 0.5], [0.0, 0.0, 100.0, 0.0], [0.0, 0.0, 0.0, 0.0], [-33.3, 12.0, 150.0, 1.0]];
        let rects = [([-100.0f32, -50.0, 120.0, 80.0], 0.25f32), ([-100.0, -50.0, 120.0, 80.0], 0.0), ([0.0, 0.0, 0.0, 0.0], 0.5)];
        for w in Width::available() {
            for z in [-200.0f32, -50.0, 0.0, 5.0, 79.5, 80.0, 150.0] {
                for p in circles {
                    let b = BoundaryRecord { kind: BOUNDARY_CIRCLE, params: p, ..Default::default() };
                    let got = crate::with_lanes_at!(w, |L; xs: &[f32], b: &BoundaryRecord, z: f32| -> Vec<f32> {
                        xs.chunks_exact(L::WIDTH).flat_map(|c| L::to_arr(circle::<L>(b, L::load(c.as_ptr()), z)).as_ref().to_vec()).collect()
                    }, &xs, &b, z);
                    for (g, &x) in got.iter().zip(&xs) {
                        assert!(same(*g, boundary_circle(&b, x, z)), "{} circle {p:?} at ({x}, {z})", w.name());
                    }
                }
                for (p, extra) in rects {
                    let b = BoundaryRecord { kind: BOUNDARY_RECTANGLE, params: p, extra, ..Default::default() };
                    let got = crate::with_lanes_at!(w, |L; xs: &[f32], b: &BoundaryRecord, z: f32| -> Vec<f32> {
                        xs.chunks_exact(L::WIDTH).flat_map(|c| L::to_arr(rectangle::<L>(b, L::load(c.as_ptr()), z)).as_ref().to_vec()).collect()
                    }, &xs, &b, z);
                    for (g, &x) in got.iter().zip(&xs) {
                        assert!(same(*g, boundary_rectangle(&b, x, z)), "{} rectangle {p:?} at ({x}, {z})", w.name());
                    }
                }
            }
        }
    }
}
