//! A navmesh build: the region's tiles built in parallel (each on one thread, so memory is
//! bounded by the threads, not the region), every finished tile checkpointed to its own file
//! under `OUT/.trnbake-navmesh/` (verified before a resume reuses it), then the set
//! (`navmesh.bin`), its summary (`navmesh.json`) and optionally the input mesh (`--obj`)
//! written atomically.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Serialize;
use trnbake_raster::fsutil::{write_atomic, write_renamed, AtomicFile};
use trnbake_swg::eval::HeightEvaluator;
use trnbake_swg::report::{Progress, Reporter};
use trnbake_swg::water::WaterTables;

use crate::error::NavmeshError;
use crate::set::{write_header, write_tile, SetParams, SET_HEADER_BYTES};
use crate::settings::{NavmeshSettings, AREA_GROUND, AREA_SHALLOW_WATER, FLAG_SHALLOW_WATER, FLAG_WALK};
use crate::tile::{build_tile, tile_geometry, BuiltTile, TileLayout};

/// The folder of the tile checkpoints inside the output folder.
pub const WORK_DIR: &str = ".trnbake-navmesh";
const TILE_MAGIC: &[u8; 4] = b"TNVT";
const TILE_VERSION: u32 = 1;
const TILE_HEADER_BYTES: usize = 4 + 4 + 4 + 8 + 4 * 4 + 4 + 4;

/// What to build and where.
pub struct NavmeshRequest<'a> {
    /// The terrain's heights.
    pub heights: &'a HeightEvaluator,
    /// The terrain's water tables.
    pub water: &'a WaterTables,
    pub settings: NavmeshSettings,
    /// [west, south, east, north] in metres; None: the whole map.
    pub region: Option<[f64; 4]>,
    /// The output folder (created if missing).
    pub out_dir: PathBuf,
    /// What identifies the terrain and its height options (a hash of the file, say): a resume
    /// reuses tiles only of the same source, settings and region.
    pub source_id: String,
    /// Also write `navmesh-input.obj`, the triangles fed to Recast over the region.
    pub obj: bool,
    /// Notes and progress.
    pub reporter: &'a dyn Reporter,
}

/// What a build did (also in `navmesh.json`).
#[derive(Clone, Debug, Serialize)]
pub struct NavmeshReport {
    pub tiles_x: i32,
    pub tiles_z: i32,
    /// Tiles with at least one polygon (the tiles of the set).
    pub tiles_with_polys: usize,
    pub tiles_built: usize,
    pub tiles_resumed: usize,
    pub polys: u64,
    pub max_polys_per_tile: u32,
    pub polys_ground: u64,
    pub polys_shallow_water: u64,
    /// Bytes of the set files (`navmesh.bin`, or the `navmesh_COL_ROW.bin` of a split region).
    pub bytes: u64,
    /// How many set files the region was written as (1: `navmesh.bin`).
    pub sets: usize,
}

/// The identity a tile checkpoint must carry to be reused.
#[derive(Serialize)]
struct Identity<'a> {
    format: u32,
    source: &'a str,
    region: [f64; 4],
    settings: &'a NavmeshSettings,
}

fn tile_path(work: &Path, tx: i32, ty: i32) -> PathBuf {
    work.join(format!("tile_{tx}_{ty}.bin"))
}

