// filter.wgsl — port of crates/swg/src/eval/filter.rs (swg-trn §5.5, §5.6) and of
// `Bitmap::sample_bilinear` / `Bitmap::pixel` in crates/swg/src/model/bitmap.rs. Same names, same f32
// operation order.
//
// Uses the bindings `fractals` (10), `bitmaps` (13) and `bitmap_words` (14): all bitmaps
// packed 4 pixels per u32, little-endian byte order (`BakePlan::bitmap_words`).
//
// "Missing" indices: the CPU's `plan.bitmaps.get(i)` / `plan.fractals.get(i)` is mirrored by
// `i < arrayLength(..)`. The host uploads one dummy record when a list is empty, but a
// missing family is always u32::MAX in the plan, so the dummy is never reachable.

/// Pixel at column `col`, row `row_from_bottom` (row 0 = south edge), from the packed words.
/// Port of `Bitmap::pixel` (the callers keep the indices in range, as on the CPU).
fn bitmap_pixel(bm: BitmapRecord, col: u32, row_from_bottom: u32) -> u32 {
    let idx = bm.byte_offset + row_from_bottom * bm.width + col;
    let word = bitmap_words[idx >> 2u];
    return (word >> ((idx & 3u) * 8u)) & 255u;
}

/// The FBIT bilinear sample of swg-trn §5.6 steps 1–2 (port of `Bitmap::sample_bilinear`):
/// u, v in image units; returns B in [0, 1]. The upper clamp comes first, then the lower
/// one, so NaN maps to 0 exactly as on the CPU.
fn sample_bilinear(bm: BitmapRecord, u_in: f32, v_in: f32) -> f32 {
    if (bm.width == 0u || bm.height == 0u) {
        return 0.0;
    }
    let wm1 = f32(bm.width - 1u);
    let hm1 = f32(bm.height - 1u);
    var u = u_in;
    var v = v_in;
    if (u > wm1) {
        u = wm1;
    }
    if (v > hm1) {
        v = hm1;
    }
    if (!(u >= 0.0)) {
        u = 0.0;
    }
    if (!(v >= 0.0)) {
        v = 0.0;
    }
    let i0f = floor(u);
    let j0f = floor(v);
    let i0 = u32(i0f);
    let j0 = u32(j0f);
    let i1 = min(i0 + 1u, bm.width - 1u);
    let j1 = min(j0 + 1u, bm.height - 1u);
    let fu = u - i0f;
    let fv = v - j0f;
    let p00 = f32(bitmap_pixel(bm, i0, j0));
    let p10 = f32(bitmap_pixel(bm, i1, j0));
    let p01 = f32(bitmap_pixel(bm, i0, j1));
    let p11 = f32(bitmap_pixel(bm, i1, j1));
    return ((1.0 - fv) * (1.0 - fu) * p00
        + (1.0 - fv) * fu * p10
        + fv * (1.0 - fu) * p01
        + fv * fu * p11)
        / 255.0;
}

/// `num / den` where `den` is an extent width that may be 0 (a degenerate extent: e.g. a
/// circle of radius 0 or a zero-width rectangle). For den = 0 the CPU gets ±inf or NaN
/// (0 / 0), which `sample_bilinear` maps to W − 1, 0 and 0 respectively; WGSL division by
/// zero is not IEEE-defined, so the IEEE result is produced without dividing: ±inf exactly,
/// and 0 instead of NaN (same sample).
fn extent_coord(num: f32, den: f32) -> f32 {
    if (den != 0.0) {
        return num / den;
    }
    if (num > 0.0) {
        return f32_inf();
    }
    if (num < 0.0) {
        return -f32_inf();
    }
    return 0.0;
}

/// FBIT (swg-trn §5.6): bilinear bitmap value B over the layer's extent rectangle, with the
/// optional gain, then B × I(B; low, high, a).
fn filter_bitmap(f: FilterRecord, extent: array<f32, 4>, x: f32, z: f32) -> f32 {
    if (f.family >= arrayLength(&bitmaps)) {
        return 0.0;
    }
    let bm = bitmaps[f.family];
    let min_x = extent[0];
    let min_z = extent[1];
    let max_x = extent[2];
    let max_z = extent[3];
    let u = extent_coord((x - min_x) * f32(bm.width), max_x - min_x);
    let v = extent_coord((z - min_z) * f32(bm.height), max_z - min_z);
    var b = sample_bilinear(bm, u, v);
    if (f.has_gain != 0u) {
        b = rclamp(b + f.value, 0.0, 1.0);
    }
    if (b == 1.0) {
        b = 0.99999f;
    }
    return b * feathered_range(b, f.low, f.high, f.feather_amount);
}

/// The value of a filter in the height pass at height `h` (FSLP, FDIR and FSHD are 0
/// there, swg-trn §5.2).
fn filter_value_height_pass(f: FilterRecord, extent: array<f32, 4>, h: f32, x: f32, z: f32) -> f32 {
    switch f.kind {
        case FILTER_HEIGHT: {
            return feathered_range(h, f.low, f.high, f.feather_amount);
        }
        case FILTER_FRACTAL: {
            if (f.family >= arrayLength(&fractals)) {
                return 0.0;
            }
            let fr = fractals[f.family];
            return feathered_range(fractal_value(fr, x, z) * f.value, f.low, f.high, f.feather_amount);
        }
        case FILTER_BITMAP: {
            return filter_bitmap(f, extent, x, z);
        }
        default: {
            return 0.0;
        }
    }
}
