//! Headerless RAW heightmaps (`docs/src/spec/exports.md` §4.2): R16 (`.raw`/`.r16`, unsigned
//! 16-bit little-endian, "PC byte order", `h = raw · scale + offset` over the full 0..=65535
//! range like PNG) and R32 (`.r32`, float32 little-endian metres). Size, range and row order
//! are not in the file: the manifest (or `convert`'s sidecar) records them, and `convert`
//! reads them back from there. Rows are north first (image order) unless the caller asks for
//! south first (Unity, §4.2).

use std::io::{self, Write};
use std::path::Path;

use sha2::Digest;

use crate::fsutil::write_atomic_with;
use crate::source::{rows_per_block, RawSample};
use crate::{check_scale_offset, encode_u16, hex, HashingWriter, HeightSource, RowOrder, WrittenFile};

/// Write `src` as a RAW file. NaN heights become raw 0 in R16 (no nodata in the format) and
/// stay NaN in R32.
pub fn write_raw_from(path: &Path, src: &dyn HeightSource, sample: RawSample, order: RowOrder) -> io::Result<WrittenFile> {
    let g = src.grid();
    g.check_dims()?;
    if let RawSample::U16 { scale, offset } = sample {
        check_scale_offset(scale, offset)?;
    }
    let mut result = None;
    write_atomic_with(path, |w| {
        let mut hw = HashingWriter::new(w);
        let cols = g.cols as usize;
        let rpb = rows_per_block(g.cols, 1 << 20);
        let mut block = Vec::new();
        let mut bytes = Vec::new();
        let mut done = 0;
        while done < g.rows {
            let n = rpb.min(g.rows - done);
            // North first: blocks from the north edge down, rows reversed within a block.
            let r0 = match order {
                RowOrder::NorthFirst => g.rows - done - n,
                RowOrder::SouthFirst => done,
            };
            block.resize(cols * n as usize, 0.0);
            src.wait_rows(r0, n)?;
            src.read_rows(r0, n, &mut block)?;
            bytes.clear();
            let mut put = |row: &[f32]| match sample {
                RawSample::F32 => bytes.extend(row.iter().flat_map(|h| h.to_le_bytes())),
                RawSample::U16 { scale, offset } => bytes.extend(row.iter().flat_map(|&h| encode_u16(h, scale, offset, u16::MAX, 0).to_le_bytes())),
            };
            match order {
                RowOrder::NorthFirst => block.chunks_exact(cols).rev().for_each(&mut put),
                RowOrder::SouthFirst => block.chunks_exact(cols).for_each(&mut put),
            }
            hw.write_all(&bytes)?;
            done += n;
        }
        hw.flush()?;
        result = Some((hw.bytes, hex(&hw.hasher.clone().finalize())));
        Ok(())
    })?;
    let (bytes, sha) = result.ok_or_else(|| io::Error::other("raw writer produced no result"))?;
    let mut wf = WrittenFile::new(
        path,
        bytes,
        sha,
        match sample {
            RawSample::F32 => "r32",
            RawSample::U16 { .. } => "r16",
        },
    );
    if let RawSample::U16 { scale, offset } = sample {
        wf.height_scale = Some(scale);
        wf.height_offset = Some(offset);
        wf.height_range = Some([offset, offset + scale * f64::from(u16::MAX)]);
    }
    wf.grid = Some(g);
    wf.row_order = Some(order);
    Ok(wf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::RawFileSource;
    use crate::{Grid, MemSource};

    #[test]
    fn r16_and_r32_round_trip_in_both_row_orders() {
        let d = std::env::temp_dir().join(format!("trnbake-raw-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let g = Grid { cols: 3, rows: 2, x0: 0.0, z0: 0.0, spacing: 1.0 };
        let h = vec![0.0f32, 1.0, 2.0, 10.0, 11.0, 255.0];
        let src = MemSource::south_first(g, h.clone()).unwrap();
        let u16s = RawSample::U16 { scale: 1.0 / 256.0, offset: 0.0 };
        for order in [RowOrder::NorthFirst, RowOrder::SouthFirst] {
            let p = d.join("h.r16");
            let wf = write_raw_from(&p, &src, u16s, order).unwrap();
            let bytes = std::fs::read(&p).unwrap();
            assert_eq!((wf.bytes, bytes.len()), (12, 12));
            // First sample: north-west (10 m = raw 2560) or south-west (0), little-endian.
            let first = if order == RowOrder::NorthFirst { 2560u16 } else { 0 };
            assert_eq!(&bytes[..2], &first.to_le_bytes());
            let back = RawFileSource::open(&p, g, u16s, order == RowOrder::NorthFirst).unwrap();
            let mut out = vec![0.0; 6];
            back.read_rows(0, 2, &mut out).unwrap();
            assert_eq!(out, h);
            let p = d.join("h.r32");
            write_raw_from(&p, &src, RawSample::F32, order).unwrap();
            let back = RawFileSource::open(&p, g, RawSample::F32, order == RowOrder::NorthFirst).unwrap();
            back.read_rows(0, 2, &mut out).unwrap();
            assert_eq!(out, h);
        }
        std::fs::remove_dir_all(&d).unwrap();
    }
}
