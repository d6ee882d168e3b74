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
    /// Bytes of `navmesh.bin`.
    pub bytes: u64,
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
    let params = SetParams {
        orig: [layout.orig[0], 0.0, layout.orig[1]],
        tile_width: s.tile_metres(),
        tile_height: s.tile_metres(),
        max_tiles: with_polys.len().max(1) as i32,
        max_polys: max_polys.max(1).next_power_of_two() as i32,
    };
    let (tile_bits, poly_bits) = params.ref_bits();
    if tile_bits + poly_bits > 22 {
        return Err(NavmeshError::TooManyPolys { tiles: with_polys.len(), max_polys: max_polys as usize });
    }

    // The set, streamed tile by tile from the checkpoints.
    let bin = req.out_dir.join("navmesh.bin");
    let mut f = AtomicFile::create(&bin).map_err(|e| NavmeshError::io(&bin, e))?;
    write_header(f.writer(), with_polys.len() as i32, &params).map_err(|e| NavmeshError::io(&bin, e))?;
    let mut bytes = SET_HEADER_BYTES as u64;
    for (index, &i) in with_polys.iter().enumerate() {
        let (tx, ty) = coords[i];
        let path = tile_path(&work, tx, ty);
        let tile = read_checkpoint(&path, identity, tx, ty)
            .ok_or_else(|| NavmeshError::BadFile { path: path.clone(), why: "changed or damaged during the build; rerun to rebuild it".into() })?;
        write_tile(f.writer(), params.tile_ref(index as u32), &tile.data).map_err(|e| NavmeshError::io(&bin, e))?;
        bytes += 8 + tile.data.len() as u64;
    }
    f.commit(true).map_err(|e| NavmeshError::io(&bin, e))?;

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
    };
    let json = serde_json::json!({
        "format": "Recast demo all-tiles set (MSET version 1), little-endian, 32-bit dtPolyRef; world coordinates x east, y up, z north",
        "file": "navmesh.bin",
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
