//! The ASWM bake of nwn2 §A.7: from heights on a vertex grid (5/3 m spacing, 6 quads to a
//! 10 m pathing tile) to a walkmesh with edges, adjacency, slope-derived walkable flags,
//! row-major tiles, per-tile path tables and islands with their path table.
//!
//! Path tables: within a tile, the next hop from each walkable triangle toward each other is
//! the first step of a **fewest-triangles** path (breadth-first search over walkable
//! neighbours inside the tile, ties going to the neighbour found first), so following the
//! table from any pair walks a shortest path of the tile's adjacency and every hop is a real
//! neighbour (nwn2 §A.6.3 "every next hop is an adjacent triangle"). Islands are the
//! connected walkable parts of each tile (§A.7 step 7c); the island path table is a
//! shortest-first (Dijkstra) expansion over island adjacency weighted by centre distance,
//! storing the first hop and the distance to it (§A.7 step 7d).

use std::collections::{BTreeMap, HashMap, VecDeque};

use rayon::prelude::*;

use super::model::*;

/// Metres between grid vertices (nwn2 §A.1: 25 vertices over a 40 m megatile).
pub const VERTEX_SPACING: f64 = 40.0 / 24.0;
/// Quads along one side of a 10 m pathing tile.
pub const QUADS_PER_TILE: u32 = 6;
/// Border of unplayable tiles around an exterior area (nwn2 §A.1).
pub const BORDER_TILES: u32 = 8;
/// Header and per-tile flags written by the game's bake (nwn2 §A.6.3, TRX: 31).
pub const TILE_FLAGS: u32 = 31;

/// Heights on a grid of vertices, row-major from the area's minimum y (row = y index).
#[derive(Clone, Debug)]
pub struct VertexGrid {
    pub cols: u32,
    pub rows: u32,
    pub heights: Vec<f32>,
}

impl VertexGrid {
    /// Area position of vertex (col, row), bit-identical to the toolset's: megatile origin
    /// plus the local index times the f32 spacing 40/24, in f32 (matches every vertex of the
    /// TRN sample; exact f64 positions differ by an ulp at 2550 of them).
    pub fn xy(col: u32, row: u32) -> [f32; 2] {
        const S: f32 = 40.0 / 24.0;
        let axis = |i: u32| ((i / 24) * 40) as f32 + (i % 24) as f32 * S;
        [axis(col), axis(row)]
    }
    pub fn pos(&self, col: u32, row: u32) -> [f32; 3] {
        let [x, y] = Self::xy(col, row);
        [x, y, self.heights[(row * self.cols + col) as usize]]
    }
}

/// The two triangles of quad (i, j) as grid (col, row) corners, counter-clockwise seen from
/// +Z, split by the checkerboard diagonal of nwn2 §A.1 (even i + j: (i,j)–(i+1,j+1)).
pub fn quad_triangles(i: u32, j: u32) -> [[(u32, u32); 3]; 2] {
    if (i + j).is_multiple_of(2) {
        [[(i, j), (i + 1, j + 1), (i, j + 1)], [(i, j), (i + 1, j), (i + 1, j + 1)]]
    } else {
        [[(i, j + 1), (i, j), (i + 1, j)], [(i, j + 1), (i + 1, j), (i + 1, j + 1)]]
    }
}

#[derive(Clone, Copy, Debug)]
pub struct WalkOptions {
    /// Walkable ⇔ slope ≤ this many degrees (nwn2 §A.7 step 3: 45 in toolset output).
    pub max_slope_deg: f64,
    /// TRX style: border triangles and unused vertices dropped, every triangle wound
    /// clockwise with the flag set (as the toolset's TRX). TRN style keeps the whole area.
    pub trx: bool,
    /// Border width in tiles (8 for exterior areas).
    pub border: u32,
    /// Footstep material bits for every triangle (nwn2 §A.6.2), e.g. 0x10 grass.
    pub material: u16,
}

