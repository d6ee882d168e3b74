//! GDAL virtual raster (`.vrt`) over the GeoTIFF tiles of a tiled export, so GIS tools open the
//! tile set as one raster (spec §5 "Tile conventions": tiles share their edge posts; the VRT
//! places each tile at its post offset, and overlapping edge posts hold identical values).
//!
//! The VRT states what the tiles' GeoKeys state: the same local metric CRS (as WKT1
//! `LOCAL_CS`, which GDAL reads as the same `ENGCRS` as the GeoTIFF's user-defined model),
//! the PixelIsPoint geotransform GDAL derives for the tiles (origin half a spacing beyond the
//! north-west post, spec §3.3), `AREA_OR_POINT=Point`, and for UInt16 tiles their shared
//! scale, offset and nodata.

use std::fmt::Write as _;
use std::io;
use std::path::Path;

use super::geotiff::TiffSample;
use crate::fsutil::write_atomic;
use crate::{Grid, WrittenFile, U16_NODATA};

/// One tile of the mosaic: its file name and where its posts start in the mosaic.
pub struct VrtTile<'a> {
    pub file: &'a str,
    /// Column of the tile's west edge in the mosaic.
    pub col: u32,
    /// Row of the tile's north edge in the mosaic, counted from the north.
    pub row_from_north: u32,
    pub cols: u32,
    pub rows: u32,
}

/// Write `path` mosaicking `tiles` into `grid`.
pub fn write_vrt(path: &Path, grid: &Grid, tiles: &[VrtTile], sample: TiffSample, citation: &str) -> io::Result<WrittenFile> {
    grid.check_dims()?;
    let s = grid.spacing;
    let (dtype, nodata, scale_offset) = match sample {
        TiffSample::F32 => ("Float32", None, None),
        TiffSample::U16 { scale, offset } => ("UInt16", Some(U16_NODATA), Some((scale, offset))),
        TiffSample::U8 => ("Byte", None, None),
    };
    let mut x = String::new();
    let _ = writeln!(x, r#"<VRTDataset rasterXSize="{}" rasterYSize="{}">"#, grid.cols, grid.rows);
    let _ = writeln!(x, r#"  <SRS dataAxisToSRSAxisMapping="1,2">{}</SRS>"#, xml_escape(&local_cs_wkt(citation)));
    let _ = writeln!(x, "  <GeoTransform>{:?}, {s:?}, 0.0, {:?}, 0.0, {:?}</GeoTransform>", grid.x0 - s / 2.0, grid.north_z() + s / 2.0, -s);
    let _ = writeln!(x, r#"  <Metadata>"#);
    let _ = writeln!(x, r#"    <MDI key="AREA_OR_POINT">Point</MDI>"#);
    let _ = writeln!(x, r#"  </Metadata>"#);
    let _ = writeln!(x, r#"  <VRTRasterBand dataType="{dtype}" band="1">"#);
    if let Some(nd) = nodata {
        let _ = writeln!(x, "    <NoDataValue>{nd}</NoDataValue>");
    }
    if let Some((scale, offset)) = scale_offset {
        let _ = writeln!(x, "    <Offset>{offset:?}</Offset>");
        let _ = writeln!(x, "    <Scale>{scale:?}</Scale>");
    }
    let _ = writeln!(x, "    <UnitType>m</UnitType>");
    for t in tiles {
        let _ = writeln!(x, "    <SimpleSource>");
        let _ = writeln!(x, r#"      <SourceFilename relativeToVRT="1">{}</SourceFilename>"#, xml_escape(t.file));
        let _ = writeln!(x, "      <SourceBand>1</SourceBand>");
        let _ = writeln!(x, r#"      <SourceProperties RasterXSize="{}" RasterYSize="{}" DataType="{dtype}" />"#, t.cols, t.rows);
        let _ = writeln!(x, r#"      <SrcRect xOff="0" yOff="0" xSize="{}" ySize="{}" />"#, t.cols, t.rows);
        let _ = writeln!(x, r#"      <DstRect xOff="{}" yOff="{}" xSize="{}" ySize="{}" />"#, t.col, t.row_from_north, t.cols, t.rows);
        let _ = writeln!(x, "    </SimpleSource>");
    }
    let _ = writeln!(x, "  </VRTRasterBand>");
    let _ = writeln!(x, "</VRTDataset>");
    write_atomic(path, x.as_bytes())?;
    let mut wf = WrittenFile::of_file(path, "vrt")?;
    if let Some((scale, offset)) = scale_offset {
        wf.height_scale = Some(scale);
        wf.height_offset = Some(offset);
    }
    wf.grid = Some(*grid);
    Ok(wf)
}

/// The local metric CRS as WKT1 (what `gdal_translate -a_srs 'LOCAL_CS[…]'` takes; GDAL 3.6
/// reads it as an `ENGCRS` with metre axes, the same CRS it reads from the GeoKeys, §3.3).
pub fn local_cs_wkt(citation: &str) -> String {
    let name: String = citation.chars().map(|c| if c == '"' || c.is_control() { '\'' } else { c }).collect();
    format!(r#"LOCAL_CS["{name}",UNIT["metre",1,AUTHORITY["EPSG","9001"]],AXIS["Easting",EAST],AXIS["Northing",NORTH]]"#)
}

pub(crate) fn xml_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            _ => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_places_tiles() {
        let d = std::env::temp_dir().join(format!("trnbake-vrt-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let g = Grid { cols: 5, rows: 3, x0: -4.0, z0: -2.0, spacing: 2.0 };
        let tiles = [
            VrtTile { file: "a&b_x0_y0.tif", col: 0, row_from_north: 0, cols: 3, rows: 3 },
            VrtTile { file: "a&b_x1_y0.tif", col: 2, row_from_north: 0, cols: 3, rows: 3 },
        ];
        let p = d.join("m.vrt");
        let wf = write_vrt(&p, &g, &tiles, TiffSample::U16 { scale: 0.5, offset: -3.0 }, "SWG \"x\" local metres").unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains("<GeoTransform>-5.0, 2.0, 0.0, 3.0, 0.0, -2.0</GeoTransform>"), "{text}");
        assert!(text.contains(r#"<DstRect xOff="2" yOff="0" xSize="3" ySize="3" />"#));
        assert!(text.contains("a&amp;b_x1_y0.tif"));
        assert!(text.contains("LOCAL_CS[&quot;SWG 'x' local metres&quot;"));
        assert!(text.contains("<NoDataValue>65535</NoDataValue>") && text.contains("<Scale>0.5</Scale>"));
        assert_eq!(wf.format, "vrt");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
