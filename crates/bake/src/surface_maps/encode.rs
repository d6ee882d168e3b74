//! Each post's values as the band files store them: every plane the wanted maps read, encoded
//! plane by plane over short runs of posts (swg-trn §5.9–§5.11; exports.md §4.6–§4.7).

use super::*;
use trnbake_swg::rounding::round_clamped;

impl SurfaceMapsJob {
    /// The band checkpoint's bytes (every plane's blocks, the probabilities and the meta) and
    /// the blocks' values as the writers read them. The band's threads take a chunk of rows
    /// each, encode its planes ([`BandValues::encode_rows`]) and compress them ([`pack_block`]).
    pub(super) fn encode_band(
        &self,
        set: &BandSet,
        (r0, band_rows): (u32, u32),
        band: &BandValues,
        probabilities: Option<&[ClassProbabilities]>,
    ) -> EncodedBand {
        let cols = band.cols;
        let rows = (band.results.len() / cols.max(1)) as u32;
        let mut colors: Vec<(i32, [u8; 3])> = self.terrain.generator.shader_families.families().iter().map(|f| (f.id, f.color)).collect();
        // By id for a binary search; a repeated id keeps its last colour (as a map collected
        // from the list would): reversed, stably sorted, the first of each id kept.
        colors.reverse();
        colors.sort_by_key(|c| c.0);
        colors.dedup_by_key(|c| c.0);
        let planes = &set.layout.planes;
        // The Splat plane's blocks: every family with a weight in the band.
        let splat_families = if planes.contains(&Plane::Splat) {
            band.results
                .par_chunks(1 << 15)
                .map(|posts| distinct_sorted(posts.iter().flat_map(post_splat_families)))
                .reduce(Vec::new, |a, b| distinct_sorted(a.into_iter().chain(b)))
        } else {
            Vec::new()
        };
        let chunks: Vec<(u32, u32)> = band_chunks(rows).collect();
        let encoded: Vec<(Vec<u8>, Vec<u64>, BandFigures, BlockValues)> = chunks
            .par_iter()
            .map(|&(c0, crows)| {
                let posts = c0 as usize * cols..(c0 + crows) as usize * cols;
                let raw = band.encode_rows(planes, c0 as usize..(c0 + crows) as usize, &colors, &splat_families);
                let mut packed = Vec::new();
                let blocks =
                    raw.iter().zip(chunk_blocks(planes, splat_families.len())).map(|(values, plane)| pack_block(values, plane.bytes(), &mut packed)).collect();
                (packed, blocks, BandFigures::of(&band.results[posts]), raw)
            })
            .collect();
        let mut body = Vec::with_capacity(encoded.iter().map(|e| e.0.len()).sum());
        let mut meta = BandMeta { bake: set.bake.hex(), place: (r0, band_rows), ..Default::default() };
        let mut figures = BandFigures::default();
        let mut values = Vec::with_capacity(encoded.iter().map(|e| e.3.len()).sum());
        for (packed, blocks, chunk_figures, raw) in encoded {
            body.extend_from_slice(&packed);
            meta.blocks.extend(blocks);
            figures = BandFigures::merge(figures, chunk_figures);
            values.extend(raw);
        }
        meta.splat_families = splat_families;
        for &plane in planes {
            if let Plane::FloraId(k) = plane {
                let k = usize::from(k);
                meta.flora_ids[k] = figures.flora_ids[k].clone();
                meta.flora_range[k] = figures.flora_range[k];
            }
        }
        if let Some(probs) = probabilities {
            for class in 0..4 {
                let counts_at = body.len() as u64;
                for p in probs {
                    body.extend_from_slice(&(p[class].len().min(usize::from(u16::MAX)) as u16).to_le_bytes());
                }
                let entries_at = body.len() as u64;
                let mut fams = Vec::new();
                for p in probs {
                    for &(f, v) in p[class].iter().take(usize::from(u16::MAX)) {
                        body.extend_from_slice(&f.to_le_bytes());
                        body.extend_from_slice(&v.to_le_bytes());
                        fams.push(f);
                    }
                }
                fams.sort_unstable();
                fams.dedup();
                meta.probability_families[class] = fams;
                meta.probability_offsets[class] = (counts_at, entries_at);
            }
        }
        EncodedBand { file: band_file_bytes(body, &meta), meta, values }
    }
}