impl Default for WalkOptions {
    fn default() -> Self {
        WalkOptions { max_slope_deg: 45.0, trx: false, border: BORDER_TILES, material: 0x10 }
    }
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WalkError {
    #[error("the vertex grid is {cols}x{rows}: it must be 6·n + 1 vertices a side (whole 10 m tiles) and hold one height per vertex")]
    BadGrid { cols: u32, rows: u32 },
    #[error("{0} islands: the island index is 16-bit (at most 65534)")]
    TooManyIslands(usize),
    #[error("edge ({0}, {1}) has a third triangle (non-manifold)")]
    NonManifold(u32, u32),
}

/// Bake the walkmesh of a vertex grid, every triangle with `opts.material`.
pub fn bake(grid: &VertexGrid, opts: &WalkOptions) -> Result<Aswm, WalkError> {
    bake_with(grid, opts, &|_| opts.material)
}

/// Bake the walkmesh, the footstep material of each triangle given by `material(centroid)`
/// (nwn2 §A.7 step 3: from the dominant texture under the centroid).
pub fn bake_with(grid: &VertexGrid, opts: &WalkOptions, material: &(dyn Fn([f32; 2]) -> u16 + Sync)) -> Result<Aswm, WalkError> {
    let (cols, rows) = (grid.cols, grid.rows);
    if cols < 7 || rows < 7 || (cols - 1) % QUADS_PER_TILE != 0 || (rows - 1) % QUADS_PER_TILE != 0 || grid.heights.len() != cols as usize * rows as usize {
        return Err(WalkError::BadGrid { cols, rows });
    }
    let (gw, gh) = ((cols - 1) / QUADS_PER_TILE, (rows - 1) / QUADS_PER_TILE);
    let cos_limit = opts.max_slope_deg.to_radians().cos();
    let in_border = |tx: u32, ty: u32| tx < opts.border || ty < opts.border || tx + opts.border >= gw || ty + opts.border >= gh;

    // Steps 2–4: triangles grouped by tile, tiles row-major, quads row-major inside a tile.
    let mut tris: Vec<Triangle> = Vec::with_capacity(2 * (cols as usize - 1) * (rows as usize - 1));
    let mut tile_counts = Vec::with_capacity((gw * gh) as usize);
    for ty in 0..gh {
        for tx in 0..gw {
            let border = in_border(tx, ty);
            if border && opts.trx {
                tile_counts.push(0u32);
                continue;
            }
            for j in ty * QUADS_PER_TILE..(ty + 1) * QUADS_PER_TILE {
                for i in tx * QUADS_PER_TILE..(tx + 1) * QUADS_PER_TILE {
                    for mut corners in quad_triangles(i, j) {
                        if opts.trx {
                            corners.swap(1, 2);
                        }
                        tris.push(make_triangle(grid, corners, !border, cos_limit, material));
                    }
                }
            }
            tile_counts.push(2 * QUADS_PER_TILE * QUADS_PER_TILE);
        }
    }

    // Step 1: vertices (TRX: only those used, renumbered in grid order).
    let mut remap: Vec<u32> = (0..cols * rows).collect();
    let mut vertices = Vec::new();
    if opts.trx {
        let mut used = vec![false; (cols * rows) as usize];
        for t in &tris {
            for &v in &t.vertices {
                used[v as usize] = true;
            }
        }
        for (k, u) in used.iter().enumerate() {
            if *u {
                remap[k] = vertices.len() as u32;
                vertices.push(grid.pos(k as u32 % cols, k as u32 / cols));
            }
        }
        for t in &mut tris {
            t.vertices = t.vertices.map(|v| remap[v as usize]);
        }
    } else {
        for r in 0..rows {
            for c in 0..cols {
                vertices.push(grid.pos(c, r));
            }
        }
    }

    // Step 5: edges keyed by the sorted vertex pair, in order of first visit; then each
    // edge's triangles take their first free linked slot.
    let mut edges: Vec<Edge> = Vec::with_capacity(tris.len() * 3 / 2 + cols as usize + rows as usize);
    let mut index: HashMap<(u32, u32), u32> = HashMap::with_capacity(edges.capacity());
    for (ti, t) in tris.iter().enumerate() {
        for k in 0..3 {
            let (a, b) = (t.vertices[k], t.vertices[(k + 1) % 3]);
            let key = (a.min(b), a.max(b));
            match index.get(&key) {
                None => {
                    index.insert(key, edges.len() as u32);
                    edges.push(Edge { vertices: [key.0, key.1], triangles: [ti as u32, NONE] });
                }
                Some(&e) => {
                    let e = &mut edges[e as usize];
                    if e.triangles[1] != NONE {
                        return Err(WalkError::NonManifold(key.0, key.1));
                    }
                    e.triangles[1] = ti as u32;
                }
            }
        }
    }
    let mut filled = vec![0u8; tris.len()];
    for (ei, e) in edges.iter().enumerate() {
        for s in 0..2 {
            let t = e.triangles[s];
            if t == NONE {
                continue;
            }
            let slot = filled[t as usize] as usize;
            tris[t as usize].linked_edges[slot] = ei as u32;
            tris[t as usize].linked_triangles[slot] = e.triangles[1 - s];
            filled[t as usize] += 1;
        }
    }

    // Steps 6–7: tiles with path tables, then islands.
    let mut offsets = Vec::with_capacity(tile_counts.len());
    let mut run = 0u32;
    for &n in &tile_counts {
        offsets.push(run);
        run += n;
    }
    let tables: Vec<(Tile, Vec<Vec<u32>>)> = (0..tile_counts.len()).into_par_iter().map(|k| tile_table(&tris, offsets[k], tile_counts[k], opts.trx)).collect();
    let mut tiles = Vec::with_capacity(tables.len());
    let mut components: Vec<Vec<u32>> = Vec::new();
    for (tile, comps) in tables {
        tiles.push(tile);
        components.extend(comps);
    }
    if components.len() >= usize::from(NO_ISLAND) {
        return Err(WalkError::TooManyIslands(components.len()));
    }
    for (i, comp) in components.iter().enumerate() {
        for &t in comp {
            tris[t as usize].island = i as u16;
        }
    }
    let (islands, island_paths) = islands(&tris, &components, &offsets, &tile_counts);
    Ok(Aswm {
        version: 0x6C,
        name: [0; 32],
        owns_data: 1,
        unknown: 0,
        vertices,
        edges,
        triangles: tris,
        tiles_flags: TILE_FLAGS,
        tile_width: 10.0,
        grid_height: gh,
        grid_width: gw,
        tiles,
        border_size: opts.border,
        islands,
        island_paths,
    })
}

fn make_triangle(grid: &VertexGrid, corners: [(u32, u32); 3], playable: bool, cos_limit: f64, material: &(dyn Fn([f32; 2]) -> u16 + Sync)) -> Triangle {
    let p = corners.map(|(c, r)| grid.pos(c, r).map(f64::from));
    let (a, b) = ([p[1][0] - p[0][0], p[1][1] - p[0][1], p[1][2] - p[0][2]], [p[2][0] - p[0][0], p[2][1] - p[0][1], p[2][2] - p[0][2]]);
    let cross = [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
    let len = (cross[0] * cross[0] + cross[1] * cross[1] + cross[2] * cross[2]).sqrt();
    let mut n = cross.map(|c| c / len);
    // nwn2 §A.6.2: the stored normal points up; the flag marks triangles wound clockwise
    // seen from that side (XY signed area < 0).
    let clockwise = cross[2] < 0.0;
    if clockwise {
        n = n.map(|c| -c);
    }
    let d = -(n[0] * p[0][0] + n[1] * p[0][1] + n[2] * p[0][2]);
    let walkable = playable && n[2] >= cos_limit;
    let centroid = [((p[0][0] + p[1][0] + p[2][0]) / 3.0) as f32, ((p[0][1] + p[1][1] + p[2][1]) / 3.0) as f32];
    let mut flags = material(centroid) & MATERIAL_FLAGS;
    if walkable {
        flags |= FLAG_WALKABLE;
    }
    if clockwise {
        flags |= FLAG_CLOCKWISE;
    }
    Triangle {
        vertices: corners.map(|(c, r)| r * grid.cols + c),
        linked_edges: [NONE; 3],
        linked_triangles: [NONE; 3],
        centroid,
        normal: n.map(|c| c as f32),
        plane_d: d as f32,
        island: NO_ISLAND,
        flags,
    }
}

/// One tile's header and path table, and its islands (lists of global triangle indices).
fn tile_table(tris: &[Triangle], off: u32, count: u32, trx: bool) -> (Tile, Vec<Vec<u32>>) {
    let range = off as usize..(off + count) as usize;
    let mut vs: Vec<u32> = tris[range.clone()].iter().flat_map(|t| t.vertices).collect();
    let mut es: Vec<u32> = tris[range.clone()].iter().flat_map(|t| t.linked_edges).collect();
    vs.sort_unstable();
    vs.dedup();
    es.sort_unstable();
    es.dedup();
    let local_walkable = |l: usize| tris[off as usize + l].flags & FLAG_WALKABLE != 0;
    let node_to_local: Vec<u32> = (0..count).filter(|&l| local_walkable(l as usize)).collect();
    let nc = node_to_local.len();
    let mut local_to_node = vec![0xFFu8; count as usize];
    for (n, &l) in node_to_local.iter().enumerate() {
        local_to_node[l as usize] = n as u8;
    }
    // Walkable neighbours inside the tile, as node indices.
    let adj: Vec<Vec<usize>> = node_to_local
        .iter()
        .map(|&l| {
            tris[(off + l) as usize]
                .linked_triangles
                .iter()
                .filter(|&&t| t != NONE && range.contains(&(t as usize)))
                .filter_map(|&t| {
                    let n = local_to_node[t as usize - off as usize];
                    (n != 0xFF).then_some(usize::from(n))
                })
                .collect()
        })
        .collect();
    let mut nodes = vec![0xFFu8; nc * nc];
    let mut comp_of = vec![usize::MAX; nc];
    let mut comps: Vec<Vec<u32>> = Vec::new();
    let mut queue = VecDeque::new();
    for from in 0..nc {
        // Breadth-first from `from`; first[x] = the first step on the way to x.
        let mut first = vec![usize::MAX; nc];
        first[from] = from;
        queue.clear();
        queue.push_back(from);
        while let Some(x) = queue.pop_front() {
            for &y in &adj[x] {
                if first[y] == usize::MAX {
                    first[y] = if x == from { y } else { first[x] };
                    queue.push_back(y);
                }
            }
        }
        for to in 0..nc {
            if to != from && first[to] != usize::MAX {
                nodes[from * nc + to] = first[to] as u8;
            }
        }
        if comp_of[from] == usize::MAX {
            let id = comps.len();
            let mut members = Vec::new();
            for (x, f) in first.iter().enumerate() {
                if *f != usize::MAX {
                    comp_of[x] = id;
                    members.push(off + node_to_local[x]);
                }
            }
            comps.push(members);
        }
    }
    let tile = Tile {
        name: [0; 32],
        owns_data: 0,
        vertex_count: vs.len() as u32,
        edge_count: es.len() as u32,
        triangle_count: count,
        size_x: 0.0,
        size_y: 0.0,
        triangles_offset: off,
        path_flags: 0,
        rle_table_size: 0,
        // A dropped TRX border tile has an empty table (nwn2 §A.6.4).
        local_to_node: if trx && count == 0 { Vec::new() } else { local_to_node },
        node_to_local,
        nodes,
        tile_flags: TILE_FLAGS,
    };
    (tile, comps)
}

fn dist2(a: [f32; 3], b: [f32; 3]) -> f32 {
    (f64::from(a[0] - b[0]).hypot(f64::from(a[1] - b[1]))) as f32
}

/// Island records (centre, adjacency across tile edges with exit triangles) and the island
/// path table (nwn2 §A.7 step 7c–d).
fn islands(tris: &[Triangle], comps: &[Vec<u32>], offsets: &[u32], counts: &[u32]) -> (Vec<Island>, Vec<IslandPath>) {
    // The tile holding triangle t: the last non-empty tile starting at or before t.
    let tile_of = |t: u32| {
        let k = offsets.partition_point(|&o| o <= t);
        (0..k).rev().find(|&i| counts[i] > 0).unwrap_or(0)
    };
    let mut isl: Vec<Island> = comps
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (mut sx, mut sy) = (0f64, 0f64);
            for &t in c {
                sx += f64::from(tris[t as usize].centroid[0]);
                sy += f64::from(tris[t as usize].centroid[1]);
            }
            let n = c.len().max(1) as f64;
            Island {
                index: i as u32,
                tile: 0,
                center: [(sx / n) as f32, (sy / n) as f32, 0.0],
                triangle_count: c.len() as u32,
                adjacent: vec![],
                distances: vec![],
                exits: vec![],
            }
        })
        .collect();
    for (i, c) in comps.iter().enumerate() {
        let mut adj: BTreeMap<u32, u32> = BTreeMap::new();
        for &t in c {
            for &n in &tris[t as usize].linked_triangles {
                if n == NONE {
                    continue;
                }
                let j = tris[n as usize].island;
                if j != NO_ISLAND && usize::from(j) != i && tile_of(n) != tile_of(t) {
                    adj.entry(u32::from(j)).or_insert(t);
                }
            }
        }
        let ci = isl[i].center;
        for (j, exit) in adj {
            isl[i].adjacent.push(j);
            let d = dist2(ci, isl[j as usize].center);
            isl[i].distances.push(d);
            isl[i].exits.push(exit);
        }
    }
    let n = isl.len();
    // One n² table filled row by row in place (it is the largest array: 8·n² bytes).
    let mut table = vec![IslandPath { next: NO_ISLAND, padding: 0, weight: 0.0 }; n * n];
    if n > 0 {
        table.par_chunks_mut(n).enumerate().for_each(|(from, row)| island_row(&isl, from, row));
    }
    (isl, table)
}

