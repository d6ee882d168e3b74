//! Terragen terrain files (`.ter`), written and read exactly per `docs/src/spec/exports.md` §1.
//!
//! * Layout of the writer (§1.4, identical to Planetside's `tgter`): the 16-byte identifier,
//!   `SIZE` first, `XPTS`, `YPTS`, `SCAL` (three equal floats, metres per terrain unit = the
//!   post spacing, §1.6), `CRAD` 6370 km, `CRVM` 0 (SWG planets are flat), `ALTW`, a zero pad
//!   when the sample count is odd, and `EOF ` as the very last four bytes. Every chunk starts on
//!   a 4-byte boundary; 2-byte values carry 2 zero pad bytes (§1.2).
//! * Rows run **south to north** (§1.5): ALTW's first sample is the south-west post. Sources
//!   are south-first too, so no flip is needed here (every other writer flips).
//! * Heights are stored in terrain units as `t = bh + e · hs / 65536` (§1.7), with `hs`/`bh`
//!   chosen by the algorithm of §1.8 (smallest `hs` whose interval for `bh` is non-empty, so
//!   neither end overflows — the `tgter` +32768 wrap and GDAL's coarser search are avoided) and
//!   `e` rounded to nearest, not truncated (GDAL and `tgter` truncate, doubling the error).
//!   The worst-case error is half a step, `SCAL · hs / 131072` metres (§7 item 2).
//!
//! The reader is lenient where the format allows (any chunk order with the dimensions before
//! `ALTW`, no `EOF `, no pad: what GDAL writes, §1.11) and strict where it must be: a chunk
//! marker it does not know is an error, because `.ter` chunks carry no length and cannot be
//! skipped; a truncated `ALTW` is an error naming the file and the byte counts.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use sha2::Digest;

use crate::fsutil::write_atomic_with;
use crate::source::{check_block, read_exact_at, rows_per_block};
use crate::{hex, invalid, Grid, HashingWriter, HeightSource, RowOrder, WrittenFile};

/// Planet radius written in `CRAD` (km): Terragen's default (§1.3). Unused while `CRVM` = 0.
pub const CRAD_KM: f32 = 6370.0;
/// The 16-byte identifier at offset 0.
pub const MAGIC: &[u8; 16] = b"TERRAGENTERRAIN ";
/// Largest dimension the format can hold (unsigned 16-bit counts, §1.3). Readers that treat
/// the counts as signed (VTP) stop at 32767; the writer allows the format's limit.
pub const MAX_POINTS: u32 = 65535;

/// How heights are encoded in one file: `SCAL` and the `ALTW` header.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TerEncoding {
    /// Metres per terrain unit (= post spacing), as stored (f32).
    pub scal: f32,
    /// `HeightScale`.
    pub hs: i16,
    /// `BaseHeight`.
    pub bh: i16,
}

impl TerEncoding {
    /// Choose `hs`/`bh` for heights in `[hmin, hmax]` metres at `spacing` metres per post
    /// (§1.8): the smallest `hs` (finest step) such that an integer `bh` exists with
    /// `(tmax − bh)·65536/hs ≤ 32767` and `(tmin − bh)·65536/hs ≥ −32768`.
    pub fn for_range(hmin: f32, hmax: f32, spacing: f64) -> io::Result<Self> {
        let scal = spacing as f32;
        if !(scal.is_finite() && scal > 0.0) {
            return Err(invalid(format!("the .ter SCAL (post spacing) must be > 0, got {spacing}")));
        }
        if !(hmin.is_finite() && hmax.is_finite() && hmin <= hmax) {
            return Err(invalid(format!("no finite height range to encode in a .ter ({hmin} .. {hmax})")));
        }
        let s = f64::from(scal);
        let (tmin, tmax) = (f64::from(hmin) / s, f64::from(hmax) / s);
        let span = tmax - tmin;
        // §1.8 step 1; at most two increments are needed (step 4), four are allowed.
        let mut hs = (span * 65536.0 / 65535.0).ceil().max(1.0);
        for _ in 0..4 {
            if hs > 32767.0 {
                break;
            }
            let lo = (tmax - hs * 32767.0 / 65536.0).ceil();
            let hi = (tmin + hs * 32768.0 / 65536.0).floor();
            if lo <= hi {
                let bh = ((lo + hi) / 2.0).floor();
                if !(-32768.0..=32767.0).contains(&bh) {
                    break;
                }
                return Ok(Self { scal, hs: hs as i16, bh: bh as i16 });
            }
            hs += 1.0;
        }
        Err(invalid(format!(
            "height range {hmin} .. {hmax} m is too large for a .ter at {spacing} m spacing: the \
             format holds at most 32767 terrain units ({} m) around a base within ±32768 units",
            32767.0 * s
        )))
    }