/// A band as [`SurfaceMapsJob::encode_band`] encoded it: its checkpoint's bytes, and the values
/// of its blocks that the writers read while [`BandSet::hold`] keeps them.
pub(super) struct EncodedBand {
    pub(super) file: Vec<u8>,
    pub(super) meta: BandMeta,
    pub(super) values: BlockValues,
}

/// One band's evaluated values, for [`BandValues::encode_rows`].
pub(super) struct BandValues<'a> {
    pub(super) cols: usize,
    pub(super) heights: HeightsView<'a>,
    pub(super) normals: &'a [[f32; 3]],
    pub(super) results: &'a [PostSurface],
    pub(super) water: &'a [Option<f32>],
    /// Whether a flatten boundary holds each post (empty unless the spawnable map is wanted).
    pub(super) flattened: &'a [bool],
    /// The grid's spacing, m (the slope's central differences).
    pub(super) spacing: f32,
    pub(super) spawn: SpawnRule,
}

/// Posts of a row a plane is encoded over at a time ([`BandValues::encode_rows`]): their
/// results (~90 bytes a post), normals and heights stay in the core's cache while every plane
/// reads them, and each plane's loop is one tight loop with its plane chosen once.
const ENCODE_RUN: usize = 1024;

impl BandValues<'_> {
    /// Every block's bytes of the band's rows `rows` (each plane's, the Splat plane's a family
    /// of `splat_families` at a time): plane by plane over runs of [`ENCODE_RUN`] posts.
    pub(super) fn encode_rows(&self, planes: &[Plane], rows: std::ops::Range<usize>, colors: &[(i32, [u8; 3])], splat_families: &[i32]) -> BlockValues {
        let posts = rows.len() * self.cols;
        let mut raw: Vec<Vec<u8>> = chunk_blocks(planes, splat_families.len()).map(|p| vec![0u8; posts * p.bytes()]).collect();
        for (k, r) in rows.enumerate() {
            for c0 in (0..self.cols).step_by(ENCODE_RUN) {
                let run = PostRun { values: self, r, cols: c0..(c0 + ENCODE_RUN).min(self.cols) };
                // The run's first post among the chunk's.
                let at = k * self.cols + c0;
                let mut block = 0;
                let mut planes = planes.iter().copied().peekable();
                while let Some(plane) = planes.next() {
                    if plane == Plane::Preview && planes.peek() == Some(&Plane::PreviewShade) {
                        // Both preview planes from one walk of the run.
                        planes.next();
                        let (rgb, shades) = raw[block..].split_at_mut(1);
                        run.preview(Some(&mut rgb[0][at * 3..(at + run.cols.len()) * 3]), Some(&mut shades[0][at * 4..(at + run.cols.len()) * 4]), colors);
                        block += 2;
                    } else if plane == Plane::Splat {
                        run.splat(splat_families, &mut raw[block..block + splat_families.len()], at);
                        block += splat_families.len();
                    } else {
                        let size = plane.bytes();
                        let out = &mut raw[block][at * size..(at + run.cols.len()) * size];
                        run.encode(plane, out, colors);
                        block += 1;
                    }
                }
            }
        }
        raw
    }
}

/// Consecutive posts of one band row: columns `cols` of row `r`.
struct PostRun<'v, 'a> {
    values: &'v BandValues<'a>,
    r: usize,
    cols: std::ops::Range<usize>,
}

impl PostRun<'_, '_> {
    /// The band's indices of the run's posts.
    fn posts(&self) -> std::ops::Range<usize> {
        let first = self.r * self.values.cols;
        first + self.cols.start..first + self.cols.end
    }

    fn results(&self) -> &[PostSurface] {
        &self.values.results[self.posts()]
    }