/// Dijkstra from `from` over island adjacency; each entry is the first hop and its distance.
fn island_row(isl: &[Island], from: usize, row: &mut [IslandPath]) {
    #[derive(PartialEq)]
    struct Item(f64, usize);
    impl Eq for Item {}
    impl PartialOrd for Item {
        fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
            Some(self.cmp(o))
        }
    }
    impl Ord for Item {
        fn cmp(&self, o: &Self) -> std::cmp::Ordering {
            o.0.total_cmp(&self.0).then(o.1.cmp(&self.1))
        }
    }
    let n = isl.len();
    let mut dist = vec![f64::INFINITY; n];
    let mut first = vec![usize::MAX; n];
    let mut heap = std::collections::BinaryHeap::new();
    dist[from] = 0.0;
    first[from] = from;
    heap.push(Item(0.0, from));
    while let Some(Item(d, x)) = heap.pop() {
        if d > dist[x] {
            continue;
        }
        for (&y, &w) in isl[x].adjacent.iter().zip(&isl[x].distances) {
            let y = y as usize;
            let nd = d + f64::from(w);
            if nd < dist[y] {
                dist[y] = nd;
                first[y] = if x == from { y } else { first[x] };
                heap.push(Item(nd, y));
            }
        }
    }
    for (to, e) in row.iter_mut().enumerate() {
        if to != from && first[to] != usize::MAX {
            let hop = first[to];
            let k = isl[from].adjacent.iter().position(|&a| a as usize == hop).expect("first hop is adjacent");
            *e = IslandPath { next: hop as u16, padding: 0, weight: isl[from].distances[k] };
        }
    }
}
