//! Comparing a freshly baked map with its golden image, sample by sample, in steps (LSB) of
//! the image's encoding.

/// A map as the integer samples of its image: `width × height` posts, row 0 = **north** (image
/// order), `channels` samples per post, `bits` per sample (8 or 16).
///
/// Samples are `i32` rather than the image's `u16` so that a baked value outside the golden's
/// encoding range (a height above the golden's maximum) keeps its true distance from the
/// golden instead of being clamped to the image's last step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Raster {
    pub width: u32,
    pub height: u32,
    pub channels: u32,
    pub bits: u8,
    pub samples: Vec<i32>,
}

impl Raster {
    /// The largest sample the image can hold (255 or 65535).
    pub fn max_value(&self) -> i32 {
        (1i32 << self.bits) - 1
    }

    pub fn posts(&self) -> usize {
        self.width as usize * self.height as usize
    }

    /// `[width, height, channels, bits]`, for "is this the same kind of image" checks.
    pub fn shape(&self) -> [u32; 4] {
        [self.width, self.height, self.channels, u32::from(self.bits)]
    }
}

/// Heights (row-major, row 0 = south, as the evaluators produce them) as the samples of a
/// 16-bit height PNG written with `scale` and `offset`: `round((h − offset) / scale)`, the
/// rounding of the PNG writer (`export::encode_u16`) without its clamp (see [`Raster`]).
/// NaN gives 0, as the writer does.
pub fn height_raster(heights: &[f32], cols: u32, rows: u32, scale: f64, offset: f64) -> Raster {
    assert_eq!(heights.len(), cols as usize * rows as usize, "one height per post");
    let mut samples = Vec::with_capacity(heights.len());
    for row in heights.chunks_exact(cols as usize).rev() {
        // `as` saturates (and maps NaN to 0): a wildly wrong height still compares as far off.
        samples.extend(row.iter().map(|&h| ((f64::from(h) - offset) / scale).round() as i32));
    }
    Raster { width: cols, height: rows, channels: 1, bits: 16, samples }
}

/// How a map compares with its golden.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub posts: u64,
    /// Posts where any sample differs.
    pub posts_changed: u64,
    /// Posts where some sample differs by more than the tolerance.
    pub posts_over: u64,
    /// Largest difference of one sample, in steps (LSB) of the image.
    pub max_diff: u64,
    /// Peak signal-to-noise ratio over the image's range, in dB; infinite when identical.
    pub psnr_db: f64,
    /// Image-space box `[col0, row0, col1, row1]` (inclusive, row 0 = north) of the posts
    /// that differ; `None` when none does.
    pub changed_box: Option<[u32; 4]>,
    /// Per post (image order): the largest difference of its samples, saturated at u32::MAX.
    pub per_post: Vec<u32>,
}

impl Comparison {
    pub fn identical(&self) -> bool {
        self.posts_changed == 0
    }
}

/// Compare `actual` with `expected` (same shape: the caller reports a mismatch in words).
/// A post is over the tolerance when one of its samples differs by more than `tolerance` steps.
pub fn compare(expected: &Raster, actual: &Raster, tolerance: u64) -> Comparison {
    assert_eq!(expected.shape(), actual.shape(), "compare needs images of one shape");
    let ch = expected.channels as usize;
    let mut c = Comparison {
        posts: expected.posts() as u64,
        posts_changed: 0,
        posts_over: 0,
        max_diff: 0,
        psnr_db: f64::INFINITY,
        changed_box: None,
        per_post: Vec::with_capacity(expected.posts()),
    };
    let mut sum_sq = 0.0f64;
    for (i, (e, a)) in expected.samples.chunks_exact(ch).zip(actual.samples.chunks_exact(ch)).enumerate() {
        let d = e.iter().zip(a).map(|(e, a)| (i64::from(*e) - i64::from(*a)).unsigned_abs()).max().unwrap_or(0);
        sum_sq += e.iter().zip(a).map(|(e, a)| ((i64::from(*e) - i64::from(*a)) as f64).powi(2)).sum::<f64>();
        c.per_post.push(u32::try_from(d).unwrap_or(u32::MAX));
        if d == 0 {
            continue;
        }
        c.posts_changed += 1;
        c.posts_over += u64::from(d > tolerance);
        c.max_diff = c.max_diff.max(d);
        let (col, row) = ((i % expected.width as usize) as u32, (i / expected.width as usize) as u32);
        c.changed_box = Some(match c.changed_box {
            None => [col, row, col, row],
            Some(b) => [b[0].min(col), b[1].min(row), b[2].max(col), b[3].max(row)],
        });
    }
    if sum_sq > 0.0 {
        let mse = sum_sq / expected.samples.len() as f64;
        c.psnr_db = 10.0 * (f64::from(expected.max_value()).powi(2) / mse).log10();
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raster(samples: Vec<i32>, w: u32) -> Raster {
        Raster { width: w, height: samples.len() as u32 / w, channels: 1, bits: 16, samples }
    }

    #[test]
    fn identical_images() {
        let a = raster(vec![1, 2, 3, 4], 2);
        let c = compare(&a, &a, 0);
        assert!(c.identical());
        assert_eq!((c.posts, c.posts_over, c.max_diff, c.changed_box), (4, 0, 0, None));
        assert!(c.psnr_db.is_infinite());
    }

    #[test]
    fn counts_box_and_psnr() {
        let e = raster(vec![0, 0, 0, 0, 0, 0], 3);
        let a = raster(vec![0, 1, 0, 0, 0, -5], 3);
        let c = compare(&e, &a, 1);
        assert_eq!((c.posts_changed, c.posts_over, c.max_diff), (2, 1, 5));
        assert_eq!(c.changed_box, Some([1, 0, 2, 1]));
        assert_eq!(c.per_post, vec![0, 1, 0, 0, 0, 5]);
        let mse = (1.0 + 25.0) / 6.0;
        assert!((c.psnr_db - 10.0 * (65535.0f64 * 65535.0 / mse).log10()).abs() < 1e-9);
    }

    #[test]
    fn multi_channel_posts_take_the_largest_difference() {
        let e = Raster { width: 2, height: 1, channels: 3, bits: 8, samples: vec![10, 10, 10, 0, 0, 0] };
        let a = Raster { samples: vec![10, 13, 9, 0, 0, 0], ..e.clone() };
        let c = compare(&e, &a, 2);
        assert_eq!((c.posts, c.posts_changed, c.posts_over, c.max_diff), (2, 1, 1, 3));
        assert_eq!(c.per_post, vec![3, 0]);
    }

    #[test]
    fn height_raster_matches_the_png_writer_and_flips_to_north_first() {
        let (scale, offset) = trnbake_raster::u16_scale_offset(-12.5, 300.25);
        let heights: Vec<f32> = (0..1000).map(|i| -12.5 + 312.75 * i as f32 / 999.0).collect();
        let r = height_raster(&heights, 10, 100, scale, offset);
        for (row, chunk) in heights.chunks_exact(10).enumerate() {
            for (col, &h) in chunk.iter().enumerate() {
                let raw = trnbake_raster::encode_u16(h, scale, offset, u16::MAX, 0);
                assert_eq!(r.samples[(99 - row) * 10 + col], i32::from(raw));
            }
        }
        // Outside the golden's range the distance is kept, not clamped.
        let r = height_raster(&[400.0], 1, 1, scale, offset);
        assert!(r.samples[0] > 65535);
    }
}
