//! The summary printed by `trnbake nwn2 info`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::model::*;

#[derive(Debug, Serialize)]
pub struct Info {
    pub version: String,
    /// TRWH width × height in megatiles (nwn2 §A.3).
    pub megatiles: Option<[u32; 2]>,
    pub area_id: Option<u32>,
    /// Packet tag → count, in order of first appearance.
    pub packets: Vec<(String, usize)>,
    pub terrain_vertices: usize,
    pub terrain_triangles: usize,
    pub water_megatiles: usize,
    /// Texture names used by the TRRN packets, with how many megatiles name each.
    pub textures: BTreeMap<String, usize>,
    pub walkmesh: Option<WalkInfo>,
}

#[derive(Debug, Serialize)]
pub struct WalkInfo {
    pub compressed: bool,
    pub version: u32,
    pub vertices: usize,
    pub edges: usize,
    pub triangles: usize,
    pub walkable_triangles: usize,
    /// Walkable share of the triangles, 0–1.
    pub walkable_share: f64,
    pub tiles: [u32; 2],
    pub border_tiles: u32,
    pub islands: usize,
    pub path_nodes: usize,
}

pub fn info(f: &Nwn2File) -> Info {
    let mut packets: Vec<(String, usize)> = Vec::new();
    for p in &f.packets {
        let tag = String::from_utf8_lossy(&p.tag()).into_owned();
        match packets.iter_mut().find(|(t, _)| *t == tag) {
            Some((_, n)) => *n += 1,
            None => packets.push((tag, 1)),
        }
    }
    let mut textures = BTreeMap::new();
    for t in f.trrns() {
        for n in &t.textures {
            let s = name_str(n);
            if !s.is_empty() {
                *textures.entry(s).or_insert(0) += 1;
            }
        }
    }
    let walkmesh = f.packets.iter().find_map(|p| if let Packet::Aswm(a) = p { Some(a) } else { None }).map(|p| {
        let a = &p.aswm;
        let walk = a.triangles.iter().filter(|t| t.flags & FLAG_WALKABLE != 0).count();
        WalkInfo {
            compressed: p.compressed,
            version: a.version,
            vertices: a.vertices.len(),
            edges: a.edges.len(),
            triangles: a.triangles.len(),
            walkable_triangles: walk,
            walkable_share: if a.triangles.is_empty() { 0.0 } else { walk as f64 / a.triangles.len() as f64 },
            tiles: [a.grid_width, a.grid_height],
            border_tiles: a.border_size,
            islands: a.islands.len(),
            path_nodes: a.tiles.iter().map(|t| t.node_count()).sum(),
        }
    });
    Info {
        version: format!("{}.{}", f.version_major, f.version_minor),
        megatiles: f.trwh().map(|t| [t.width, t.height]),
        area_id: f.trwh().map(|t| t.id),
        packets,
        terrain_vertices: f.trrns().map(|t| t.vertices.len()).sum(),
        terrain_triangles: f.trrns().map(|t| t.triangles.len()).sum(),
        water_megatiles: f.watrs().count(),
        textures,
        walkmesh,
    }
}

impl Info {
    pub fn text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "container version {}", self.version);
        match self.megatiles {
            Some([w, h]) => {
                // u64: a file may declare any u32 size (fuzz finding: 2^32 − 1 megatiles).
                let _ = writeln!(
                    s,
                    "size              {w} x {h} megatiles ({} x {} m), area id {}",
                    u64::from(w) * 40,
                    u64::from(h) * 40,
                    self.area_id.unwrap_or(0)
                );
            }
            None => {
                let _ = writeln!(s, "size              no TRWH packet");
            }
        }
        let list: Vec<String> = self.packets.iter().map(|(t, n)| format!("{t} x{n}")).collect();
        let _ = writeln!(s, "packets           {}", list.join(", "));
        let _ = writeln!(
            s,
            "terrain           {} vertices, {} triangles; water in {} megatiles",
            self.terrain_vertices, self.terrain_triangles, self.water_megatiles
        );
        let tex: Vec<String> = self.textures.iter().map(|(t, n)| format!("{t} ({n})")).collect();
        let _ = writeln!(s, "textures          {}", if tex.is_empty() { "none".into() } else { tex.join(", ") });
        if let Some(w) = &self.walkmesh {
            let _ = writeln!(
                s,
                "walkmesh          version {:#x}{}: {} vertices, {} edges, {} triangles, {:.1} % walkable",
                w.version,
                if w.compressed { ", zlib" } else { "" },
                w.vertices,
                w.edges,
                w.triangles,
                100.0 * w.walkable_share
            );
            let _ = writeln!(
                s,
                "pathing           {} x {} tiles (border {}), {} path nodes, {} islands",
                w.tiles[0], w.tiles[1], w.border_tiles, w.path_nodes, w.islands
            );
        } else {
            let _ = writeln!(s, "walkmesh          none");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{read, write};
    use crate::model::{Nwn2File, Packet, Trwh};

    // Fuzz finding (parse_nwn2, 75,000 runs): `info` of a file whose TRWH declares
    // 0xFFFFFFFF megatiles multiplied the width by 40 in u32. The file is built here.
    #[test]
    fn huge_declared_size_prints_without_overflow() {
        let file = Nwn2File { version_major: 2, version_minor: 3, packets: vec![Packet::Trwh(Trwh { width: u32::MAX, height: 7, id: 1 })] };
        let bytes = write(&file).unwrap();
        let text = info(&read(&bytes).unwrap()).text();
        assert!(text.contains("4294967295 x 7 megatiles (171798691800 x 280 m)"), "{text}");
    }
}
