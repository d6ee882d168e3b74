//! The all-tiles navmesh set of Recast's demo (`Sample_TileMesh.cpp`'s `saveAll`/`loadAll`),
//! the format Detour-based servers load: little-endian,
//!
//! ```text
//! NavMeshSetHeader { i32 magic = 'MSET' (0x4D534554); i32 version = 1; i32 numTiles;
//!                    dtNavMeshParams { f32 orig[3]; f32 tileWidth, tileHeight; i32 maxTiles, maxPolys } }
//! numTiles × { NavMeshTileHeader { u32 tileRef; i32 dataSize }; dataSize bytes of dtCreateNavMeshData }
//! ```
//!
//! with Detour's default 32-bit `dtTileRef`/`dtPolyRef`.

use std::io::{Read, Write};
use std::path::Path;

use crate::error::NavmeshError;

/// `'M'<<24 | 'S'<<16 | 'E'<<8 | 'T'`, as the demo writes it (an `int`).
pub const MSET_MAGIC: i32 = (b'M' as i32) << 24 | (b'S' as i32) << 16 | (b'E' as i32) << 8 | b'T' as i32;
/// The set version the demo writes and reads.
pub const MSET_VERSION: i32 = 1;
/// Bytes of the set header (12 + `dtNavMeshParams`' 28).
pub const SET_HEADER_BYTES: usize = 40;

/// `dtNavMeshParams`, field for field.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SetParams {
    pub orig: [f32; 3],
    pub tile_width: f32,
    pub tile_height: f32,
    pub max_tiles: i32,
    pub max_polys: i32,
}

impl SetParams {
    /// Bits of a tile index and of a polygon index in a 32-bit `dtPolyRef`, as `dtNavMesh::init`
    /// computes them (`ilog2(nextPow2(n))`).
    pub fn ref_bits(&self) -> (u32, u32) {
        let bits = |n: i32| (n.max(1) as u32).next_power_of_two().trailing_zeros();
        (bits(self.max_tiles), bits(self.max_polys))
    }

    /// The `dtTileRef` that `dtNavMesh::addTile` gives the tile stored at `index` in a fresh
    /// mesh: salt 1 (the salt of a never-used slot) above the tile index above polygon 0.
    pub fn tile_ref(&self, index: u32) -> u32 {
        let (tile_bits, poly_bits) = self.ref_bits();
        (1u32 << (tile_bits + poly_bits)) | (index << poly_bits)
    }
}

/// Writes the set header.
pub fn write_header(w: &mut impl Write, num_tiles: i32, p: &SetParams) -> std::io::Result<()> {
    for v in [MSET_MAGIC, MSET_VERSION, num_tiles] {
        w.write_all(&v.to_le_bytes())?;
    }
    for v in [p.orig[0], p.orig[1], p.orig[2], p.tile_width, p.tile_height] {
        w.write_all(&v.to_le_bytes())?;
    }
    w.write_all(&p.max_tiles.to_le_bytes())?;
    w.write_all(&p.max_polys.to_le_bytes())
}

/// Writes one tile: its reference, size and Detour data.
pub fn write_tile(w: &mut impl Write, tile_ref: u32, data: &[u8]) -> std::io::Result<()> {
    w.write_all(&tile_ref.to_le_bytes())?;
    w.write_all(&(data.len() as i32).to_le_bytes())?;
    w.write_all(data)
}

