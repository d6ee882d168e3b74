//! `trnbake nwn2 …`: the command line of the NWN2 target (clap arguments and runners).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};

use trnbake_nwn2::export::{self, AreaOptions};

use trnbake_nwn2::from_swg::SwgSource;
use trnbake_nwn2::model::*;
use trnbake_nwn2::walkmesh::{self, VertexGrid, WalkOptions};
use trnbake_nwn2::{check, codec, info};

#[derive(Args, Debug)]
pub struct Nwn2Args {
    #[command(subcommand)]
    pub command: Nwn2Command,
}

#[derive(Subcommand, Debug)]
pub enum Nwn2Command {
    /// Summarise a .trn/.trx: size in megatiles, packets, vertex and triangle counts,
    /// walkable share, islands, textures.
    #[command(after_help = "Examples:\n  trnbake nwn2 info ../shared/data/nwn2/TestImportExportTRN.trx")]
    Info {
        file: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Run every validation check of nwn2 §A.8; exit 1 when any fails.
    #[command(after_help = "Examples:\n  trnbake nwn2 check area.trx --strict              # area.trx from `trnbake nwn2 export --trx`")]
    Check {
        file: PathBuf,
        /// Also the strict checks (unique tile counts, centroids in tiles, flags 0/1, …).
        #[arg(long)]
        strict: bool,
    },
    /// Write a .trn/.trx as JSON (arrays as base64 of their bytes; rewrites byte-exact).
    #[command(after_help = "Examples:\n  trnbake nwn2 decompile ../shared/data/nwn2/TestImportExportTRN.trx -o area.json")]
    Decompile {
        file: PathBuf,
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Write a JSON made by `nwn2 decompile` back as a .trn/.trx.
    #[command(after_help = "Examples:\n  trnbake nwn2 compile area.json -o copy.trx")]
    Compile {
        file: PathBuf,
        #[arg(long, short)]
        output: PathBuf,
    },
    /// Export an NWN2 area from a SWG .trn (evaluated at the vertices) or a heightmap.
    #[command(after_help = "\
Examples:
  trnbake nwn2 export ../shared/data/swg/terrain/tatooine.trn --region 3400,-4900,3880,-4420 --height-range -20,60 -o area.trn --trx
  trnbake nwn2 export out/height.tif --megatiles 8x8 --height-range -50,50 -o dem.trn")]
    Export(ExportArgs),
    /// Time the export of 12×12 and 16×16 megatiles from a SWG region (end to end and the
    /// walkmesh bake alone), with peak memory.
    #[command(after_help = "Examples:\n  trnbake nwn2 bench ../shared/data/swg/terrain/tatooine.trn --sizes 4,8")]
    Bench {
        file: PathBuf,
        #[arg(long, value_name = "DIR")]
        data_root: Option<PathBuf>,
        /// Square sizes in megatiles.
        #[arg(long, value_delimiter = ',', default_values_t = [12u32, 16])]
        sizes: Vec<u32>,
        /// World X0,Z0 of the south-west corner (default: centred on the map origin).
        #[arg(long, value_name = "X0,Z0", allow_hyphen_values = true)]
        at: Option<String>,
        #[arg(long)]
        json: bool,
    },
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Toggle {
    On,
    Off,
}

#[derive(Args, Debug, Clone)]
pub struct ExportArgs {
    /// A SWG .trn, or any heightmap `trnbake convert` reads (.tif, .png, .ter, .r16, .r32).
    pub input: PathBuf,
    /// The area .trn to write.
    #[arg(long, short)]
    pub output: PathBuf,
    /// Also write the baked .trx beside it (border dropped, as the game loads it).
    #[arg(long)]
    pub trx: bool,
    /// Area size in megatiles (40 m each), e.g. 12x12.
    #[arg(long, value_name = "WxH")]
    pub megatiles: Option<String>,
    /// The input region: SWG world metres (x east, z north), or the heightmap's own coordinates.
    #[arg(long, value_name = "X0,Z0,X1,Z1", allow_hyphen_values = true)]
    pub region: Option<String>,
    /// Walkable ⇔ slope at most this many degrees.
    #[arg(long, default_value_t = 45.0, allow_negative_numbers = true)]
    pub walkable_slope: f64,
    /// Up to six terrain texture names (comma-separated); texture 0 covers the area.
    #[arg(long, value_delimiter = ',')]
    pub textures: Vec<String>,
    /// The game's `terrainmaterials.2da`: footstep material and colour of each texture (without
    /// it, the toolset sample's four textures are known and other names are guessed).
    #[arg(long, value_name = "FILE.2da")]
    pub materials: Option<PathBuf>,
    /// Rescale heights linearly onto MIN,MAX (needed when they leave the game range).
    #[arg(long, value_name = "MIN,MAX", allow_hyphen_values = true)]
    pub height_range: Option<String>,
    /// Where SWG bitmap paths resolve (as for `trnbake bake`).
    #[arg(long, value_name = "DIR")]
    pub data_root: Option<PathBuf>,
    /// SWG road and river height model (swg-trn §5.12).
    #[arg(long, value_enum, default_value_t = Toggle::Off)]
    pub roads: Toggle,
    /// TRWH id (also the prefix of the megatile names).
    #[arg(long, default_value_t = 1)]
    pub id: u32,
    /// Blend maps from the SWG shader (splat) weights: the most common shader families become
    /// textures 0, 1, … (`--textures` names them; default the toolset sample's four).
    #[arg(long, value_enum, default_value_t = Toggle::On)]
    pub splat: Toggle,
}

/// SWG splat cells per megatile side (1.25 m; each covers 4 × 4 blend-map pixels).
const SPLAT_RES: u32 = 32;

pub fn run(args: &Nwn2Args, quiet: bool) -> Result<()> {
    match &args.command {
        Nwn2Command::Info { file, json } => {
            let f = trnbake_nwn2::load(file)?;
            let i = info::info(&f);
            let mut out = std::io::stdout().lock();
            if *json {
                writeln!(out, "{}", serde_json::to_string_pretty(&i)?)?;
            } else {
                write!(out, "{}", i.text())?;
            }
            Ok(())
        }
        Nwn2Command::Check { file, strict } => {
            let f = trnbake_nwn2::load(file)?;
            let findings = check::check(&f, *strict);
            let mut out = std::io::stdout().lock();
            for x in &findings {
                writeln!(out, "FAIL {x}")?;
            }
            if !findings.is_empty() {
                bail!("{}: {} check(s) failed", file.display(), findings.len());
            }
            writeln!(out, "{}: all checks pass{}", file.display(), if *strict { " (strict)" } else { "" })?;
            Ok(())
        }
        Nwn2Command::Decompile { file, output } => decompile(file, output.as_deref()),
        Nwn2Command::Compile { file, output } => {
            let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
            let f = from_json(&text).with_context(|| file.display().to_string())?;
            trnbake_nwn2::save(output, &f)?;
            Ok(())
        }
        Nwn2Command::Export(a) => export_cmd(a, quiet).map(|_| ()),
        Nwn2Command::Bench { file, data_root, sizes, at, json } => bench(file, data_root.clone(), sizes, at.as_deref(), *json),
    }
}

fn from_json(text: &str) -> Result<Nwn2File> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| anyhow::anyhow!("at {}: {}", e.path(), e.inner()))
}

fn decompile(file: &Path, output: Option<&Path>) -> Result<()> {
    let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    let f = codec::read(&bytes).with_context(|| file.display().to_string())?;
    let json = serde_json::to_string_pretty(&f)?;
    // The JSON must compile back to the same bytes (NaN in a plain float field would not).
    let back = codec::write(&from_json(&json)?)?;
    if back != bytes {
        bail!("{}: the JSON would not compile back to the same bytes (a non-finite float in a plain field?)", file.display());
    }
    match output {
        Some(p) => trnbake_raster::fsutil::write_atomic(p, json.as_bytes()).with_context(|| format!("writing {}", p.display()))?,
        None => writeln!(std::io::stdout().lock(), "{json}")?,
    }
    Ok(())
}

fn pair<T: std::str::FromStr>(s: &str, sep: char, what: &str) -> Result<Vec<T>> {
    s.split(sep).map(|p| p.trim().parse::<T>().map_err(|_| anyhow::anyhow!("{what}: `{s}` is not a list of numbers"))).collect()
}

fn is_swg(path: &Path) -> Result<bool> {
    let mut head = [0u8; 4];
    let mut f = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let n = std::io::Read::read(&mut f, &mut head)?;
    Ok(n == 4 && &head == b"FORM")
}

/// What an export wrote.
pub struct Exported {
    pub trn: PathBuf,
    pub trx: Option<PathBuf>,
}

pub fn export_cmd(a: &ExportArgs, quiet: bool) -> Result<Exported> {
    if !(a.walkable_slope > 0.0 && a.walkable_slope <= 90.0) {
        bail!("--walkable-slope {}: must be in (0, 90] degrees", a.walkable_slope);
    }
    let megatiles = match &a.megatiles {
        Some(s) => {
            let v: Vec<u32> = pair(s, 'x', "--megatiles")?;
            if v.len() != 2 {
                bail!("--megatiles: `{s}` is not WxH");
            }
            Some((v[0], v[1]))
        }
        None => None,
    };
    let region = match &a.region {
        Some(s) => {
            let v: Vec<f64> = pair(s, ',', "--region")?;
            if v.len() != 4 || !(v[2] > v[0] && v[3] > v[1]) {
                bail!("--region: `{s}` must be X0,Z0,X1,Z1 with X1 > X0 and Z1 > Z0");
            }
            Some([v[0], v[1], v[2], v[3]])
        }
        None => None,
    };
    let range = match &a.height_range {
        Some(s) => {
            let v: Vec<f32> = pair(s, ',', "--height-range")?;
            if v.len() != 2 {
                bail!("--height-range: `{s}` is not MIN,MAX");
            }
            Some((v[0], v[1]))
        }
        None => None,
    };
    // Steps: the input (heights, water, splat), the area, the .trx walkmesh.
    let term = crate::report::Terminal::new(quiet);
    let pb = trnbake_bake::Progress::new(&term, 3, "steps", "nwn2 export");
    let sized = |w: f64, h: f64| ((w / 40.0).round().max(1.0) as u32, (h / 40.0).round().max(1.0) as u32);
    let (mut heights, water, (w, h));
    let mut blend = None;
    let mut textures = a.textures.clone();
    if is_swg(&a.input)? {
        let opts = trnbake_swg::plan::HeightOptions { roads: a.roads == Toggle::On, data_root: a.data_root.clone(), ..Default::default() };
        let swg = SwgSource::open(&a.input, &opts)?;
        (w, h) = match (megatiles, region) {
            (Some(m), _) => m,
            (None, Some(r)) => sized(r[2] - r[0], r[3] - r[1]),
            (None, None) => (12, 12),
        };
        let (cols, rows) = export::grid_size(w, h)?;
        let (x0, z0) = match region {
            Some(r) => {
                // SWG heights are evaluated at the vertices themselves: no horizontal scaling.
                if megatiles.is_some() && ((r[2] - r[0] - 40.0 * f64::from(w)).abs() > 0.01 || (r[3] - r[1] - 40.0 * f64::from(h)).abs() > 0.01) {
                    bail!(
                        "--region is {} x {} m but {w}x{h} megatiles are {} x {} m; SWG terrain is sampled at true scale",
                        r[2] - r[0],
                        r[3] - r[1],
                        40 * w,
                        40 * h
                    );
                }
                (r[0], r[1])
            }
            None => (-20.0 * f64::from(w), -20.0 * f64::from(h)),
        };
        let half = swg.map_half_width();
        if x0 < -half || z0 < -half || x0 + 40.0 * f64::from(w) > half || z0 + 40.0 * f64::from(h) > half {
            bail!("the area {x0},{z0} + {} x {} m leaves the SWG map (±{half} m)", 40 * w, 40 * h);
        }
        pb.set_stage("heights");
        heights = swg.heights(x0, z0, cols, rows);
        water = swg.water(x0, z0, w, h, &heights);
        if a.splat == Toggle::On {
            pb.set_stage("splat");
            let n = if textures.is_empty() { export::DEFAULT_PALETTE.len() } else { textures.len() };
            let (families, b) = swg.splat(x0, z0, w, h, SPLAT_RES, n)?;
            // Without --textures each family gets the texture its name suggests; the map is
            // printed either way (with --quiet too: it is what the area's textures mean).
            let by_name = textures.is_empty();
            if by_name {
                textures = families.iter().map(|(_, name)| export::default_texture(name).0.to_string()).collect();
                if textures.is_empty() {
                    textures.push(export::DEFAULT_TEXTURE.to_string());
                }
            }
            term.suspend(|| {
                for (k, (id, name)) in families.iter().enumerate() {
                    let why = match export::default_texture(name).1 {
                        _ if !by_name => " (--textures)".to_string(),
                        Some(word) => format!(" (by name: {word})"),
                        None => " (by name: no grass, rock, sand or mud word; dirt)".to_string(),
                    };
                    eprintln!("texture {k} {}: SWG shader family {id} `{name}`{why}", textures.get(k).map_or("", |s| s.as_str()));
                }
            });
            blend = Some(b);
        }
        pb.inc(1);
    } else {
        let imp = trnbake_raster::readers::open(&a.input, &Default::default())?;
        let g = imp.source.grid();
        let r = region.unwrap_or([g.x0, g.z0, g.east_x(), g.north_z()]);
        (w, h) = megatiles.unwrap_or_else(|| sized(r[2] - r[0], r[3] - r[1]));
        let (cols, rows) = export::grid_size(w, h)?;
        heights = export::sample_source(&*imp.source, r, cols, rows)?;
        water = vec![None; (w * h) as usize];
        pb.inc(1);
    }
    pb.set_stage("area");
    let (cols, rows) = export::grid_size(w, h)?;
    let (scale, offset) = export::fit_heights(&mut heights, cols, range)?;
    let water: Vec<Option<f32>> = water.into_iter().map(|l| l.map(|l| (f64::from(l) * scale + offset) as f32)).collect();
    let grid = VertexGrid { cols, rows, heights };
    let name = a.output.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let mut opts = AreaOptions {
        megatiles: (w, h),
        id: a.id,
        name,
        textures,
        materials: match &a.materials {
            Some(p) => Some(trnbake_nwn2::materials::TerrainMaterials::load(p)?),
            None => None,
        },
        walk: WalkOptions { max_slope_deg: a.walkable_slope, trx: false, ..Default::default() },
        blend,
    };
    let trn = export::build(&grid, &water, &opts)?;
    trnbake_nwn2::save(&a.output, &trn)?;
    pb.inc(1);
    let trx_path = if a.trx {
        pb.set_stage("walkmesh (.trx)");
        opts.walk.trx = true;
        let mut trx = trn;
        *trx.aswm_mut().expect("built with an ASWM") = export::bake_walkmesh(&grid, &opts)?;
        let p = a.output.with_extension("trx");
        trnbake_nwn2::save(&p, &trx)?;
        Some(p)
    } else {
        None
    };
    pb.inc(1);
    pb.finish();
    eprintln!("wrote {} ({w} x {h} megatiles){}", a.output.display(), trx_path.as_ref().map(|p| format!(" and {}", p.display())).unwrap_or_default());
    Ok(Exported { trn: a.output.clone(), trx: trx_path })
}

#[derive(serde::Serialize)]
struct BenchRow {
    megatiles: u32,
    vertices: usize,
    triangles: usize,
    islands: usize,
    /// `nwn2 export … --trx` as the command runs it: load, heights, water, splat, TRRN,
    /// both walkmeshes, compression, both files written.
    end_to_end_s: f64,
    /// The SWG heights of the vertex grid alone.
    heights_s: f64,
    /// The TRN walkmesh bake alone (triangles, edges, tiles, path tables, islands).
    walkmesh_s: f64,
    trn_bytes: u64,
    trx_bytes: u64,
}

fn bench(file: &Path, data_root: Option<PathBuf>, sizes: &[u32], at: Option<&str>, json: bool) -> Result<()> {
    let opts = trnbake_swg::plan::HeightOptions { data_root: data_root.clone(), ..Default::default() };
    let t_load = Instant::now();
    let swg = SwgSource::open(file, &opts)?;
    let load_s = t_load.elapsed().as_secs_f64();
    let dir = std::env::temp_dir().join(format!("trnbake-nwn2-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let mut rows = Vec::new();
    for &n in sizes {
        let (cols, _) = export::grid_size(n, n)?;
        let (x0, z0) = match at {
            Some(s) => {
                let v: Vec<f64> = pair(s, ',', "--at")?;
                if v.len() != 2 {
                    bail!("--at: `{s}` is not X0,Z0");
                }
                (v[0], v[1])
            }
            None => (-20.0 * f64::from(n), -20.0 * f64::from(n)),
        };
        let out = dir.join(format!("bench{n}.trn"));
        let args = ExportArgs {
            input: file.to_path_buf(),
            output: out.clone(),
            trx: true,
            megatiles: Some(format!("{n}x{n}")),
            region: Some(format!("{x0},{z0},{},{}", x0 + 40.0 * f64::from(n), z0 + 40.0 * f64::from(n))),
            walkable_slope: 45.0,
            textures: vec![],
            materials: None,
            height_range: Some("-50,50".into()),
            data_root: data_root.clone(),
            roads: Toggle::Off,
            id: 1,
            splat: Toggle::On,
        };
        let t0 = Instant::now();
        let done = export_cmd(&args, true)?;
        let end_to_end_s = t0.elapsed().as_secs_f64();
        let trn_bytes = std::fs::metadata(&done.trn)?.len();
        let trx_bytes = done.trx.as_ref().map_or(Ok(0), |p| std::fs::metadata(p).map(|m| m.len()))?;
        let _ = std::fs::remove_file(&done.trn);
        if let Some(p) = &done.trx {
            let _ = std::fs::remove_file(p);
        }
        let t1 = Instant::now();
        let mut heights = swg.heights(x0, z0, cols, cols);
        let heights_s = t1.elapsed().as_secs_f64();
        export::fit_heights(&mut heights, cols, Some((-50.0, 50.0)))?;
        let grid = VertexGrid { cols, rows: cols, heights };
        let t2 = Instant::now();
        let aswm = walkmesh::bake(&grid, &WalkOptions::default())?;
        let walkmesh_s = t2.elapsed().as_secs_f64();
        rows.push(BenchRow {
            megatiles: n,
            vertices: aswm.vertices.len(),
            triangles: aswm.triangles.len(),
            islands: aswm.islands.len(),
            end_to_end_s,
            heights_s,
            walkmesh_s,
            trn_bytes,
            trx_bytes,
        });
    }
    let _ = std::fs::remove_dir(&dir);
    let peak = crate::bench::peak_rss_bytes();
    let mut out = std::io::stdout().lock();
    if json {
        let v = serde_json::json!({ "file": file, "load_s": load_s, "threads": rayon::current_num_threads(), "rows": rows, "peak_rss_bytes": peak });
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    writeln!(out, "{}: loaded and planned in {load_s:.2} s, {} threads", file.display(), rayon::current_num_threads())?;
    writeln!(
        out,
        "{:>9} {:>9} {:>9} {:>8} {:>12} {:>9} {:>10} {:>7} {:>7}",
        "megatiles", "vertices", "triangles", "islands", "end-to-end s", "heights s", "walkmesh s", "TRN MB", "TRX MB"
    )?;
    for r in &rows {
        writeln!(
            out,
            "{:>9} {:>9} {:>9} {:>8} {:>12.3} {:>9.3} {:>10.3} {:>7.2} {:>7.2}",
            format!("{0}x{0}", r.megatiles),
            r.vertices,
            r.triangles,
            r.islands,
            r.end_to_end_s,
            r.heights_s,
            r.walkmesh_s,
            r.trn_bytes as f64 / 1e6,
            r.trx_bytes as f64 / 1e6
        )?;
    }
    writeln!(out, "peak RSS {:.1} MiB", peak as f64 / (1 << 20) as f64)?;
    Ok(())
}