fn encode_tile(identity: u64, tx: i32, ty: i32, t: &BuiltTile) -> Vec<u8> {
    let mut b = Vec::with_capacity(TILE_HEADER_BYTES + t.data.len());
    b.extend_from_slice(TILE_MAGIC);
    b.extend_from_slice(&TILE_VERSION.to_le_bytes());
    b.extend_from_slice(&crc32fast::hash(&t.data).to_le_bytes());
    b.extend_from_slice(&identity.to_le_bytes());
    for v in [t.polys, t.polys_by_area[0], t.polys_by_area[1], t.polys_by_area[2]] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    b.extend_from_slice(&tx.to_le_bytes());
    b.extend_from_slice(&ty.to_le_bytes());
    b.extend_from_slice(&t.data);
    b
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// A checkpoint read back, or None when it is missing, damaged, or of another build or tile.
fn decode_tile(bytes: &[u8], identity: u64, tx: i32, ty: i32) -> Option<BuiltTile> {
    if bytes.len() < TILE_HEADER_BYTES || &bytes[0..4] != TILE_MAGIC || u32_at(bytes, 4) != TILE_VERSION {
        return None;
    }
    let crc = u32_at(bytes, 8);
    let id = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes"));
    let (polys, a0, a1, a2) = (u32_at(bytes, 20), u32_at(bytes, 24), u32_at(bytes, 28), u32_at(bytes, 32));
    let (x, y) = (u32_at(bytes, 36) as i32, u32_at(bytes, 40) as i32);
    let data = &bytes[TILE_HEADER_BYTES..];
    if id != identity || (x, y) != (tx, ty) || crc32fast::hash(data) != crc || (polys == 0) != data.is_empty() {
        return None;
    }
    Some(BuiltTile { data: data.to_vec(), polys, polys_by_area: [a0, a1, a2] })
}

fn read_checkpoint(path: &Path, identity: u64, tx: i32, ty: i32) -> Option<BuiltTile> {
    let mut bytes = Vec::new();
    std::fs::File::open(path).ok()?.read_to_end(&mut bytes).ok()?;
    decode_tile(&bytes, identity, tx, ty)
}

/// The region a request covers: its own, or the whole map.
pub fn request_region(req: &NavmeshRequest) -> [f64; 4] {
    let h = f64::from(req.heights.half_width());
    req.region.unwrap_or([-h, -h, h, h])
}

/// Builds (or resumes) the navmesh of `req` and writes its outputs.
pub fn build_navmesh(req: &NavmeshRequest) -> Result<NavmeshReport, NavmeshError> {
    let s = &req.settings;
    s.validate()?;
    let region = request_region(req);
    let layout = TileLayout::new(s, region, req.heights.half_width())?;
    let work = req.out_dir.join(WORK_DIR);
    std::fs::create_dir_all(&work).map_err(|e| NavmeshError::io(&work, e))?;
    let identity_json = serde_json::to_string(&Identity { format: TILE_VERSION, source: &req.source_id, region, settings: s }).expect("plain data");
    // Two CRCs of the identity (the text and its reverse) make a 64-bit tag for the checkpoints.
    let rev: Vec<u8> = identity_json.bytes().rev().collect();
    let identity = u64::from(crc32fast::hash(identity_json.as_bytes())) << 32 | u64::from(crc32fast::hash(&rev));
    let id_path = work.join("build.json");
    match std::fs::read_to_string(&id_path) {
        Ok(text) if text != identity_json => return Err(NavmeshError::OtherBuild { path: req.out_dir.clone() }),
        Ok(_) => {}
        Err(_) => write_atomic(&id_path, identity_json.as_bytes()).map_err(|e| NavmeshError::io(&id_path, e))?,
    }

    let coords: Vec<(i32, i32)> = (0..layout.tiles_z).flat_map(|ty| (0..layout.tiles_x).map(move |tx| (tx, ty))).collect();
    let progress = Progress::new(req.reporter, coords.len() as u64, "tiles", "navmesh");
    let resumed = std::sync::atomic::AtomicUsize::new(0);
    // Each tile: reuse its verified checkpoint, or build and checkpoint it. Only the summary
    // stays in memory; the tile data waits on disk for the set.
    let summaries: Vec<(u32, [u32; 3], usize)> = coords
        .par_iter()
        .map(|&(tx, ty)| {
            let path = tile_path(&work, tx, ty);
            let tile = match read_checkpoint(&path, identity, tx, ty) {
                Some(t) => {
                    resumed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    t
                }
                None => {
                    let t = build_tile(req.heights, req.water, s, &layout, tx, ty)?;
                    write_renamed(&path, &encode_tile(identity, tx, ty, &t)).map_err(|e| NavmeshError::io(&path, e))?;
                    t
                }
            };
            progress.inc(1);
            Ok((tile.polys, tile.polys_by_area, tile.data.len()))
        })
        .collect::<Result<_, NavmeshError>>()?;
    progress.finish();
    let resumed = resumed.into_inner();
    if resumed > 0 {
        req.reporter.note(format!("{resumed} of {} navmesh tiles resumed from {}", coords.len(), work.display()));
    }

    let with_polys: Vec<usize> = (0..coords.len()).filter(|&i| summaries[i].0 > 0).collect();
    let max_polys = summaries.iter().map(|t| t.0).max().unwrap_or(0);
    let polys: Vec<u32> = summaries.iter().map(|t| t.0).collect();
    let parts =
        plan_sets(layout.tiles_x, layout.tiles_z, &polys).ok_or(NavmeshError::TooManyPolys { tiles: with_polys.len(), max_polys: max_polys as usize })?;
    if parts.len() > 1 {
        req.reporter.note(format!(
            "the region's {} tiles of up to {max_polys} polygons do not fit one set's 32-bit polygon references: written as {} sets of {}x{} tiles (navmesh_COL_ROW.bin, listed in navmesh.json)",
            with_polys.len(),
            parts.len(),
            parts[0].tiles[2] - parts[0].tiles[0],
            parts[0].tiles[3] - parts[0].tiles[1],
        ));
    }

    // Each set, streamed tile by tile from the checkpoints. Every set keeps the region's origin
    // and the tiles their grid coordinates (a tile's data names its own x, y), so the sets of a
    // split region sit side by side in one world frame.
    let mut sets = Vec::with_capacity(parts.len());
    let mut first_params = None;
    let mut bytes = 0u64;
    for part in &parts {
        let members: Vec<usize> = part.members(layout.tiles_x, &polys);
        let part_max = members.iter().map(|&i| polys[i]).max().unwrap_or(0);
        let params = SetParams {
            orig: [layout.orig[0], 0.0, layout.orig[1]],
            tile_width: s.tile_metres(),
            tile_height: s.tile_metres(),
            max_tiles: members.len().max(1) as i32,
            max_polys: part_max.max(1).next_power_of_two() as i32,
        };
        let bin = req.out_dir.join(&part.file);
        let mut f = AtomicFile::create(&bin).map_err(|e| NavmeshError::io(&bin, e))?;
        write_header(f.writer(), members.len() as i32, &params).map_err(|e| NavmeshError::io(&bin, e))?;
        let mut set_bytes = SET_HEADER_BYTES as u64;
        for (index, &i) in members.iter().enumerate() {
            let (tx, ty) = coords[i];
            let path = tile_path(&work, tx, ty);
            let tile = read_checkpoint(&path, identity, tx, ty)
                .ok_or_else(|| NavmeshError::BadFile { path: path.clone(), why: "changed or damaged during the build; rerun to rebuild it".into() })?;
            write_tile(f.writer(), params.tile_ref(index as u32), &tile.data).map_err(|e| NavmeshError::io(&bin, e))?;
            set_bytes += 8 + tile.data.len() as u64;
        }
        f.commit(true).map_err(|e| NavmeshError::io(&bin, e))?;
        bytes += set_bytes;
        first_params.get_or_insert(params);
        let t = part.tiles;
        let tm = f64::from(s.tile_metres());
        let (ox, oz) = (f64::from(layout.orig[0]), f64::from(layout.orig[1]));
        sets.push(serde_json::json!({
            "file": part.file,
            "tiles": { "x0": t[0], "z0": t[1], "x1": t[2], "z1": t[3] },
            "bounds": {
                "west": (ox + f64::from(t[0]) * tm).max(region[0]), "south": (oz + f64::from(t[1]) * tm).max(region[1]),
                "east": (ox + f64::from(t[2]) * tm).min(region[2]), "north": (oz + f64::from(t[3]) * tm).min(region[3]),
            },
            "tiles_with_polys": members.len(),
            "max_tiles": params.max_tiles, "max_polys": params.max_polys,
            "bytes": set_bytes,
        }));
    }
    // The sets of an earlier build of this folder that this one did not write (a split that
    // changed) would be mistaken for this build's.
    let written: Vec<&str> = parts.iter().map(|p| p.file.as_str()).collect();
    if let Ok(entries) = std::fs::read_dir(&req.out_dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let is_set = name == "navmesh.bin" || (name.starts_with("navmesh_") && name.ends_with(".bin"));
            if is_set && !written.contains(&name.as_str()) && e.file_type().is_ok_and(|t| t.is_file()) {
                std::fs::remove_file(e.path()).map_err(|err| NavmeshError::io(e.path(), err))?;
            }
        }
    }
    // The set header's figures (of the first set when split; each set's are in `sets`).
    let params = first_params.expect("at least one set");

    let sum = |k: usize| summaries.iter().map(|t| u64::from(t.1[k])).sum::<u64>();
    let report = NavmeshReport {
        tiles_x: layout.tiles_x,
        tiles_z: layout.tiles_z,
        tiles_with_polys: with_polys.len(),
        tiles_built: coords.len() - resumed,
        tiles_resumed: resumed,
        polys: summaries.iter().map(|t| u64::from(t.0)).sum(),
        max_polys_per_tile: max_polys,
        polys_ground: sum(AREA_GROUND as usize),
        polys_shallow_water: sum(AREA_SHALLOW_WATER as usize),
        bytes,
        sets: parts.len(),
    };
    let json = serde_json::json!({
        "format": "Recast demo all-tiles set (MSET version 1), little-endian, 32-bit dtPolyRef; world coordinates x east, y up, z north",
        "file": parts[0].file,
        "sets": sets,
        "source": req.source_id,
        "region": { "west": region[0], "south": region[1], "east": region[2], "north": region[3] },
        "settings": s,
        "params": {
            "orig": params.orig, "tile_width": params.tile_width, "tile_height": params.tile_height,
            "max_tiles": params.max_tiles, "max_polys": params.max_polys,
        },
        "tile_grid": { "tiles_x": layout.tiles_x, "tiles_z": layout.tiles_z, "tile_metres": s.tile_metres(), "tile_cells": s.tile_size },
        "areas": { "ground": AREA_GROUND, "shallow_water": AREA_SHALLOW_WATER },
        "flags": { "walk": FLAG_WALK, "shallow_water": FLAG_SHALLOW_WATER },
        "report": report,
    });
    let mut json = json;
    tidy_floats(&mut json);
    let jpath = req.out_dir.join("navmesh.json");
    let text = serde_json::to_string_pretty(&json).expect("plain data") + "\n";
    write_atomic(&jpath, text.as_bytes()).map_err(|e| NavmeshError::io(&jpath, e))?;

    if req.obj {
        write_obj(req, &layout, region)?;
    }
    Ok(report)
}

