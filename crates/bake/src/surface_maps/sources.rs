//! The band checkpoints as the writers read them: a plane as height samples or image rows, the
//! preview's rows (its height tint made here), a splat PNG's families, one flora family.

use super::*;

/// One plane of the band checkpoints as samples (f32 planes, code bytes) for the GeoTIFF and
/// 16-bit PNG writers; `wait`: rows are read as bands finish.
pub(super) struct PlaneSource<'a> {
    pub(super) set: &'a BandSet,
    pub(super) plane: Plane,
    pub(super) wait: bool,
}

impl HeightSource for PlaneSource<'_> {
    fn grid(&self) -> Grid {
        self.set.grid
    }

    fn read_block(&self, c0: u32, r0: u32, cols: u32, rows: u32, out: &mut [f32]) -> io::Result<()> {
        trnbake_raster::source::check_block(&self.set.grid, c0, r0, cols, rows, out)?;
        let w = self.set.grid.cols as usize;
        // f32 planes, or code bytes (the spawnable map) as their values.
        let size = self.plane.bytes();
        let mut bytes = vec![0u8; w * rows as usize * size];
        self.set.read_plane(self.plane, r0, rows, &mut bytes)?;
        for (r, row) in out.chunks_exact_mut(cols.max(1) as usize).enumerate() {
            let src = &bytes[(r * w + c0 as usize) * size..];
            for (v, b) in row.iter_mut().zip(src.chunks_exact(size)) {
                *v = match *b {
                    [b0, b1, b2, b3] => f32::from_le_bytes([b0, b1, b2, b3]),
                    [code] => f32::from(code),
                    _ => unreachable!("planes are 1 or 4 bytes a post as GeoTIFFs"),
                };
            }
        }
        Ok(())
    }

    fn wait_rows(&self, r0: u32, _rows: u32) -> io::Result<()> {
        // Rows r0.. up to the north edge must all be finished.
        if self.wait {
            self.set.wait_north_rows(self.set.grid.rows.saturating_sub(r0))?;
        }
        Ok(())
    }

    fn may_block(&self) -> bool {
        self.wait
    }
}

/// A byte plane of the band checkpoints as image rows (north first) for the 8-bit PNG writer.
pub(super) struct PlaneRows<'a> {
    pub(super) set: &'a BandSet,
    pub(super) plane: Plane,
    pub(super) channels: u32,
    pub(super) wait: bool,
}

impl ByteRows for PlaneRows<'_> {
    fn width(&self) -> u32 {
        self.set.grid.cols
    }
    fn height(&self) -> u32 {
        self.set.grid.rows
    }
    fn channels(&self) -> u32 {
        self.channels
    }
    fn read_rows(&self, rows: std::ops::Range<u32>, out: &mut [u8]) -> io::Result<()> {
        self.set.read_plane_north(self.plane, rows, out)
    }
    fn wait_rows(&self, bottom: u32) -> io::Result<()> {
        if self.wait {
            self.set.wait_north_rows(bottom)?;
        }
        Ok(())
    }
}

/// `preview.png`'s RGB rows: the colours the bands made, and the height tint of the others
/// ([`preview_tint`]) from the height tiles and the grid's height range.
pub(super) struct PreviewRows<'a> {
    pub(super) set: &'a BandSet,
    pub(super) heights: &'a CheckpointSource,
    pub(super) range: (f32, f32),
}

