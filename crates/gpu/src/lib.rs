//! trnbake-gpu: the GPU backend of trnbake. The host passes named for what they run —
//! [`GpuHeightPass`] (`kernels/height.wgsl` with `walk_strip.wgsl`), [`surface_pass`]
//! (`kernels/surface.wgsl`, `normals.wgsl`, `walk.wgsl`) and [`water_pass`]
//! (`kernels/water.wgsl`) — over the same plan the CPU evaluator of `trnbake-swg` reads. On
//! lavapipe they agree with the CPU bit for bit (gpu.md's float rules). The build script
//! validates every kernel with naga, so a broken kernel fails `cargo build`.
//!
//! # Example
//!
//! ```
//! use trnbake_gpu::{GpuContext, GpuHeightPass};
//! use trnbake_swg::eval::{Grid, HeightEvaluator};
//!
//! let terrain = trnbake_swg::model::json::demo_terrain();
//! let heights = HeightEvaluator::new(&terrain, &Default::default())?;
//! let grid = Grid { cols: 65, rows: 65, x0: -2048.0, z0: -2048.0, spacing: 64.0 };
//! match GpuContext::new(false, None) {
//!     Ok(ctx) => {
//!         let on_gpu = GpuHeightPass::new(&ctx, &heights.plan).run_grid(&grid, ctx.max_tile(2048))?;
//!         assert_eq!(on_gpu.len(), grid.len());
//!     }
//!     Err(e) => eprintln!("no GPU adapter here ({e}); the CPU evaluator bakes instead"),
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The GPU backend: a wgpu compute pipeline running `kernels/height.wgsl` over the same
//! [`BakePlan`] the CPU reference evaluates (gpu.md §1.2), tile by tile, with two tiles in
//! flight so the GPU computes tile k+1 while the CPU consumes tile k (gpu.md §2.4).

pub mod records;
pub mod surface_pass;
pub mod water_pass;

use trnbake_swg::eval::Grid;
use trnbake_swg::plan::{BakePlan, TileLayer, TileList};
use bytemuck::Pod;
use records::{binding, GpuParams, HEIGHT_CULL_BLOCK, HEIGHT_PASS_WGSL};
use std::sync::mpsc;
use wgpu::util::DeviceExt;

#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    #[error("no GPU adapter found ({0}); install a Vulkan driver (for CI: `apt-get install mesa-vulkan-drivers` gives lavapipe) or use --backend cpu")]
    NoAdapter(String),
    #[error("the GPU adapter `{adapter}` cannot run the height pass: {reason}")]
    Unsuitable { adapter: String, reason: String },
    #[error("GPU device request failed: {0}")]
    Device(String),
    #[error("GPU error: {0}")]
    Runtime(String),
    /// The kernels cannot compute this exactly (an option or a file beyond their limits):
    /// the caller computes it on the CPU instead.
    #[error("not supported on the GPU: {0}")]
    Unsupported(String),
}

/// What the baker reports about an adapter (gpu.md §1.3: always print it and store it).
#[derive(Clone, Debug, serde::Serialize)]
pub struct AdapterSummary {
    pub name: String,
    pub backend: String,
    pub device_type: String,
    pub driver: String,
    pub driver_info: String,
    pub max_storage_buffer_binding_size: u64,
    pub max_storage_buffers_per_shader_stage: u32,
}

fn summarize(a: &wgpu::Adapter) -> AdapterSummary {
    let i = a.get_info();
    let l = a.limits();
    AdapterSummary {
        name: i.name,
        backend: format!("{:?}", i.backend),
        device_type: format!("{:?}", i.device_type),
        driver: i.driver,
        driver_info: i.driver_info,
        max_storage_buffer_binding_size: l.max_storage_buffer_binding_size,
        max_storage_buffers_per_shader_stage: l.max_storage_buffers_per_shader_stage,
    }
}

/// Storage buffers the height pass binds (kernels/height.wgsl bindings 1–18).
pub const STORAGE_BUFFERS: u32 = binding::COUNT - 1;

fn instance() -> wgpu::Instance {
    wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env())
}

/// Every adapter wgpu sees (honours `WGPU_BACKEND`).
pub fn list_adapters() -> Vec<AdapterSummary> {
    pollster::block_on(instance().enumerate_adapters(wgpu::Backends::all())).iter().map(summarize).collect()
}