/// The bits of a 32-bit `dtPolyRef` left to the tile and polygon indices: Detour keeps at
/// least 10 for the salt (`dtNavMesh::init`).
const REF_INDEX_BITS: u32 = 22;

/// One set file: a rectangle of the tile grid, `[x0, z0, x1, z1)` in tiles from the south-west.
#[derive(Clone, Debug, PartialEq)]
struct SetPart {
    tiles: [i32; 4],
    file: String,
}

impl SetPart {
    /// Indices (row-major from the south-west, as the build's tile list) of the part's tiles
    /// that hold polygons.
    fn members(&self, tiles_x: i32, polys: &[u32]) -> Vec<usize> {
        let [x0, z0, x1, z1] = self.tiles;
        (z0..z1).flat_map(|z| (x0..x1).map(move |x| (z * tiles_x + x) as usize)).filter(|&i| polys[i] > 0).collect()
    }
}

/// The fewest sets, a k × k split of the tile grid, whose every part fits 32-bit references
/// (its tile count and largest tile's polygons within [`REF_INDEX_BITS`]): the whole region as
/// `navmesh.bin` when it fits (every region of up to 4 km at the defaults), else parts named
/// `navmesh_COL_ROW.bin` (column from the west, row from the south). None when even a single
/// tile does not fit.
fn plan_sets(tiles_x: i32, tiles_z: i32, polys: &[u32]) -> Option<Vec<SetPart>> {
    let bits = |n: u32| n.max(1).next_power_of_two().trailing_zeros();
    for k in 1..=tiles_x.max(tiles_z) {
        let (wx, wz) = ((tiles_x + k - 1) / k, (tiles_z + k - 1) / k);
        let mut parts = Vec::new();
        let mut fits = true;
        for row in 0..k {
            for col in 0..k {
                let t = [col * wx, row * wz, ((col + 1) * wx).min(tiles_x), ((row + 1) * wz).min(tiles_z)];
                if t[0] >= t[2] || t[1] >= t[3] {
                    continue;
                }
                let part = SetPart { tiles: t, file: if k == 1 { "navmesh.bin".into() } else { format!("navmesh_{col}_{row}.bin") } };
                let members = part.members(tiles_x, polys);
                let max = members.iter().map(|&i| polys[i]).max().unwrap_or(0);
                fits &= bits(members.len() as u32) + bits(max) <= REF_INDEX_BITS;
                parts.push(part);
            }
        }
        if fits {
            return Some(parts);
        }
    }
    None
}

