//! The bake's outputs read back row by row, north row first, holding only a band of rows: the
//! exact Float32 heights (`height.r32`, random access), 8- and 16-bit PNGs (sequential decode)
//! and striped UInt16 GeoTIFFs (one strip at a time).

use std::io::BufReader;
use std::path::{Path, PathBuf};

use trnbake_raster::source::{RawFileSource, RawSample};
use trnbake_raster::{Grid, HeightSource};

use crate::{Error, Result};

/// Rows of samples, north row first, read in order (each row once).
pub trait RowReader: Send + Sync {
    /// Samples a post (channels).
    fn channels(&self) -> usize;
    /// Decode the next row into `out` (`cols · channels` values).
    fn next_row(&mut self, out: &mut [f32]) -> Result<()>;
}

/// The heights of a bake's `height.r32` (north row first, as the bake writes RAW).
pub struct RawHeights {
    src: RawFileSource,
    next: u32,
    path: PathBuf,
}

impl RawHeights {
    pub fn open(path: &Path, grid: Grid) -> Result<Self> {
        let src = RawFileSource::open(path, grid, RawSample::F32, true).map_err(|e| Error::io(path, e))?;
        Ok(Self { src, next: 0, path: path.to_owned() })
    }
}

impl RowReader for RawHeights {
    fn channels(&self) -> usize {
        1
    }
    fn next_row(&mut self, out: &mut [f32]) -> Result<()> {
        let g = self.src.grid();
        // The source counts rows from the south.
        let south = g.rows - 1 - self.next;
        self.src.read_block(0, south, g.cols, 1, out).map_err(|e| Error::io(&self.path, e))?;
        self.next += 1;
        Ok(())
    }
}

/// A PNG decoded one row at a time (8-bit or 16-bit grey, grey+alpha, RGB or RGBA; samples
/// as their integer values).
pub struct PngRows {
    reader: png::Reader<BufReader<std::fs::File>>,
    channels: usize,
    sixteen: bool,
    path: PathBuf,
}

impl PngRows {
    pub fn open(path: &Path, cols: u32, rows: u32) -> Result<Self> {
        let f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let reader = png::Decoder::new(BufReader::new(f)).read_info().map_err(|e| Error::format(path, e))?;
        let info = reader.info();
        if (info.width, info.height) != (cols, rows) {
            return Err(Error::Format(format!("{}: {}x{} pixels, the bake's grid is {cols}x{rows}", path.display(), info.width, info.height)));
        }
        if info.interlaced || info.color_type == png::ColorType::Indexed || (info.bit_depth as u8) < 8 {
            return Err(Error::Format(format!("{}: an interlaced, palette or sub-byte PNG (not written by a bake)", path.display())));
        }
        let channels = info.color_type.samples();
        let sixteen = info.bit_depth == png::BitDepth::Sixteen;
        Ok(Self { reader, channels, sixteen, path: path.to_owned() })
    }
}

impl RowReader for PngRows {
    fn channels(&self) -> usize {
        self.channels
    }
    fn next_row(&mut self, out: &mut [f32]) -> Result<()> {
        let row = self.reader.next_row().map_err(|e| Error::format(&self.path, e))?;
        let Some(row) = row else { return Err(Error::Format(format!("{}: fewer rows than its header says", self.path.display()))) };
        let data = row.data();
        if self.sixteen {
            for (o, b) in out.iter_mut().zip(data.chunks_exact(2)) {
                *o = f32::from(u16::from_be_bytes([b[0], b[1]]));
            }
        } else {
            for (o, &b) in out.iter_mut().zip(data) {
                *o = f32::from(b);
            }
        }
        Ok(())
    }
}

/// A striped single-band integer GeoTIFF (the bake's id maps), one strip decoded at a time.
pub struct TiffRows {
    decoder: tiff::decoder::Decoder<BufReader<std::fs::File>>,
    strip_rows: u32,
    strip: Vec<f32>,
    strip_index: Option<u32>,
    next: u32,
    cols: u32,
    path: PathBuf,
}

impl TiffRows {
    pub fn open(path: &Path, cols: u32, rows: u32) -> Result<Self> {
        let f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let mut decoder = tiff::decoder::Decoder::new(BufReader::new(f)).map_err(|e| Error::format(path, e))?;
        let dims = decoder.dimensions().map_err(|e| Error::format(path, e))?;
        if dims != (cols, rows) {
            return Err(Error::Format(format!("{}: {}x{} pixels, the bake's grid is {cols}x{rows}", path.display(), dims.0, dims.1)));
        }
        let (cw, ch) = decoder.chunk_dimensions();
        if cw != cols || ch == 0 {
            return Err(Error::Format(format!("{}: tiled, not striped (the bake writes strips)", path.display())));
        }
        Ok(Self { decoder, strip_rows: ch, strip: Vec::new(), strip_index: None, next: 0, cols, path: path.to_owned() })
    }
}

