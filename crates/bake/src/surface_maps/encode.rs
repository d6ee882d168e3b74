//! Each post's values as the band files store them: one pass over a band's posts encodes every
//! plane the wanted maps read (swg-trn §5.9–§5.11; exports.md §4.6–§4.7).

use super::*;

impl SurfaceMapsJob {
    /// The band checkpoint's bytes: every plane's blocks, the probabilities and the meta. The
    /// band's threads take a chunk of rows each, encode all its planes in one pass over its
    /// posts (each post's results read once) and compress them ([`pack_block`]).
    pub(super) fn encode_band(&self, set: &BandSet, (r0, band_rows): (u32, u32), band: &BandValues, probabilities: Option<&[ClassProbabilities]>) -> Vec<u8> {
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
        let encoded: Vec<(Vec<u8>, Vec<u64>, BandFigures)> = chunks
            .par_iter()
            .map(|&(c0, crows)| {
                let posts = c0 as usize * cols..(c0 + crows) as usize * cols;
                let raw = band.encode_rows(planes, c0 as usize..(c0 + crows) as usize, &colors, &splat_families);
                let mut packed = Vec::new();
                let blocks =
                    raw.iter().zip(chunk_blocks(planes, splat_families.len())).map(|(values, plane)| pack_block(values, plane.bytes(), &mut packed)).collect();
                (packed, blocks, BandFigures::of(&band.results[posts]))
            })
            .collect();
        let mut body = Vec::with_capacity(encoded.iter().map(|e| e.0.len()).sum());
        let mut meta = BandMeta { bake: set.bake.hex(), place: (r0, band_rows), ..Default::default() };
        let mut figures = BandFigures::default();
        for (packed, blocks, chunk_figures) in encoded {
            body.extend_from_slice(&packed);
            meta.blocks.extend(blocks);
            figures = BandFigures::merge(figures, chunk_figures);
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
        band_file_bytes(body, &meta)
    }
}

/// One band's evaluated values, for [`BandValues::encode`].
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

impl<'a> BandValues<'a> {
    /// Every block's bytes of the band's rows `rows` (each plane's, the Splat plane's a family
    /// of `splat_families` at a time), in one pass over their posts.
    #[inline(never)]
    pub(super) fn encode_rows(&self, planes: &[Plane], rows: std::ops::Range<usize>, colors: &[(i32, [u8; 3])], splat_families: &[i32]) -> Vec<Vec<u8>> {
        let posts = rows.len() * self.cols;
        let mut raw: Vec<Vec<u8>> = chunk_blocks(planes, splat_families.len()).map(|p| vec![0u8; posts * p.bytes()]).collect();
        let mut k = 0;
        for r in rows {
            for c in 0..self.cols {
                let post = self.post(c, r);
                let mut block = 0;
                for &plane in planes {
                    if plane == Plane::Splat {
                        let (fams, bytes, n) = post.splat_bytes();
                        for (f, b) in fams[..n].iter().zip(bytes) {
                            let at = splat_families.binary_search(f).expect("the band's splat families hold each post's");
                            raw[block + at][k] = b;
                        }
                        block += splat_families.len();
                    } else {
                        let size = plane.bytes();
                        post.encode(plane, &mut raw[block][k * size..(k + 1) * size], colors);
                        block += 1;
                    }
                }
                k += 1;
            }
        }
        raw
    }

    /// The values of the post in column `c` of the band's row `r`.
    pub(super) fn post(&self, c: usize, r: usize) -> PostValues<'a> {
        let i = r * self.cols + c;
        PostValues {
            result: &self.results[i],
            normal: self.normals[i],
            height: self.heights.at(c, r),
            water: self.water.get(i).copied().flatten(),
            heights: self.heights,
            at: (c, r),
            spacing: self.spacing,
            flattened: self.flattened.get(i).copied().unwrap_or(false),
            spawn: self.spawn,
        }
    }
}

/// One post's evaluated values, for [`PostValues::encode`].
pub(super) struct PostValues<'a> {
    pub(super) result: &'a PostSurface,
    pub(super) normal: [f32; 3],
    pub(super) height: f32,
    /// The water surface over the post, if any.
    pub(super) water: Option<f32>,
    /// The band's heights and the post's place in them, for the slope's neighbours (read only
    /// by the slope and spawnable planes).
    pub(super) heights: HeightsView<'a>,
    pub(super) at: (usize, usize),
    pub(super) spacing: f32,
    pub(super) flattened: bool,
    pub(super) spawn: SpawnRule,
}

impl PostValues<'_> {
    /// The slope in degrees: `slope_at`'s formula one post either side.
    fn slope(&self) -> f32 {
        let [e, w, n, s] = self.heights.cross(self.at.0, self.at.1);
        slope_degrees(e, w, n, s, self.spacing)
    }
}