    /// Each post's height and the water surface over it, if any.
    fn height_and_water(&self) -> impl Iterator<Item = (f32, Option<f32>)> + '_ {
        let water = self.values.water.get(self.posts()).unwrap_or(&[]);
        self.cols.clone().enumerate().map(move |(k, c)| (self.values.heights.at(c, self.r), water.get(k).copied().flatten()))
    }

    /// Each post's slope in degrees: `slope_at`'s formula one post either side.
    fn slopes(&self) -> impl Iterator<Item = f32> + '_ {
        let v = self.values;
        self.cols.clone().map(move |c| {
            let [e, w, n, s] = v.heights.cross(c, self.r);
            slope_degrees(e, w, n, s, v.spacing)
        })
    }

    /// The run's splat bytes into each family's block of `blocks` (one a family of
    /// `splat_families`, the band's), from post `at` of the chunk on: each family's byte
    /// depends on the post's weights alone ([`post_splat_bytes`]), so the maps' channels can
    /// be chosen once every band is done.
    fn splat(&self, splat_families: &[i32], blocks: &mut [Vec<u8>], at: usize) {
        // Neighbouring posts mostly have the same splat layers: their bytes are computed once.
        let mut last: Option<(&SplatLayers, [usize; SPLAT_LAYERS], [u8; SPLAT_LAYERS], usize)> = None;
        for (k, result) in self.results().iter().enumerate() {
            let (blocks_of, bytes, n) = match last {
                Some((splat, blocks_of, bytes, n)) if same_splat(splat, &result.splat) => (blocks_of, bytes, n),
                _ => {
                    let (fams, bytes, n) = post_splat_bytes(result);
                    let blocks_of = fams.map(|f| splat_families.binary_search(&f).unwrap_or(usize::MAX));
                    last = Some((&result.splat, blocks_of, bytes, n));
                    (blocks_of, bytes, n)
                }
            };
            for (&family, b) in blocks_of[..n].iter().zip(bytes) {
                blocks[family][at + k] = b;
            }
        }
    }

    /// The run's bytes of `plane` (the values the maps encode; see each writer), `plane.bytes()`
    /// a post; `colors`: each shader family's legend colour, by id.
    fn encode(&self, plane: Plane, out: &mut [u8], colors: &[(i32, [u8; 3])]) {
        let results = self.results();
        let normals = &self.values.normals[self.posts()];
        let f32s = |out: &mut [u8], values: &mut dyn Iterator<Item = f32>| {
            for (o, v) in out.chunks_exact_mut(4).zip(values) {
                o.copy_from_slice(&v.to_le_bytes());
            }
        };
        let mask = |out: &mut [u8], values: &mut dyn Iterator<Item = bool>| {
            for (o, v) in out.iter_mut().zip(values) {
                *o = if v { 255 } else { 0 };
            }
        };
        match plane {
            Plane::Normals => {
                // Every component in one flat loop (vectorised), then each post's y and z
                // swapped into the map's x, z, y order.
                for (o, &c) in out.iter_mut().zip(normals.as_flattened()) {
                    *o = round_to_byte((c * 0.5 + 0.5) * 255.0);
                }
                for o in out.chunks_exact_mut(3) {
                    o.swap(1, 2);
                }
            }
            Plane::ShaderId => f32s(out, &mut results.iter().map(|r| r.shader.max(0) as f32)),
            Plane::Splat => unreachable!("the Splat plane is encoded a family at a time (PostRun::splat)"),
            Plane::FloraId(k) => f32s(out, &mut results.iter().map(|r| r.flora[usize::from(k)].0.max(0) as f32)),
            Plane::FloraProbability(k) => f32s(out, &mut results.iter().map(|r| r.flora[usize::from(k)].1)),
            Plane::WaterLevel => f32s(out, &mut self.height_and_water().map(|(_, w)| w.unwrap_or(f32::NAN))),
            Plane::WaterMask => mask(out, &mut self.height_and_water().map(|(h, w)| under_water(h, w))),
            Plane::Environment => f32s(out, &mut results.iter().map(|r| r.environment.max(0) as f32)),
            Plane::Color => {
                for (o, r) in out.chunks_exact_mut(3).zip(results) {
                    o.copy_from_slice(&r.color.map(|c| round_to_byte(c.clamp(0.0, 1.0) * 255.0)));
                }
            }
            Plane::Exclude => mask(out, &mut results.iter().map(|r| r.excluded)),
            Plane::Passable => mask(out, &mut results.iter().map(|r| r.passable.unwrap_or(1) != 0)),
            Plane::Slope => f32s(out, &mut self.slopes()),
            Plane::Spawnable => {
                let flattened = self.values.flattened.get(self.posts()).unwrap_or(&[]);
                let posts = self.height_and_water().zip(self.slopes()).zip(results).enumerate();
                for (o, (k, (((height, water), slope), r))) in out.iter_mut().zip(posts) {
                    let flattened = flattened.get(k).copied().unwrap_or(false);
                    *o = self.values.spawn.classify(&SpawnPost { height, water, slope, excluded: r.excluded, flattened });
                }
            }
            Plane::Preview => self.preview(Some(out), None, colors),
            Plane::PreviewShade => self.preview(None, Some(out), colors),
        }
    }

    /// The run's [`Plane::Preview`] bytes into `rgb` and [`Plane::PreviewShade`] bytes into
    /// `shade`, either or both (one walk for both planes).
    fn preview(&self, mut rgb: Option<&mut [u8]>, mut shades: Option<&mut [u8]>, colors: &[(i32, [u8; 3])]) {
        let normals = &self.values.normals[self.posts()];
        let posts = self.height_and_water().zip(normals).zip(self.results());
        // The legend colour of the shader family last looked up (neighbours mostly share it).
        let mut last: Option<(i32, Option<[u8; 3]>)> = None;
        for (k, (((height, water), normal), r)) in posts.enumerate() {
            let shade = 0.35 + 0.65 * hillshade(*normal);
            // Water, else the shader family's legend colour, shaded; else a tint by height
            // that the writer makes (`preview_tint`: it needs the grid's height range).
            let colour = if under_water(height, water) {
                Some([0.12f32, 0.30, 0.55].map(|c| c * (0.8 + 0.2 * shade)))
            } else {
                let legend = match last {
                    Some((id, legend)) if id == r.shader => legend,
                    _ => {
                        let legend = colors.binary_search_by_key(&r.shader, |c| c.0).ok().map(|k| colors[k].1);
                        last = Some((r.shader, legend));
                        legend
                    }
                };
                legend.map(|rgb| rgb.map(|v| f32::from(v) / 255.0 * shade))
            };
            if let Some(rgb) = rgb.as_deref_mut() {
                let bytes = colour.map_or([0; 3], |rgb| rgb.map(|c| round_to_byte(c.clamp(0.0, 1.0) * 255.0)));
                rgb[3 * k..3 * k + 3].copy_from_slice(&bytes);
            }
            if let Some(shades) = shades.as_deref_mut() {
                shades[4 * k..4 * k + 4].copy_from_slice(&(if colour.is_some() { PREVIEW_COLOURED } else { shade }).to_le_bytes());
            }
        }
    }
}