/// A device ready to run the height pass.
pub struct GpuContext {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub adapter: AdapterSummary,
    pub limits: wgpu::Limits,
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
    /// Posts per invocation of the height kernel (`STRIP` in kernels/walk_strip.wgsl).
    pub strip: u32,
}

/// Posts per invocation of the height kernel: 4 (each record load serves a strip of four posts
/// of a row), or what `TRNBAKE_GPU_STRIP` (1..=4) says, for benchmarks that compare strips on
/// one adapter (scripts/device-bench.sh runs 1 and 4).
pub fn height_strip() -> u32 {
    match std::env::var("TRNBAKE_GPU_STRIP").ok().and_then(|v| v.trim().parse::<u32>().ok()) {
        Some(n @ 1..=4) => n,
        Some(n) => {
            tracing::warn!("TRNBAKE_GPU_STRIP={n} is not in 1..=4; using 4");
            4
        }
        None => 4,
    }
}

impl GpuContext {
    /// Pick an adapter: high-performance first (a real GPU beats lavapipe), or only software
    /// adapters with `software_only`; `name_filter` keeps adapters whose name contains it.
    pub fn new(software_only: bool, name_filter: Option<&str>) -> Result<GpuContext, GpuError> {
        let inst = instance();
        let mut adapters = pollster::block_on(inst.enumerate_adapters(wgpu::Backends::all()));
        adapters.retain(|a| {
            let i = a.get_info();
            (!software_only || i.device_type == wgpu::DeviceType::Cpu)
                && name_filter.is_none_or(|f| i.name.to_lowercase().contains(&f.to_lowercase()))
                && a.limits().max_storage_buffers_per_shader_stage >= STORAGE_BUFFERS
        });
        // gpu.md §1.3: discrete, integrated, other, virtual, cpu; Vulkan before GL.
        let rank = |a: &wgpu::Adapter| {
            let i = a.get_info();
            let t = match i.device_type {
                wgpu::DeviceType::DiscreteGpu => 0,
                wgpu::DeviceType::IntegratedGpu => 1,
                wgpu::DeviceType::Other => 2,
                wgpu::DeviceType::VirtualGpu => 3,
                wgpu::DeviceType::Cpu => 4,
            };
            (t, (i.backend != wgpu::Backend::Vulkan) as u8)
        };
        adapters.sort_by_key(rank);
        let Some(adapter) = adapters.into_iter().next() else {
            let seen: Vec<String> = list_adapters().iter().map(|a| format!("{} ({})", a.name, a.backend)).collect();
            return Err(GpuError::NoAdapter(if seen.is_empty() {
                "wgpu sees no adapter at all".into()
            } else {
                format!("none suitable among: {}", seen.join(", "))
            }));
        };
        let summary = summarize(&adapter);
        let limits = adapter.limits();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("trnbake"),
            required_features: wgpu::Features::empty(),
            // Not Limits::default(): that caps bindings at 128 MiB everywhere (gpu.md §1.2).
            required_limits: limits.clone(),
            experimental_features: wgpu::ExperimentalFeatures::disabled(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        }))
        .map_err(|e| GpuError::Device(e.to_string()))?;
        device.on_uncaptured_error(std::sync::Arc::new(|e| tracing::error!("uncaptured wgpu error: {e}")));

        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let strip = height_strip();
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("height_pass"),
            source: wgpu::ShaderSource::Wgsl(HEIGHT_PASS_WGSL.into()),
        });
        let storage = |binding: u32, read_only: bool| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let mut entries = vec![wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer { ty: wgpu::BufferBindingType::Uniform, has_dynamic_offset: false, min_binding_size: None },
            count: None,
        }];
        entries.extend((1..binding::COUNT).map(|b| storage(b, b != binding::HEIGHTS)));
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: Some("height_pass"), entries: &entries });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("height_pass"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("height_pass"),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some("height_pass"),
            compilation_options: wgpu::PipelineCompilationOptions { constants: &[("STRIP", f64::from(strip))], ..Default::default() },
            cache: None,
        });
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(GpuError::Unsuitable { adapter: summary.name, reason: e.to_string() });
        }
        Ok(GpuContext { device, queue, adapter: summary, limits, pipeline, layout, strip })
    }

    /// The largest square tile (posts a side, a multiple of 8) whose f32 output fits one
    /// storage binding, capped at `cap` (gpu.md §2.4: lavapipe allows 128 MiB).
    pub fn max_tile(&self, cap: u32) -> u32 {
        let by_binding = ((self.limits.max_storage_buffer_binding_size / 4) as f64).sqrt() as u32;
        let by_buffer = ((self.limits.max_buffer_size / 4) as f64).sqrt() as u32;
        (by_binding.min(by_buffer).min(cap) / 8 * 8).max(8)
    }
}

