//! The terrain queries game servers ask beyond a height (docs/src/servers.md): the ground's
//! normal and slope at a point, the lowest and highest ground over a box, and whether the
//! terrain blocks the line between two points. All on the exact heights of
//! [`HeightEvaluator`]; a point or box off the map is an [`OffMap`] error, never a value.

use rayon::prelude::*;

use crate::eval::{height_at_point, HeightEvaluator, OffMap};
use crate::grid::Grid;
use crate::spawn::{central_normal, slope_of_normal};

/// Half the distance between the height samples of [`HeightEvaluator::normal_at`], m: one
/// post either side at the planets' native 2 m spacing, so [`HeightEvaluator::slope_at`] at a
/// post of a 2 m bake equals the `slope` map there bit for bit (one formula: `central_normal`, then
/// [`crate::spawn::slope_of_normal`], as [`crate::spawn::slope_degrees`]).
pub const NORMAL_STEP: f32 = 2.0;

/// The default sampling step of [`HeightEvaluator::line_of_sight`], m (horizontal).
pub const LOS_STEP: f32 = 0.5;

/// Posts of a [`HeightEvaluator::height_range`] box at most (about 4 GB of heights, evaluated
/// in bands, so memory stays small; the bound keeps a mistyped spacing from running for hours).
pub const MAX_RANGE_POSTS: u64 = 1 << 30;

/// Why a query's input is refused (besides a point off the map).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    #[error(transparent)]
    OffMap(#[from] OffMap),
    /// A spacing or step that is not a positive finite number.
    #[error("{what} {value} must be a positive number of metres")]
    BadStep { what: &'static str, value: f32 },
    /// A box with more posts than [`MAX_RANGE_POSTS`].
    #[error("the box has {posts} posts at this spacing (at most {MAX_RANGE_POSTS}); use a larger spacing")]
    TooManyPosts { posts: u64 },
    /// A 3-D point whose height is not a finite number.
    #[error("the height {y} of a line-of-sight end is not a finite number")]
    NotFinite { y: f32 },
}

/// The lowest and highest ground of a box, and where they are.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeightRange {
    pub min: f32,
    pub max: f32,
    /// (x, z) of a post with the lowest ground.
    pub min_at: (f32, f32),
    /// (x, z) of a post with the highest ground.
    pub max_at: (f32, f32),
}

fn check_step(what: &'static str, value: f32) -> Result<(), QueryError> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(QueryError::BadStep { what, value })
    }
}

impl HeightEvaluator {
    /// The ground's unit normal at (x, z) (x east, y up, z north): central differences of the
    /// exact heights [`NORMAL_STEP`] m either side (beyond the map's edge, the heights the
    /// rules give there, as a bake's edge normals).
    pub fn normal_at(&self, x: f32, z: f32) -> Result<[f32; 3], OffMap> {
        if !self.on_map(x, z) {
            return Err(OffMap::Point { x, z, half: self.half_width() });
        }
        let d = NORMAL_STEP;
        // One culled layer list for the four samples (culling is exact: each height equals
        // `height_anywhere` bit for bit).
        let tile = self.layers_for([x - d, z - d, x + d, z + d]);
        let h = |x: f32, z: f32| height_at_point(&self.plan, &tile, x, z);
        Ok(central_normal(h(x + d, z) - h(x - d, z), h(x, z + d) - h(x, z - d), d))
    }

    /// The ground's slope at (x, z) in degrees (0 flat, 90 vertical), from the normal of
    /// [`HeightEvaluator::normal_at`].
    pub fn slope_at(&self, x: f32, z: f32) -> Result<f32, OffMap> {
        Ok(slope_of_normal(self.normal_at(x, z)?))
    }

    /// [`HeightEvaluator::slope_at`] at many points in parallel into `out` (same length);
    /// NaN for a point off the map. Returns how many points are off the map.
    pub fn slopes_at_into(&self, points: &[(f32, f32)], out: &mut [f32]) -> usize {
        assert_eq!(out.len(), points.len());
        out.par_iter_mut()
            .zip(points.par_iter())
            .with_min_len(256)
            .map(|(s, &(x, z))| match self.slope_at(x, z) {
                Ok(v) => {
                    *s = v;
                    0
                }
                Err(_) => {
                    *s = f32::NAN;
                    1
                }
            })
            .sum()
    }

    /// [`HeightEvaluator::line_of_sight`] of many segments `[ax, ay, az, bx, by, bz]` in
    /// parallel into `out` (same length): 1 clear, 0 blocked, −1 refused (an end off the map,
    /// a height not finite). Returns how many were refused; a bad `step` refuses them all.
    pub fn lines_of_sight_into(&self, segments: &[[f32; 6]], step: f32, out: &mut [i8]) -> Result<usize, QueryError> {
        assert_eq!(out.len(), segments.len());
        check_step("step", step)?;
        Ok(out
            .par_iter_mut()
            .zip(segments.par_iter())
            .with_min_len(16)
            .map(|(o, s)| match self.line_of_sight([s[0], s[1], s[2]], [s[3], s[4], s[5]], step) {
                Ok(v) => {
                    *o = i8::from(v);
                    0
                }
                Err(_) => {
                    *o = -1;
                    1
                }
            })
            .sum())
    }