/// Whether a post of height `height` lies under the water surface `water`.
fn under_water(height: f32, water: Option<f32>) -> bool {
    water.is_some_and(|w| height < w)
}

/// A post's splat layers: (family, weight).
type SplatLayers = [(i32, f32); SPLAT_LAYERS];

/// Whether two posts' splat layers are the same bit for bit (so are their bytes).
fn same_splat(a: &SplatLayers, b: &SplatLayers) -> bool {
    a.iter().zip(b).all(|(x, y)| x.0 == y.0 && x.1.to_bits() == y.1.to_bits())
}

/// A post's splat families (distinct, ascending) and their bytes, the first `n` of each.
pub(super) fn post_splat_bytes(result: &PostSurface) -> ([i32; SPLAT_LAYERS], [u8; SPLAT_LAYERS], usize) {
    let mut fams = [0i32; SPLAT_LAYERS];
    let mut bytes = [0u8; SPLAT_LAYERS];
    let mut n = 0;
    for f in post_splat_families(result) {
        fams[n] = f;
        n += 1;
    }
    fams[..n].sort_unstable();
    let mut distinct = 0;
    for k in 0..n {
        if distinct == 0 || fams[k] != fams[distinct - 1] {
            fams[distinct] = fams[k];
            distinct += 1;
        }
    }
    splat_bytes_into(result, &fams[..distinct], &mut bytes[..distinct]);
    (fams, bytes, distinct)
}