pub use trnbake_swg::grid::TileSpec;

/// The plan uploaded once, for many tiles.
pub struct GpuHeightPass<'a> {
    ctx: &'a GpuContext,
    plan: &'a BakePlan,
    buffers: Vec<wgpu::Buffer>,
}

fn storage_buffer<T: Pod>(device: &wgpu::Device, label: &str, data: &[T], fallback: T) -> wgpu::Buffer {
    // wgpu cannot bind an empty buffer: upload one dummy element, which the records never index.
    let one = [fallback];
    let data: &[T] = if data.is_empty() { &one } else { data };
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: bytemuck::cast_slice(data),
        usage: wgpu::BufferUsages::STORAGE,
    })
}

/// The plan's storage buffers, bindings 1–14 of every pass (kernels/plan_bindings.wgsl,
/// kernels/surface.wgsl), uploaded once.
fn plan_buffers(d: &wgpu::Device, plan: &BakePlan) -> Vec<wgpu::Buffer> {
    vec![
        storage_buffer(d, "layers", &plan.layers, Default::default()),
        storage_buffer(d, "boundaries", &plan.boundaries, Default::default()),
        storage_buffer(d, "filters", &plan.filters, Default::default()),
        storage_buffer(d, "affectors", &plan.affectors, Default::default()),
        storage_buffer(d, "roads", &plan.roads, Default::default()),
        storage_buffer(d, "points", &plan.points, [0.0; 2]),
        storage_buffer(d, "road_segments", &plan.road_segments, [0; 2]),
        storage_buffer(d, "road_samples", &plan.road_samples, [0.0; 4]),
        storage_buffer(d, "road_heights", &plan.road_heights, 0.0),
        storage_buffer(d, "fractals", &plan.fractal_records, Default::default()),
        storage_buffer(d, "perm", &plan.perm_table(), 0),
        storage_buffer(d, "gradients", &plan.gradient_table(), [0.0; 2]),
        storage_buffer(d, "bitmaps", &plan.bitmap_records, Default::default()),
        storage_buffer(d, "bitmap_words", &plan.bitmap_words(), 0),
    ]
}

/// A tile's layer lists, one per `block`² block (row-major from the tile's south-west
/// post), concatenated with absolute indices: what `walk_point(start, end, …)` in
/// kernels/walk.wgsl walks for the block's posts.
#[derive(Default)]
pub(crate) struct BlockLists {
    pub layers: Vec<TileLayer>,
    pub boundaries: Vec<u32>,
    /// [start, end) in `layers`, per block, row-major.
    pub blocks: Vec<[u32; 2]>,
}

/// The culled layer list of every `block`² block of `tile` (each as `BakePlan::tile_layers`
/// culls for the block's area, so blocks fall where the CPU backend's would for the same
/// block side), built in parallel.
pub(crate) fn block_lists(plan: &BakePlan, grid: &Grid, tile: TileSpec, block: u32) -> BlockLists {
    block_lists_grown(plan, grid, tile, block, 0.0)
}

/// [`block_lists`] with each block's area grown by `margin` metres on every side.
pub(crate) fn block_lists_grown(plan: &BakePlan, grid: &Grid, tile: TileSpec, block: u32, margin: f32) -> BlockLists {
    use rayon::prelude::*;
    let origins: Vec<(u32, u32)> = (0..tile.rows).step_by(block as usize).flat_map(|br| (0..tile.cols).step_by(block as usize).map(move |bc| (bc, br))).collect();
    let lists: Vec<TileList> = origins
        .par_iter()
        .map(|&(bc, br)| {
            let (c0, r0) = (tile.c0 + bc, tile.r0 + br);
            let (c1, r1) = (c0 + block.min(tile.cols - bc) - 1, r0 + block.min(tile.rows - br) - 1);
            let a = grid.area(c0, r0, c1, r1);
            plan.tile_layers([a[0] - margin, a[1] - margin, a[2] + margin, a[3] + margin])
        })
        .collect();
    let mut out = BlockLists::default();
    for list in lists {
        let (base_l, base_b) = (out.layers.len() as u32, out.boundaries.len() as u32);
        out.layers.extend(list.layers.iter().map(|e| TileLayer { skip_to: e.skip_to + base_l, boundary_start: e.boundary_start + base_b, ..*e }));
        out.boundaries.extend(&list.boundaries);
        out.blocks.push([base_l, out.layers.len() as u32]);
    }
    out
}