    /// The lowest and highest ground over the box [x0, x1] × [z0, z1], exact at its posts:
    /// (x0 + i·spacing, z0 + j·spacing) and the box's east and north edges (x1, z1), so the
    /// four corners are always among them. Between posts the ground may reach a little beyond
    /// (by about its slope × spacing / 2). The box must lie on the map.
    pub fn height_range(&self, x0: f32, z0: f32, x1: f32, z1: f32, spacing: f32) -> Result<HeightRange, QueryError> {
        check_step("spacing", spacing)?;
        let (west, east) = (x0.min(x1), x0.max(x1));
        let (south, north) = (z0.min(z1), z0.max(z1));
        for (x, z) in [(west, south), (east, north)] {
            self.try_height_at(x, z)?;
        }
        let s = f64::from(spacing);
        let cols = ((f64::from(east) - f64::from(west)) / s).floor() as u64 + 1;
        let rows = ((f64::from(north) - f64::from(south)) / s).floor() as u64 + 1;
        let posts = (cols + 1) * (rows + 1);
        if posts > MAX_RANGE_POSTS {
            return Err(QueryError::TooManyPosts { posts });
        }
        let grid = Grid { cols: cols as u32, rows: rows as u32, x0: f64::from(west), z0: f64::from(south), spacing: s };
        // The regular posts, in parallel bands of rows (memory: one band per thread).
        let band = 64u32;
        let nbands = grid.rows.div_ceil(band);
        let fold = |a: HeightRange, b: HeightRange| HeightRange {
            min: a.min.min(b.min),
            max: a.max.max(b.max),
            min_at: if b.min < a.min { b.min_at } else { a.min_at },
            max_at: if b.max > a.max { b.max_at } else { a.max_at },
        };
        let empty = HeightRange { min: f32::INFINITY, max: f32::NEG_INFINITY, min_at: (west, south), max_at: (west, south) };
        let mut r = (0..nbands)
            .into_par_iter()
            .map(|b| {
                let r0 = b * band;
                let nrows = band.min(grid.rows - r0);
                let mut buf = vec![0.0f32; grid.cols as usize * nrows as usize];
                let mut acc = empty;
                let block = crate::eval::CPU_CULL_BLOCK;
                for c0 in (0..grid.cols).step_by(block as usize) {
                    let ncols = block.min(grid.cols - c0);
                    let part = &mut buf[..ncols as usize * nrows as usize];
                    self.grid_block(&grid, c0, r0, ncols, nrows, part);
                    for (k, &h) in part.iter().enumerate() {
                        let at = grid.post(c0 + (k % ncols as usize) as u32, r0 + (k / ncols as usize) as u32);
                        acc = fold(acc, HeightRange { min: h, max: h, min_at: at, max_at: at });
                    }
                }
                acc
            })
            .reduce(|| empty, fold);
        // The east and north edges where the posts fall short of them.
        let (last_x, last_z) = grid.post(grid.cols - 1, grid.rows - 1);
        let mut edge: Vec<(f32, f32)> = Vec::new();
        if last_x < east {
            edge.extend((0..grid.rows).map(|j| (east, grid.post(0, j).1)));
        }
        if last_z < north {
            edge.extend((0..grid.cols).map(|i| (grid.post(i, 0).0, north)));
        }
        if last_x < east || last_z < north {
            edge.push((east, north));
        }
        for (at, h) in edge.iter().zip(self.heights_at(&edge)) {
            r = fold(r, HeightRange { min: h, max: h, min_at: *at, max_at: *at });
        }
        Ok(r)
    }