/// The preview colour of a post tinted by its height `h` (low sand → high grey-brown over the
/// grid's finite height `range`), shaded by `shade`.
pub(super) fn preview_tint(h: f32, (lo, hi): (f32, f32), shade: f32) -> [u8; 3] {
    let span = (hi - lo).max(1e-3);
    let u = ((h - lo) / span).clamp(0.0, 1.0);
    let base = [0.78 - 0.3 * u, 0.70 - 0.3 * u, 0.52 - 0.2 * u];
    base.map(|c| round_to_byte((c * shade).clamp(0.0, 1.0) * 255.0))
}

/// `x.round() as u8` (halves away from zero, saturating, NaN → 0) without libm's `roundf`
/// call and without branches ([`round_clamped`]) — the encoders round ~10 values a post, the
/// web tiles every channel of every pixel.
#[inline]
pub fn round_to_byte(x: f32) -> u8 {
    round_clamped(x, 255) as u8
}

/// The families of a post's splat layers with a weight (repeats possible).
pub(super) fn post_splat_families(r: &PostSurface) -> impl Iterator<Item = i32> + '_ {
    r.splat.iter().filter(|e| e.0 != 0 && e.1 > 0.0).map(|e| e.0)
}

/// Splat weights of one post for `families` (the splat channels), summing to 255 where the
/// post has any shader (largest-remainder rounding), all 0 elsewhere.
pub fn splat_bytes(r: &PostSurface, families: &[i32]) -> Vec<u8> {
    let mut out = vec![0u8; families.len()];
    splat_bytes_into(r, families, &mut out);
    out
}

/// [`splat_bytes`] into `out` (one byte a family), without allocating for up to 16 families.
pub fn splat_bytes_into(r: &PostSurface, families: &[i32], out: &mut [u8]) {
    out.fill(0);
    let total: f32 = r.splat.iter().filter(|e| e.0 != 0).map(|e| e.1).sum();
    if total <= 0.0 {
        return;
    }
    let share = |f: &i32| r.splat.iter().filter(|e| e.0 == *f).map(|e| e.1).sum::<f32>() / total * 255.0;
    let mut short = [0.0f32; 16];
    let long: Vec<f32>;
    let shares: &[f32] = if families.len() <= short.len() {
        for (s, f) in short.iter_mut().zip(families) {
            *s = share(f);
        }
        &short[..families.len()]
    } else {
        long = families.iter().map(share).collect();
        &long
    };
    largest_remainder_bytes(shares, out);
}

/// What a band's meta records of its posts' flora: per class the most likely families and
/// the range of their (finite) probabilities.
#[derive(Default)]
pub(super) struct BandFigures {
    pub(super) flora_ids: [Vec<i32>; 4],
    pub(super) flora_range: [Option<(f32, f32)>; 4],
}

impl BandFigures {
    /// The figures of `posts`, in one pass over them.
    pub(super) fn of(posts: &[PostSurface]) -> BandFigures {
        let mut ids: [DistinctSorted; 4] = Default::default();
        let mut ranges: [Option<(f32, f32)>; 4] = [None; 4];
        for r in posts {
            for (k, &(id, p)) in r.flora.iter().enumerate() {
                if id > 0 {
                    ids[k].push(id);
                }
                if p.is_finite() {
                    ranges[k] = Some(ranges[k].map_or((p, p), |(lo, hi)| (lo.min(p), hi.max(p))));
                }
            }
        }
        BandFigures { flora_ids: ids.map(|d| d.set), flora_range: ranges }
    }

