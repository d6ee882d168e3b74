//! The splat weights packed for people and engines (exports.md §4.6–§4.7, issue #25 item 3),
//! written from the band checkpoints' Splat plane after every band is finished:
//!
//! * `splat_preview.png`: RGB, each post the sum of its families' legend colours weighted by
//!   their bytes — `splat_k.png` puts the 4th family in alpha, which viewers show as blank.
//! * `--preset unreal`: `splat_unreal_<layer>.png`, one 8-bit grey weightmap per shader family
//!   (what Unreal's landscape layer import takes), the size of the preset's heightmap, and
//!   `splat_unreal_layers.json` (layer names in order, files, colours).
//! * `--preset unity`: `splat_unity_<k>.png`, RGBA alphamaps of 4 layers each at the
//!   alphamap resolution (heightmap 2^n+1 → 2^n), and `splat_unity.json` (layer order per
//!   image and channel, terrain size and height scale from the height export).
//! * `--preset godot`: nothing (Terrain3D's control map is a bit field in a 32-bit float image,
//!   see docs/src/surface-maps.md).
//!
//! Resampling: the preset's heightmap posts sit where `Resampled` puts them (corner-aligned,
//! bilinear, `trnbake_raster::source::bracket_at`); each family's weight is interpolated
//! bilinearly, then the post's weights are rescaled to sum to 255 (largest remainder) wherever
//! any weight is left, so a blend between shaded and unshaded posts stays a full blend.
//! Unity's terrain shaders put the terrain's edges on the alphamap's texel centres
//! (`(uv · (size − 1) + 0.5) / size`), so an alphamap of A texels is sampled like a heightmap
//! of A posts. Each image reads, per block of its rows, the source rows those rows need:
//! memory is bounded by a block, whatever the grid.

use super::band_files::{largest_remainder_bytes, BandSet};
use crate::folder::write_json;
use std::collections::HashMap;
use std::io;
use std::ops::Range;
use std::path::Path;
use trnbake_raster::source::bracket_at;
use trnbake_raster::writers::png8::{write_png8_from, ByteRows, Png8Coding, RowFilter};
use trnbake_raster::writers::preset::Preset;
use trnbake_raster::writers::set::ExportSummary;
use trnbake_raster::WrittenFile;
use trnbake_swg::model::Generator;

/// `splat_preview.png` from the Splat plane of the finished bands (`families`: every family
/// of the plane).
pub(crate) fn write_preview(dir: &Path, set: &BandSet, families: &[i32], generator: &Generator) -> crate::Result<WrittenFile> {
    let colors: HashMap<i32, [u8; 3]> = generator.shader_families.families().iter().map(|f| (f.id, f.color)).collect();
    // A family the legend lacks adds black: nothing.
    let colored = families.iter().filter_map(|f| colors.get(f).map(|&c| (*f, c))).collect();
    let path = dir.join("splat_preview.png");
    write_png8_from(&path, &PreviewRows { set, colored }, Png8Coding::Patterned).map_err(crate::error::writing(&path))
}

/// Rows of `splat_preview.png`: Σ colour × byte / 255 per post (black where no shader
/// applies, or for a family the legend lacks).
struct PreviewRows<'a> {
    set: &'a BandSet,
    /// The families with a legend colour, and the colour.
    colored: Vec<(i32, [u8; 3])>,
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
    fn read_rows(&self, rows: Range<u32>, out: &mut [u8]) -> io::Result<()> {
        let posts = out.len() / 3;
        // Each channel's sums apart (one multiply-add a post, which vectorises), interleaved
        // at the end.
        let mut sums = [vec![0u32; posts], vec![0u32; posts], vec![0u32; posts]];
        let mut bytes = vec![0u8; posts];
        let cols = self.set.grid.cols as usize;
        for &(family, color) in &self.colored {
            self.set.read_splat_north(family, rows.clone(), &mut bytes)?;
            // Most families weigh nothing on most rows (0 in the bands without them): those
            // rows add nothing and are skipped after a scan of their bytes.
            for (row, weights) in bytes.chunks_exact(cols).enumerate() {
                if weights.iter().all(|&w| w == 0) {
                    continue;
                }
                for (sums, c) in sums.iter_mut().zip(color) {
                    for (a, &w) in sums[row * cols..(row + 1) * cols].iter_mut().zip(weights) {
                        *a += u32::from(c) * u32::from(w);
                    }
                }
            }
        }
        for (k, px) in out.chunks_exact_mut(3).enumerate() {
            for (o, sums) in px.iter_mut().zip(&sums) {
                // Rounded; the bytes sum to at most 255, so the result stays ≤ 255.
                *o = ((sums[k] + 127) / 255) as u8;
            }
        }
        Ok(())
    }
}