/// A submitted tile's staging buffer on its way to the host (gpu.md §2.4): mapping starts at
/// submission, so the GPU can compute the next tile while this one is read.
pub(crate) struct Readback {
    staging: wgpu::Buffer,
    done: mpsc::Receiver<Result<(), wgpu::BufferAsyncError>>,
    submission: wgpu::SubmissionIndex,
}

impl Readback {
    /// Map `staging` for reading once `submission` (which copied into it) has run.
    pub(crate) fn start(staging: wgpu::Buffer, submission: wgpu::SubmissionIndex) -> Readback {
        let (tx, rx) = mpsc::channel();
        staging.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        Readback { staging, done: rx, submission }
    }

    /// Wait for the GPU and the mapping, hand the bytes to `read`, then unmap; `what` names
    /// the tile in errors.
    pub(crate) fn finish(self, device: &wgpu::Device, what: &str, read: impl FnOnce(&[u8])) -> Result<(), GpuError> {
        wait_for(device, self.submission)?;
        self.done
            .recv()
            .map_err(|e| GpuError::Runtime(e.to_string()))?
            .map_err(|e| GpuError::Runtime(format!("reading {what} back failed: {e}")))?;
        {
            let view = self.staging.slice(..).get_mapped_range().map_err(|e| GpuError::Runtime(e.to_string()))?;
            read(&view);
        }
        self.staging.unmap();
        Ok(())
    }
}

/// Run `items` with two in flight (gpu.md §2.4): each is submitted before the one before it
/// is finished, so the GPU computes the next while the CPU consumes the last. Validation
/// errors of the whole run are reported as one [`GpuError::Runtime`].
pub(crate) fn two_in_flight<I, F>(
    device: &wgpu::Device,
    items: impl IntoIterator<Item = I>,
    mut submit: impl FnMut(I) -> F,
    mut finish: impl FnMut(F) -> Result<(), GpuError>,
) -> Result<(), GpuError> {
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let mut pending: Option<F> = None;
    for item in items {
        let next = submit(item);
        if let Some(prev) = pending.take() {
            finish(prev)?;
        }
        pending = Some(next);
    }
    if let Some(prev) = pending.take() {
        finish(prev)?;
    }
    if let Some(e) = pollster::block_on(scope.pop()) {
        return Err(GpuError::Runtime(e.to_string()));
    }
    Ok(())
}

/// Block until the GPU has run `submission`.
fn wait_for(device: &wgpu::Device, submission: wgpu::SubmissionIndex) -> Result<(), GpuError> {
    device
        .poll(wgpu::PollType::Wait { submission_index: Some(submission), timeout: None })
        .map(|_| ())
        .map_err(|e| GpuError::Runtime(e.to_string()))
}

struct InFlight {
    tile: TileSpec,
    /// None when the tile is computed without reading it back ([`GpuHeightPass::compute_only`]).
    readback: Option<Readback>,
    submission: wgpu::SubmissionIndex,
}

