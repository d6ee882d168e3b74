//! Where the writers read heights from: a [`HeightSource`] hands out blocks of posts on
//! demand, so every writer streams in bounded memory whether the grid is a slice in memory, a
//! raw file on disk, the bake's tile checkpoints or a resampled/windowed view of any of these
//! (the "written streaming in bounded memory": a 16385² grid is 1 GiB of f32, and a
//! writer holds only a few strips of it).
//!
//! Convention (as everywhere in `export`): row 0 is the **south** row and blocks come back
//! row-major, south row first; writers flip to their file's row order (spec §0, §1.5).

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::{invalid, Grid};

/// A grid of height posts that can be read block by block, from any thread.
pub trait HeightSource: Sync {
    /// The posts this source holds.
    fn grid(&self) -> Grid;

    /// Posts `c0..c0+cols` of rows `r0..r0+rows` (row 0 = south) into `out` (`cols·rows`
    /// values, row-major, south row first). The block must lie inside the grid.
    fn read_block(&self, c0: u32, r0: u32, cols: u32, rows: u32, out: &mut [f32]) -> io::Result<()>;

    /// Whole rows `r0..r0+rows` (row 0 = south).
    fn read_rows(&self, r0: u32, rows: u32, out: &mut [f32]) -> io::Result<()> {
        self.read_block(0, r0, self.grid().cols, rows, out)
    }

    /// Block until rows `r0..r0+rows` can be read. Sources filled while a bake is still
    /// computing (`bake`'s streamed outputs) wait here; finished sources return at once.
    /// Writers call it from their sequential driver before handing rows to parallel jobs, so
    /// no rayon worker ever blocks on a row the workers themselves have yet to compute.
    fn wait_rows(&self, _r0: u32, _rows: u32) -> io::Result<()> {
        Ok(())
    }

    /// Whether [`HeightSource::wait_rows`] can block (a source a bake is still filling): then
    /// a writer's driver must run on a thread of its own, never on a rayon worker, since the
    /// workers are the ones computing the rows it waits for.
    fn may_block(&self) -> bool {
        false
    }
}

/// Checks a block request against the grid and the output length (shared by every source).
pub fn check_block(g: &Grid, c0: u32, r0: u32, cols: u32, rows: u32, out: &[f32]) -> io::Result<()> {
    let inside = u64::from(c0) + u64::from(cols) <= u64::from(g.cols) && u64::from(r0) + u64::from(rows) <= u64::from(g.rows);
    if !inside || out.len() as u64 != u64::from(cols) * u64::from(rows) {
        return Err(invalid(format!("block {cols}x{rows} at ({c0}, {r0}) with {} values does not fit the {}x{} grid", out.len(), g.cols, g.rows)));
    }
    Ok(())
}

/// Heights held in memory, row-major, either south row first (the evaluator's order) or north
/// row first (what image decoders return; no flipped copy is made).
pub struct MemSource<T: AsRef<[f32]> + Sync> {
    grid: Grid,
    data: T,
    north_first: bool,
}

impl<T: AsRef<[f32]> + Sync> MemSource<T> {
    /// `data` holds `grid.cols · grid.rows` heights, south row first.
    pub fn south_first(grid: Grid, data: T) -> io::Result<Self> {
        grid.check(data.as_ref())?;
        Ok(Self { grid, data, north_first: false })
    }

    /// `data` holds `grid.cols · grid.rows` heights, north row first.
    pub fn north_first(grid: Grid, data: T) -> io::Result<Self> {
        grid.check(data.as_ref())?;
        Ok(Self { grid, data, north_first: true })
    }
}

impl<T: AsRef<[f32]> + Sync> HeightSource for MemSource<T> {
    fn grid(&self) -> Grid {
        self.grid
    }

    fn read_block(&self, c0: u32, r0: u32, cols: u32, rows: u32, out: &mut [f32]) -> io::Result<()> {
        check_block(&self.grid, c0, r0, cols, rows, out)?;
        let data = self.data.as_ref();
        let (w, n) = (self.grid.cols as usize, cols as usize);
        for (k, dst) in out.chunks_exact_mut(n.max(1)).enumerate().take(rows as usize) {
            let r = r0 as usize + k;
            let stored = if self.north_first { self.grid.rows as usize - 1 - r } else { r };
            let start = stored * w + c0 as usize;
            dst.copy_from_slice(&data[start..start + n]);
        }
        Ok(())
    }
}

