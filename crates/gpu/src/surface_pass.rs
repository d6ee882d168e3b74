//! The surface passes on the GPU (swg-trn §5.2 steps 2–4): normals, the shader pass and the
//! later (flora, environment, colour, exclude, passable) pass of `kernels/surface.wgsl` over
//! the same plans the CPU reference walks ([`SurfaceEvaluator`]), tile by tile, with each
//! tile's layer lists culled per [`BLOCK`]² block as the CPU culls them, and two tiles in
//! flight. On lavapipe the results are bit-identical to `trnbake_bake::surface_maps` (tests/
//! gpu_surface_parity.rs).

use super::records::SURFACE_PASS_WGSL;
use super::{block_lists, block_lists_grown, plan_buffers, storage_buffer, two_in_flight, BlockLists, GpuContext, GpuError, Readback, TileSpec};
use bytemuck::{Pod, Zeroable};
use trnbake_swg::eval::Grid;
use trnbake_swg::plan::BakePlan;
use trnbake_swg::surface::grid::{PostSurface, SurfaceGrid};
use trnbake_swg::surface::normals::NormalMethod;
use trnbake_swg::surface::{DirectionFilter, FeatherClamp, SurfaceEvaluator, SurfaceWalk, SPLAT_LAYERS};
use wgpu::util::DeviceExt;

/// Side in posts of the blocks each tile's layer lists are culled for (as the CPU's
/// `surface_results`).
pub const BLOCK: u32 = 128;
/// Side in posts of the tiles one dispatch covers (a multiple of [`BLOCK`]).
pub const TILE: u32 = 512;
/// Deepest flora stack per class the kernel holds (`FLORA_STACK_DEPTH` in
/// kernels/surface.wgsl): a post whose stack grows deeper is flagged by the kernel and
/// recomputed on the CPU, so results stay exact (rare: only the adds of the layers active at
/// the post since the last remove-all count).
pub const FLORA_STACK_DEPTH: usize = 24;
/// Storage buffers the surface passes bind (kernels/surface.wgsl bindings 1–22).
pub const STORAGE_BUFFERS: u32 = 22;
/// Most bytes one tile's slope-height buffer may take ([`trnbake_swg::surface::SlopeHeight::Tree`]:
/// one f32 per FSLP layer of the plan per post of the tile and its apron); tiles shrink (in
/// whole blocks) to stay under it and under the adapter's binding limit.
const SLOPE_HEIGHTS_BYTES: u64 = 96 << 20;

/// Binding numbers (group 0) of the surface passes that differ from the height pass's
/// (bindings 0–16 are the same: params, the plan's buffers and the tile's layer list).
pub mod binding {
    /// Per culling block: [start, end) of its entries in `tile_layers` (`array<vec2<u32>>`).
    pub const BLOCKS: u32 = 17;
    /// Colour ramps (`array<u32>`, [`super::ramp_words`]).
    pub const RAMPS: u32 = 18;
    /// The tile's heights with a 1-post apron (`array<f32>`).
    pub const HEIGHTS: u32 = 19;
    /// Output: normals, 3 f32 a post (read_write).
    pub const NORMALS: u32 = 20;
    /// Output: one `GpuPostRecord` a post (read_write).
    pub const SURFACE: u32 = 21;
    /// Scratch: the heights before each FSLP layer at the tile's posts and apron (read_write,
    /// [`trnbake_swg::surface::SlopeHeight::Tree`]).
    pub const SLOPE_HEIGHTS: u32 = 22;
    /// Number of bindings.
    pub const COUNT: u32 = 23;
}

/// Uniform parameters of one tile (binding 0). Keep in sync with `SurfaceParams` in
/// kernels/surface.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable, PartialEq)]
pub struct GpuSurfaceParams {
    pub x0: f32,
    pub z0: f32,
    pub spacing: f32,
    pub half_width: f32,
    pub tile_c0: u32,
    pub tile_r0: u32,
    pub tile_cols: u32,
    pub tile_rows: u32,
    pub block: u32,
    pub blocks_per_row: u32,
    /// Global post indices of the tile's first post (mod 2^32): the quad diagonals.
    pub parity_c0: u32,
    pub parity_r0: u32,
    /// 0 ignore, 1 threshold, 2 weight ([`FeatherClamp`]).
    pub feather_clamp: u32,
    /// 0 zero, 1 one ([`DirectionFilter`]; the aspect reading stays on the CPU).
    pub direction: u32,
    /// 0 faces, 1 central ([`NormalMethod`]).
    pub normal_method: u32,
    /// 0 separate passes, 1 the tree walk ([`SurfaceWalk::Tree`]).
    pub walk: u32,
    /// 1 where FSLP reads the heights built so far ([`trnbake_swg::surface::SlopeHeight::Tree`], with `walk` 1).
    pub slope_tree: u32,
    /// Must be 0 (`keep` in kernels/records.wgsl).
    pub keep_zero: u32,
    /// 1 where a flora add pushes density × T ([`trnbake_swg::surface::FloraAmount::Scale`]).
    pub flora_scale: u32,
    /// FSLP layers of the walked plan: the slots per post of the slope-height buffer
    /// (with `slope_tree`).
    pub slope_layers: u32,
}

