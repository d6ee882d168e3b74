//! Terrain normals from the finished height grid (swg-trn §5.2 step 2).
//!
//! The client renders two triangles per quad with the diagonal alternating by quad parity
//! (swg-trn §5.1). The normal at a post is the average of the unit face normals of the
//! triangles that meet there: §5.9 measured it as the best reading for the slope filter
//! (92.5 % PIMP agreement on tatooine, against 90.5 % for central differences).

use crate::lanes::{Lanes, Width};

/// How normals are computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum NormalMethod {
    /// Average of the unit face normals of the triangles meeting at the post.
    #[default]
    Faces,
    /// Central differences at the grid spacing.
    Central,
}

/// Unit normal (x east, y up, z north) at a post from the 3×3 heights around it,
/// `h[dz + 1][dx + 1]` for dx, dz ∈ {−1, 0, 1}, `spacing` metres apart. (gx, gz) are the
/// post's global indices, which fix each quad's diagonal: quad (qx, qz) (its south-west
/// post) runs its diagonal south-west → north-east when (qx ^ qz) is even, else
/// south-east → north-west.
pub fn post_normal(method: NormalMethod, h: &[[f32; 3]; 3], spacing: f32, gx: i64, gz: i64) -> [f32; 3] {
    match method {
        NormalMethod::Central => {
            let dx = (h[1][2] - h[1][0]) / (2.0 * spacing);
            let dz = (h[2][1] - h[0][1]) / (2.0 * spacing);
            normalize([-dx, 1.0, -dz])
        }
        NormalMethod::Faces => {
            if (gx ^ gz) & 1 == 0 {
                faces_sum(&FACES_EVEN, h, spacing)
            } else {
                faces_sum(&FACES_ODD, h, spacing)
            }
        }
    }
}

/// The normalized sum of the unit normals of `triangles` ((dx, dz) corners), in order; a
/// constant table, so the loops unroll.
#[inline(always)]
fn faces_sum<const N: usize>(triangles: &[[(i32, i32); 3]; N], h: &[[f32; 3]; 3], spacing: f32) -> [f32; 3] {
    let p = |(dx, dz): (i32, i32)| [dx as f32 * spacing, h[(dz + 1) as usize][(dx + 1) as usize], dz as f32 * spacing];
    let mut sum = [0.0f32; 3];
    for tri in triangles {
        let n = face_normal(p(tri[0]), p(tri[1]), p(tri[2]));
        sum[0] += n[0];
        sum[1] += n[1];
        sum[2] += n[2];
    }
    normalize(sum)
}

/// The triangles that meet at a post whose (gx ^ gz) is even, as (dx, dz) corners: the quads
/// south-west, south-east, north-west, north-east of the post in turn, each quad's two
/// triangles in order, keeping those with the post as a corner. Quad (qx, qz)'s parity is
/// that of (gx + gz) plus its offset, so the even post's quads are even, odd, odd, even, and
/// every triangle of all four meets the post (valence 8); the sum of the face normals takes
/// them in this order (the GPU's `post_normal` in kernels/normals.wgsl walks the quads in the same order).
const FACES_EVEN: [[(i32, i32); 3]; 8] = [
    [(-1, -1), (0, -1), (0, 0)],
    [(-1, -1), (0, 0), (-1, 0)],
    [(0, -1), (1, -1), (0, 0)],
    [(1, -1), (1, 0), (0, 0)],
    [(-1, 0), (0, 0), (-1, 1)],
    [(0, 0), (0, 1), (-1, 1)],
    [(0, 0), (1, 0), (1, 1)],
    [(0, 0), (1, 1), (0, 1)],
];

/// As [`FACES_EVEN`] for an odd (gx ^ gz): one triangle of each quad meets the post (valence 4).
const FACES_ODD: [[(i32, i32); 3]; 4] = [[(0, -1), (0, 0), (-1, 0)], [(0, -1), (1, 0), (0, 0)], [(-1, 0), (0, 0), (0, 1)], [(0, 0), (1, 0), (0, 1)]];