/// How samples are stored in a raw file (little-endian, no header; spec §4.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RawSample {
    /// IEEE float32 metres (R32).
    F32,
    /// Unsigned 16-bit, `h = raw · scale + offset` (R16/RAW).
    U16 { scale: f64, offset: f64 },
}

impl RawSample {
    pub fn bytes(self) -> usize {
        match self {
            RawSample::F32 => 4,
            RawSample::U16 { .. } => 2,
        }
    }
}

/// A headerless little-endian raster on disk (R16/R32, and the bake's own row files), read
/// with positioned reads so any number of threads can share it.
pub struct RawFileSource {
    path: PathBuf,
    file: File,
    grid: Grid,
    sample: RawSample,
    north_first: bool,
}

impl RawFileSource {
    /// Opens `path` and checks that its size is exactly `cols · rows · sample bytes`.
    pub fn open(path: &Path, grid: Grid, sample: RawSample, north_first: bool) -> io::Result<Self> {
        if grid.cols == 0 || grid.rows == 0 {
            return Err(invalid(format!("{}: empty grid {}x{}", path.display(), grid.cols, grid.rows)));
        }
        let file = File::open(path).map_err(|e| io::Error::new(e.kind(), format!("cannot open {}: {e}", path.display())))?;
        let len = file.metadata()?.len();
        // Checked: `--dims` takes any u32 pair, and 2^31 × 2^31 × 4 bytes wraps to 0 in u64,
        // which an empty file would match.
        let want = u64::from(grid.cols).checked_mul(u64::from(grid.rows)).and_then(|n| n.checked_mul(sample.bytes() as u64));
        let Some(want) = want else {
            return Err(invalid(format!("{}: {}x{} {}-bit samples is more than any file can hold", path.display(), grid.cols, grid.rows, sample.bytes() * 8)));
        };
        if len != want {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: {len} bytes, but {}x{} {}-bit samples need {want} (wrong size, or a truncated file)",
                    path.display(),
                    grid.cols,
                    grid.rows,
                    sample.bytes() * 8
                ),
            ));
        }
        Ok(Self { path: path.to_path_buf(), file, grid, sample, north_first })
    }
}

impl HeightSource for RawFileSource {
    fn grid(&self) -> Grid {
        self.grid
    }