/// One post's result (binding 21). Keep in sync with `PostRecord` in kernels/surface.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable, PartialEq)]
pub struct GpuPostRecord {
    pub shader: i32,
    pub splat_family: [i32; 4],
    pub splat_weight: [f32; 4],
    pub flora_family: [i32; 4],
    pub flora_probability: [f32; 4],
    pub environment: i32,
    pub color: [f32; 3],
    pub excluded: u32,
    /// The APAS byte, or −1 where none applied.
    pub passable: i32,
    /// 1 where a flora stack outgrew [`FLORA_STACK_DEPTH`]: [`GpuSurfacePass::run`]
    /// recomputes such posts on the CPU.
    pub flora_overflow: u32,
}

const _: () = assert!(std::mem::size_of::<GpuPostRecord>() == 96 && SPLAT_LAYERS == 4);

impl From<GpuPostRecord> for PostSurface {
    fn from(r: GpuPostRecord) -> Self {
        PostSurface {
            shader: r.shader,
            splat: std::array::from_fn(|k| (r.splat_family[k], r.splat_weight[k])),
            flora: std::array::from_fn(|k| (r.flora_family[k], r.flora_probability[k])),
            environment: r.environment,
            color: r.color,
            excluded: r.excluded != 0,
            passable: u8::try_from(r.passable).ok(),
        }
    }
}

/// Which passes a run computes (the benchmark times them apart); normals always.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SurfacePasses {
    Normals,
    /// Normals and the shader pass.
    Shader,
    /// Normals, the shader pass and the later pass.
    All,
}

/// The colour ramps of a plan as one word buffer: words 2i, 2i + 1 hold ramp i's first
/// entry and length, the entries are 0xRRGGBB.
pub fn ramp_words(plan: &BakePlan) -> Vec<u32> {
    let mut words = vec![0u32; 2 * plan.ramps.len()];
    for (i, ramp) in plan.ramps.iter().enumerate() {
        words[2 * i] = words.len() as u32;
        words[2 * i + 1] = ramp.len() as u32;
        words.extend(ramp.iter().map(|c| u32::from(c[0]) << 16 | u32::from(c[1]) << 8 | u32::from(c[2])));
    }
    words
}

/// The largest tile side (a multiple of [`BLOCK`] up to [`TILE`], so the culling blocks fall
/// where the CPU's do) whose slope-height buffer, `slope_layers` f32 per post of the tile and
/// its 1-post apron, fits in `budget` bytes; `None` when a single block does not fit.
fn slope_tile_side(slope_layers: u32, budget: u64) -> Option<u32> {
    let bytes = |side: u32| u64::from(side + 2).pow(2) * u64::from(slope_layers) * 4;
    (1..=TILE / BLOCK).rev().map(|k| k * BLOCK).find(|&side| bytes(side) <= budget)
}

/// A plan uploaded for one of the two walks.
struct PlanOnGpu<'a> {
    plan: &'a BakePlan,
    buffers: Vec<wgpu::Buffer>,
    ramps: wgpu::Buffer,
}

/// The surface passes of one terrain with its plans uploaded once, for many tiles.
pub struct GpuSurfacePass<'a> {
    ctx: &'a GpuContext,
    /// The CPU reference, for the posts the kernel flags (flora stack overflow).
    evaluator: &'a SurfaceEvaluator,
    half_width: f32,
    params: GpuSurfaceParams,
    shader: PlanOnGpu<'a>,
    later: PlanOnGpu<'a>,
    layout: wgpu::BindGroupLayout,
    /// normals_pass, shader_pass, later_pass, slope_heights_pass.
    pipelines: [wgpu::ComputePipeline; 4],
    /// Side in posts of the tiles (a multiple of [`BLOCK`], [`TILE`] unless the slope-height
    /// buffer needs smaller ones).
    tile_side: u32,
}