    /// Metres per raw step: `SCAL · hs / 65536` (GDAL's band scale).
    pub fn step(&self) -> f64 {
        f64::from(self.scal) * f64::from(self.hs) / 65536.0
    }

    /// Metres at raw 0: `SCAL · bh` (GDAL's band offset).
    pub fn offset(&self) -> f64 {
        f64::from(self.scal) * f64::from(self.bh)
    }

    /// Raw elevation for a height in metres: round to nearest, clamp to i16 (§1.7).
    #[inline]
    pub fn encode(&self, h: f32) -> i16 {
        let t = f64::from(h) / f64::from(self.scal);
        let e = ((t - f64::from(self.bh)) * 65536.0 / f64::from(self.hs)).round();
        e.clamp(-32768.0, 32767.0) as i16
    }

    /// Metres for a raw elevation (§1.7): `SCAL · (bh + e · hs / 65536)`.
    #[inline]
    pub fn decode(&self, e: i16) -> f32 {
        (f64::from(self.scal) * (f64::from(self.bh) + f64::from(e) * f64::from(self.hs) / 65536.0)) as f32
    }
}

/// Write a `.ter` from `src` with encoding `enc` (see [`TerEncoding::for_range`]; one
/// encoding for all tiles of a set keeps their edges identical). NaN heights are an error:
/// the format has no nodata value.
pub fn write_ter_from(path: &Path, src: &dyn HeightSource, enc: &TerEncoding) -> io::Result<WrittenFile> {
    let g = src.grid();
    g.check_dims()?;
    if g.cols > MAX_POINTS || g.rows > MAX_POINTS {
        return Err(invalid(format!("{}x{} posts: a .ter holds at most {MAX_POINTS} a side (§1.3)", g.cols, g.rows)));
    }
    if enc.hs < 1 || !(enc.scal.is_finite() && enc.scal > 0.0) {
        return Err(invalid(format!("bad .ter encoding {enc:?}")));
    }
    let mut result = None;
    write_atomic_with(path, |w| {
        let mut hw = HashingWriter::new(w);
        write_header(&mut hw, g.cols, g.rows, enc)?;
        let cols = g.cols as usize;
        let rpb = rows_per_block(g.cols, 1 << 20);
        let mut block = Vec::new();
        let mut bytes = Vec::new();
        let mut r0 = 0;
        while r0 < g.rows {
            let n = rpb.min(g.rows - r0);
            block.resize(cols * n as usize, 0.0);
            src.wait_rows(r0, n)?;
            src.read_rows(r0, n, &mut block)?;
            if let Some(i) = block.iter().position(|h| h.is_nan()) {
                return Err(invalid(format!("post ({}, {}) has no height (NaN); the .ter format has no nodata value", i % cols, r0 as usize + i / cols)));
            }
            bytes.clear();
            bytes.extend(block.iter().flat_map(|&h| enc.encode(h).to_le_bytes()));
            hw.write_all(&bytes)?;
            r0 += n;
        }
        if (u64::from(g.cols) * u64::from(g.rows)) % 2 == 1 {
            hw.write_all(&[0, 0])?; // align the next chunk to 4 bytes (§1.2)
        }
        hw.write_all(b"EOF ")?;
        hw.flush()?;
        result = Some((hw.bytes, hex(&hw.hasher.clone().finalize())));
        Ok(())
    })?;
    let (bytes, sha) = result.ok_or_else(|| io::Error::other(".ter writer produced no result"))?;
    let mut wf = WrittenFile::new(path, bytes, sha, "terragen");
    wf.height_scale = Some(enc.step());
    wf.height_offset = Some(enc.offset());
    wf.height_range = Some([f64::from(enc.decode(i16::MIN)), f64::from(enc.decode(i16::MAX))]);
    wf.grid = Some(g);
    wf.row_order = Some(RowOrder::SouthFirst);
    Ok(wf)
}

