//! The post grid and its tiles: game-neutral, below the bake driver, the evaluators and the GPU
//! passes, which all split a grid the same way (design.md "Tiles in post coordinates").

/// A post grid: `cols × rows` posts, post (0, 0) at world (x0, z0) (the south-west corner),
/// `spacing` metres apart; x east, z north, row 0 = south. The one grid of the workspace: the
/// evaluators, the GPU passes and the raster readers and writers all place posts with it.
/// Serialized (manifests, sidecars) with the origin named `west_x`, `south_z`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Grid {
    pub cols: u32,
    pub rows: u32,
    #[serde(rename = "west_x")]
    pub x0: f64,
    #[serde(rename = "south_z")]
    pub z0: f64,
    pub spacing: f64,
}

/// A grid that cannot hold heights: no posts, a spacing that is not finite and positive, an
/// origin that is not finite, or a value count that does not match.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct GridError(pub String);

impl From<GridError> for std::io::Error {
    fn from(e: GridError) -> Self {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, e.0)
    }
}

impl Grid {
    /// World position of post (col, row), from global integer indices, so a post has the
    /// same coordinates whichever tile computes it. f32 arithmetic in the same order as the
    /// kernel (`params.x0 + f32(col) * params.spacing`), so CPU and GPU agree exactly.
    #[inline]
    pub fn post(&self, col: u32, row: u32) -> (f32, f32) {
        (self.x0 as f32 + col as f32 * self.spacing as f32, self.z0 as f32 + row as f32 * self.spacing as f32)
    }

    /// The world-space box of posts [c0, c1] × [r0, r1] (inclusive).
    pub fn area(&self, c0: u32, r0: u32, c1: u32, r1: u32) -> [f32; 4] {
        let (ax, az) = self.post(c0, r0);
        let (bx, bz) = self.post(c1, r1);
        [ax, az, bx, bz]
    }

    /// World z of the northernmost row of posts.
    pub fn north_z(&self) -> f64 {
        self.z0 + f64::from(self.rows.saturating_sub(1)) * self.spacing
    }

    /// World x of the easternmost column of posts.
    pub fn east_x(&self) -> f64 {
        self.x0 + f64::from(self.cols.saturating_sub(1)) * self.spacing
    }

    /// Number of posts (`cols · rows`).
    pub fn len(&self) -> usize {
        self.cols as usize * self.rows as usize
    }

    /// True when the grid has no posts.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Checks that the grid is usable and that `heights` holds exactly one value per post.
    pub fn check(&self, heights: &[f32]) -> Result<(), GridError> {
        self.check_dims()?;
        let n = (self.cols as u64).checked_mul(self.rows as u64);
        if n != Some(heights.len() as u64) {
            return Err(GridError(format!(
                "heights has {} values, grid {}x{} needs {}",
                heights.len(),
                self.cols,
                self.rows,
                self.cols as u64 * self.rows as u64
            )));
        }
        Ok(())
    }

    /// Checks that the grid is usable: posts on both axes, finite positive spacing, finite origin.
    pub fn check_dims(&self) -> Result<(), GridError> {
        if self.cols == 0 || self.rows == 0 {
            return Err(GridError(format!("empty grid {}x{}", self.cols, self.rows)));
        }
        if !(self.spacing.is_finite() && self.spacing > 0.0) {
            return Err(GridError(format!("grid spacing must be finite and > 0, got {}", self.spacing)));
        }
        if !(self.x0.is_finite() && self.z0.is_finite()) {
            return Err(GridError("grid origin must be finite".into()));
        }
        Ok(())
    }
}

/// Posts from `a` to `b` (inclusive) at `spacing`: the first on `a`, the last at or before `b`
/// (a tolerance of 1e-9 posts keeps `b` itself when rounding falls just short). How a bake,
/// and every binding, places a region's posts.
pub fn post_count(a: f64, b: f64, spacing: f64) -> Result<u32, GridError> {
    if !(spacing > 0.0 && spacing.is_finite()) {
        return Err(GridError(format!("spacing {spacing} must be a positive number of metres")));
    }
    if !(a.is_finite() && b.is_finite()) {
        return Err(GridError(format!("region bounds must be finite, got {a} and {b}")));
    }
    if !(b >= a) {
        return Err(GridError(format!("region is empty: {b} < {a}")));
    }
    let n = ((b - a) / spacing + 1e-9).floor() + 1.0;
    if n > 1_048_577.0 {
        return Err(GridError(format!("{n} posts on a side is more than trnbake bakes (1,048,577)")));
    }
    Ok(n as u32)
}

/// A rectangle of posts of a grid: [c0, c0+cols) × [r0, r0+rows).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TileSpec {
    pub c0: u32,
    pub r0: u32,
    pub cols: u32,
    pub rows: u32,
}

/// The tiles of a grid, `tile` posts a side from its south-west post, row-major from the
/// south-west; the last column and row of tiles are ragged.
pub fn tiles(grid: &Grid, tile: u32) -> Vec<TileSpec> {
    let mut v = Vec::new();
    for r0 in (0..grid.rows).step_by(tile as usize) {
        for c0 in (0..grid.cols).step_by(tile as usize) {
            v.push(TileSpec { c0, r0, cols: tile.min(grid.cols - c0), rows: tile.min(grid.rows - r0) });
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn post_count_matches_the_cli() {
        assert_eq!(post_count(-1024.0, 1022.0, 2.0), Ok(1024u32));
        assert_eq!(post_count(0.0, 2048.0, 4.0), Ok(513));
        assert_eq!(post_count(0.0, 10.0, 3.0), Ok(4)); // the last post at 9, before the bound
        assert_eq!(post_count(5.0, 5.0, 1.0), Ok(1));
        assert!(post_count(1.0, 0.0, 1.0).is_err());
        assert!(post_count(0.0, 1.0, 0.0).is_err());
        assert!(post_count(0.0, f64::NAN, 1.0).is_err());
    }

    #[test]
    fn tiles_cover_every_post_once() {
        let grid = Grid { x0: 0.0, z0: 0.0, spacing: 1.0, cols: 1001, rows: 515 };
        let ts = tiles(&grid, 256);
        assert_eq!(ts.len(), 4 * 3);
        let mut seen = vec![0u8; 1001 * 515];
        for t in &ts {
            for r in t.r0..t.r0 + t.rows {
                for c in t.c0..t.c0 + t.cols {
                    seen[r as usize * 1001 + c as usize] += 1;
                }
            }
        }
        assert!(seen.iter().all(|&n| n == 1));
        assert_eq!(ts.last().unwrap(), &TileSpec { c0: 768, r0: 512, cols: 233, rows: 3 });
    }
}