/// What receives each finished tile: its records and normals, row-major.
type TileSink<'s> = dyn FnMut(TileSpec, &[GpuPostRecord], &[[f32; 3]]) + 's;

struct InFlight {
    tile: TileSpec,
    /// The records, then the normals.
    readback: Readback,
    records_bytes: u64,
}

impl<'a> GpuSurfacePass<'a> {
    /// Compile the kernels and upload the shader and later plans of `se`. Fails with
    /// [`GpuError::Unsupported`] for options the kernels do not compute exactly (the FDIR
    /// aspect reading needs atan2) and [`GpuError::Unsuitable`] when the adapter binds too
    /// few storage buffers.
    pub fn new(ctx: &'a GpuContext, se: &'a SurfaceEvaluator, method: NormalMethod) -> Result<GpuSurfacePass<'a>, GpuError> {
        if let Some(why) = se.opts.gpu_unsupported() {
            return Err(GpuError::Unsupported(why));
        }
        let have = ctx.limits.max_storage_buffers_per_shader_stage;
        if have < STORAGE_BUFFERS {
            return Err(GpuError::Unsuitable {
                adapter: ctx.adapter.name.clone(),
                reason: format!("the surface passes bind {STORAGE_BUFFERS} storage buffers per shader stage; the adapter allows {have}"),
            });
        }
        let d = &ctx.device;
        let scope = d.push_error_scope(wgpu::ErrorFilter::Validation);
        let module =
            d.create_shader_module(wgpu::ShaderModuleDescriptor { label: Some("surface_pass"), source: wgpu::ShaderSource::Wgsl(SURFACE_PASS_WGSL.into()) });
        let entry = |binding: u32, ty: wgpu::BufferBindingType| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer { ty, has_dynamic_offset: false, min_binding_size: None },
            count: None,
        };
        let entries: Vec<wgpu::BindGroupLayoutEntry> = (0..binding::COUNT)
            .map(|b| match b {
                0 => entry(b, wgpu::BufferBindingType::Uniform),
                binding::NORMALS | binding::SURFACE | binding::SLOPE_HEIGHTS => entry(b, wgpu::BufferBindingType::Storage { read_only: false }),
                _ => entry(b, wgpu::BufferBindingType::Storage { read_only: true }),
            })
            .collect();
        let layout = d.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: Some("surface_pass"), entries: &entries });
        let pipeline_layout =
            d.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor { label: Some("surface_pass"), bind_group_layouts: &[Some(&layout)], immediate_size: 0 });
        let pipelines = ["normals_pass", "shader_pass", "later_pass", "slope_heights_pass"].map(|name| {
            d.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(name),
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some(name),
                compilation_options: Default::default(),
                cache: None,
            })
        });
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(GpuError::Unsuitable { adapter: ctx.adapter.name.clone(), reason: e.to_string() });
        }
        let upload = |plan: &'a BakePlan| PlanOnGpu { plan, buffers: plan_buffers(d, plan), ramps: storage_buffer(d, "ramps", &ramp_words(plan), 0) };
        let mut params = GpuSurfaceParams {
            feather_clamp: match se.opts.feather_clamp {
                FeatherClamp::Ignore => 0,
                FeatherClamp::Threshold => 1,
                FeatherClamp::Weight => 2,
            },
            direction: (se.opts.direction == DirectionFilter::One) as u32,
            normal_method: (method == NormalMethod::Central) as u32,
            walk: (se.opts.walk == SurfaceWalk::Tree) as u32,
            slope_tree: se.opts.tree_slopes() as u32,
            flora_scale: (se.opts.flora_amount == trnbake_swg::surface::FloraAmount::Scale) as u32,
            block: BLOCK,
            ..Default::default()
        };
        // A tree walk runs the later pass's kernel over the plan of every affector, and no
        // separate shader pass.
        let later = if params.walk == 1 { upload(&se.all_plan) } else { upload(&se.later_plan) };
        let mut tile_side = TILE;
        if params.slope_tree == 1 {
            params.slope_layers = later.plan.slope_layer_count();
            let budget = SLOPE_HEIGHTS_BYTES.min(ctx.limits.max_storage_buffer_binding_size).min(ctx.limits.max_buffer_size);
            tile_side = slope_tile_side(params.slope_layers, budget).ok_or_else(|| {
                GpuError::Unsupported(format!(
                    "the plan has {} FSLP layers: their heights for one {BLOCK}-post block exceed the {budget}-byte buffer the GPU allows (--slope-height tree)",
                    params.slope_layers
                ))
            })?;
        }
        Ok(GpuSurfacePass { ctx, evaluator: se, half_width: se.plan.half_width, params, shader: upload(&se.shader_plan), later, layout, pipelines, tile_side })
    }

    /// Whether the later kernel runs: for every pass, and in a tree walk (which computes the
    /// shader map too) also for the shader maps alone.
    fn runs_later(&self, passes: SurfacePasses) -> bool {
        passes == SurfacePasses::All || (self.params.walk == 1 && passes >= SurfacePasses::Shader)
    }

    /// The culled block lists of every tile for both walks.
    fn lists(&self, grid: &Grid, tiles: &[TileSpec], passes: SurfacePasses) -> Vec<[BlockLists; 2]> {
        tiles
            .iter()
            .map(|&t| {
                let tree = self.params.walk == 1;
                let shader = if passes >= SurfacePasses::Shader && !tree { block_lists(self.shader.plan, grid, t, BLOCK) } else { BlockLists::default() };
                // FSLP's tree-walk normal reads the 1-post ring around each block.
                let margin = self.evaluator.slope_margin(grid.spacing as f32);
                let later = if self.runs_later(passes) { block_lists_grown(self.later.plan, grid, t, BLOCK, margin) } else { BlockLists::default() };
                [shader, later]
            })
            .collect()
    }

    /// Submit one tile; `padded` holds grid rows `band_r0 − 1 ..` with their apron.
    fn submit(&self, grid: &Grid, band_r0: u32, padded: &[f32], tile: TileSpec, lists: &[BlockLists; 2], passes: SurfacePasses) -> InFlight {
        let d = &self.ctx.device;
        let (gc0, gr0) = trnbake_swg::surface::grid::global_post_index(grid, self.half_width);
        let params = GpuSurfaceParams {
            x0: grid.x0 as f32,
            z0: grid.z0 as f32,
            spacing: grid.spacing as f32,
            half_width: self.half_width,
            tile_c0: tile.c0,
            tile_r0: tile.r0,
            tile_cols: tile.cols,
            tile_rows: tile.rows,
            blocks_per_row: tile.cols.div_ceil(BLOCK),
            parity_c0: (gc0 + i64::from(tile.c0)) as u32,
            parity_r0: (gr0 + i64::from(tile.r0)) as u32,
            ..self.params
        };
        let uniform = d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("surface params"),
            contents: bytemuck::bytes_of(&params),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        // The tile's heights with their apron, from the grid's padded heights.
        let stride = grid.cols as usize + 2;
        let mut tile_heights = Vec::with_capacity((tile.cols as usize + 2) * (tile.rows as usize + 2));
        let first = (tile.r0 - band_r0) as usize;
        for r in first..first + tile.rows as usize + 2 {
            let at = r * stride + tile.c0 as usize;
            tile_heights.extend_from_slice(&padded[at..at + tile.cols as usize + 2]);
        }
        let heights = storage_buffer(d, "surface heights", &tile_heights, 0.0);
        let posts = u64::from(tile.cols) * u64::from(tile.rows);
        let output = |label: &str, bytes: u64| {
            d.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            })
        };
        let records_bytes = posts * std::mem::size_of::<GpuPostRecord>() as u64;
        let normals_bytes = posts * 12;
        let records = output("surface records", records_bytes);
        let normals = output("surface normals", normals_bytes);
        let apron_posts = u64::from(tile.cols + 2) * u64::from(tile.rows + 2);
        let slope_bytes = if params.slope_tree == 1 { apron_posts * u64::from(params.slope_layers) * 4 } else { 0 };
        let slope_heights = d.create_buffer(&wgpu::BufferDescriptor {
            label: Some("slope heights"),
            size: slope_bytes.max(4),
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let staging = d.create_buffer(&wgpu::BufferDescriptor {
            label: Some("surface staging"),
            size: records_bytes + normals_bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let bind = |plan: &PlanOnGpu, l: &BlockLists| {
            let tile_layers = storage_buffer(d, "tile_layers", &l.layers, Default::default());
            let tile_boundaries = storage_buffer(d, "tile_boundaries", &l.boundaries, 0);
            let blocks = storage_buffer(d, "blocks", &l.blocks, [0; 2]);
            let mut resources: Vec<&wgpu::Buffer> = vec![&uniform];
            resources.extend(plan.buffers.iter());
            resources.extend([&tile_layers, &tile_boundaries, &blocks, &plan.ramps, &heights, &normals, &records, &slope_heights]);
            let entries: Vec<wgpu::BindGroupEntry> =
                resources.iter().enumerate().map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.as_entire_binding() }).collect();
            d.create_bind_group(&wgpu::BindGroupDescriptor { label: Some("surface_pass"), layout: &self.layout, entries: &entries })
        };
        let shader_bind = bind(&self.shader, &lists[0]);
        let later_bind = self.runs_later(passes).then(|| bind(&self.later, &lists[1]));
        let mut enc = d.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("surface_pass") });
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("surface_pass"), timestamp_writes: None });
            let mut run = |pipeline: &wgpu::ComputePipeline, bind: &wgpu::BindGroup, (cols, rows): (u32, u32)| {
                pass.set_pipeline(pipeline);
                pass.set_bind_group(0, bind, &[]);
                pass.dispatch_workgroups(cols.div_ceil(8), rows.div_ceil(8), 1);
            };
            let posts = (tile.cols, tile.rows);
            run(&self.pipelines[0], &shader_bind, posts);
            if passes >= SurfacePasses::Shader && self.params.walk == 0 {
                run(&self.pipelines[1], &shader_bind, posts);
            }
            if let Some(b) = &later_bind {
                if params.slope_tree == 1 && params.slope_layers > 0 {
                    // Over the tile and its apron, before the walk that reads them.
                    run(&self.pipelines[3], b, (tile.cols + 2, tile.rows + 2));
                }
                run(&self.pipelines[2], b, posts);
            }
        }
        enc.copy_buffer_to_buffer(&records, 0, &staging, 0, records_bytes);
        enc.copy_buffer_to_buffer(&normals, 0, &staging, records_bytes, normals_bytes);
        let submission = self.ctx.queue.submit([enc.finish()]);
        InFlight { tile, readback: Readback::start(staging, submission), records_bytes }
    }

    fn finish(&self, f: InFlight, sink: &mut TileSink) -> Result<(), GpuError> {
        f.readback.finish(&self.ctx.device, "a surface tile", |bytes| {
            let (records, normals) = bytes.split_at(f.records_bytes as usize);
            sink(f.tile, bytemuck::cast_slice(records), bytemuck::cast_slice(normals));
        })
    }

    /// Normals and `passes` at every post of `grid` from its heights with their 1-post apron
    /// (`trnbake_swg::surface::grid::apron_heights`), row-major from the south. The results of the
    /// passes not run hold their empty values.
    pub fn run(&self, grid: &Grid, padded: &[f32], passes: SurfacePasses) -> Result<SurfaceGrid, GpuError> {
        let (normals, results) = self.run_band(grid, 0, grid.rows, padded, passes)?;
        Ok(SurfaceGrid { grid: *grid, normals, results, water: None })
    }

    /// Normals and `passes` at the posts of rows `r0..r0 + rows` of `grid` (a band of a
    /// streamed bake) from their heights with a 1-post apron
    /// (`trnbake_swg::surface::grid::band_apron_heights`), row-major from the south. Posts are
    /// placed and culled from the grid's own origin, so bands give the whole grid's results.
    pub fn run_band(&self, grid: &Grid, r0: u32, rows: u32, padded: &[f32], passes: SurfacePasses) -> Result<(Vec<[f32; 3]>, Vec<PostSurface>), GpuError> {
        assert!(r0 + rows <= grid.rows, "the band lies inside the grid");
        assert_eq!(padded.len(), (grid.cols as usize + 2) * (rows as usize + 2), "heights with a 1-post apron");
        let band = Grid { rows, ..*grid };
        let tiles: Vec<TileSpec> = trnbake_swg::grid::tiles(&band, self.tile_side).into_iter().map(|t| TileSpec { r0: t.r0 + r0, ..t }).collect();
        let lists = self.lists(grid, &tiles, passes);
        let cols = grid.cols as usize;
        let n = cols * rows as usize;
        let mut normals = vec![[0.0f32; 3]; n];
        let mut results = vec![PostSurface::default(); n];
        let mut overflowed: Vec<usize> = Vec::new();
        // A tile's rows are unpacked in parallel: on the H200 a 1 m planet reads back 29 GB of
        // records, which one thread would unpack behind the GPU.
        let mut sink = |t: TileSpec, recs: &[GpuPostRecord], ns: &[[f32; 3]]| {
            use rayon::prelude::*;
            let (c0, tile_cols) = (t.c0 as usize, t.cols as usize);
            let first = (t.r0 - r0) as usize * cols;
            let rows = first..first + t.rows as usize * cols;
            let found: Vec<usize> = results[rows.clone()]
                .par_chunks_mut(cols)
                .zip(normals[rows].par_chunks_mut(cols))
                .enumerate()
                .flat_map_iter(|(r, (result_row, normal_row))| {
                    let src = r * tile_cols..(r + 1) * tile_cols;
                    normal_row[c0..c0 + tile_cols].copy_from_slice(&ns[src.clone()]);
                    let mut over = Vec::new();
                    for (k, (out, rec)) in result_row[c0..c0 + tile_cols].iter_mut().zip(&recs[src]).enumerate() {
                        *out = (*rec).into();
                        if rec.flora_overflow != 0 {
                            over.push(first + r * cols + c0 + k);
                        }
                    }
                    over
                })
                .collect();
            overflowed.extend(found);
        };
        two_in_flight(&self.ctx.device, tiles.iter().zip(&lists), |(&t, l)| self.submit(grid, r0, padded, t, l, passes), |f| self.finish(f, &mut sink))?;
        if passes == SurfacePasses::Normals {
            results.fill(PostSurface::default());
        }
        self.recompute_on_cpu(grid, r0, padded, &normals, &overflowed, &mut results);
        Ok((normals, results))
    }

    /// The CPU reference at the posts whose flora stack outgrew the kernel's
    /// ([`FLORA_STACK_DEPTH`]), from the GPU's normals (bit-identical to the CPU's).
    fn recompute_on_cpu(&self, grid: &Grid, band_r0: u32, padded: &[f32], normals: &[[f32; 3]], posts: &[usize], results: &mut [PostSurface]) {
        use rayon::prelude::*;
        if posts.is_empty() {
            return;
        }
        tracing::info!("{} posts with a flora stack deeper than {FLORA_STACK_DEPTH}: recomputed on the CPU", posts.len());
        let cols = grid.cols as usize;
        let fixed: Vec<(usize, PostSurface)> = posts
            .par_iter()
            .map(|&i| {
                let (c, br) = ((i % cols) as u32, (i / cols) as u32);
                let r = band_r0 + br;
                let block = self.evaluator.grid_block(grid, c, r, c, r);
                let ground = trnbake_swg::surface::Ground { height: padded[(br as usize + 1) * (cols + 2) + c as usize + 1], normal: normals[i] };
                (i, self.evaluator.at_grid_post(&block, c, r, ground).into())
            })
            .collect();
        for (i, s) in fixed {
            results[i] = s;
        }
    }
}