fn i32_at(b: &[u8], at: usize) -> i32 {
    i32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn f32_at(b: &[u8], at: usize) -> f32 {
    f32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// A set read back: its parameters and tiles (reference, Detour data).
pub struct NavmeshSet {
    pub params: SetParams,
    pub tiles: Vec<(u32, Vec<u8>)>,
}

/// Reads a set file, checking the magic, version and every size against the file's length.
pub fn read_set(path: &Path) -> Result<NavmeshSet, NavmeshError> {
    let bad = |why: String| NavmeshError::BadFile { path: path.to_owned(), why };
    let mut f = std::fs::File::open(path).map_err(|e| NavmeshError::io(path, e))?;
    let len = f.metadata().map_err(|e| NavmeshError::io(path, e))?.len();
    let mut head = [0u8; SET_HEADER_BYTES];
    f.read_exact(&mut head).map_err(|_| bad(format!("{len} bytes: too short for a navmesh set header")))?;
    if i32_at(&head, 0) != MSET_MAGIC {
        return Err(bad("not a navmesh set (no MSET magic)".into()));
    }
    if i32_at(&head, 4) != MSET_VERSION {
        return Err(bad(format!("set version {} (this reads version {MSET_VERSION})", i32_at(&head, 4))));
    }
    let num_tiles = i32_at(&head, 8);
    let params = SetParams {
        orig: [f32_at(&head, 12), f32_at(&head, 16), f32_at(&head, 20)],
        tile_width: f32_at(&head, 24),
        tile_height: f32_at(&head, 28),
        max_tiles: i32_at(&head, 32),
        max_polys: i32_at(&head, 36),
    };
    if num_tiles < 0 || num_tiles > params.max_tiles {
        return Err(bad(format!("{num_tiles} tiles for at most {}", params.max_tiles)));
    }
    let mut left = len - SET_HEADER_BYTES as u64;
    let mut tiles = Vec::with_capacity(num_tiles as usize);
    for i in 0..num_tiles {
        let mut th = [0u8; 8];
        f.read_exact(&mut th).map_err(|_| bad(format!("tile {i}: the file ends in its header")))?;
        let tile_ref = u32::from_le_bytes(th[0..4].try_into().expect("4 bytes"));
        let size = i32_at(&th, 4);
        left = left.saturating_sub(8);
        if size <= 0 || size as u64 > left {
            return Err(bad(format!("tile {i}: data size {size} with {left} bytes left")));
        }
        let mut data = vec![0u8; size as usize];
        f.read_exact(&mut data).map_err(|e| NavmeshError::io(path, e))?;
        left -= size as u64;
        tiles.push((tile_ref, data));
    }
    Ok(NavmeshSet { params, tiles })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_round_trips_and_damage_is_refused_naming_the_file() {
        let p = SetParams { orig: [-512.0, 0.0, 256.0], tile_width: 128.0, tile_height: 128.0, max_tiles: 3, max_polys: 512 };
        let mut b = Vec::new();
        write_header(&mut b, 2, &p).unwrap();
        assert_eq!(&b[0..4], b"TESM", "the demo's int 'MSET', little-endian");
        assert_eq!(b.len(), SET_HEADER_BYTES);
        write_tile(&mut b, p.tile_ref(0), &[1, 2, 3]).unwrap();
        write_tile(&mut b, p.tile_ref(1), &[4; 10]).unwrap();
        let dir = std::env::temp_dir().join(format!("trnbake-navmesh-set-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("navmesh.bin");
        std::fs::write(&path, &b).unwrap();
        let set = read_set(&path).unwrap();
        assert_eq!(set.params, p);
        assert_eq!(set.tiles, vec![(p.tile_ref(0), vec![1, 2, 3]), (p.tile_ref(1), vec![4; 10])]);
        // Two tile bits, nine polygon bits, salt 1 above them (dtNavMesh::encodePolyId).
        assert_eq!(p.ref_bits(), (2, 9));
        assert_eq!(p.tile_ref(1), 1 << 11 | 1 << 9);
        std::fs::write(&path, &b[..b.len() - 1]).unwrap();
        let e = read_set(&path).err().unwrap().to_string();
        assert!(e.contains("navmesh.bin") && e.contains("tile 1"), "{e}");
        std::fs::write(&path, b"MSET").unwrap();
        assert!(read_set(&path).err().unwrap().to_string().contains("too short"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
