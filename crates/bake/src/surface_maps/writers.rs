//! Which files each map writes: the maps streamed while the bands compute, and those that
//! need a figure of the whole grid once every band is finished.

use super::*;
use crate::error::writing;
use trnbake_raster::writers::png16::write_world_file;
/// A map writer to run on a thread of its own: its files, or the error.
pub(super) type Writer<'s> = Box<dyn FnOnce() -> crate::Result<Vec<WrittenFile>> + Send + 's>;

/// A PNG of the bake's posts and its world file (`NAME.pgw`, as `height.png` has: the same
/// georeferencing, so GIS tools place every map), both named with the bake's CRS.
pub(super) fn georeferenced(png: WrittenFile, dir: &Path, grid: &Grid, citation: &str) -> crate::Result<Vec<WrittenFile>> {
    let path = dir.join(Path::new(&png.path).with_extension("pgw"));
    let mut world = write_world_file(&path, grid).map_err(writing(&path))?;
    world.crs = Some(citation.to_string());
    let mut png = png;
    png.crs = Some(citation.to_string());
    Ok(vec![png, world])
}

/// Positions of a map's files in the list of written files: the catalogue's order
/// ([`MapKind`]), room for 10 files a map.
pub(super) fn order(map: MapKind) -> usize {
    10 * map as usize
}

/// The category names of an id map from its families' (id, name): ids an id GeoTIFF can hold
/// (0..=65534), each once (the first name kept), and 0 as "none" unless a family has it.
fn id_names(families: impl Iterator<Item = (i32, String)>) -> Vec<(u32, String)> {
    let mut out: Vec<(u32, String)> = Vec::new();
    for (id, name) in families {
        if (0..=65534).contains(&id) && !out.iter().any(|(v, _)| *v == id as u32) {
            out.push((id as u32, name));
        }
    }
    if !out.iter().any(|(v, _)| *v == 0) {
        out.push((0, "none".into()));
    }
    out.sort_by_key(|(v, _)| *v);
    out
}