    fn read_block(&self, c0: u32, r0: u32, cols: u32, rows: u32, out: &mut [f32]) -> io::Result<()> {
        check_block(&self.grid, c0, r0, cols, rows, out)?;
        let b = self.sample.bytes();
        let mut buf = vec![0u8; cols as usize * b];
        for (k, dst) in out.chunks_exact_mut(cols.max(1) as usize).enumerate().take(rows as usize) {
            let r = r0 as u64 + k as u64;
            let stored = if self.north_first { u64::from(self.grid.rows) - 1 - r } else { r };
            let pos = (stored * u64::from(self.grid.cols) + u64::from(c0)) * b as u64;
            read_exact_at(&self.file, &mut buf, pos).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", self.path.display())))?;
            match self.sample {
                RawSample::F32 => {
                    for (h, c) in dst.iter_mut().zip(buf.chunks_exact(4)) {
                        *h = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                    }
                }
                RawSample::U16 { scale, offset } => {
                    for (h, c) in dst.iter_mut().zip(buf.chunks_exact(2)) {
                        *h = (f64::from(u16::from_le_bytes([c[0], c[1]])) * scale + offset) as f32;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Positioned read that any thread may issue on a shared `File`.
#[cfg(unix)]
pub fn read_exact_at(file: &File, buf: &mut [u8], pos: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, pos)
}

#[cfg(windows)]
pub fn read_exact_at(file: &File, mut buf: &mut [u8], mut pos: u64) -> io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, pos) {
            Ok(0) => return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "unexpected end of file")),
            Ok(n) => {
                buf = &mut buf[n..];
                pos += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A rectangular window of another source (one tile of a tiled export).
pub struct Window<'a> {
    inner: &'a dyn HeightSource,
    c0: u32,
    r0: u32,
    grid: Grid,
}

impl<'a> Window<'a> {
    /// Posts `c0..c0+cols` × `r0..r0+rows` (row 0 = south) of `inner`.
    pub fn new(inner: &'a dyn HeightSource, c0: u32, r0: u32, cols: u32, rows: u32) -> io::Result<Self> {
        let g = inner.grid();
        if cols == 0 || rows == 0 || u64::from(c0) + u64::from(cols) > u64::from(g.cols) || u64::from(r0) + u64::from(rows) > u64::from(g.rows) {
            return Err(invalid(format!("window {cols}x{rows} at ({c0}, {r0}) is outside the {}x{} grid", g.cols, g.rows)));
        }
        let grid = Grid { cols, rows, x0: g.x0 + f64::from(c0) * g.spacing, z0: g.z0 + f64::from(r0) * g.spacing, spacing: g.spacing };
        Ok(Self { inner, c0, r0, grid })
    }
}

impl HeightSource for Window<'_> {
    fn grid(&self) -> Grid {
        self.grid
    }

    fn read_block(&self, c0: u32, r0: u32, cols: u32, rows: u32, out: &mut [f32]) -> io::Result<()> {
        check_block(&self.grid, c0, r0, cols, rows, out)?;
        self.inner.read_block(self.c0 + c0, self.r0 + r0, cols, rows, out)
    }

    fn wait_rows(&self, r0: u32, rows: u32) -> io::Result<()> {
        self.inner.wait_rows(self.r0 + r0, rows)
    }

    fn may_block(&self) -> bool {
        self.inner.may_block()
    }
}

/// Bilinear resampling of another source onto `cols × rows` posts covering the same extent
/// (corner posts land exactly on corner posts, so the map keeps its size and edges). Used by
/// the engine presets, whose heightmap sizes rarely equal the bake's (spec §4.2: Unreal has no
/// 8193, Unity stops at 4097). Each output row reads the two input rows around it, so memory
/// stays at two input rows whatever the scale factor.
pub struct Resampled<'a> {
    inner: &'a dyn HeightSource,
    grid: Grid,
    /// Input posts per output post, per axis.
    step_x: f64,
    step_z: f64,
}

impl<'a> Resampled<'a> {
    /// Resample `inner` to `cols × rows` posts. The post spacing must stay square: the two axes
    /// must be scaled by the same factor (within 1e-9).
    pub fn new(inner: &'a dyn HeightSource, cols: u32, rows: u32) -> io::Result<Self> {
        let g = inner.grid();
        if cols < 2 || rows < 2 || g.cols < 2 || g.rows < 2 {
            return Err(invalid(format!("cannot resample a {}x{} grid to {cols}x{rows} (2 posts a side at least)", g.cols, g.rows)));
        }
        let step_x = f64::from(g.cols - 1) / f64::from(cols - 1);
        let step_z = f64::from(g.rows - 1) / f64::from(rows - 1);
        if (step_x - step_z).abs() > 1e-9 * step_x {
            return Err(invalid(format!("resampling {}x{} to {cols}x{rows} would make the post spacing differ between x and z", g.cols, g.rows)));
        }
        let grid = Grid { cols, rows, x0: g.x0, z0: g.z0, spacing: g.spacing * step_x };
        Ok(Self { inner, grid, step_x, step_z })
    }
}

/// Lower input index and weight of the upper one for output index `i` (`n_in` ≥ 2 posts).
#[inline]
fn bracket(i: u32, step: f64, n_in: u32) -> (u32, f64) {
    bracket_at(f64::from(i) * step, n_in)
}

/// Lower input post and weight of the upper one at input coordinate `u` (in posts, `n_in` ≥ 2
/// posts): the bilinear rule of [`Resampled`], public so that maps resampled alongside a
/// preset's heightmap (the engine splat maps) put their posts where the heights are.
#[inline]
pub fn bracket_at(u: f64, n_in: u32) -> (u32, f64) {
    let i0 = (u.floor() as u32).min(n_in - 2);
    (i0, (u - f64::from(i0)).clamp(0.0, 1.0))
}

impl HeightSource for Resampled<'_> {
    fn grid(&self) -> Grid {
        self.grid
    }