    /// Whether the segment from `a` to `b` (x, y, z; y up) clears the terrain: false as soon as
    /// the ground is above the segment at a sample.
    ///
    /// **Sampling.** The ground is evaluated at both ends and at `n − 1` evenly spaced points
    /// between, `n = ceil(horizontal length / step)`, so no two samples are more than `step`
    /// metres apart (horizontally). A blocking ridge narrower than `step` can fall between
    /// samples; where the segment clears the ground by more than (ground slope − segment slope)
    /// × `step` / 2 at every sample, no ridge between them can reach it, so a `true` is exact
    /// there. A vertical segment (a = b in x and z) is checked at that one point. Both ends must
    /// be on the map.
    pub fn line_of_sight(&self, a: [f32; 3], b: [f32; 3], step: f32) -> Result<bool, QueryError> {
        check_step("step", step)?;
        for y in [a[1], b[1]] {
            if !y.is_finite() {
                return Err(QueryError::NotFinite { y });
            }
        }
        self.try_height_at(a[0], a[2])?;
        self.try_height_at(b[0], b[2])?;
        let len = ((b[0] - a[0]).powi(2) + (b[2] - a[2]).powi(2)).sqrt();
        let n = (len / step).ceil().max(1.0) as u32;
        // One culled layer list over the segment's box (exact, as in `normal_at`).
        let tile = self.layers_for([a[0].min(b[0]), a[2].min(b[2]), a[0].max(b[0]), a[2].max(b[2])]);
        for k in 0..=n {
            let t = k as f32 / n as f32;
            let (x, y, z) = (a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]), a[2] + t * (b[2] - a[2]));
            // Between two on-map ends every sample is on the map (the map is a square).
            if height_at_point(&self.plan, &tile, x, z) > y {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::json::demo_terrain;
    use crate::plan::HeightOptions;

    fn demo() -> HeightEvaluator {
        HeightEvaluator::new(&demo_terrain(), &HeightOptions::default()).unwrap()
    }

    #[test]
    fn normals_are_unit_and_slopes_follow_the_height_differences() {
        let e = demo();
        for &(x, z) in &[(0.0, 0.0), (100.0, -250.0), (-731.5, 402.25)] {
            let n = e.normal_at(x, z).unwrap();
            assert!(((n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt() - 1.0).abs() < 1e-5);
            let d = NORMAL_STEP;
            let gx = (e.height_at(x + d, z) - e.height_at(x - d, z)) / (2.0 * d);
            let gz = (e.height_at(x, z + d) - e.height_at(x, z - d)) / (2.0 * d);
            let slope = (gx * gx + gz * gz).sqrt().atan().to_degrees();
            assert!((e.slope_at(x, z).unwrap() - slope).abs() < 1e-3, "{x},{z}");
            let dx = e.height_anywhere(x + d, z) - e.height_anywhere(x - d, z);
            let dz = e.height_anywhere(x, z + d) - e.height_anywhere(x, z - d);
            let m = [-dx, 2.0 * d, -dz];
            let len = (m[0] * m[0] + m[1] * m[1] + m[2] * m[2]).sqrt();
            assert_eq!(n, [m[0] / len, m[1] / len, m[2] / len], "one culled list gives the same heights");
        }
        let h = e.half_width();
        assert!(matches!(e.slope_at(h + 1.0, 0.0), Err(OffMap::Point { .. })));
        assert!(e.normal_at(f32::NAN, 0.0).is_err());
    }

    #[test]
    fn height_range_is_the_min_and_max_of_its_posts_and_edges() {
        let e = demo();
        let r = e.height_range(-100.0, -50.0, 37.0, 21.5, 4.0).unwrap();
        let mut pts = Vec::new();
        let mut x = -100.0f32;
        while x <= 37.0 {
            let mut z = -50.0f32;
            while z <= 21.5 {
                pts.push((x, z));
                z += 4.0;
            }
            pts.push((x, 21.5));
            x += 4.0;
        }
        for z in [-50.0f32, 21.5] {
            pts.push((37.0, z));
        }
        let hs = e.heights_at(&pts);
        let min = hs.iter().copied().fold(f32::INFINITY, f32::min);
        let max = hs.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        assert!(r.min <= min + 1e-4 && r.max >= max - 1e-4, "{r:?} vs {min} {max}");
        assert_eq!(e.height_at(r.min_at.0, r.min_at.1), r.min);
        assert_eq!(e.height_at(r.max_at.0, r.max_at.1), r.max);
        let h = e.half_width();
        assert!(matches!(e.height_range(0.0, 0.0, h + 10.0, 10.0, 1.0), Err(QueryError::OffMap(_))));
        assert!(matches!(e.height_range(0.0, 0.0, 10.0, 10.0, 0.0), Err(QueryError::BadStep { .. })));
    }

    #[test]
    fn line_of_sight_is_blocked_below_ground_and_clear_above() {
        let e = demo();
        let (a, b) = ((-300.0f32, -200.0f32), (250.0f32, 180.0f32));
        let top = e.height_range(-300.0, -200.0, 250.0, 180.0, 2.0).unwrap().max;
        assert!(e.line_of_sight([a.0, top + 5.0, a.1], [b.0, top + 5.0, b.1], LOS_STEP).unwrap());
        let ha = e.height_at(a.0, a.1);
        assert!(!e.line_of_sight([a.0, ha - 1.0, a.1], [b.0, top + 5.0, b.1], LOS_STEP).unwrap(), "starts underground");
        assert!(e.line_of_sight([a.0, ha + 1.0, a.1], [a.0, ha + 3.0, a.1], LOS_STEP).unwrap(), "vertical");
        assert!(matches!(e.line_of_sight([1e9, 0.0, 0.0], [0.0, 0.0, 0.0], 1.0), Err(QueryError::OffMap(_))));
        assert!(matches!(e.line_of_sight([0.0, f32::NAN, 0.0], [1.0, 0.0, 0.0], 1.0), Err(QueryError::NotFinite { .. })));
    }
}