/// Numbers that came from `f32`s written as their shortest `f32` text (0.1, not
/// 0.10000000149011612): every float of the summary is an `f32` widened to `f64`.
fn tidy_floats(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().expect("f64") as f32;
            if let Some(t) = f.to_string().parse::<f64>().ok().and_then(serde_json::Number::from_f64) {
                *n = t;
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(tidy_floats),
        serde_json::Value::Object(o) => o.values_mut().for_each(tidy_floats),
        _ => {}
    }
}

/// `navmesh-input.obj`: the lattice triangles over the region (what Recast rasterizes), with
/// the not-walkable ones (steep, deep water, off the map) in group `blocked`.
fn write_obj(req: &NavmeshRequest, layout: &TileLayout, region: [f64; 4]) -> Result<(), NavmeshError> {
    let area = [region[0] as f32, region[1] as f32, region[2] as f32, region[3] as f32];
    let geo = tile_geometry(req.heights, req.water, &req.settings, layout, area);
    let path = req.out_dir.join("navmesh-input.obj");
    let mut f = AtomicFile::create(&path).map_err(|e| NavmeshError::io(&path, e))?;
    let io = |e| NavmeshError::io(&path, e);
    let w = f.writer();
    writeln!(w, "# trnbake navmesh input: x east, y up, z north").map_err(io)?;
    for v in geo.verts.chunks(3) {
        writeln!(w, "v {} {} {}", v[0], v[1], v[2]).map_err(io)?;
    }
    for blocked in [false, true] {
        writeln!(w, "g {}", if blocked { "blocked" } else { "walkable" }).map_err(io)?;
        for (t, &a) in geo.tris.chunks(3).zip(&geo.areas) {
            if (a == 0) == blocked {
                writeln!(w, "f {} {} {}", t[0] + 1, t[1] + 1, t[2] + 1).map_err(io)?;
            }
        }
    }
    f.commit(true).map_err(|e| NavmeshError::io(&path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_region_that_fits_is_one_set() {
        let polys = vec![300u32; 32 * 32];
        let parts = plan_sets(32, 32, &polys).unwrap();
        assert_eq!(parts, vec![SetPart { tiles: [0, 0, 32, 32], file: "navmesh.bin".into() }]);
    }

    #[test]
    fn a_planet_splits_into_the_fewest_sets_that_fit() {
        // A 16 km planet at the defaults: 128 x 128 tiles; with 535 polygons in one tile the
        // whole needs 14 + 10 bits, a quadrant 12 + 10.
        let (nx, nz) = (128, 128);
        let mut polys = vec![200u32; nx * nz];
        polys[5000] = 535;
        polys[7] = 0;
        let parts = plan_sets(nx as i32, nz as i32, &polys).unwrap();
        let names: Vec<&str> = parts.iter().map(|p| p.file.as_str()).collect();
        assert_eq!(names, ["navmesh_0_0.bin", "navmesh_1_0.bin", "navmesh_0_1.bin", "navmesh_1_1.bin"]);
        assert_eq!(parts[1].tiles, [64, 0, 128, 64]);
        // The parts hold every tile with polygons exactly once.
        let mut all: Vec<usize> = parts.iter().flat_map(|p| p.members(nx as i32, &polys)).collect();
        all.sort_unstable();
        let expected: Vec<usize> = (0..nx * nz).filter(|&i| polys[i] > 0).collect();
        assert_eq!(all, expected);
        // Without the large tile, 256 polygons (8 bits) and 14 tile bits fit as one set.
        polys[5000] = 200;
        assert_eq!(plan_sets(nx as i32, nz as i32, &polys).unwrap().len(), 1);
    }

    #[test]
    fn uneven_grids_and_impossible_tiles() {
        // 5 x 3 tiles of 2^20 polygons: one tile a set (0 + 20 bits), 3 x 3 parts where the
        // grid has tiles, none empty.
        let polys = vec![1u32 << 20; 15];
        let parts = plan_sets(5, 3, &polys).unwrap();
        assert!(parts.iter().all(|p| p.members(5, &polys).len() <= 4), "{parts:?}");
        assert_eq!(parts.iter().map(|p| p.members(5, &polys).len()).sum::<usize>(), 15);
        // A tile that alone needs 23 bits cannot be written.
        assert_eq!(plan_sets(2, 2, &[1, 1, 1 << 22 | 1, 1]), None);
    }
}