/// Identifier and every chunk up to and including the `ALTW` header (§1.4 offsets 0–79).
fn write_header(w: &mut impl Write, cols: u32, rows: u32, enc: &TerEncoding) -> io::Result<()> {
    let u16_chunk = |w: &mut dyn Write, tag: &[u8; 4], v: u32| -> io::Result<()> {
        w.write_all(tag)?;
        w.write_all(&(v as u16).to_le_bytes())?;
        w.write_all(&[0, 0])
    };
    w.write_all(MAGIC)?;
    u16_chunk(w, b"SIZE", cols.min(rows) - 1)?;
    u16_chunk(w, b"XPTS", cols)?;
    u16_chunk(w, b"YPTS", rows)?;
    w.write_all(b"SCAL")?;
    for _ in 0..3 {
        w.write_all(&enc.scal.to_le_bytes())?;
    }
    w.write_all(b"CRAD")?;
    w.write_all(&CRAD_KM.to_le_bytes())?;
    w.write_all(b"CRVM")?;
    w.write_all(&0u32.to_le_bytes())?;
    w.write_all(b"ALTW")?;
    w.write_all(&enc.hs.to_le_bytes())?;
    w.write_all(&enc.bh.to_le_bytes())
}

/// What a `.ter` header says.
#[derive(Clone, Debug, PartialEq)]
pub struct TerHeader {
    pub xpts: u32,
    pub ypts: u32,
    /// SCAL x, y, z (metres per terrain unit); 30 each when absent (§1.3).
    pub scal: [f32; 3],
    pub crad_km: Option<f32>,
    pub crvm: Option<u32>,
    pub hs: i16,
    pub bh: i16,
    /// Byte offset of the first elevation.
    pub data_offset: u64,
}

/// Parse the chunks of a `.ter` (the elevations are not read, only located and bounds-checked).
pub fn read_header(path: &Path) -> io::Result<TerHeader> {
    let mut f = File::open(path).map_err(|e| io::Error::new(e.kind(), format!("cannot open {}: {e}", path.display())))?;
    let len = f.metadata()?.len();
    // The header chunks are at most a few hundred bytes; read enough to parse them all.
    let mut head = Vec::new();
    (&mut f).take(4096).read_to_end(&mut head)?;
    parse_header(&head, len).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("{}: {e}", path.display())))
}

