//! Writing while computing: a bake computes its tiles a tile row at a time from the north
//! edge down (a tile row: the tiles sharing their first grid row), and the Float32 outputs,
//! whose encoding needs no height range, are written by a writer thread that reads each tile
//! row from the checkpoints as soon as it is finished. The surface stage keeps the same books
//! for its bands (full-width rows of posts, `surface_maps`), each band one "tile" of a row.
//! The writers (north row first, like every format trnbake
//! writes) wait in [`HeightSource::wait_rows`] until the rows they are about to encode exist,
//! so at most the encoder's few strips run behind the compute and a bake costs about
//! max(compute, write) instead of their sum wherever cores are free.

use std::io;
use std::sync::{Condvar, Mutex};

use trnbake_raster::HeightSource;
use trnbake_swg::grid::{Grid, TileSpec};

use crate::store::CheckpointSource;

/// Which tiles are done, per tile row, and how many rows are readable from the north edge; also
/// the finite height range of the finished tiles. Shared by the compute and the writers.
pub struct RowProgress {
    state: Mutex<RowState>,
    changed: Condvar,
}

struct RowState {
    /// Per tile row from the north: tiles still to compute, and its rows of posts.
    remaining: Vec<u32>,
    row_heights: Vec<u32>,
    /// Tile rows (from the north) whose every tile is done, and the rows of posts they hold.
    tile_rows_ready: usize,
    rows_ready: u32,
    /// The compute stopped with an error: waiting writers give up.
    failed: bool,
    min: f32,
    max: f32,
}

impl RowProgress {
    /// A bake of `grid` in `tile`² tiles of which `todo` remain to be computed (the others
    /// are resumed checkpoints, done from the start).
    pub fn new(grid: &Grid, tile: u32, todo: &[TileSpec]) -> Self {
        let tile_rows = grid.rows.div_ceil(tile) as usize;
        let mut remaining = vec![0u32; tile_rows];
        let mut row_heights = vec![0u32; tile_rows];
        for (b, rows) in row_heights.iter_mut().enumerate() {
            let r0 = (tile_rows - 1 - b) as u32 * tile;
            *rows = tile.min(grid.rows - r0);
        }
        for t in todo {
            remaining[tile_row_of(grid, tile, t)] += 1;
        }
        let mut state = RowState { remaining, row_heights, tile_rows_ready: 0, rows_ready: 0, failed: false, min: f32::INFINITY, max: f32::NEG_INFINITY };
        state.advance();
        Self { state: Mutex::new(state), changed: Condvar::new() }
    }

    /// Tile `t` is checkpointed, with the finite height range `range` of its posts (if any).
    pub fn tile_done(&self, grid: &Grid, tile: u32, t: &TileSpec, range: Option<(f32, f32)>) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let b = tile_row_of(grid, tile, t);
        s.remaining[b] = s.remaining[b].saturating_sub(1);
        s.include(range);
        if s.advance() {
            self.changed.notify_all();
        }
    }

    /// Fold in the range of a resumed tile.
    pub fn include(&self, range: Option<(f32, f32)>) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).include(range);
    }

    /// The compute failed: wake every waiting writer with an error.
    pub fn fail(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).failed = true;
        self.changed.notify_all();
    }

    /// The finite height range of every tile reported so far.
    pub fn range(&self) -> Option<(f32, f32)> {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        (s.min <= s.max).then_some((s.min, s.max))
    }

    /// Block until the `rows` northmost rows are readable (or the compute failed).
    pub(crate) fn wait_north_rows(&self, rows: u32) -> io::Result<()> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while s.rows_ready < rows {
            if s.failed {
                return Err(io::Error::other("the bake stopped before these rows were computed"));
            }
            s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        Ok(())
    }
}