/// Normals and both surface passes at every post of `grid` on the GPU: the GPU twin of
/// `trnbake_swg::surface::grid::evaluate`.
pub fn evaluate(
    ctx: &GpuContext,
    grid: &Grid,
    heights: &[f32],
    he: &trnbake_swg::eval::HeightEvaluator,
    se: &SurfaceEvaluator,
    method: NormalMethod,
) -> Result<SurfaceGrid, GpuError> {
    let pass = GpuSurfacePass::new(ctx, se, method)?;
    pass.run(grid, &trnbake_swg::surface::grid::apron_heights(grid, heights, he), SurfacePasses::All)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slope_tiles_shrink_in_whole_blocks_to_fit_the_buffer() {
        // 25 FSLP layers (tatooine): a 512² tile's 514² posts take 26.4 MB.
        assert_eq!(slope_tile_side(25, SLOPE_HEIGHTS_BYTES), Some(TILE));
        assert_eq!(slope_tile_side(25, 514 * 514 * 25 * 4), Some(512));
        assert_eq!(slope_tile_side(25, 514 * 514 * 25 * 4 - 1), Some(384));
        assert_eq!(slope_tile_side(1000, 128 << 20), Some(128));
        // A hostile plan whose one block does not fit: the GPU refuses, the CPU bakes.
        assert_eq!(slope_tile_side(3000, 128 << 20), None);
        assert_eq!(slope_tile_side(0, 0), Some(TILE));
    }
}