/// The chunk walk of [`read_header`] on the first bytes of a file of `len` bytes.
fn parse_header(head: &[u8], len: u64) -> Result<TerHeader, String> {
    if head.len() < 16 || &head[..16] != MAGIC {
        return Err("not a Terragen terrain file (no `TERRAGENTERRAIN ` identifier)".into());
    }
    let mut pos = 16usize;
    let (mut size, mut xpts, mut ypts) = (None, None, None);
    let mut scal = [30.0f32; 3];
    let (mut crad, mut crvm) = (None, None);
    let need = |pos: usize, n: usize, what: &str| -> Result<(), String> {
        if pos + n > head.len() {
            Err(format!("truncated in the {what} chunk at byte {}", pos - 4))
        } else {
            Ok(())
        }
    };
    let u16_at = |p: usize| u16::from_le_bytes([head[p], head[p + 1]]);
    let f32_at = |p: usize| f32::from_le_bytes([head[p], head[p + 1], head[p + 2], head[p + 3]]);
    loop {
        if pos + 4 > head.len() {
            return Err(if (pos as u64) + 4 > len {
                "no ALTW chunk (the file ends before the elevations)".into()
            } else {
                format!("no ALTW chunk in the first {} bytes", head.len())
            });
        }
        let marker = &head[pos..pos + 4];
        pos += 4;
        match marker {
            b"SIZE" | b"XPTS" | b"YPTS" => {
                need(pos, 4, std::str::from_utf8(marker).unwrap_or("?"))?;
                let v = u32::from(u16_at(pos));
                match marker {
                    b"SIZE" => size = Some(v),
                    b"XPTS" => xpts = Some(v),
                    _ => ypts = Some(v),
                }
                pos += 4;
            }
            b"SCAL" => {
                need(pos, 12, "SCAL")?;
                scal = [f32_at(pos), f32_at(pos + 4), f32_at(pos + 8)];
                pos += 12;
            }
            b"CRAD" => {
                need(pos, 4, "CRAD")?;
                crad = Some(f32_at(pos));
                pos += 4;
            }
            b"CRVM" => {
                need(pos, 4, "CRVM")?;
                crvm = Some(u32::from(u16_at(pos)));
                pos += 4;
            }
            b"ALTW" => {
                need(pos, 4, "ALTW")?;
                let size = size.ok_or("no SIZE chunk before ALTW")?;
                let xpts = xpts.unwrap_or(size + 1);
                let ypts = ypts.unwrap_or(size + 1);
                if xpts == 0 || ypts == 0 {
                    return Err(format!("{xpts}x{ypts} points: the terrain is empty"));
                }
                let data_offset = pos as u64 + 4;
                let want = data_offset + 2 * u64::from(xpts) * u64::from(ypts);
                if want > len {
                    return Err(format!("truncated: ALTW holds {xpts}x{ypts} elevations, which need {want} bytes, but the file has {len}"));
                }
                let hs = i16::from_le_bytes([head[pos], head[pos + 1]]);
                let bh = i16::from_le_bytes([head[pos + 2], head[pos + 3]]);
                for (name, s) in ["x", "y", "z"].iter().zip(scal) {
                    if !(s.is_finite() && s > 0.0) {
                        return Err(format!("SCAL {name} = {s} is not a positive number of metres"));
                    }
                }
                // ALTW is last for every writer of record (EOF, if present, follows; §1.4):
                // nothing after it changes the terrain.
                return Ok(TerHeader { xpts, ypts, scal, crad_km: crad, crvm, hs, bh, data_offset });
            }
            b"EOF " => return Err("EOF before any ALTW chunk (a flat terrain in Terragen 2, §1.4)".into()),
            other => {
                return Err(format!(
                    "unknown chunk `{}` at byte {} (.ter chunks have no length field, so it cannot be skipped)",
                    String::from_utf8_lossy(other).escape_debug(),
                    pos - 4
                ))
            }
        }
    }
}

/// A `.ter` on disk as a [`HeightSource`] (elevations read with positioned reads, decoded to
/// metres with SCAL z). The grid has the file's SCAL as spacing and, since a `.ter` has no
/// georeferencing, its centre at world (0, 0) — the SWG convention (`convert --origin`
/// relabels it).
pub struct TerSource {
    path: PathBuf,
    file: File,
    pub header: TerHeader,
    grid: Grid,
}