    fn read_block(&self, c0: u32, r0: u32, cols: u32, rows: u32, out: &mut [f32]) -> io::Result<()> {
        check_block(&self.grid, c0, r0, cols, rows, out)?;
        if cols == 0 || rows == 0 {
            return Ok(());
        }
        let g = self.inner.grid();
        let xs: Vec<(u32, f64)> = (c0..c0 + cols).map(|c| bracket(c, self.step_x, g.cols)).collect();
        let in_c0 = xs[0].0;
        let in_c1 = xs[xs.len() - 1].0 + 1; // inclusive
        let in_cols = in_c1 - in_c0 + 1;
        let mut two = vec![0.0f32; 2 * in_cols as usize];
        for (k, dst) in out.chunks_exact_mut(cols as usize).enumerate() {
            let (j0, fz) = bracket(r0 + k as u32, self.step_z, g.rows);
            self.inner.read_block(in_c0, j0, in_cols, 2, &mut two)?;
            let (south, north) = two.split_at(in_cols as usize);
            for (h, &(i0, fx)) in dst.iter_mut().zip(&xs) {
                let i = (i0 - in_c0) as usize;
                let s = f64::from(south[i]) * (1.0 - fx) + f64::from(south[i + 1]) * fx;
                let n = f64::from(north[i]) * (1.0 - fx) + f64::from(north[i + 1]) * fx;
                *h = (s * (1.0 - fz) + n * fz) as f32;
            }
        }
        Ok(())
    }

    fn wait_rows(&self, _r0: u32, _rows: u32) -> io::Result<()> {
        // Output rows map onto input rows by `bracket`; waiting for all of them is simple and
        // only ever happens for sources that are already complete (no bake streams a preset).
        self.inner.wait_rows(0, self.inner.grid().rows)
    }

    fn may_block(&self) -> bool {
        self.inner.may_block()
    }
}

/// Rows per block so that one block holds about `bytes` of f32 (at least one row).
pub(crate) fn rows_per_block(cols: u32, bytes: usize) -> u32 {
    ((bytes / (cols as usize * 4).max(1)).max(1)).min(u32::MAX as usize) as u32
}

