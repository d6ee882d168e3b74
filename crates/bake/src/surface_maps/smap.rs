//! `smap.png` and `smap.json`: the 8 m rough-terrain chunks (swg-trn §2.3).

use super::*;

pub(super) fn write_smap(outdir: &Path, g: &Grid, he: &HeightEvaluator) -> crate::Result<Vec<WrittenFile>> {
    let (cc, rr, west, south, bits) = smap_chunks(g, he, he.plan.half_width);
    if cc == 0 || rr == 0 {
        return Ok(Vec::new());
    }
    let bytes: Vec<u8> = bits.iter().map(|&b| if b { 255 } else { 0 }).collect();
    let png = write_png8_south_first(&outdir.join("smap.png"), cc, rr, 1, &bytes)?;
    let meta = serde_json::json!({
        "map": "smap.png", "chunk_metres": 8.0, "cols": cc, "rows": rr,
        "west_x": west, "south_z": south,
        "rule": "255 where the 3x3 tile-corner posts (4 m apart) of the 8 m chunk span more than 4 m (swg-trn §2.3)",
    });
    Ok(vec![png, write_json(&outdir.join("smap.json"), &meta)?])
}
