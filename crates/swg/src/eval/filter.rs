//! Filter values of the height pass (swg-trn §5.5, §5.6), before the feather function.
//! Mirrored by `kernels/filter.wgsl`.

use super::feather::feathered_range;
use crate::plan::{BakePlan, FilterRecord, FILTER_BITMAP, FILTER_FRACTAL, FILTER_HEIGHT};

/// FBIT (swg-trn §5.6): bilinear bitmap value B over the layer's extent rectangle, with the
/// optional gain, then B × I(B; low, high, a).
#[inline]
pub fn filter_bitmap(plan: &BakePlan, f: &FilterRecord, extent: [f32; 4], x: f32, z: f32) -> f32 {
    let Some(bitmap) = plan.bitmaps.get(f.family as usize) else { return 0.0 };
    let [min_x, min_z, max_x, max_z] = extent;
    let u = (x - min_x) * bitmap.width as f32 / (max_x - min_x);
    let v = (z - min_z) * bitmap.height as f32 / (max_z - min_z);
    let mut b = bitmap.sample_bilinear(u, v);
    if f.has_gain != 0 {
        b = (b + f.value).clamp(0.0, 1.0);
    }
    if b == 1.0 {
        b = 0.99999;
    }
    b * feathered_range(b, f.low, f.high, f.feather_amount)
}

/// The value of a filter in the height pass at height `h` (FSLP, FDIR and FSHD are 0
/// there, swg-trn §5.2).
#[inline]
pub fn filter_value_height_pass(plan: &BakePlan, f: &FilterRecord, extent: [f32; 4], h: f32, x: f32, z: f32) -> f32 {
    match f.kind {
        FILTER_HEIGHT => feathered_range(h, f.low, f.high, f.feather_amount),
        FILTER_FRACTAL => match plan.fractals.get(f.family as usize) {
            Some(fr) => feathered_range(fr.value(x, z) * f.value, f.low, f.high, f.feather_amount),
            None => 0.0,
        },
        FILTER_BITMAP => filter_bitmap(plan, f, extent, x, z),
        _ => 0.0,
    }
}