impl<'a> GpuHeightPass<'a> {
    pub fn new(ctx: &'a GpuContext, plan: &'a BakePlan) -> GpuHeightPass<'a> {
        GpuHeightPass { ctx, plan, buffers: plan_buffers(&ctx.device, plan) }
    }

    /// Encode and submit `tile`; with `readback`, also copy it to a staging buffer and map it.
    fn submit(&self, grid: &Grid, tile: TileSpec, readback: bool) -> InFlight {
        let d = &self.ctx.device;
        let list = block_lists(self.plan, grid, tile, HEIGHT_CULL_BLOCK);
        let params = GpuParams {
            x0: grid.x0 as f32,
            z0: grid.z0 as f32,
            spacing: grid.spacing as f32,
            half_width: self.plan.half_width,
            grid_cols: grid.cols,
            grid_rows: grid.rows,
            tile_c0: tile.c0,
            tile_r0: tile.r0,
            tile_cols: tile.cols,
            tile_rows: tile.rows,
            blocks_per_row: tile.cols.div_ceil(HEIGHT_CULL_BLOCK),
            _pad: 0,
        };
        let uniform = d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("params"),
            contents: bytemuck::bytes_of(&params),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let tile_layers = storage_buffer(d, "tile_layers", &list.layers, Default::default());
        let tile_boundaries = storage_buffer(d, "tile_boundaries", &list.boundaries, 0);
        let bytes = u64::from(tile.cols) * u64::from(tile.rows) * 4;
        let output = d.create_buffer(&wgpu::BufferDescriptor {
            label: Some("heights"),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let staging = readback.then(|| {
            d.create_buffer(&wgpu::BufferDescriptor {
                label: Some("staging"),
                size: bytes,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        });
        let mut resources: Vec<&wgpu::Buffer> = vec![&uniform];
        resources.extend(self.buffers.iter());
        resources.push(&tile_layers);
        resources.push(&tile_boundaries);
        resources.push(&output);
        let blocks = storage_buffer(d, "blocks", &list.blocks, [0; 2]);
        resources.push(&blocks);
        let entries: Vec<wgpu::BindGroupEntry> = resources
            .iter()
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.as_entire_binding() })
            .collect();
        let bind = d.create_bind_group(&wgpu::BindGroupDescriptor { label: Some("height_pass"), layout: &self.ctx.layout, entries: &entries });
        let mut enc = d.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("height_pass") });
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("height_pass"), timestamp_writes: None });
            pass.set_pipeline(&self.ctx.pipeline);
            pass.set_bind_group(0, &bind, &[]);
            pass.dispatch_workgroups(tile.cols.div_ceil(8 * self.ctx.strip), tile.rows.div_ceil(8), 1);
        }
        if let Some(staging) = &staging {
            enc.copy_buffer_to_buffer(&output, 0, staging, 0, bytes);
        }
        let submission = self.ctx.queue.submit([enc.finish()]);
        InFlight { tile, readback: staging.map(|s| Readback::start(s, submission.clone())), submission }
    }

    fn finish(&self, f: InFlight, sink: &mut dyn FnMut(TileSpec, &[f32])) -> Result<(), GpuError> {
        match f.readback {
            Some(r) => r.finish(&self.ctx.device, "a height tile", |bytes| sink(f.tile, bytemuck::cast_slice(bytes))),
            None => wait_for(&self.ctx.device, f.submission),
        }
    }

    /// Compute `tiles` of `grid`, handing each finished tile (row-major, row 0 = south) to
    /// `sink` in order, with the next tile already submitted while `sink` runs.
    pub fn run(&self, grid: &Grid, tiles: &[TileSpec], sink: &mut dyn FnMut(TileSpec, &[f32])) -> Result<(), GpuError> {
        two_in_flight(&self.ctx.device, tiles, |&t| self.submit(grid, t, true), |f| self.finish(f, sink))
    }

    /// Compute `tiles` of `grid` and wait for the GPU, reading nothing back: with
    /// [`GpuHeightPass::run`]'s time, it splits a bake into compute and transfer
    /// (`trnbake bench --planet`).
    pub fn compute_only(&self, grid: &Grid, tiles: &[TileSpec]) -> Result<(), GpuError> {
        let scope = self.ctx.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let mut last = None;
        for &t in tiles {
            last = Some(self.submit(grid, t, false));
        }
        if let Some(f) = last {
            self.finish(f, &mut |_, _| {})?;
        }
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(GpuError::Runtime(e.to_string()));
        }
        Ok(())
    }

    /// The whole of `grid` in memory (row-major, row 0 = south), in tiles of `tile` posts a side.
    pub fn run_grid(&self, grid: &Grid, tile: u32) -> Result<Vec<f32>, GpuError> {
        let cols = grid.cols as usize;
        let mut out = vec![0.0f32; cols * grid.rows as usize];
        self.run(grid, &trnbake_swg::grid::tiles(grid, tile), &mut |t, data| {
            for (r, row) in data.chunks_exact(t.cols as usize).enumerate() {
                let dst = (t.r0 as usize + r) * cols + t.c0 as usize;
                out[dst..dst + row.len()].copy_from_slice(row);
            }
        })?;
        Ok(out)
    }
}