impl ByteRows for PreviewRows<'_> {
    fn width(&self) -> u32 {
        self.set.grid.cols
    }
    fn height(&self) -> u32 {
        self.set.grid.rows
    }
    fn channels(&self) -> u32 {
        3
    }
    fn read_rows(&self, rows: std::ops::Range<u32>, out: &mut [u8]) -> io::Result<()> {
        let (cols, n) = (self.set.grid.cols as usize, rows.len());
        self.set.read_plane_north(Plane::Preview, rows.clone(), out)?;
        let mut shades = vec![0u8; cols * n * 4];
        self.set.read_plane_north(Plane::PreviewShade, rows.clone(), &mut shades)?;
        // The same rows south first (grid rows), as the height tiles hold them.
        let mut heights = vec![0.0f32; cols * n];
        self.heights.read_block(0, self.set.grid.rows - rows.end, cols as u32, n as u32, &mut heights)?;
        for (i, (px, shade)) in out.chunks_exact_mut(3).zip(shades.chunks_exact(4)).enumerate() {
            let shade = f32::from_le_bytes([shade[0], shade[1], shade[2], shade[3]]);
            if shade != PREVIEW_COLOURED {
                let (row, col) = (i / cols, i % cols);
                px.copy_from_slice(&preview_tint(heights[(n - 1 - row) * cols + col], self.range, shade));
            }
        }
        Ok(())
    }
    fn wait_rows(&self, bottom: u32) -> io::Result<()> {
        self.set.wait_north_rows(bottom)
    }
}

/// One `splat_k.png`: RGBA rows of up to four families' splat bytes.
pub(super) struct SplatRows<'a> {
    pub(super) set: &'a BandSet,
    pub(super) channels: [Option<i32>; 4],
}

impl ByteRows for SplatRows<'_> {
    fn width(&self) -> u32 {
        self.set.grid.cols
    }
    fn height(&self) -> u32 {
        self.set.grid.rows
    }
    fn channels(&self) -> u32 {
        4
    }
    fn read_rows(&self, rows: std::ops::Range<u32>, out: &mut [u8]) -> io::Result<()> {
        out.fill(0);
        let mut bytes = vec![0u8; out.len() / 4];
        for (ch, family) in self.channels.iter().enumerate() {
            if let Some(f) = family {
                self.set.read_splat_north(*f, rows.clone(), &mut bytes)?;
                for (px, &b) in out.chunks_exact_mut(4).zip(&bytes) {
                    px[ch] = b;
                }
            }
        }
        Ok(())
    }
}

/// One flora family's probability per post, from the band checkpoints' probabilities.
pub(super) struct FamilySource<'a> {
    pub(super) set: &'a BandSet,
    /// Each band (first row, rows) and its meta.
    pub(super) metas: &'a [((u32, u32), BandMeta)],
    pub(super) class: usize,
    pub(super) family: i32,
    /// The last band decoded: its first row and the family's probability per post.
    pub(super) cache: std::sync::Mutex<Option<(u32, std::sync::Arc<Vec<f32>>)>>,
}

impl FamilySource<'_> {
    pub(super) fn band(&self, r0: u32, rows: u32, meta: &BandMeta) -> io::Result<std::sync::Arc<Vec<f32>>> {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((at, values)) = &*cache {
            if *at == r0 {
                return Ok(values.clone());
            }
        }
        let (counts, entries) = self.set.read_probabilities(r0, rows, self.class, meta)?;
        let mut values = Vec::with_capacity(counts.len());
        let mut at = 0usize;
        for c in counts {
            let post = &entries[at..at + usize::from(c)];
            values.push(post.iter().find(|e| e.0 == self.family).map_or(0.0, |e| e.1));
            at += usize::from(c);
        }
        let values = std::sync::Arc::new(values);
        *cache = Some((r0, values.clone()));
        Ok(values)
    }
}

impl HeightSource for FamilySource<'_> {
    fn grid(&self) -> Grid {
        self.set.grid
    }

    fn read_block(&self, c0: u32, r0: u32, cols: u32, rows: u32, out: &mut [f32]) -> io::Result<()> {
        trnbake_raster::source::check_block(&self.set.grid, c0, r0, cols, rows, out)?;
        let w = self.set.grid.cols as usize;
        for ((b0, brows), meta) in self.metas {
            let (a, b) = ((*b0).max(r0), (b0 + brows).min(r0 + rows));
            if a >= b {
                continue;
            }
            let values = self.band(*b0, *brows, meta)?;
            for row in a..b {
                let src = &values[(row - b0) as usize * w + c0 as usize..][..cols as usize];
                out[(row - r0) as usize * cols as usize..][..cols as usize].copy_from_slice(src);
            }
        }
        Ok(())
    }
}