/// The engine splat maps of `--preset` (nothing without one, for a tiled export, or for Godot).
/// `families`: every family of the Splat plane, ascending (the order of `splat_legend.json`).
pub(crate) fn write_engine_maps(
    dir: &Path,
    set: &BandSet,
    families: &[i32],
    generator: &Generator,
    export: Option<&ExportSummary>,
    reporter: &dyn crate::Reporter,
) -> crate::Result<Vec<WrittenFile>> {
    let Some((summary, preset)) = export.and_then(|s| s.preset.map(|p| (s, p))) else { return Ok(Vec::new()) };
    let note = |what: &str| reporter.note(format!("no {} splat maps: {what}", preset.name()));
    if summary.tiles.is_some() {
        // Per-tile weightmaps would need the tiles' own edges and names; not done yet.
        note("not written for a tiled export (use splat_k.png, or bake without --tiles)");
        return Ok(Vec::new());
    }
    if families.is_empty() || set.grid.cols < 2 || set.grid.rows < 2 {
        return Ok(Vec::new());
    }
    let layers = layer_names(families, generator);
    let info = |k: usize| {
        let fam = generator.shader_families.families().iter().find(|f| f.id == families[k]);
        serde_json::json!({ "name": layers[k], "family_id": families[k], "color": fam.map(|f| f.color) })
    };
    // The heightmap the height export wrote (resampled to the preset's size, or not).
    let n = summary.grid.cols;
    let src = set.grid;
    let weights = |size: u32, channels: Vec<Option<usize>>| EngineWeights::new(set, families, channels, size);
    let mut files = Vec::new();
    match preset {
        Preset::Unreal => {
            let mut list = Vec::new();
            for (k, layer) in layers.iter().enumerate() {
                let name = format!("splat_unreal_{layer}.png");
                let path = dir.join(&name);
                files.push(write_png8_from(&path, &weights(n, vec![Some(k)]), Png8Coding::Noisy(RowFilter::Up)).map_err(crate::error::writing(&path))?);
                let mut entry = info(k);
                entry["file"] = name.into();
                list.push(entry);
            }
            let meta = serde_json::json!({
                "engine": "unreal",
                "layers": list,
                "size": [n, n],
                "heightmap": summary.engine,
                "weights": "8-bit grey, 0..255 per layer, the layers summing to 255 where a shader applies (weight-blended layers)",
                "resampling": resampling(src.cols, n),
                "rows": "row 0 is the north edge, as in the heightmap PNG (the landscape's minimum Y)",
            });
            files.push(write_json(&dir.join("splat_unreal_layers.json"), &meta)?);
        }
        Preset::Unity => {
            let a = n - 1;
            let mut images = Vec::new();
            for (img, chunk) in (0..families.len()).collect::<Vec<_>>().chunks(4).enumerate() {
                let name = format!("splat_unity_{img}.png");
                let channels = (0..4).map(|ch| chunk.get(ch).copied()).collect();
                let path = dir.join(&name);
                files.push(write_png8_from(&path, &weights(a, channels), Png8Coding::Noisy(RowFilter::Up)).map_err(crate::error::writing(&path))?);
                let layers: Vec<serde_json::Value> = chunk
                    .iter()
                    .zip(["r", "g", "b", "a"])
                    .map(|(&k, ch)| {
                        let mut e = info(k);
                        e["channel"] = ch.into();
                        e
                    })
                    .collect();
                images.push(serde_json::json!({ "file": name, "layers": layers }));
            }
            let terrain = summary.engine.clone().unwrap_or_default();
            let meta = serde_json::json!({
                "engine": "unity",
                "layers": layers,
                "alphamaps": images,
                "alphamap_resolution": a,
                "heightmap_resolution": n,
                "terrain_size_m": terrain["terrain_size_m"],
                "height_scale_m": terrain["terrain_size_m"][1],
                "terrain_position_m": terrain["terrain_position_m"],
                "weights": "TerrainData.SetAlphamaps order: layer index = position in `layers`; channel byte / 255 is the layer's weight, the layers summing to 1 where a shader applies",
                "resampling": resampling(src.cols, a),
                "rows": "PNG row 0 is the north edge; Texture2D.LoadImage puts it at y = height − 1, so GetPixel(x, y) is alphamap [y, x] (y along +Z)",
            });
            files.push(write_json(&dir.join("splat_unity.json"), &meta)?);
        }
        Preset::Godot => note("Terrain3D's control map (a 32-bit bit field: base and overlay texture id, one blend byte) is not written yet; use splat_k.png"),
    }
    Ok(files)
}

