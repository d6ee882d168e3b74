//! Command-line interface (clap derive). `main` parses, then hands over to [`crate::app`].

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(name = "trnbake", version, about = "Bake Star Wars Galaxies procedural terrain (.trn) into heightmaps and other rasters")]
pub struct Cli {
    /// Print only errors.
    #[arg(long, short, global = true)]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Summarise a .trn: header, families, layer and rule counts, referenced bitmaps, warnings.
    #[command(after_help = INFO_EXAMPLES)]
    Info {
        /// The .trn file (omit for the built-in demo terrain).
        file: Option<PathBuf>,
        /// Also print the layer tree.
        #[arg(long)]
        tree: bool,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write the typed model of a .trn as JSON (floats round-trip exactly).
    #[command(after_help = DECOMPILE_EXAMPLES)]
    Decompile {
        file: PathBuf,
        /// Output JSON file (default: standard output).
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Validate a JSON terrain (reporting every problem) and write it as a .trn.
    #[command(after_help = COMPILE_EXAMPLES)]
    Compile {
        file: PathBuf,
        #[arg(long, short)]
        output: PathBuf,
    },
    /// Print exact ground heights at points: `x,z` in, `x,z,height` out (4 decimals), in input
    /// order. A point off the map is an error that names the map's extent.
    #[command(after_help = SAMPLE_EXAMPLES)]
    Sample {
        /// The .trn file (omit for the built-in demo terrain).
        file: Option<PathBuf>,
        /// A CSV of `x,z` lines (world metres; x east, z north, origin at the map centre); `-` for stdin.
        #[arg(long, conflicts_with = "at")]
        points: Option<PathBuf>,
        /// A single point `X,Z`.
        #[arg(long, value_name = "X,Z", allow_hyphen_values = true)]
        at: Option<String>,
        #[command(flatten)]
        height: HeightArgs,
    },
    /// Measure fidelity against the maps the original tool baked into a 0015 file:
    /// PFPM flora heights, WMAP water and SMAP rough-terrain bits (swg-trn §9.2).
    #[command(after_help = FIDELITY_EXAMPLES)]
    Fidelity {
        file: PathBuf,
        /// Random cells/chunks per check.
        #[arg(long, default_value_t = 1000)]
        cells: usize,
        /// Seed of the cell choice.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        height: HeightArgs,
        #[command(flatten)]
        surface: SurfaceArgs,
        /// PIMP: positions sampled per side of each 16 m cell (1 = the cell centre); the
        /// cell's chance of a family is their mean, since the original object lies somewhere
        /// in its cell (4: best agreement and calibration, README Surface maps).
        #[arg(long, default_value_t = 4)]
        pimp_samples: u32,
        /// PIMP: grow each sampled cell by this many metres on each side (negative: shrink
        /// it). Default: 1 − the header's collidable tileBorder, the box where the placement
        /// RNG puts a cell's object, less 1 m so the samples still land on posts (swg-trn
        /// §2.2 [?]; tatooine −3, naboo −1.25, yavin4 −6, dathomir −6.25; README).
        #[arg(long, allow_hyphen_values = true)]
        pimp_reach: Option<f32>,
        /// PIMP: evaluate every cell of the flora map once instead of 4 × --cells random
        /// ones (a 4 km map has 65,536 cells, where the random sample meets only a few dozen
        /// flora cells; a 16 km planet has 1,048,576 and takes minutes).
        #[arg(long)]
        pimp_every_cell: bool,
        /// Trace every missed PIMP flora cell to its rules and write OUT/misses.csv (per
        /// missed cell: the baked chances, SOE's family, and each rule that added, removed or
        /// blocked either family, with its layer path, filters, inputs and weights) and
        /// OUT/misses.png (hits green, misses red, "predicted none" blue). Runs the PIMP
        /// check only.
        #[arg(long)]
        explain: bool,
        /// Output folder of --explain.
        #[arg(long, short, default_value = "explain", requires = "explain")]
        out: PathBuf,
        /// Analysis: write one JSON line per sampled PIMP cell (4 × --cells, or every cell
        /// of --dump-rect) to this file: PIMP's family, PFPM's height and each of the cell's
        /// 9×9 posts (height, normal, collidable flora stack). Runs nothing else.
        #[arg(long, value_name = "FILE", hide = true)]
        dump_cells: Option<PathBuf>,
        /// With --dump-cells: the cells C0,R0,C1,R1 (columns [C0, C1), rows [R0, R1)).
        #[arg(long, value_name = "C0,R0,C1,R1", value_delimiter = ',', hide = true)]
        dump_rect: Option<Vec<u32>>,
    },
    /// Bake a height grid (GPU or CPU) into OUTDIR/height.tif, height.png and manifest.json
    /// (more formats, engine presets and tiles with --format, --preset, --tiles).
    #[command(after_help = BAKE_EXAMPLES)]
    Bake(BakeArgs),
    /// Assemble the shard folders of one sharded bake into OUT.
    #[command(after_help = MERGE_EXAMPLES)]
    Merge {
        /// Output folder.
        #[arg(long, short)]
        output: PathBuf,
        /// Shard folders.
        #[arg(required = true)]
        shards: Vec<PathBuf>,
        #[command(flatten)]
        export: ExportArgs,
    },
    /// Convert a heightmap between formats, keeping heights in metres: reads .ter, GeoTIFF,
    /// 16-bit PNG and RAW (R16/R32); writes any `--format` (by default the one OUT's
    /// extension names; `.vrt` writes GeoTIFF tiles and their mosaic) plus OUT.json.
    #[command(after_help = CONVERT_EXAMPLES)]
    Convert(ConvertArgs),
    /// SCS (ETS2/ATS) maps: info, check, export a heightmap as Bezier patches, rasterize, bench.
    #[command(subcommand)]
    Scs(crate::scs_cmd::ScsCommand),
    /// Neverwinter Nights 2 area terrain (.trn/.trx): info, check, decompile/compile, export, bench.
    Nwn2(crate::nwn2_cmd::Nwn2Args),
    /// Recast/Detour navmesh tiles of a planet for game servers (OUT/navmesh.bin, the MSET set
    /// Detour loads, and navmesh.json); `navmesh path` prints a path through a built set.
    Navmesh(crate::navmesh_cmd::NavmeshArgs),
    /// Re-bake every fixture of a golden folder and compare each map with its expected image
    /// (per-post difference in LSB, posts over tolerance, PSNR); writes a Markdown report, a
    /// JUnit XML file and, per failing map, a diff heat map and a side-by-side image. Exits 1
    /// when a map fails. `--bless` rewrites the goldens that differ instead.
    #[command(after_help = CHECK_EXAMPLES)]
    Check {
        /// The golden folder (holding golden.json).
        #[arg(long, default_value = "golden")]
        golden: PathBuf,
        #[arg(long, value_enum, default_value_t = trnbake_bake::Backend::Auto)]
        backend: trnbake_bake::Backend,
        /// Rewrite the images (and golden.json) of maps that differ, atomically, and print what changed.
        #[arg(long)]
        bless: bool,
        /// Write report.html (pictures and a slider per failing map), report.md, summary.md (for a
        /// CI job summary), junit.xml and the images of failing maps into DIR; without it no
        /// report is written (not written by --bless). With $GITHUB_STEP_SUMMARY set, summary.md's
        /// text is appended there either way.
        #[arg(long, value_name = "DIR")]
        report: Option<PathBuf>,
        /// Only this fixture (repeatable).
        #[arg(long, value_name = "NAME")]
        fixture: Vec<String>,
    },
    /// List the GPU adapters wgpu sees.
    #[command(after_help = ADAPTERS_EXAMPLES)]
    Adapters,
    /// Measure posts/second of the height pass on the CPU and GPU backends in one run.
    #[command(after_help = BENCH_EXAMPLES)]
    Bench {
        /// The .trn file (omit for the built-in demo terrain).
        file: Option<PathBuf>,
        /// Repetitions per case (the best is reported).
        #[arg(long, default_value_t = 2)]
        repeat: usize,
        /// Print the results as JSON.
        #[arg(long)]
        json: bool,
        /// Also bake the full map at 16 m spacing on the CPU backend (the CPU reference figure of the height issue).
        #[arg(long)]
        full_16m: bool,
        /// Only the full-planet case: the whole map's heights in host memory at each of these
        /// spacings (e.g. `--planet 2,1`, the figures for a real GPU), split into plan upload,
        /// compute without read-back, and end to end; on the GPU backend, and on the CPU too
        /// with `--planet-cpu`.
        #[arg(long, value_delimiter = ',', value_name = "SPACINGS")]
        planet: Option<Vec<f64>>,
        /// With --planet: also time the CPU backend.
        #[arg(long, requires = "planet")]
        planet_cpu: bool,
        /// With --planet: GPU tile side in posts (default: as `bake`, the largest that fits one binding, at most 2048).
        #[arg(long, requires = "planet")]
        planet_tile: Option<u32>,
        /// Which backends the standard cases time: both (default), or only the CPU (its rows
        /// carry the lane width, see TRNBAKE_LANES) or only the GPU.
        #[arg(long, value_enum, default_value_t = BenchBackends::Both)]
        backends: BenchBackends,
        #[command(flatten)]
        height: HeightArgs,
        /// The surface readings the surface-pass rows use (the defaults unless given).
        #[command(flatten)]
        surface: SurfaceArgs,
    },
    /// Web map tiles of a bake: Terrarium heights and map layers as a Web Mercator XYZ pyramid
    /// (OUT/tiles/LAYER/Z/X/Y.png), OUT/tiles.json and the viewer page OUT/index.html
    /// (docs: The web viewer).
    #[command(after_help = TILES_EXAMPLES)]
    Tiles(TilesArgs),
    /// Serve a folder (a `tiles` output) on 127.0.0.1 with HTTP range requests; prints the URL,
    /// runs until Ctrl-C.
    #[command(after_help = SERVE_EXAMPLES)]
    Serve {
        /// The folder to serve.
        dir: PathBuf,
        /// Port (0: any free port).
        #[arg(long, default_value_t = 8080)]
        port: u16,
    },
    /// Measure MB/s of every height writer, with and without compression, on a synthetic grid
    /// (streamed: the grid is never held), and the peak memory of the run. `--posts 16385`
    /// is a 16384 m planet at 1 m.
    #[command(after_help = BENCH_EXPORT_EXAMPLES)]
    BenchExport {
        /// Posts a side of the synthetic square grid.
        #[arg(long, default_value_t = 4097)]
        posts: u32,
        /// Folder for the files (each is deleted after it is measured); default: the system temp folder.
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Formats to measure (default: all).
        #[arg(long, value_delimiter = ',')]
        format: Option<Vec<String>>,
        /// Print the results as JSON.
        #[arg(long)]
        json: bool,
    },
}

// The examples of each command's --help, one command a line (`# …` comments them). Every one
// runs as written from a folder beside the repository's `../shared/data` (tests/cli.rs runs
// them all, in order: later ones may read what earlier ones wrote).

const INFO_EXAMPLES: &str = "\
Examples:
  trnbake info                                     # the built-in demo terrain
  trnbake info ../shared/data/swg/terrain/tatooine.trn --tree";

const DECOMPILE_EXAMPLES: &str = "\
Examples:
  trnbake decompile ../shared/data/swg/terrain/naboo.trn -o naboo.json";

const COMPILE_EXAMPLES: &str = "\
Examples:
  trnbake compile naboo.json -o naboo.trn          # naboo.json from `trnbake decompile`";

const SAMPLE_EXAMPLES: &str = "\
Examples:
  trnbake sample ../shared/data/swg/terrain/tatooine.trn --at 3528,-4804
  trnbake sample --at -5,-5                        # the built-in demo terrain
  trnbake sample ../shared/data/swg/terrain/tatooine.trn --points points.csv";

const FIDELITY_EXAMPLES: &str = "\
Examples:
  trnbake fidelity ../shared/data/swg/terrain/yavin4.trn --data-root ../shared/data/swg";

const BAKE_EXAMPLES: &str = "\
Examples:
  trnbake bake -o out --spacing 8                  # the built-in demo terrain
  trnbake bake ../shared/data/swg/terrain/tatooine.trn -o tatooine --region -1024,-1024,1022,1022 --spacing 8
  trnbake bake -o shard1 --shard 1/2 --maps height
  trnbake bake -o shard2 --shard 2/2 --maps height
  trnbake merge -o merged shard1 shard2
  JOB_COMPLETION_INDEX=0 trnbake bake -o k8s0 --shard auto/2 --maps height   # a Kubernetes Indexed Job's pod";

const MERGE_EXAMPLES: &str = "\
Examples:
  trnbake merge -o merged shard1 shard2            # shard1, shard2 from `trnbake bake --shard K/2`
  trnbake merge -o merged-ter --format ter,png shard1 shard2";

const CONVERT_EXAMPLES: &str = "\
Examples:
  trnbake convert out/height.tif planet.ter
  trnbake convert out/height.tif unreal.png --preset unreal
  trnbake convert out/height.tif map.r16
  trnbake convert map.r16 map.tif --dims 513x513 --spacing 8 --height-range -120,873
  trnbake convert out/height.tif tiles.vrt --tiles 4";

const CHECK_EXAMPLES: &str = "\
Examples:
  trnbake check                                    # trnbake's own corpus in golden/
  trnbake check --golden golden --fixture demo --report out/golden-report  # open out/golden-report/report.html
  trnbake check --golden golden --bless            # after an intended change";

const ADAPTERS_EXAMPLES: &str = "\
Examples:
  trnbake adapters";

const BENCH_EXAMPLES: &str = "\
Examples:
  trnbake bench --backends cpu                     # the built-in demo terrain
  trnbake bench --backends cpu --repeat 1 --json";

const SERVE_EXAMPLES: &str = "\
Examples:
  trnbake serve demo-web --port 0 & sleep 2; kill $!   # demo-web from `trnbake tiles -o demo-web`; open the printed URL";

const BENCH_EXPORT_EXAMPLES: &str = "\
Examples:
  trnbake bench-export --posts 1025 --format tif,png";

/// Output formats, engine preset and tiling (`bake`, `merge`, `convert`; exports.md §4–§6).
#[derive(Args, Debug, Clone, Default)]
pub struct ExportArgs {
    /// Output formats, comma-separated: tif (Float32 GeoTIFF), tif16 (UInt16 GeoTIFF with
    /// scale/offset), ter (Terragen), png (16-bit + .pgw world file), raw and r16 (16-bit
    /// little-endian RAW), r32 (float RAW). Default: tif,png (bake), or the preset's format.
    #[arg(long, value_delimiter = ',')]
    pub format: Option<Vec<String>>,
    /// Engine conventions: heightmap sizes the engine accepts (resampling to the nearest one
    /// not above the grid), RAW row order, tile naming, import settings in the manifest.
    #[arg(long, value_enum)]
    pub preset: Option<trnbake_raster::writers::preset::Preset>,
    /// With --preset: the heightmap size (or, with --tiles N, the tile size) in posts a side,
    /// instead of the largest the engine accepts (e.g. 8129 for Unreal).
    #[arg(long)]
    pub size: Option<u32>,
    /// Tiled output: N ≤ 32 tiles a side, or tiles of SIZE ≥ 33 posts a side; neighbouring
    /// tiles share their edge posts; GeoTIFF tiles get a .vrt mosaic.
    #[arg(long, value_name = "N|SIZE")]
    pub tiles: Option<trnbake_raster::writers::set::Tiles>,
    /// Write every GeoTIFF (heights and, for bake, the surface-map GeoTIFFs) as a
    /// Cloud-Optimized GeoTIFF: 512² tiles, overviews down to one tile (averaged heights,
    /// nearest ids), directories first, statistics in the metadata.
    #[arg(long)]
    pub cog: bool,
    /// GeoTIFF compression, with the predictor that fits the samples: deflate (every reader),
    /// zstd (smaller, faster; GDAL ≥ 2.3), lzw (old readers) or none.
    #[arg(long, value_enum, default_value_t = trnbake_raster::writers::geotiff::Compression::Deflate)]
    pub compress: trnbake_raster::writers::geotiff::Compression,
}

/// Options of `convert`.
#[derive(Args, Debug, Clone)]
pub struct ConvertArgs {
    /// Input heightmap: .ter, GeoTIFF, 16-bit PNG, or RAW (.raw/.r16/.r32).
    pub input: PathBuf,
    /// Output file; its extension picks the format unless --format is given.
    pub output: PathBuf,
    #[command(flatten)]
    pub export: ExportArgs,
    /// Input format, when neither the content nor the extension tells.
    #[arg(long, value_enum)]
    pub input_format: Option<trnbake_raster::readers::InputFormat>,
    /// Input size COLSxROWS (RAW files do not store it).
    #[arg(long, value_name = "COLSxROWS")]
    pub dims: Option<String>,
    /// Input post spacing in metres (for inputs without georeferencing; overrides it otherwise).
    #[arg(long, allow_negative_numbers = true)]
    pub spacing: Option<f64>,
    /// World position X,Z of the input's south-west post (default: the grid centred on 0,0).
    #[arg(long, value_name = "X,Z", allow_hyphen_values = true)]
    pub origin: Option<String>,
    /// Heights in metres of raw 0 and raw 65535 (16-bit PNG/RAW without trnbake metadata).
    #[arg(long, value_name = "MIN,MAX", allow_hyphen_values = true)]
    pub height_range: Option<String>,
    /// First row of a RAW input: north (image order, default) or south (Unity).
    #[arg(long, value_enum)]
    pub row_order: Option<RowOrderArg>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowOrderArg {
    North,
    South,
}

/// Options of `tiles`.
#[derive(Args, Debug, Clone)]
pub struct TilesArgs {
    /// The .trn file (omit for the built-in demo terrain).
    pub file: Option<PathBuf>,
    /// Output folder: tiles/, tiles.json, index.html (created if missing).
    #[arg(long, short, default_value = "tiles-out")]
    pub output: PathBuf,
    /// Post spacing of the bake in metres (default: the file's pole spacing, 2 m on planets).
    #[arg(long, allow_negative_numbers = true)]
    pub spacing: Option<f64>,
    /// Region `X0,Z0,X1,Z1` in world metres (default: the whole map).
    #[arg(long, value_name = "X0,Z0,X1,Z1", allow_hyphen_values = true)]
    pub region: Option<String>,
    /// Layers, comma-separated: height (Terrarium), color (the preview), splat (splat
    /// preview), water, flora (density of --flora-class), shader and flora_id (lossless ids
    /// for the page's popup). Default: all; a map the terrain does not feed is left out.
    #[arg(long, value_delimiter = ',')]
    pub layers: Option<Vec<trnbake_tiles::Layer>>,
    /// Max zoom (default: the least zoom whose pixels are no wider than the spacing; 16 at 2 m).
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=24))]
    pub max_zoom: Option<u8>,
    /// Min zoom (default: the greatest zoom at which the map fits in one tile).
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=24))]
    pub min_zoom: Option<u8>,
    /// The flora class whose density the `flora` layer shows.
    #[arg(long, default_value = "collidable")]
    pub flora_class: String,
    /// Also write one PMTiles archive per layer (OUT/LAYER.pmtiles); open the page with `?pmtiles`.
    #[arg(long)]
    pub pmtiles: bool,
    /// Copy the page's libraries from this node_modules folder (an `npm ci` in viewer/) into
    /// OUT/lib, so the folder works offline; default: load them from a CDN with SRI.
    #[arg(long, value_name = "NODE_MODULES")]
    pub assets: Option<PathBuf>,
    /// Keep the bake's outputs (OUT/bake) instead of removing them at the end.
    #[arg(long)]
    pub keep_bake: bool,
    #[arg(long, value_enum, default_value_t = trnbake_bake::Backend::Auto)]
    pub backend: trnbake_bake::Backend,
    #[command(flatten)]
    pub height: HeightArgs,
    #[command(flatten)]
    pub surface: SurfaceArgs,
}