impl RowState {
    /// Move the ready line south past every finished tile row; true if it moved.
    fn advance(&mut self) -> bool {
        let before = self.tile_rows_ready;
        while self.tile_rows_ready < self.remaining.len() && self.remaining[self.tile_rows_ready] == 0 {
            self.rows_ready += self.row_heights[self.tile_rows_ready];
            self.tile_rows_ready += 1;
        }
        self.tile_rows_ready != before
    }

    fn include(&mut self, range: Option<(f32, f32)>) {
        if let Some((lo, hi)) = range {
            self.min = self.min.min(lo);
            self.max = self.max.max(hi);
        }
    }
}

/// The tile row of tile `t`, counted from the north.
fn tile_row_of(grid: &Grid, tile: u32, t: &TileSpec) -> usize {
    let tile_rows = grid.rows.div_ceil(tile) as usize;
    tile_rows - 1 - (t.r0 / tile) as usize
}

/// The order a streamed bake computes tiles in: tile rows from the north, west to east inside a
/// tile row (the order the writers read them).
pub fn north_first(tiles: &mut [TileSpec]) {
    tiles.sort_by_key(|t| (std::cmp::Reverse(t.r0), t.c0));
}

/// The tile checkpoints of a bake still computing, as a [`HeightSource`] whose rows become
/// readable as [`RowProgress`] reports their tile rows done.
pub struct StreamedCheckpoints<'a> {
    pub files: CheckpointSource,
    pub progress: &'a RowProgress,
}

impl HeightSource for StreamedCheckpoints<'_> {
    fn grid(&self) -> Grid {
        self.files.grid()
    }

    fn read_block(&self, c0: u32, r0: u32, cols: u32, rows: u32, out: &mut [f32]) -> io::Result<()> {
        self.files.read_block(c0, r0, cols, rows, out)
    }

    fn wait_rows(&self, r0: u32, _rows: u32) -> io::Result<()> {
        // Rows r0.. up to the north edge must all be ready: grid.rows − r0 rows from the north.
        self.progress.wait_north_rows(self.grid().rows.saturating_sub(r0))
    }

    fn may_block(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_become_ready_from_the_north_as_whole_tile_rows_finish() {
        let grid = Grid { x0: 0.0, z0: 0.0, spacing: 1.0, cols: 10, rows: 25 };
        let mut todo = trnbake_swg::grid::tiles(&grid, 10); // tile rows of 10, 10 and 5 posts (north)
        north_first(&mut todo);
        assert_eq!(todo[0].r0, 20);
        let p = RowProgress::new(&grid, 10, &todo);
        let ready = |p: &RowProgress| p.state.lock().unwrap().rows_ready;
        assert_eq!(ready(&p), 0);
        // The middle tile row first: nothing readable until the north one is done too.
        p.tile_done(&grid, 10, &todo[1], Some((1.0, 2.0)));
        assert_eq!(ready(&p), 0);
        p.tile_done(&grid, 10, &todo[0], Some((-3.0, 0.5)));
        assert_eq!(ready(&p), 15);
        p.tile_done(&grid, 10, &todo[2], None);
        assert_eq!(ready(&p), 25);
        assert_eq!(p.range(), Some((-3.0, 2.0)));
        p.wait_north_rows(25).unwrap();
    }

    #[test]
    fn resumed_tiles_are_ready_and_a_failure_releases_waiters() {
        let grid = Grid { x0: 0.0, z0: 0.0, spacing: 1.0, cols: 10, rows: 20 };
        let all = trnbake_swg::grid::tiles(&grid, 10);
        // Only the southern tile row is left to compute: the northern one is readable at once.
        let todo: Vec<TileSpec> = all.iter().copied().filter(|t| t.r0 == 0).collect();
        let p = RowProgress::new(&grid, 10, &todo);
        p.wait_north_rows(10).unwrap();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| p.wait_north_rows(20));
            std::thread::sleep(std::time::Duration::from_millis(20));
            p.fail();
            assert!(waiter.join().unwrap().is_err());
        });
    }
}