impl RowReader for TiffRows {
    fn channels(&self) -> usize {
        1
    }
    fn next_row(&mut self, out: &mut [f32]) -> Result<()> {
        use tiff::decoder::DecodingResult;
        let s = self.next / self.strip_rows;
        if self.strip_index != Some(s) {
            let chunk = self.decoder.read_chunk(s).map_err(|e| Error::format(&self.path, e))?;
            self.strip = match chunk {
                DecodingResult::U8(v) => v.into_iter().map(f32::from).collect(),
                DecodingResult::U16(v) => v.into_iter().map(f32::from).collect(),
                _ => return Err(Error::Format(format!("{}: not 8- or 16-bit unsigned ids", self.path.display()))),
            };
            self.strip_index = Some(s);
        }
        let k = ((self.next % self.strip_rows) * self.cols) as usize;
        let row = self.strip.get(k..k + self.cols as usize).ok_or_else(|| Error::Format(format!("{}: a short strip", self.path.display())))?;
        out.copy_from_slice(row);
        self.next += 1;
        Ok(())
    }
}

/// Several readers of the same grid side by side, their channels concatenated (the flora id
/// maps of three classes as one RGB).
pub struct Stacked {
    parts: Vec<Box<dyn RowReader>>,
    buf: Vec<f32>,
    cols: usize,
}

impl Stacked {
    pub fn new(parts: Vec<Box<dyn RowReader>>, cols: u32) -> Self {
        Self { parts, buf: Vec::new(), cols: cols as usize }
    }
}

impl RowReader for Stacked {
    fn channels(&self) -> usize {
        self.parts.iter().map(|p| p.channels()).sum()
    }
    fn next_row(&mut self, out: &mut [f32]) -> Result<()> {
        let total = self.channels();
        let mut at = 0;
        for p in &mut self.parts {
            let ch = p.channels();
            self.buf.resize(self.cols * ch, 0.0);
            p.next_row(&mut self.buf)?;
            for c in 0..self.cols {
                out[c * total + at..c * total + at + ch].copy_from_slice(&self.buf[c * ch..(c + 1) * ch]);
            }
            at += ch;
        }
        Ok(())
    }
}

/// A window of consecutive rows of a reader: rows `first..first + n` (north-first indices),
/// moved only southwards.
pub struct Band {
    reader: Box<dyn RowReader>,
    pub cols: u32,
    pub rows: u32,
    pub channels: usize,
    first: u32,
    data: Vec<f32>,
    read: u32,
}

impl Band {
    pub fn new(reader: Box<dyn RowReader>, cols: u32, rows: u32) -> Self {
        let channels = reader.channels();
        Self { reader, cols, rows, channels, first: 0, data: Vec::new(), read: 0 }
    }

    /// Make rows `r0..=r1` (clamped to the grid) available; `r0` never decreases.
    pub fn load(&mut self, r0: u32, r1: u32) -> Result<()> {
        let r1 = r1.min(self.rows - 1);
        let r0 = r0.min(r1);
        let width = self.cols as usize * self.channels;
        // Drop the rows above r0.
        if r0 > self.first {
            let drop = ((r0 - self.first).min(self.read - self.first)) as usize;
            self.data.drain(..drop * width);
            self.first += drop as u32;
        }
        // Skip rows never needed (a band south of the last one).
        while self.read < r0 {
            let mut skip = vec![0.0; width];
            self.reader.next_row(&mut skip)?;
            self.read += 1;
            self.first = self.read;
        }
        while self.read <= r1 {
            let at = self.data.len();
            self.data.resize(at + width, 0.0);
            self.reader.next_row(&mut self.data[at..])?;
            self.read += 1;
        }
        Ok(())
    }

    /// The samples of post (`c`, `r`) (north-first row), which [`Band::load`] made available.
    #[inline]
    pub fn post(&self, c: u32, r: u32) -> &[f32] {
        let i = c as usize * self.channels;
        &self.row(r)[i..i + self.channels]
    }

    /// The samples of row `r` (north-first), post after post, which [`Band::load`] made
    /// available.
    #[inline]
    pub fn row(&self, r: u32) -> &[f32] {
        let w = self.cols as usize * self.channels;
        let i = (r - self.first) as usize * w;
        &self.data[i..i + w]
    }
}
