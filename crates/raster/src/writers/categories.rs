//! The names of the values of an id GeoTIFF (`shader_id.tif`, `flora_*_id.tif`, `env_id.tif`):
//! GDAL's PAM sidecar `NAME.tif.aux.xml`, holding the band's category names and a raster
//! attribute table (`Value`, `Name`), so that GDAL (`gdalinfo`: "Categories") and QGIS (the
//! raster attribute table, the paletted renderer's classes) show family names, not numbers.
//!
//! GDAL reads the sidecar beside the file it opens; the GeoTIFF itself stays as it is (the
//! GTiff driver keeps category names and attribute tables in the sidecar too). Write the id
//! map with [`GeoTiffOptions::for_ids`](super::geotiff::GeoTiffOptions::for_ids), which gives
//! it no unit.

use std::path::{Path, PathBuf};

use crate::error::{Context, Result};
use crate::fsutil::write_atomic;
use crate::writers::vrt::xml_escape;
use crate::{bail, WrittenFile};

/// The largest value a name may be given: the UInt16 id maps hold 0..=65534 (65535 is nodata).
pub const MAX_CATEGORY_VALUE: u32 = 65534;

/// `NAME.tif.aux.xml`, the sidecar GDAL reads for `NAME.tif`.
pub fn aux_xml_path(tif: &Path) -> PathBuf {
    let mut p = tif.as_os_str().to_owned();
    p.push(".aux.xml");
    PathBuf::from(p)
}

/// The PAM XML naming the values of band 1: `categories` are (value, name) pairs in any order;
/// values without a name get an empty one in GDAL's list of category names (which is indexed
/// by value), and no row in the attribute table.
pub fn category_xml(categories: &[(u32, String)]) -> Result<String> {
    let mut sorted: Vec<&(u32, String)> = categories.iter().collect();
    sorted.sort_by_key(|c| c.0);
    if let Some(w) = sorted.windows(2).find(|w| w[0].0 == w[1].0) {
        bail!("category {} is named twice ({:?} and {:?})", w[0].0, w[0].1, w[1].1);
    }
    if let Some(c) = sorted.last().filter(|c| c.0 > MAX_CATEGORY_VALUE) {
        bail!("category {} is beyond the id maps' values (0..={MAX_CATEGORY_VALUE})", c.0);
    }
    let name = |s: &str| xml_escape(&s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect::<String>());
    let mut x = String::from("<PAMDataset>\n  <PAMRasterBand band=\"1\">\n");
    if let Some(last) = sorted.last() {
        x.push_str("    <CategoryNames>\n");
        let mut next = sorted.iter().peekable();
        for v in 0..=last.0 {
            let n = match next.peek() {
                Some(c) if c.0 == v => next.next().map_or(String::new(), |c| name(&c.1)),
                _ => String::new(),
            };
            x.push_str(&format!("      <Category>{n}</Category>\n"));
        }
        x.push_str("    </CategoryNames>\n");
    }
    // GDAL's RAT: field types 0 integer, 2 string; usages 5 min-max (the value), 2 name.
    x.push_str("    <GDALRasterAttributeTable tableType=\"thematic\">\n");
    x.push_str("      <FieldDefn index=\"0\">\n        <Name>Value</Name>\n        <Type>0</Type>\n        <Usage>5</Usage>\n      </FieldDefn>\n");
    x.push_str("      <FieldDefn index=\"1\">\n        <Name>Name</Name>\n        <Type>2</Type>\n        <Usage>2</Usage>\n      </FieldDefn>\n");
    for (i, c) in sorted.iter().enumerate() {
        x.push_str(&format!("      <Row index=\"{i}\">\n        <F>{}</F>\n        <F>{}</F>\n      </Row>\n", c.0, name(&c.1)));
    }
    x.push_str("    </GDALRasterAttributeTable>\n  </PAMRasterBand>\n</PAMDataset>\n");
    Ok(x)
}

/// Writes `NAME.tif.aux.xml` beside `tif` (atomically) naming its values; returns its
/// manifest entry (format `"aux-xml"`). `categories` are (value, name) pairs, e.g. the shader
/// families of a terrain by id with 0 named "none".
pub fn write_category_names(tif: &Path, categories: &[(u32, String)]) -> Result<WrittenFile> {
    let path = aux_xml_path(tif);
    let xml = category_xml(categories).with_context(|| format!("{}: the category names", path.display()))?;
    write_atomic(&path, xml.as_bytes()).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(WrittenFile::of_file(&path, "aux-xml")?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_by_value_with_gaps() {
        let x = category_xml(&[(3, "sand & <rock>".into()), (0, "none".into()), (1, "grass".into())]).unwrap();
        let cats: Vec<&str> = x.lines().filter_map(|l| l.trim().strip_prefix("<Category>")?.strip_suffix("</Category>")).collect();
        assert_eq!(cats, ["none", "grass", "", "sand &amp; &lt;rock&gt;"]);
        assert_eq!(x.matches("<Row index=").count(), 3);
        assert!(x.contains("<F>3</F>\n        <F>sand &amp; &lt;rock&gt;</F>"), "{x}");
        assert!(category_xml(&[(1, "a".into()), (1, "b".into())]).unwrap_err().to_string().contains("named twice"));
        assert!(category_xml(&[(65535, "nodata".into())]).is_err());
        assert!(!category_xml(&[]).unwrap().contains("CategoryNames"));
    }
}
