//! The post grid and its tiles: game-neutral, below the bake driver, the evaluators and the GPU
//! passes, which all split a grid the same way (design.md "Tiles in post coordinates").

/// A post grid: `cols × rows` posts starting at (x0, z0), `spacing` apart, row 0 = south.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grid {
    pub x0: f64,
    pub z0: f64,
    pub spacing: f64,
    pub cols: u32,
    pub rows: u32,
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