const TILES_EXAMPLES: &str = "\
Examples:
  trnbake tiles ../shared/data/swg/terrain/tatooine.trn -o tatooine-web --region 3000,-5200,3511,-4689 --spacing 1 --backend cpu
  trnbake tiles -o demo-web --spacing 8 --pmtiles   # the built-in demo terrain; `trnbake serve demo-web` shows it";

/// Options of `bake`.
#[derive(Args, Debug, Clone)]
pub struct BakeArgs {
    /// The .trn file (omit for the built-in demo terrain).
    pub file: Option<PathBuf>,
    /// Output folder (created if missing).
    #[arg(long, short, default_value = "out")]
    pub output: PathBuf,
    /// Post spacing in metres (default: the file's pole spacing, 2 m on planets).
    #[arg(long, allow_negative_numbers = true)]
    pub spacing: Option<f64>,
    /// Region `X0,Z0,X1,Z1` in world metres (west, south, east, north posts; default: the whole map).
    #[arg(long, value_name = "X0,Z0,X1,Z1", allow_hyphen_values = true)]
    pub region: Option<String>,
    #[arg(long, value_enum, default_value_t = trnbake_bake::Backend::Auto)]
    pub backend: trnbake_bake::Backend,
    /// Only GPU adapters whose name contains this (e.g. `llvmpipe`, `NVIDIA`).
    #[arg(long)]
    pub adapter: Option<String>,
    /// Tile size in posts a side (default: 512 on the CPU; on a GPU the largest that fits
    /// one storage binding, at most 2048).
    #[arg(long)]
    pub tile: Option<u32>,
    /// Rows of posts a surface-map band (a multiple of 128; default: about 2 M posts a band,
    /// ~0.5 GB): the surface maps stream band by band, so this bounds their memory.
    #[arg(long, value_name = "ROWS")]
    pub band_rows: Option<u32>,
    /// Bake only shard K of N (a deterministic subset of tiles), for job arrays; assemble
    /// the shard folders with `trnbake merge`. `auto` reads K and N from the job array's
    /// environment: SLURM_ARRAY_TASK_ID (with SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_COUNT),
    /// AWS_BATCH_JOB_ARRAY_INDEX (with AWS_BATCH_JOB_ARRAY_SIZE), CLOUD_RUN_TASK_INDEX (with
    /// CLOUD_RUN_TASK_COUNT), or JOB_COMPLETION_INDEX (Kubernetes; give N as `auto/N`).
    #[arg(long, value_name = "K/N|auto[/N]")]
    pub shard: Option<trnbake_bake::shard::ShardChoice>,
    /// Maps to bake, comma-separated: height, normals, splat, flora, flora_families, scatter,
    /// water, env, color, exclude, smap, preview, or `auto` (height plus every map the file
    /// feeds, and the preview); `auto,scatter` adds to the defaults. A sharded bake computes
    /// its share of every map; `merge` writes them.
    #[arg(long, value_delimiter = ',', default_value = "auto")]
    pub maps: Vec<trnbake_bake::MapRequest>,
    /// Flora maps (flora, flora_families, scatter) from the mean over N×N sub-posts of each
    /// post's square (exact heights, normals at the sub-spacing; on the CPU), instead of the
    /// post alone. Coarse maps need it: at 16 m, N = 8 (sub-posts 2 m apart) agrees with
    /// SOE's PIMP on 93–100 % of flora cells against 69–100 % (docs: Surface maps).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub flora_supersample: u32,
    /// The spawnable map: ground steeper than this (degrees) is not spawnable (the navmesh's
    /// default agent limit).
    #[arg(long, value_name = "DEGREES", default_value_t = trnbake_swg::spawn::SpawnRule::DEFAULT_MAX_SLOPE)]
    pub max_slope: f32,
    /// The spawnable map: water deeper than this (m) is not spawnable; shallower is (0: dry
    /// ground only).
    #[arg(long, value_name = "M", default_value_t = trnbake_swg::spawn::SpawnRule::DEFAULT_WATER_DEPTH)]
    pub water_depth: f32,
    #[command(flatten)]
    pub export: ExportArgs,
    #[command(flatten)]
    pub height: HeightArgs,
    #[command(flatten)]
    pub surface: SurfaceArgs,
}