/// The upward unit normal of triangle abc.
#[inline(always)]
fn face_normal(a: [f32; 3], b: [f32; 3], c: [f32; 3]) -> [f32; 3] {
    let u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
    let v = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
    let n = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]];
    let n = if n[1] < 0.0 { [-n[0], -n[1], -n[2]] } else { n };
    normalize(n)
}

#[inline(always)]
fn normalize(n: [f32; 3]) -> [f32; 3] {
    let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    if len > 0.0 && len.is_finite() {
        [n[0] / len, n[1] / len, n[2] / len]
    } else {
        [0.0, 1.0, 0.0]
    }
}

/// The faces-reading normals ([`post_normal`] with [`NormalMethod::Faces`]) of `out.len()`
/// consecutive posts of a row, computed `width` posts at a time: `rows` are the heights of the
/// row south of it, the row itself and the row north of it, post j's 3×3 reading columns
/// j..j + 3 of each; `even_first`: whether post 0's (gx ^ gz) is even (the parity alternates
/// along a row).
///
/// Why quads first: the triangles meeting at a post are shared with its neighbours, and every
/// post's table lists a shared triangle from the same corner in the same order (the corners'
/// offsets are whole multiples of the spacing, so their differences are exact), so a
/// triangle's unit normal has the same bits whichever post computes it. Each quad's two
/// normals are computed once, south and north of the row (4 normalisations a post instead of
/// 12), then each post sums its parity's triangles in its table's order and normalises, as
/// [`post_normal`] does: the normals are bit-identical to it at every width (tested).
pub fn faces_normals_row(width: Width, rows: [&[f32]; 3], spacing: f32, even_first: bool, out: &mut [[f32; 3]]) {
    let n = out.len();
    assert!(rows.iter().all(|r| r.len() >= n + 2), "each row holds the posts and one either side");
    thread_local! {
        /// The row's quad face normals: 2 strips × 2 triangles × 3 components, n + 1 quads each.
        static FACES: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    FACES.with_borrow_mut(|faces| {
        // Not cleared: `quad_faces` writes every quad of every plane before `post_sums` reads
        // it, so only a longer row than the last needs new (zeroed) room — a zeroing a row
        // was ≈ 1.5 % of an every-map bake's instructions.
        faces.resize(QUAD_PLANES * (n + 1), 0.0);
        crate::with_lanes_at!(
            width,
            |L; rows: [&[f32]; 3], spacing: f32, even_first: bool, faces: &mut [f32], out: &mut [[f32; 3]]| -> () {
                let quads = out.len() + 1;
                let (south, north) = faces.split_at_mut(6 * quads);
                // Quad q of a strip has its south-west post in ring column q: the south strip's
                // quad 0 has post 0's parity (one post south-west of it), the north strip's the other.
                quad_faces::<L>(rows[0], rows[1], spacing, even_first, south, quads);
                quad_faces::<L>(rows[1], rows[2], spacing, !even_first, north, quads);
                post_sums::<L>(rows, spacing, even_first, south, north, out);
            },
            rows, spacing, even_first, faces, out
        )
    })
}

/// Planes of [`faces_normals_row`]'s quad normals: per strip, (first, second) triangle × xyz.
const QUAD_PLANES: usize = 12;

/// Per-lane parity mask: lane i is even when `first_even == ((start + i) % 2 == 0)`.
#[inline(always)]
unsafe fn parity_lanes<L: Lanes>(first_even: bool, start: usize) -> L::F {
    let mut parity = L::Arr::default();
    for (i, m) in parity.as_mut().iter_mut().enumerate() {
        *m = f32::from_bits(if first_even == (start + i).is_multiple_of(2) { !0 } else { 0 });
    }
    L::from_arr(&parity)
}

/// `w` values of `row` from `start`, zeros past its end.
#[inline(always)]
unsafe fn load_padded<L: Lanes>(row: &[f32], start: usize) -> L::F {
    if start + L::WIDTH <= row.len() {
        return L::load(row.as_ptr().add(start));
    }
    let mut a = L::Arr::default();
    let m = row.len().saturating_sub(start);
    a.as_mut()[..m].copy_from_slice(&row[start..start + m]);
    L::from_arr(&a)
}

/// The unit normals of both triangles of `quads` quads between rows `lo` (south) and `hi`
/// (north), quad q's corners being columns q and q + 1: planes of `faces` (6 × quads) hold the
/// first triangle's x, y, z, then the second's. Quad 0's diagonal parity is `first_even`,
/// alternating along the strip: an even quad's triangles are (SW, SE, NE) and (SW, NE, NW), an
/// odd one's (SW, SE, NW) and (SE, NE, NW) — the corners in the order [`FACES_EVEN`] and
/// [`FACES_ODD`] list them, with their offsets' differences (exact) and `face_normal`'s operations.
#[inline(always)]
unsafe fn quad_faces<L: Lanes>(lo: &[f32], hi: &[f32], spacing: f32, first_even: bool, faces: &mut [f32], quads: usize) {
    let w = L::WIDTH;
    let (s, zero, minus_s, minus_one) = (L::splat(spacing), L::splat(0.0), L::splat(-spacing), L::splat(-1.0));
    let mut q = 0;
    while q < quads {
        let even = parity_lanes::<L>(first_even, q);
        let (sw, se) = (load_padded::<L>(lo, q), load_padded::<L>(lo, q + 1));
        let (nw, ne) = (load_padded::<L>(hi, q), load_padded::<L>(hi, q + 1));
        // First triangle: a = SW, b = SE, c = NE (even) or NW (odd).
        let first = face_lanes::<L>((s, L::sub(se, sw), zero), (L::select(even, s, zero), L::sub(L::select(even, ne, nw), sw), s), minus_one);
        // Second: (SW, NE, NW) even, (SE, NE, NW) odd.
        let a = L::select(even, sw, se);
        let second = face_lanes::<L>((L::select(even, s, zero), L::sub(ne, a), s), (L::select(even, zero, minus_s), L::sub(nw, a), s), minus_one);
        let m = (quads - q).min(w);
        for (plane, v) in first.into_iter().chain(second).enumerate() {
            let at = plane * quads + q;
            if m == w {
                // A whole vector: one store (a copy of `m` lanes is a call to memcpy, 1.5 of
                // them a post, ≈ 0.6 % of an every-map bake's instructions).
                assert!(at + w <= faces.len());
                L::store(faces.as_mut_ptr().add(at), v);
            } else {
                faces[at..at + m].copy_from_slice(&L::to_arr(v).as_ref()[..m]);
            }
        }
        q += w;
    }
}

/// `face_normal` of the edges u = b − a and v = c − a given as (x, y, z) lanes: the cross
/// product, turned upward (times −1, as the lanes of [`post_normal`] do), normalised.
#[inline(always)]
unsafe fn face_lanes<L: Lanes>(u: (L::F, L::F, L::F), v: (L::F, L::F, L::F), minus_one: L::F) -> [L::F; 3] {
    let n = [L::sub(L::mul(u.1, v.2), L::mul(u.2, v.1)), L::sub(L::mul(u.2, v.0), L::mul(u.0, v.2)), L::sub(L::mul(u.0, v.1), L::mul(u.1, v.0))];
    let down = L::lt(n[1], L::splat(0.0));
    let mut up = n;
    for c in &mut up {
        *c = L::select(down, L::mul(*c, minus_one), *c);
    }
    normalize_lanes::<L>(up)
}

/// Each post's sum of its triangles' normals from the strips' quad normals, in its table's
/// order from 0 (post j's quads are j and j + 1 of each strip), normalised; the posts past
/// the last whole vector by [`post_normal`].
#[inline(always)]
unsafe fn post_sums<L: Lanes>(rows: [&[f32]; 3], spacing: f32, even_first: bool, south: &[f32], north: &[f32], out: &mut [[f32; 3]]) {
    let w = L::WIDTH;
    let quads = out.len() + 1;
    let mut j = 0;
    while j + w <= out.len() {
        let is_even = parity_lanes::<L>(even_first, j);
        let mut sum = [L::splat(0.0); 3];
        for (c, sum) in sum.iter_mut().enumerate() {
            // FACES_EVEN: SW quad's two, SE's two, NW's two, NE's two.
            let mut even = L::splat(0.0);
            for (faces, at) in [(south, j), (south, j + 1), (north, j), (north, j + 1)] {
                even = L::add(even, L::load(faces.as_ptr().add(c * quads + at)));
                even = L::add(even, L::load(faces.as_ptr().add((3 + c) * quads + at)));
            }
            // FACES_ODD: SW's second, SE's second, NW's first, NE's first.
            let mut odd = L::add(L::splat(0.0), L::load(south.as_ptr().add((3 + c) * quads + j)));
            odd = L::add(odd, L::load(south.as_ptr().add((3 + c) * quads + j + 1)));
            odd = L::add(odd, L::load(north.as_ptr().add(c * quads + j)));
            odd = L::add(odd, L::load(north.as_ptr().add(c * quads + j + 1)));
            *sum = L::select(is_even, even, odd);
        }
        let unit = normalize_lanes::<L>(sum);
        let v = [L::to_arr(unit[0]), L::to_arr(unit[1]), L::to_arr(unit[2])];
        for (k, o) in out[j..j + w].iter_mut().enumerate() {
            *o = [v[0].as_ref()[k], v[1].as_ref()[k], v[2].as_ref()[k]];
        }
        j += w;
    }
    for (k, o) in out.iter_mut().enumerate().skip(j) {
        let h = [0, 1, 2].map(|dz| [rows[dz][k], rows[dz][k + 1], rows[dz][k + 2]]);
        // A (gx, gz) of the post's parity.
        *o = post_normal(NormalMethod::Faces, &h, spacing, i64::from(even_first != (k % 2 == 0)), 0);
    }
}

/// [`normalize`] over lanes.
#[inline(always)]
unsafe fn normalize_lanes<L: Lanes>(n: [L::F; 3]) -> [L::F; 3] {
    let len = L::sqrt(L::add(L::add(L::mul(n[0], n[0]), L::mul(n[1], n[1])), L::mul(n[2], n[2])));
    let ok = L::and(L::gt(len, L::splat(0.0)), L::lt(len, L::splat(f32::INFINITY)));
    [L::select(ok, L::div(n[0], len), L::splat(0.0)), L::select(ok, L::div(n[1], len), L::splat(1.0)), L::select(ok, L::div(n[2], len), L::splat(0.0))]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plane(sx: f32, sz: f32) -> [[f32; 3]; 3] {
        let mut h = [[0.0; 3]; 3];
        for (dz, row) in h.iter_mut().enumerate() {
            for (dx, v) in row.iter_mut().enumerate() {
                *v = 10.0 + sx * (dx as f32 - 1.0) * 2.0 + sz * (dz as f32 - 1.0) * 2.0;
            }
        }
        h
    }

    #[test]
    fn planes_give_their_normal_whatever_the_method_and_parity() {
        for (sx, sz) in [(0.0, 0.0), (1.0, 0.0), (0.0, -0.5), (0.3, 0.7)] {
            let want = normalize([-sx, 1.0, -sz]);
            for method in [NormalMethod::Faces, NormalMethod::Central] {
                for (gx, gz) in [(0, 0), (1, 0), (7, 4)] {
                    let n = post_normal(method, &plane(sx, sz), 2.0, gx, gz);
                    for k in 0..3 {
                        assert!((n[k] - want[k]).abs() < 1e-5, "{method:?} slope ({sx}, {sz}) at ({gx}, {gz}): {n:?} vs {want:?}");
                    }
                }
            }
        }
    }

    /// The quad-by-quad reading of swg-trn §5.1 the tables of `post_normal` are derived from:
    /// each quad's two triangles by its diagonal's parity, those with the post as a corner.
    fn faces_reference(h: &[[f32; 3]; 3], spacing: f32, gx: i64, gz: i64) -> [f32; 3] {
        let p = |dx: i32, dz: i32| [dx as f32 * spacing, h[(dz + 1) as usize][(dx + 1) as usize], dz as f32 * spacing];
        let mut sum = [0.0f32; 3];
        for (ox, oz) in [(-1, -1), (0, -1), (-1, 0), (0, 0)] {
            let (c00, c10, c01, c11) = ((ox, oz), (ox + 1, oz), (ox, oz + 1), (ox + 1, oz + 1));
            let even = ((gx + i64::from(ox)) ^ (gz + i64::from(oz))) & 1 == 0;
            let triangles = if even { [[c00, c10, c11], [c00, c11, c01]] } else { [[c00, c10, c01], [c10, c11, c01]] };
            for tri in triangles.into_iter().filter(|t| t.contains(&(0, 0))) {
                let n = face_normal(p(tri[0].0, tri[0].1), p(tri[1].0, tri[1].1), p(tri[2].0, tri[2].1));
                for k in 0..3 {
                    sum[k] += n[k];
                }
            }
        }
        normalize(sum)
    }

    /// Uniform numbers in [0, 1) (xorshift64) from `seed`.
    fn uniform(mut seed: u64) -> impl FnMut() -> f32 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as f32 / (1u64 << 24) as f32
        }
    }

    #[test]
    fn the_triangle_tables_equal_the_quad_reading_bit_for_bit() {
        let mut next = uniform(0x2545_f491_4f6c_dd1d);
        for k in 0..20_000 {
            let h: [[f32; 3]; 3] = std::array::from_fn(|_| std::array::from_fn(|_| (next() - 0.5) * 200.0));
            let (gx, gz) = (k as i64 % 7 - 3, k as i64 / 7 % 5 - 2);
            let spacing = [2.0, 1.0, 0.5, 8.0][k % 4];
            let (got, want) = (post_normal(NormalMethod::Faces, &h, spacing, gx, gz), faces_reference(&h, spacing, gx, gz));
            assert_eq!(got.map(f32::to_bits), want.map(f32::to_bits), "{h:?} at ({gx}, {gz})");
        }
    }

    #[test]
    fn the_lane_rows_equal_post_normal_at_every_width() {
        let mut next = uniform(0x9e37_79b9_7f4a_7c15);
        for (k, n) in [1usize, 3, 8, 13, 64, 101, 130, 17].into_iter().enumerate() {
            // Rough heights (whole metres, and fractions for rounding), flat stretches
            // (zero-length cross products), a NaN and an infinity.
            let fractions = k % 2 == 1;
            let mut rows: [Vec<f32>; 3] =
                std::array::from_fn(|_| (0..n + 2).map(|_| (next() - 0.5) * 300.0).map(|h| if fractions { h } else { h.round() }).collect());
            rows[1][n / 2] = rows[0][n / 2];
            if n > 8 {
                rows[2][5] = f32::NAN;
                rows[0][n - 3] = f32::INFINITY;
            }
            let spacing = [2.0, 1.0, 0.5, 8.0][k % 4];
            for even_first in [true, false] {
                let want: Vec<[f32; 3]> = (0..n)
                    .map(|j| {
                        let h = [0, 1, 2].map(|dz| [rows[dz][j], rows[dz][j + 1], rows[dz][j + 2]]);
                        post_normal(NormalMethod::Faces, &h, spacing, j as i64 + 10, if even_first { 10 } else { 11 })
                    })
                    .collect();
                for width in Width::available() {
                    let mut got = vec![[0.0; 3]; n];
                    faces_normals_row(width, [&rows[0], &rows[1], &rows[2]], spacing, even_first, &mut got);
                    for (j, (g, w)) in got.iter().zip(&want).enumerate() {
                        assert_eq!(g.map(f32::to_bits), w.map(f32::to_bits), "{width:?}, {n} posts, post {j}, even_first {even_first}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_spike_tilts_the_neighbours_normals_by_the_diagonals() {
        // A raised north-east neighbour: with an even quad (0, 0) the diagonal touches it,
        // with an odd one it does not, so the two parities must differ.
        let mut h = [[0.0; 3]; 3];
        h[2][2] = 4.0;
        let even = post_normal(NormalMethod::Faces, &h, 2.0, 0, 0);
        let odd = post_normal(NormalMethod::Faces, &h, 2.0, 1, 0);
        assert!(even[1] < 1.0 && odd[1] == 1.0, "even {even:?} odd {odd:?}");
    }
}