    pub(super) fn merge(a: BandFigures, b: BandFigures) -> BandFigures {
        let union = |x: &[i32], y: &[i32]| distinct_sorted(x.iter().chain(y).copied());
        let range = |x: Option<(f32, f32)>, y: Option<(f32, f32)>| match (x, y) {
            (Some(x), Some(y)) => Some((x.0.min(y.0), x.1.max(y.1))),
            (x, y) => x.or(y),
        };
        BandFigures {
            flora_ids: std::array::from_fn(|k| union(&a.flora_ids[k], &b.flora_ids[k])),
            flora_range: std::array::from_fn(|k| range(a.flora_range[k], b.flora_range[k])),
        }
    }
}

/// The distinct values of `values`, ascending ([`DistinctSorted`]).
pub(super) fn distinct_sorted(values: impl Iterator<Item = i32>) -> Vec<i32> {
    let mut set = DistinctSorted::default();
    values.for_each(|v| set.push(v));
    set.set
}

/// A sorted set grown by binary search, the repeats of the last value skipped first
/// (neighbouring posts mostly share their ids), so a band's millions of posts cost no sort.
#[derive(Default)]
pub(super) struct DistinctSorted {
    set: Vec<i32>,
    last: Option<i32>,
}

impl DistinctSorted {
    fn push(&mut self, v: i32) {
        if self.last == Some(v) {
            return;
        }
        self.last = Some(v);
        if let Err(at) = self.set.binary_search(&v) {
            self.set.insert(at, v);
        }
    }
}

/// A hillshade value in [0, 1] for a unit normal: light from the north-west at 45°.
pub fn hillshade(n: [f32; 3]) -> f32 {
    let l = [-0.5f32, std::f32::consts::FRAC_1_SQRT_2, 0.5];
    (n[0] * l[0] + n[1] * l[1] + n[2] * l[2]).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_encoders_splat_bytes_are_those_of_the_rule() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let weights = [0.0f32, 1.0, 0.25, 0.3, 1e-30, 7.5, -0.5, 2e38, f32::NAN, f32::INFINITY];
        for _ in 0..50_000 {
            let mut result = PostSurface::default();
            for layer in result.splat.iter_mut() {
                // Mostly one family, sometimes none or another, odd weights among them.
                let family = [0, 3, 3, 3, 3, 8][next(6) as usize];
                *layer = (family, weights[next(weights.len() as u64) as usize]);
            }
            let (fams, bytes, n) = post_splat_bytes(&result);
            let mut want: Vec<i32> = post_splat_families(&result).collect();
            want.sort_unstable();
            want.dedup();
            assert_eq!(&fams[..n], &want[..], "{result:?}");
            assert_eq!(bytes[..n].to_vec(), splat_bytes(&result, &want), "{result:?}");
        }
    }

    #[test]
    fn round_to_byte_is_round_as_u8() {
        let mut cases = vec![f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::MAX, f32::MIN, 0.0, -0.0, f32::MIN_POSITIVE, 1e30, -1e30];
        // Every half and whole number of the range and its neighbours, where rounding turns.
        for k in -4..=1024 {
            let x = k as f32 * 0.5;
            cases.extend([x, x.next_up(), x.next_down(), x.next_up().next_up(), x.next_down().next_down()]);
        }
        // And a dense sweep.
        cases.extend((0..2_000_000).map(|k| -10.0 + k as f32 * 1.37e-4));
        // A stride through every f32 bit pattern, and every value within 64 ulps of each half
        // from -2.5 to 300.5.
        cases.extend((0..=u32::MAX).step_by(101).map(f32::from_bits));
        for k in -3..=300 {
            let half = k as f32 + 0.5;
            cases.extend((-64i32..=64).map(|d| f32::from_bits(half.to_bits().wrapping_add_signed(d))));
        }
        for x in cases {
            assert_eq!(round_to_byte(x), x.round() as u8, "{x:e}");
            assert_eq!(round_to_byte(x), x.round().clamp(0.0, 255.0) as u8, "{x:e}");
        }
    }
}