/// Options of every command that evaluates heights.
/// Readings of the surface passes that the spec leaves open (swg-trn §5.5, §5.10).
#[derive(clap::Args, Clone, Debug)]
pub struct SurfaceArgs {
    /// How ASCN/ASRP/AENV feather clamps act (swg-trn §5.10 [?]): threshold (claim where
    /// T ≥ clamp; best PIMP agreement), ignore (claim where T > 0, weight T) or weight
    /// (weight min(T/clamp, 1)).
    #[arg(long, value_enum, default_value_t = trnbake_swg::surface::FeatherClamp::Threshold)]
    pub feather_clamp: trnbake_swg::surface::FeatherClamp,
    /// The FDIR convention (swg-trn §5.5 [?]): zero, one or aspect (downhill bearing in degrees).
    #[arg(long, value_enum, default_value_t = trnbake_swg::surface::DirectionFilter::Zero)]
    pub fdir: trnbake_swg::surface::DirectionFilter,
    /// How the surface passes walk the tree (swg-trn §5.9 [?]): one walk of every affector
    /// in tree order where FHGT and FSHD read the height and shader built so far (tree; best
    /// PIMP agreement on every planet, README), or separate passes on the final height and
    /// shader (separate). tree-height / tree-shader apply the reading to one filter only
    /// (CPU only).
    #[arg(long, value_enum, default_value_t = trnbake_swg::surface::SurfaceWalk::Tree)]
    pub surface_walk: trnbake_swg::surface::SurfaceWalk,
    /// FSLP with minAngle 0 (swg-trn §5.5 [?]): exclude (strict interval: a flat post gets 0)
    /// or include (no upper end). CPU only.
    #[arg(long, value_enum, default_value_t = trnbake_swg::surface::SlopeFlat::Exclude)]
    pub slope_flat: trnbake_swg::surface::SlopeFlat,
    /// How a flora add uses the layer amount T (swg-trn §5.9 [?]): scale (density × T:
    /// feathered edges thin the flora; with tree slopes calibrated on every planet, README)
    /// or any (T > 0 pushes the full density).
    #[arg(long, value_enum, default_value_t = trnbake_swg::surface::FloraAmount::Scale)]
    pub flora_amount: trnbake_swg::surface::FloraAmount,
    /// What a (0,0) flora affector does (swg-trn §5.9 [?]): remove-family, ignore or
    /// remove-all. CPU only.
    #[arg(long, value_enum, default_value_t = trnbake_swg::surface::FloraZero::RemoveFamily)]
    pub flora_zero: trnbake_swg::surface::FloraZero,
    /// What a flora affector with both flags (add, remove-all) does (swg-trn §5.9 [?]):
    /// clear the stack, or replace it with its family. CPU only.
    #[arg(long, value_enum, default_value_t = trnbake_swg::surface::FloraBoth::Clear)]
    pub flora_both: trnbake_swg::surface::FloraBoth,
    /// Which heights FSLP's normal comes from (swg-trn §5.5 [?]): with the tree walk the
    /// heights the height affectors have built so far at the filter's layer (tree; best PIMP
    /// agreement, README), or the final ones (final).
    #[arg(long, value_enum, default_value_t = trnbake_swg::surface::SlopeHeight::Tree)]
    pub slope_height: trnbake_swg::surface::SlopeHeight,
    /// Normals for the slope filter: faces (averaged triangle normals) or central differences.
    #[arg(long, value_enum, default_value_t = trnbake_swg::surface::normals::NormalMethod::Faces)]
    pub normals: trnbake_swg::surface::normals::NormalMethod,
}