impl SurfaceMapsJob {
    /// The writers of the maps that need no figure of the whole grid: they start before the
    /// first band and encode each band as soon as it is finished.
    pub(super) fn streamed_writers<'s>(&'s self, set: &'s BandSet, inputs: &'s StreamInputs) -> Vec<(usize, Writer<'s>)> {
        let mut out: Vec<(usize, Writer<'s>)> = Vec::new();
        let dir = inputs.outdir;
        let png = move |name: &'static str, plane: Plane, channels: u32| -> Writer<'s> {
            // The noisy maps as noisy, each with its best filter; the masks as patterned
            // (`png8`'s measurements).
            let coding = match plane {
                Plane::Normals | Plane::Preview => Png8Coding::Noisy(RowFilter::Paeth),
                Plane::Color => Png8Coding::Noisy(RowFilter::Average),
                _ => Png8Coding::Patterned,
            };
            Box::new(move || {
                let path = dir.join(name);
                let png = write_png8_from(&path, &PlaneRows { set, plane, channels, wait: true }, coding).map_err(writing(&path))?;
                georeferenced(png, dir, &set.grid, &self.citation)
            })
        };
        let tif = move |name: String, plane: Plane, sample: TiffSample, names: Option<Vec<(u32, String)>>| -> Writer<'s> {
            // Ids and codes: overviews (COG) pick a value instead of averaging. Degrees are no
            // height: no unit (and no vertical GeoKey) for the slope.
            let opts = match (sample, plane) {
                (TiffSample::U16 { .. } | TiffSample::U8, _) => self.tiff.for_ids(),
                (_, Plane::Slope) => GeoTiffOptions { unit: None, ..self.tiff },
                _ => self.tiff,
            };
            Box::new(move || {
                let path = dir.join(name);
                let mut files =
                    vec![write_geotiff_from(&path, &PlaneSource { set, plane, wait: true }, &self.citation, sample, &opts).map_err(writing(&path))?];
                // The family names of an id map, where GIS tools show them (`.tif.aux.xml`).
                if let Some(names) = &names {
                    files.push(write_category_names(&path, names)?);
                }
                Ok(files)
            })
        };
        let ids = TiffSample::U16 { scale: 1.0, offset: 0.0 };
        let generator = &self.terrain.generator;
        if self.want(MapKind::Normals) {
            out.push((order(MapKind::Normals), png("normals.png", Plane::Normals, 3)));
        }
        if self.want(MapKind::Splat) {
            out.push((
                order(MapKind::Splat),
                tif("shader_id.tif".into(), Plane::ShaderId, ids, Some(id_names(generator.shader_families.families().iter().map(|f| (f.id, f.name.clone()))))),
            ));
        }
        if self.want(MapKind::Flora) {
            for (k, name) in FLORA_CLASSES.iter().enumerate() {
                let names = if k < 2 {
                    id_names(generator.flora_families.families().iter().map(|f| (f.id, f.name.clone())))
                } else {
                    id_names(generator.radial_families.families().iter().map(|f| (f.id, f.name.clone())))
                };
                out.push((order(MapKind::Flora) + 2 * k, tif(format!("flora_{name}_id.tif"), Plane::FloraId(k as u8), ids, Some(names))));
            }
        }
        if self.want(MapKind::Water) {
            out.push((order(MapKind::Water), tif("water_height.tif".into(), Plane::WaterLevel, TiffSample::F32, None)));
            out.push((order(MapKind::Water) + 1, png("water_mask.png", Plane::WaterMask, 1)));
        }
        if self.want(MapKind::Env) {
            out.push((
                order(MapKind::Env),
                tif(
                    "env_id.tif".into(),
                    Plane::Environment,
                    ids,
                    Some(id_names(generator.environment_families.families().iter().map(|f| (f.id, f.name.clone())))),
                ),
            ));
        }
        if self.want(MapKind::Color) {
            out.push((order(MapKind::Color), png("color.png", Plane::Color, 3)));
        }
        if self.want(MapKind::Exclude) {
            out.push((order(MapKind::Exclude), png("exclude.png", Plane::Exclude, 1)));
            out.push((order(MapKind::Exclude) + 1, png("passable.png", Plane::Passable, 1)));
        }
        if self.want(MapKind::Slope) {
            out.push((order(MapKind::Slope), tif("slope.tif".into(), Plane::Slope, TiffSample::F32, None)));
        }
        if self.want(MapKind::Spawnable) {
            let names = SPAWN_LEGEND.iter().map(|&(v, name, _)| (u32::from(v), name.to_string())).collect();
            out.push((order(MapKind::Spawnable), tif("spawnable.tif".into(), Plane::Spawnable, TiffSample::U8, Some(names))));
            let spawn = self.spawn;
            out.push((
                order(MapKind::Spawnable) + 2,
                Box::new(move || {
                    let codes: Vec<_> =
                        SPAWN_LEGEND.iter().map(|&(value, name, meaning)| serde_json::json!({ "value": value, "name": name, "meaning": meaning })).collect();
                    let legend = serde_json::json!({
                        "codes": codes,
                        "max_slope_degrees": spawn.max_slope,
                        "water_depth_m": spawn.water_depth,
                        "reasons": "a post that is not spawnable has the code of the first reason in this order",
                    });
                    Ok(vec![write_json(&dir.join("spawnable_legend.json"), &legend)?])
                }),
            ));
        }
        if self.want(MapKind::Preview) {
            let rows = PreviewRows { set, heights: inputs.heights, range: inputs.range };
            out.push((
                order(MapKind::Preview),
                Box::new(move || {
                    let path = dir.join("preview.png");
                    let png = write_png8_from(&path, &rows, Png8Coding::Noisy(RowFilter::Paeth)).map_err(writing(&path))?;
                    georeferenced(png, dir, &set.grid, &self.citation)
                }),
            ));
        }
        out
    }

    /// The maps that need a figure of the whole grid, from the finished band checkpoints
    /// (their metas hold the figures): splat channels and legend, flora densities and legend,
    /// per-family flora maps, the scatter, and SMAP (whose 8 m chunks come from the height
    /// evaluator itself).
    pub(super) fn whole_grid_writers(&self, set: &BandSet, inputs: &StreamInputs) -> crate::Result<Vec<(usize, Vec<WrittenFile>)>> {
        let metas: Vec<((u32, u32), BandMeta)> =
            set.bands().into_iter().map(|(r0, rows)| read_meta(&set.path(r0, rows)).map(|m| ((r0, rows), m))).collect::<io::Result<_>>()?;
        let dir = inputs.outdir;
        let generator = &self.terrain.generator;
        // The splat maps on a thread of their own, beside the flora maps: each reads the
        // checkpoints and deflates in parallel, but their reading is serial.
        let splat = || -> crate::Result<Vec<(usize, Vec<WrittenFile>)>> {
            if !self.want(MapKind::Splat) {
                return Ok(Vec::new());
            }
            let mut families: Vec<i32> = metas.iter().flat_map(|(_, m)| m.splat_families.iter().copied()).collect();
            families.sort_unstable();
            families.dedup();
            let mut files = Vec::new();
            let mut legend = Vec::new();
            for (k, chunk) in families.chunks(4).enumerate() {
                let name = format!("splat_{k}.png");
                let channels = std::array::from_fn(|ch| chunk.get(ch).copied());
                let path = dir.join(&name);
                let png = write_png8_from(&path, &SplatRows { set, channels }, Png8Coding::Noisy(RowFilter::Up)).map_err(writing(&path))?;
                files.extend(georeferenced(png, dir, &set.grid, &self.citation)?);
                for (ch, f) in chunk.iter().enumerate() {
                    let fam = generator.shader_families.families().iter().find(|x| x.id == *f);
                    legend.push(serde_json::json!({
                        "image": name, "channel": CHANNELS[ch], "family_id": f,
                        "name": fam.map(|x| x.name.clone()), "surface_properties": fam.map(|x| x.surface_properties.clone()),
                        "color": fam.map(|x| x.color), "shaders": fam.map(|x| x.children.iter().map(|c| c.name.clone()).collect::<Vec<_>>()),
                    }));
                }
            }
            files.push(write_json(
                &dir.join("splat_legend.json"),
                &serde_json::json!({ "channels": legend, "weights": "per post, summing to 255 where a shader applies" }),
            )?);
            // Something to look at, and the engines' own packings of the same weights.
            files.extend(georeferenced(engine_splat::write_preview(dir, set, &families, generator)?, dir, &set.grid, &self.citation)?);
            files.extend(engine_splat::write_engine_maps(dir, set, &families, generator, inputs.export, inputs.reporter)?);
            Ok(vec![(order(MapKind::Splat) + 1, files)])
        };
        let mut out = Vec::new();
        let splat_written = std::thread::scope(|scope| -> crate::Result<Vec<(usize, Vec<WrittenFile>)>> {
            let splat = scope.spawn(splat);
            let rest = self.flora_and_other_whole_grid_maps(set, inputs, &metas);
            let splat = splat.join().map_err(|_| crate::Error::Invalid("the splat map writer panicked".into()))?;
            out.extend(rest?);
            splat
        })?;
        out.extend(splat_written);
        Ok(out)
    }

    /// The whole-grid maps but the splat ones (see [`SurfaceMapsJob::whole_grid_writers`]).
    pub(super) fn flora_and_other_whole_grid_maps(
        &self,
        set: &BandSet,
        inputs: &StreamInputs,
        metas: &[((u32, u32), BandMeta)],
    ) -> crate::Result<Vec<(usize, Vec<WrittenFile>)>> {
        let dir = inputs.outdir;
        let generator = &self.terrain.generator;
        let mut out = Vec::new();
        if self.want(MapKind::Flora) {
            let mut legend = serde_json::Map::new();
            for (class, name) in FLORA_CLASSES.iter().enumerate() {
                let range = metas.iter().filter_map(|(_, m)| m.flora_range[class]).reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)));
                let opts = Png16Options { min_max: Some(range.unwrap_or((f32::NAN, f32::NAN))), ..Default::default() };
                let src = PlaneSource { set, plane: Plane::FloraProbability(class as u8), wait: false };
                let path = dir.join(format!("flora_{name}_density.png"));
                let png = write_png16_from(&path, &src, 1.0 / 65535.0, 0.0, &opts).map_err(writing(&path))?;
                out.push((order(MapKind::Flora) + 2 * class + 1, georeferenced(png, dir, &set.grid, &self.citation)?));
                let mut used: Vec<i32> = metas.iter().flat_map(|(_, m)| m.flora_ids[class].iter().copied()).collect();
                used.sort_unstable();
                used.dedup();
                let entries: Vec<serde_json::Value> = used
                    .iter()
                    .map(|id| {
                        let (fname, density) = if class < 2 {
                            generator.flora_families.families().iter().find(|f| f.id == *id).map(|f| (f.name.clone(), f.density)).unzip()
                        } else {
                            generator.radial_families.families().iter().find(|f| f.id == *id).map(|f| (f.name.clone(), f.density)).unzip()
                        };
                        serde_json::json!({ "family_id": id, "name": fname, "density": density })
                    })
                    .collect();
                legend.insert(name.to_string(), serde_json::Value::Array(entries));
            }
            let legend = serde_json::json!({ "classes": legend, "density_png": "placement probability of the most likely family, 0..65535 = 0..1 (swg-trn §5.9 stack reading)" });
            out.push((order(MapKind::Flora) + 9, vec![write_json(&dir.join("flora_legend.json"), &legend)?]));
        }
        if self.want(MapKind::FloraFamilies) {
            let mut files = Vec::new();
            for (class, name) in FLORA_CLASSES.iter().enumerate() {
                let mut families: Vec<i32> = metas.iter().flat_map(|(_, m)| m.probability_families[class].iter().copied()).collect();
                families.sort_unstable();
                families.dedup();
                for f in families {
                    let src = FamilySource { set, metas, class, family: f, cache: Default::default() };
                    let path = dir.join(format!("flora_{name}_family_{f}.png"));
                    let png = write_png16_from(&path, &src, 1.0 / 65535.0, 0.0, &Png16Options::default()).map_err(writing(&path))?;
                    files.extend(georeferenced(png, dir, &set.grid, &self.citation)?);
                }
            }
            out.push((order(MapKind::FloraFamilies), files));
        }
        if self.want(MapKind::Scatter) {
            out.push((order(MapKind::Scatter), write_scatter(dir, set, metas, inputs.height_evaluator, self.surface.plan.half_width)?));
        }
        if self.want(MapKind::Smap) {
            out.push((order(MapKind::Smap), write_smap(dir, inputs.grid, inputs.height_evaluator, &self.citation)?));
        }
        Ok(out)
    }
}