/// Finite minimum and maximum of a source (NaN and ±inf ignored), scanned in parallel
/// blocks of about 1 MiB; `None` when there is no finite height.
pub fn scan_min_max(src: &dyn HeightSource) -> io::Result<Option<(f32, f32)>> {
    let g = src.grid();
    let rpb = rows_per_block(g.cols, 1 << 20);
    let blocks = g.rows.div_ceil(rpb);
    let (lo, hi) = (0..blocks)
        .into_par_iter()
        .map_init(Vec::new, |buf: &mut Vec<f32>, b| -> io::Result<(f32, f32)> {
            let r0 = b * rpb;
            let n = rpb.min(g.rows - r0);
            buf.resize(g.cols as usize * n as usize, 0.0);
            src.read_rows(r0, n, buf)?;
            Ok(buf.iter().filter(|h| h.is_finite()).fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &h| (a.min(h), b.max(h))))
        })
        .try_reduce(|| (f32::INFINITY, f32::NEG_INFINITY), |a, b| Ok((a.0.min(b.0), a.1.max(b.1))))?;
    Ok((lo <= hi).then_some((lo, hi)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(cols: u32, rows: u32) -> Grid {
        Grid { cols, rows, x0: -10.0, z0: -20.0, spacing: 2.0 }
    }

    #[test]
    fn mem_source_orders() {
        let g = grid(3, 2);
        let south_first = [0.0, 1.0, 2.0, 10.0, 11.0, 12.0];
        let north_first = [10.0, 11.0, 12.0, 0.0, 1.0, 2.0];
        let a = MemSource::south_first(g, &south_first[..]).unwrap();
        let b = MemSource::north_first(g, &north_first[..]).unwrap();
        for s in [&a as &dyn HeightSource, &b] {
            let mut out = [0.0; 4];
            s.read_block(1, 0, 2, 2, &mut out).unwrap();
            assert_eq!(out, [1.0, 2.0, 11.0, 12.0]);
            assert!(s.read_block(2, 0, 2, 1, &mut out[..2]).is_err());
        }
        assert_eq!(scan_min_max(&a).unwrap(), Some((0.0, 12.0)));
    }

    #[test]
    fn window_offsets_grid_and_reads() {
        let g = grid(4, 3);
        let h: Vec<f32> = (0..12).map(|i| i as f32).collect();
        let src = MemSource::south_first(g, h).unwrap();
        let w = Window::new(&src, 1, 1, 2, 2).unwrap();
        assert_eq!(w.grid().x0, -8.0);
        assert_eq!(w.grid().z0, -18.0);
        let mut out = [0.0; 4];
        w.read_rows(0, 2, &mut out).unwrap();
        assert_eq!(out, [5.0, 6.0, 9.0, 10.0]);
        assert!(Window::new(&src, 3, 0, 2, 1).is_err());
    }

    #[test]
    fn resample_keeps_corners_and_planes() {
        // A plane h = 3x + 5z is reproduced exactly by bilinear interpolation.
        let g = grid(9, 9);
        let h: Vec<f32> = (0..81).map(|i| (3 * (i % 9) + 5 * (i / 9)) as f32).collect();
        let src = MemSource::south_first(g, h).unwrap();
        let r = Resampled::new(&src, 5, 5).unwrap();
        assert_eq!(r.grid().spacing, 4.0);
        let mut out = vec![0.0; 25];
        r.read_rows(0, 5, &mut out).unwrap();
        for (i, v) in out.iter().enumerate() {
            let (c, row) = ((i % 5) as f32 * 2.0, (i / 5) as f32 * 2.0);
            assert_eq!(*v, 3.0 * c + 5.0 * row);
        }
        // Non-integer factor: 9 → 7 posts; corners are kept, interior interpolated.
        let r = Resampled::new(&src, 7, 7).unwrap();
        let mut out = vec![0.0; 49];
        r.read_rows(0, 7, &mut out).unwrap();
        assert_eq!(out[0], 0.0);
        assert_eq!(out[48], 64.0);
        assert!((out[1] - 3.0 * 8.0 / 6.0).abs() < 1e-5);
        assert!(Resampled::new(&src, 5, 7).is_err());
    }

    #[test]
    fn raw_file_source_checks_size_and_decodes() {
        let dir = std::env::temp_dir().join(format!("trnbake-rawsrc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("a.r16");
        let vals: [u16; 6] = [0, 1, 2, 3, 4, 65535];
        let bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(&p, &bytes).unwrap();
        let s = RawFileSource::open(&p, grid(3, 2), RawSample::U16 { scale: 0.5, offset: 1.0 }, true).unwrap();
        let mut out = [0.0; 6];
        s.read_rows(0, 2, &mut out).unwrap();
        // North row first in the file: the south row is the file's second row.
        assert_eq!(out, [2.5, 3.0, 32768.5, 1.0, 1.5, 2.0]);
        let e = RawFileSource::open(&p, grid(4, 2), RawSample::F32, true).err().unwrap();
        assert!(e.to_string().contains("a.r16"), "{e}");
        // `--dims 2147483648x2147483648` on an empty R32: 2^64 bytes, which wraps to 0 in u64.
        let empty = dir.join("empty.r32");
        std::fs::write(&empty, b"").unwrap();
        for (c, r, s) in [(1u32 << 31, 1u32 << 31, RawSample::F32), (u32::MAX, u32::MAX, RawSample::U16 { scale: 1.0, offset: 0.0 })] {
            let e = RawFileSource::open(&empty, grid(c, r), s, true).err().expect("a size that wraps must not match");
            assert!(e.to_string().contains("empty.r32") && e.to_string().contains("more than any file"), "{e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