impl SurfaceArgs {
    pub fn options(&self) -> trnbake_swg::surface::SurfaceOptions {
        trnbake_swg::surface::SurfaceOptions {
            feather_clamp: self.feather_clamp,
            direction: self.fdir,
            walk: self.surface_walk,
            slope_flat: self.slope_flat,
            flora_amount: self.flora_amount,
            flora_zero: self.flora_zero,
            flora_both: self.flora_both,
            slope_height: self.slope_height,
        }
    }
}

/// `bench --backends`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BenchBackends {
    Both,
    Cpu,
    Gpu,
}

#[derive(Args, Debug, Clone)]
pub struct HeightArgs {
    /// Where bitmap paths resolve: `terrain/x.tga` is read from DIR/terrain/x.tga.
    /// Defaults to the directory above the .trn's directory when that holds the bitmaps.
    #[arg(long, value_name = "DIR")]
    pub data_root: Option<PathBuf>,
    /// Road and river height model of swg-trn §5.12 (unvalidated). Off by default: the
    /// original tool's baked flora heights match the road-less terrain (see README).
    #[arg(long, value_enum, default_value_t = OnOff::Off)]
    pub roads: OnOff,
    /// The FBIT gain term of swg-trn §5.6 (matches the 0015 Tatooine vectors when on).
    #[arg(long, value_enum, default_value_t = OnOff::On)]
    pub bitmap_gain: OnOff,
    /// What a bitmap that cannot be found does: stop with an error, or warn and read as black.
    #[arg(long, value_enum, default_value_t = MissingBitmaps::Error)]
    pub missing_bitmaps: MissingBitmaps,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnOff {
    On,
    Off,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MissingBitmaps {
    Error,
    Zero,
}