impl PostValues<'_> {
    /// The post's splat families (distinct, ascending) and their bytes, the first `n` of each:
    /// each family's byte depends on the post's weights alone ([`splat_bytes`]), so the maps'
    /// channels can be chosen once every band is done.
    pub(super) fn splat_bytes(&self) -> ([i32; SPLAT_LAYERS], [u8; SPLAT_LAYERS], usize) {
        let mut fams = [0i32; SPLAT_LAYERS];
        let mut bytes = [0u8; SPLAT_LAYERS];
        let mut n = 0;
        for f in post_splat_families(self.result) {
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
        splat_bytes_into(self.result, &fams[..distinct], &mut bytes[..distinct]);
        (fams, bytes, distinct)
    }

    /// The post's bytes of `plane` (the values the maps encode; see each writer); `colors`:
    /// each shader family's legend colour, by id.
    pub(super) fn encode(&self, plane: Plane, out: &mut [u8], colors: &[(i32, [u8; 3])]) {
        let r = self.result;
        let under_water = self.water.is_some_and(|w| self.height < w);
        let f32_bytes = |out: &mut [u8], v: f32| out.copy_from_slice(&v.to_le_bytes());
        match plane {
            Plane::Normals => {
                let v = self.normal;
                for (o, c) in out.iter_mut().zip([v[0], v[2], v[1]]) {
                    *o = round_to_byte((c * 0.5 + 0.5) * 255.0);
                }
            }
            Plane::ShaderId => f32_bytes(out, r.shader.max(0) as f32),
            Plane::Splat => unreachable!("the Splat plane is encoded a family at a time (BandValues::encode_rows)"),
            Plane::FloraId(k) => f32_bytes(out, r.flora[usize::from(k)].0.max(0) as f32),
            Plane::FloraProbability(k) => f32_bytes(out, r.flora[usize::from(k)].1),
            Plane::WaterLevel => f32_bytes(out, self.water.unwrap_or(f32::NAN)),
            Plane::WaterMask => out[0] = if under_water { 255 } else { 0 },
            Plane::Environment => f32_bytes(out, r.environment.max(0) as f32),
            Plane::Color => {
                for (o, c) in out.iter_mut().zip(r.color) {
                    *o = round_to_byte(c.clamp(0.0, 1.0) * 255.0);
                }
            }
            Plane::Exclude => out[0] = if r.excluded { 255 } else { 0 },
            Plane::Passable => out[0] = if r.passable.unwrap_or(1) != 0 { 255 } else { 0 },
            Plane::Slope => f32_bytes(out, self.slope()),
            Plane::Spawnable => {
                out[0] = self.spawn.classify(&SpawnPost {
                    height: self.height,
                    water: self.water,
                    slope: self.slope(),
                    excluded: r.excluded,
                    flattened: self.flattened,
                })
            }
            Plane::Preview | Plane::PreviewShade => {
                let shade = 0.35 + 0.65 * hillshade(self.normal);
                // Water, else the shader family's legend colour, shaded; else a tint by height
                // that the writer makes (`preview_tint`: it needs the grid's height range).
                let colour = if under_water {
                    Some([0.12f32, 0.30, 0.55].map(|c| c * (0.8 + 0.2 * shade)))
                } else {
                    colors.binary_search_by_key(&r.shader, |c| c.0).ok().map(|k| colors[k].1.map(|v| f32::from(v) / 255.0 * shade))
                };
                if plane == Plane::Preview {
                    let rgb = colour.map_or([0; 3], |rgb| rgb.map(|c| round_to_byte(c.clamp(0.0, 1.0) * 255.0)));
                    out.copy_from_slice(&rgb);
                } else {
                    f32_bytes(out, if colour.is_some() { PREVIEW_COLOURED } else { shade });
                }
            }
        }
    }
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
/// call and without branches — the encoders round ~10 values a post, the web tiles every
/// channel of every pixel: clamped first (rounding after the clamp gives the same in [0, 255];
/// NaN stays NaN and casts to 0), then the whole part plus one where the fraction, exact below
/// 2^23, is at least a half.
#[inline]
pub fn round_to_byte(x: f32) -> u8 {
    let y = x.clamp(0.0, 255.0);
    let whole = y as u32;
    (whole + u32::from(y - whole as f32 >= 0.5)) as u8
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
    pub(super) fn of(posts: &[PostSurface]) -> BandFigures {
        BandFigures {
            flora_ids: std::array::from_fn(|k| distinct_sorted(posts.iter().map(|r| r.flora[k].0.max(0)).filter(|&i| i != 0))),
            flora_range: std::array::from_fn(|k| {
                let finite = posts.iter().map(|r| r.flora[k].1).filter(|v| v.is_finite());
                finite.fold(None, |range: Option<(f32, f32)>, v| Some(range.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v)))))
            }),
        }
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

/// The distinct values of `values`, ascending: a sorted set grown by binary search, the
/// repeats of the last value skipped first (neighbouring posts mostly share their ids), so a
/// band's millions of posts cost no sort.
pub(super) fn distinct_sorted(values: impl Iterator<Item = i32>) -> Vec<i32> {
    let mut set: Vec<i32> = Vec::new();
    let mut last = None;
    for v in values {
        if last == Some(v) {
            continue;
        }
        last = Some(v);
        if let Err(at) = set.binary_search(&v) {
            set.insert(at, v);
        }
    }
    set
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
            let post = PostValues {
                result: &result,
                normal: [0.0, 1.0, 0.0],
                height: 0.0,
                water: None,
                heights: HeightsView { data: &[0.0; 9], stride: 3, origin: 4 },
                at: (0, 0),
                spacing: 2.0,
                flattened: false,
                spawn: SpawnRule::default(),
            };
            let (fams, bytes, n) = post.splat_bytes();
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
