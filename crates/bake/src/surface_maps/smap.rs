//! `smap.png` and `smap.json`: the 8 m rough-terrain chunks (swg-trn §2.3).

use super::*;

pub(super) fn write_smap(outdir: &Path, g: &Grid, he: &HeightEvaluator, citation: &str) -> crate::Result<Vec<WrittenFile>> {
    let (cc, rr, west, south, bits) = smap_chunks(g, he, he.plan.half_width);
    if cc == 0 || rr == 0 {
        return Ok(Vec::new());
    }
    let bytes: Vec<u8> = bits.iter().map(|&b| if b { 255 } else { 0 }).collect();
    let path = outdir.join("smap.png");
    let png = write_png8_south_first(&path, cc, rr, 1, &bytes).map_err(crate::error::writing(&path))?;
    // Its pixels are 8 m chunks, not posts: the world file puts each pixel's centre at its
    // chunk's, so GIS tools place the chunks over the other maps (#37 item 14).
    let chunks = Grid { x0: west + 4.0, z0: south + 4.0, spacing: 8.0, cols: cc, rows: rr };
    let mut files = super::writers::georeferenced(png, outdir, &chunks, citation)?;
    let meta = serde_json::json!({
        "map": "smap.png", "chunk_metres": 8.0, "cols": cc, "rows": rr,
        "west_x": west, "south_z": south,
        "rule": "255 where the 3x3 tile-corner posts (4 m apart) of the 8 m chunk span more than 4 m (swg-trn §2.3)",
    });
    files.push(write_json(&outdir.join("smap.json"), &meta)?);
    Ok(files)
}