impl TerSource {
    pub fn open(path: &Path) -> io::Result<Self> {
        let header = read_header(path)?;
        let [sx, sy, _] = header.scal;
        if sx != sy {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: SCAL x ({sx}) differs from SCAL y ({sy}); only square post spacing is supported", path.display()),
            ));
        }
        let spacing = f64::from(sx);
        let grid = Grid {
            cols: header.xpts,
            rows: header.ypts,
            x0: -f64::from(header.xpts - 1) * spacing / 2.0,
            z0: -f64::from(header.ypts - 1) * spacing / 2.0,
            spacing,
        };
        let file = File::open(path)?;
        Ok(Self { path: path.to_path_buf(), file, header, grid })
    }

    /// The height encoding of this file (SCAL z for heights, §1.7).
    pub fn encoding(&self) -> TerEncoding {
        TerEncoding { scal: self.header.scal[2], hs: self.header.hs, bh: self.header.bh }
    }
}

impl HeightSource for TerSource {
    fn grid(&self) -> Grid {
        self.grid
    }

    fn read_block(&self, c0: u32, r0: u32, cols: u32, rows: u32, out: &mut [f32]) -> io::Result<()> {
        check_block(&self.grid, c0, r0, cols, rows, out)?;
        let enc = self.encoding();
        let mut buf = vec![0u8; cols as usize * 2];
        for (k, dst) in out.chunks_exact_mut(cols.max(1) as usize).enumerate().take(rows as usize) {
            // ALTW rows are south first, like the source convention (§1.5).
            let r = u64::from(r0) + k as u64;
            let pos = self.header.data_offset + 2 * (r * u64::from(self.grid.cols) + u64::from(c0));
            read_exact_at(&self.file, &mut buf, pos).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", self.path.display())))?;
            for (h, c) in dst.iter_mut().zip(buf.chunks_exact(2)) {
                *h = enc.decode(i16::from_le_bytes([c[0], c[1]]));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemSource;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("trnbake-ter-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// The golden vector of exports.md §1.10, byte for byte.
    const GOLDEN: &str = "
        54 45 52 52 41 47 45 4E 54 45 52 52 41 49 4E 20
        53 49 5A 45 02 00 00 00
        58 50 54 53 05 00 00 00
        59 50 54 53 03 00 00 00
        53 43 41 4C 00 00 00 40 00 00 00 40 00 00 00 40
        43 52 41 44 00 10 C7 45
        43 52 56 4D 00 00 00 00
        41 4C 54 57 79 00 6E 00
        0F 81 A3 8B 37 96 CB A0 5F AB
        D8 EA 6C F5 00 00 94 0A 28 15
        A1 54 35 5F C9 69 5D 74 F1 7E
        00 00
        45 4F 46 20";

    fn golden_bytes() -> Vec<u8> {
        let hex: String = GOLDEN.chars().filter(|c| !c.is_whitespace()).collect();
        (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect()
    }

    fn golden_source() -> MemSource<Vec<f32>> {
        let grid = Grid { cols: 5, rows: 3, x0: -4.0, z0: -2.0, spacing: 2.0 };
        // h(x, y) = 100 + 10x + 100y metres, y = 0 the south row.
        let h = (0..15).map(|i| (100 + 10 * (i % 5) + 100 * (i / 5)) as f32).collect();
        MemSource::south_first(grid, h).unwrap()
    }

    #[test]
    fn golden_vector_byte_for_byte() {
        let want = golden_bytes();
        assert_eq!(want.len(), 116);
        let src = golden_source();
        let enc = TerEncoding::for_range(100.0, 340.0, 2.0).unwrap();
        assert_eq!((enc.hs, enc.bh), (121, 110));
        let d = tmp("golden");
        let p = d.join("g.ter");
        let wf = write_ter_from(&p, &src, &enc).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), want);
        assert_eq!(wf.bytes, 116);
        assert_eq!(wf.height_offset, Some(220.0));
        assert_eq!(wf.height_scale, Some(0.003692626953125));
        // Read back: the decoded corners of §1.10 and every post within half a step.
        let t = TerSource::open(&p).unwrap();
        assert_eq!((t.grid().cols, t.grid().rows, t.grid().spacing), (5, 3, 2.0));
        assert_eq!(t.header.crad_km, Some(6370.0));
        let mut back = vec![0.0; 15];
        t.read_rows(0, 3, &mut back).unwrap();
        assert!((back[0] - 100.0007).abs() < 1e-4 && (back[14] - 339.9993).abs() < 1e-4, "{back:?}");
        let mut orig = vec![0.0; 15];
        src.read_rows(0, 3, &mut orig).unwrap();
        for (a, b) in back.iter().zip(&orig) {
            assert!(f64::from((a - b).abs()) <= enc.step() / 2.0 + 1e-4);
        }
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn scale_choice_edge_cases() {
        // Flat terrain: hs = 1 (§7 item 3).
        let e = TerEncoding::for_range(37.0, 37.0, 2.0).unwrap();
        assert_eq!(e.hs, 1);
        assert_eq!(e.decode(e.encode(37.0)), 37.0);
        // Heights on whole terrain units at both ends (the tgter +32768 wrap case, §1.8):
        // 50…200 TU at SCAL 1; both ends must encode without clamping.
        let e = TerEncoding::for_range(50.0, 200.0, 1.0).unwrap();
        for h in [50.0f32, 200.0] {
            let raw = e.encode(h);
            assert!(raw > i16::MIN && raw < i16::MAX, "{h} clamps to {raw}");
            assert!(f64::from((e.decode(raw) - h).abs()) <= e.step() / 2.0);
        }
        // SWG-scale example of §1.8: SCAL 2, −100…1500 m ⇒ hs = 801.
        assert_eq!(TerEncoding::for_range(-100.0, 1500.0, 2.0).unwrap().hs, 801);
        // Too large a range for the spacing.
        let err = TerEncoding::for_range(0.0, 70_000.0, 2.0).unwrap_err();
        assert!(err.to_string().contains("too large"), "{err}");
        assert!(TerEncoding::for_range(f32::NAN, 1.0, 2.0).is_err());
        // Random ranges: never clamps at either end, and the step is the finest possible.
        let mut seed = 7u64;
        for _ in 0..2000 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let a = ((seed >> 33) % 200_000) as f32 / 10.0 - 10_000.0;
            let b = a + ((seed >> 13) % 400_000) as f32 / 37.0;
            let e = TerEncoding::for_range(a, b, 2.0).unwrap();
            for h in [a, b] {
                // Half a step, plus the f32 rounding of the decoded metres.
                let tol = e.step() / 2.0 + f64::from(h.abs() * f32::EPSILON);
                assert!(f64::from((e.decode(e.encode(h)) - h).abs()) <= tol, "{a} {b} {e:?}");
            }
            let span = (f64::from(b) - f64::from(a)) / 2.0;
            assert!(f64::from(e.hs) <= (span * 65536.0 / 65535.0).ceil().max(1.0) + 2.0);
        }
    }

    #[test]
    fn odd_and_even_sizes_and_non_square() {
        let d = tmp("sizes");
        for (cols, rows) in [(4u32, 2u32), (3, 3), (1, 1), (7, 2)] {
            let g = Grid { cols, rows, x0: 0.0, z0: 0.0, spacing: 0.5 };
            let h: Vec<f32> = (0..cols * rows).map(|i| i as f32 * 0.25 - 3.0).collect();
            let src = MemSource::south_first(g, h.clone()).unwrap();
            let (lo, hi) = crate::finite_min_max(&h).unwrap();
            let enc = TerEncoding::for_range(lo, hi, 0.5).unwrap();
            let p = d.join(format!("{cols}x{rows}.ter"));
            write_ter_from(&p, &src, &enc).unwrap();
            let bytes = std::fs::read(&p).unwrap();
            let n = (cols * rows) as usize;
            assert_eq!(bytes.len(), 84 + 2 * n + if n % 2 == 1 { 2 } else { 0 });
            assert_eq!(&bytes[bytes.len() - 4..], b"EOF ");
            assert_eq!(u16::from_le_bytes([bytes[20], bytes[21]]) as u32, cols.min(rows) - 1);
            let t = TerSource::open(&p).unwrap();
            let mut back = vec![0.0; n];
            t.read_rows(0, rows, &mut back).unwrap();
            for (a, b) in back.iter().zip(&h) {
                assert!(f64::from((a - b).abs()) <= enc.step() / 2.0 + 1e-6);
            }
        }
        // NaN is refused and leaves nothing behind.
        let g = Grid { cols: 2, rows: 1, x0: 0.0, z0: 0.0, spacing: 1.0 };
        let src = MemSource::south_first(g, vec![1.0, f32::NAN]).unwrap();
        let p = d.join("nan.ter");
        let err = write_ter_from(&p, &src, &TerEncoding { scal: 1.0, hs: 1, bh: 0 }).unwrap_err();
        assert!(err.to_string().contains("NaN"), "{err}");
        assert!(!p.exists());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn reader_rejects_bad_files_without_panicking() {
        let good = golden_bytes();
        // Every truncation of the golden file: an error, never a panic, except when only the
        // trailing pad/EOF is missing (GDAL writes neither).
        for cut in 0..good.len() {
            let r = parse_header(&good[..cut], cut as u64);
            if cut >= 0x6E {
                assert!(r.is_ok(), "cut {cut}: {r:?}");
            } else {
                assert!(r.is_err(), "cut {cut} parsed");
            }
        }
        let mut unknown = good.clone();
        unknown[0x38..0x3C].copy_from_slice(b"CRAX");
        assert!(parse_header(&unknown, 116).unwrap_err().contains("unknown chunk `CRAX` at byte 56"));
        let mut leveller = good.clone();
        leveller[..8].copy_from_slice(b"trrn\0\0\0\0");
        assert!(parse_header(&leveller, 116).unwrap_err().contains("not a Terragen"));
        let mut huge = good.clone();
        huge[0x1C..0x1E].copy_from_slice(&65535u16.to_le_bytes());
        assert!(parse_header(&huge, 116).unwrap_err().contains("truncated"));
        let mut zero_scal = good.clone();
        zero_scal[0x2C..0x30].copy_from_slice(&0f32.to_le_bytes());
        assert!(parse_header(&zero_scal, 116).is_err());
    }

    #[test]
    fn gdal_style_file_without_pad_eof_and_xpts() {
        // What GDAL writes for a square 3x3 grid at SCAL 30 (omitted): identifier, SIZE, ALTW.
        let mut b = MAGIC.to_vec();
        b.extend_from_slice(b"SIZE\x02\x00\x00\x00ALTW");
        b.extend_from_slice(&10i16.to_le_bytes());
        b.extend_from_slice(&5i16.to_le_bytes());
        for e in [-300i16, 0, 300, 1, 2, 3, 4, 5, 6] {
            b.extend_from_slice(&e.to_le_bytes());
        }
        let d = tmp("gdalstyle");
        let p = d.join("g.ter");
        std::fs::write(&p, &b).unwrap();
        let t = TerSource::open(&p).unwrap();
        assert_eq!((t.grid().cols, t.grid().rows, t.grid().spacing), (3, 3, 30.0));
        assert_eq!((t.grid().x0, t.grid().z0), (-30.0, -30.0));
        let mut row = [0.0; 3];
        t.read_rows(0, 1, &mut row).unwrap();
        let want = |e: f64| (30.0 * (5.0 + e * 10.0 / 65536.0)) as f32;
        assert_eq!(row, [want(-300.0), want(0.0), want(300.0)]);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