/// How `n0` posts became `size` pixels a side, for the JSONs.
fn resampling(n0: u32, size: u32) -> String {
    if n0 == size {
        "none: one pixel a post".into()
    } else {
        format!("bilinear from {n0} to {size} pixels a side, corners on the map's corners, weights rescaled to sum to 255")
    }
}

/// A file-name-safe layer name per family: the family's name ([A-Za-z0-9_-], others `_`), its
/// id added where the name is empty or taken.
fn layer_names(families: &[i32], generator: &Generator) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for &f in families {
        let name = generator.shader_families.families().iter().find(|x| x.id == f).map(|x| x.name.as_str()).unwrap_or("");
        let mut s: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
        if s.is_empty() || names.contains(&s) {
            s = if s.is_empty() { format!("family_{f}") } else { format!("{s}_{f}") };
        }
        names.push(s);
    }
    names
}

/// Rows of an engine weight image: `size` pixels a side over the whole map, channel k holding
/// family `families[channels[k]]` (0 for `None`), resampled from the Splat plane.
struct EngineWeights<'a> {
    set: &'a BandSet,
    families: &'a [i32],
    channels: Vec<Option<usize>>,
    size: u32,
    /// Source post and weight of the next one, per pixel (the same along both axes: square).
    cols: Vec<(u32, f64)>,
    rows: Vec<(u32, f64)>,
}

impl<'a> EngineWeights<'a> {
    fn new(set: &'a BandSet, families: &'a [i32], channels: Vec<Option<usize>>, size: u32) -> Self {
        let g = set.grid;
        let at = |n_in: u32| -> Vec<(u32, f64)> {
            let step = f64::from(n_in - 1) / f64::from(size.max(2) - 1);
            (0..size).map(|i| bracket_at(f64::from(i) * step, n_in)).collect()
        };
        EngineWeights { set, families, cols: at(g.cols), rows: at(g.rows), channels, size }
    }
}

impl ByteRows for EngineWeights<'_> {
    fn width(&self) -> u32 {
        self.size
    }
    fn height(&self) -> u32 {
        self.size
    }
    fn channels(&self) -> u32 {
        self.channels.len() as u32
    }
    fn read_rows(&self, rows: Range<u32>, out: &mut [u8]) -> io::Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        // File row y is pixel row size − 1 − y from the south; its source rows r and r + 1.
        let from_south = |y: u32| self.rows[(self.size - 1 - y) as usize];
        let lo = from_south(rows.end - 1).0;
        let hi = from_south(rows.start).0 + 1;
        let cols = self.set.grid.cols as usize;
        // Each family's bytes of the source rows (0 where a post lacks it: adding its zero
        // weight changes no sum, so the sums are those of the post's own families).
        let mut splat = Vec::with_capacity(self.families.len());
        for &f in self.families {
            let mut bytes = vec![0u8; cols * (hi - lo + 1) as usize];
            self.set.read_splat(f, lo, hi - lo + 1, &mut bytes)?;
            splat.push(bytes);
        }
        let nch = self.channels.len();
        let mut acc = vec![0f32; self.families.len()];
        let mut bytes = vec![0u8; self.families.len()];
        for (y, dst) in rows.zip(out.chunks_exact_mut(self.size as usize * nch)) {
            let (r, fz) = from_south(y);
            for (&(c, fx), px) in self.cols.iter().zip(dst.chunks_exact_mut(nch)) {
                acc.fill(0.0);
                for (rr, cc, w) in [(r, c, (1.0 - fx) * (1.0 - fz)), (r, c + 1, fx * (1.0 - fz)), (r + 1, c, (1.0 - fx) * fz), (r + 1, c + 1, fx * fz)] {
                    if w <= 0.0 {
                        continue;
                    }
                    let at = (rr - lo) as usize * cols + cc as usize;
                    for (a, family) in acc.iter_mut().zip(&splat) {
                        *a += w as f32 * f32::from(family[at]);
                    }
                }
                let total: f32 = acc.iter().sum();
                if total > 0.0 {
                    let scale = 255.0 / total;
                    acc.iter_mut().for_each(|v| *v *= scale);
                    largest_remainder_bytes(&acc, &mut bytes);
                } else {
                    bytes.fill(0);
                }
                for (o, ch) in px.iter_mut().zip(&self.channels) {
                    *o = ch.map_or(0, |k| bytes[k]);
                }
            }
        }
        Ok(())
    }
}
