//! The water tables on the GPU (swg-trn §5.11, §5.12 [?]): the `water_pass` entry point of
//! `kernels/water.wgsl` (in the surface module) evaluates [`WaterTables::height_at`] at every
//! post of a grid, tile by tile, with each tile's local tables and lines culled to the ones
//! whose bounds reach it (exact: the CPU rejects a post outside those bounds first, and the
//! culled lists keep their order, so the "highest wins" fold sees the same values in the same
//! order). On lavapipe the levels are bit-identical to the CPU's (tests/gpu_surface_parity.rs).

use super::records::SURFACE_PASS_WGSL;
use super::surface_pass::GpuSurfaceParams;
use super::{storage_buffer, two_in_flight, GpuContext, GpuError, Readback, TileSpec};
use bytemuck::{Pod, Zeroable};
use trnbake_swg::eval::Grid;
use trnbake_swg::plan::BoundaryRecord;
use trnbake_swg::water::WaterTables;
use wgpu::util::DeviceExt;

/// Side in posts of the tiles one dispatch covers.
pub const TILE: u32 = 256;

/// Binding numbers (group 0) of the water pass; 0 (`SurfaceParams`), 2 (`boundaries`) and 6
/// (`points`) are the surface passes' bindings, reused.
pub mod binding {
    /// `SurfaceParams` (uniform): x0, z0, spacing, the tile, `keep_zero`.
    pub const PARAMS: u32 = 0;
    /// The tile's local water boundaries (`array<BoundaryRecord>`).
    pub const BOUNDARIES: u32 = 2;
    /// Their polygon vertices (`array<vec2<f32>>`).
    pub const POINTS: u32 = 6;
    /// `WaterParams` (uniform).
    pub const WATER_PARAMS: u32 = 23;
    /// One `LocalWaterRecord` per entry of `boundaries`.
    pub const LOCAL_WATER: u32 = 24;
    /// The tile's `WaterLineRecord`s.
    pub const WATER_LINES: u32 = 25;
    /// The lines' vertices, 3 f32 each (x, z, surface height).
    pub const WATER_LINE_POINTS: u32 = 26;
    /// Output: one `WaterPost` a post (read_write).
    pub const WATER: u32 = 27;
    /// Every binding of the water pass.
    pub const ALL: [u32; 8] = [PARAMS, BOUNDARIES, POINTS, WATER_PARAMS, LOCAL_WATER, WATER_LINES, WATER_LINE_POINTS, WATER];
}

/// Entry point of the water pass in `SURFACE_PASS_WGSL`; `@workgroup_size(8, 8)`.
pub const WATER_PASS_ENTRY: &str = "water_pass";

/// The tile's table counts and the global table (binding 23). Keep in sync with
/// `WaterParams` in kernels/water.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable, PartialEq)]
pub struct GpuWaterParams {
    pub global_height: f32,
    /// 1 when the terrain has a global water table.
    pub has_global: u32,
    pub local_count: u32,
    pub line_count: u32,
}

/// One local water table (binding 24, beside its boundary at binding 2). Keep in sync with
/// `LocalWaterRecord` in kernels/water.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable, PartialEq)]
pub struct GpuLocalWater {
    pub height: f32,
    /// 0 water, 1 lava.
    pub water_type: i32,
}

/// One river water table or ribbon (binding 25). Keep in sync with `WaterLineRecord` in
/// kernels/water.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable, PartialEq)]
pub struct GpuWaterLine {
    /// First vertex in the line points (binding 26) and count.
    pub point_start: u32,
    pub point_count: u32,
    pub half_width: f32,
    /// 0 water, 1 lava.
    pub water_type: i32,
    /// min x, min z, max x, max z.
    pub bounds: [f32; 4],
}

/// One post's water surface (binding 27). Keep in sync with `WaterPost` in kernels/water.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable, PartialEq)]
pub struct GpuWaterPost {
    /// Meaningful only where `covered` is 1.
    pub height: f32,
    /// 1 where some table covers the post.
    pub covered: u32,
}

impl GpuWaterPost {
    /// The CPU's `Option` reading.
    pub fn level(self) -> Option<f32> {
        (self.covered != 0).then_some(self.height)
    }
}

/// Whether a [min x, min z, max x, max z] box reaches the world box `area` (same layout).
fn reaches(b: [f32; 4], area: [f32; 4]) -> bool {
    !(b[2] < area[0] || b[0] > area[2] || b[3] < area[1] || b[1] > area[3])
}

/// The water tables of one terrain uploaded once, for many tiles.
pub struct GpuWaterPass<'a> {
    ctx: &'a GpuContext,
    tables: &'a WaterTables,
    lines: Vec<GpuWaterLine>,
    polygon_points: wgpu::Buffer,
    line_points: wgpu::Buffer,
    layout: wgpu::BindGroupLayout,
    pipeline: wgpu::ComputePipeline,
}

struct InFlight {
    tile: TileSpec,
    readback: Readback,
}

impl<'a> GpuWaterPass<'a> {
    /// Compile the kernel and upload the tables' vertices.
    pub fn new(ctx: &'a GpuContext, tables: &'a WaterTables) -> Result<GpuWaterPass<'a>, GpuError> {
        let d = &ctx.device;
        let scope = d.push_error_scope(wgpu::ErrorFilter::Validation);
        let module =
            d.create_shader_module(wgpu::ShaderModuleDescriptor { label: Some("water_pass"), source: wgpu::ShaderSource::Wgsl(SURFACE_PASS_WGSL.into()) });
        let entries: Vec<wgpu::BindGroupLayoutEntry> = binding::ALL
            .iter()
            .map(|&b| wgpu::BindGroupLayoutEntry {
                binding: b,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: match b {
                        binding::PARAMS | binding::WATER_PARAMS => wgpu::BufferBindingType::Uniform,
                        binding::WATER => wgpu::BufferBindingType::Storage { read_only: false },
                        _ => wgpu::BufferBindingType::Storage { read_only: true },
                    },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            })
            .collect();
        let layout = d.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: Some("water_pass"), entries: &entries });
        let pipeline_layout =
            d.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor { label: Some("water_pass"), bind_group_layouts: &[Some(&layout)], immediate_size: 0 });
        let pipeline = d.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(WATER_PASS_ENTRY),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some(WATER_PASS_ENTRY),
            compilation_options: Default::default(),
            cache: None,
        });
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(GpuError::Unsuitable { adapter: ctx.adapter.name.clone(), reason: e.to_string() });
        }
        let mut vertices: Vec<f32> = Vec::new();
        let mut lines = Vec::with_capacity(tables.lines.len());
        for l in &tables.lines {
            lines.push(GpuWaterLine {
                point_start: (vertices.len() / 3) as u32,
                point_count: l.points.len() as u32,
                half_width: l.half_width,
                water_type: l.water_type,
                bounds: l.bounds,
            });
            vertices.extend(l.points.iter().flatten());
        }
        Ok(GpuWaterPass {
            ctx,
            tables,
            lines,
            polygon_points: storage_buffer(d, "water polygon points", tables.points(), [0.0; 2]),
            line_points: storage_buffer(d, "water line points", &vertices, 0.0),
            layout,
            pipeline,
        })
    }

    fn submit(&self, grid: &Grid, tile: TileSpec) -> InFlight {
        let d = &self.ctx.device;
        let area = grid.area(tile.c0, tile.r0, tile.c0 + tile.cols - 1, tile.r0 + tile.rows - 1);
        let (boundaries, local): (Vec<BoundaryRecord>, Vec<GpuLocalWater>) = self
            .tables
            .local
            .iter()
            .filter(|lw| reaches(lw.boundary.bounds, area))
            .map(|lw| (lw.boundary, GpuLocalWater { height: lw.height, water_type: lw.water_type }))
            .unzip();
        let lines: Vec<GpuWaterLine> = self.lines.iter().filter(|l| reaches(l.bounds, area)).copied().collect();
        let params = GpuSurfaceParams {
            x0: grid.x0 as f32,
            z0: grid.z0 as f32,
            spacing: grid.spacing as f32,
            tile_c0: tile.c0,
            tile_r0: tile.r0,
            tile_cols: tile.cols,
            tile_rows: tile.rows,
            ..Default::default()
        };
        let water_params = GpuWaterParams {
            global_height: self.tables.global.unwrap_or(0.0),
            has_global: self.tables.global.is_some() as u32,
            local_count: local.len() as u32,
            line_count: lines.len() as u32,
        };
        let uniform = |label: &str, bytes: &[u8]| {
            d.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: Some(label), contents: bytes, usage: wgpu::BufferUsages::UNIFORM })
        };
        let params = uniform("water surface params", bytemuck::bytes_of(&params));
        let water_params = uniform("water params", bytemuck::bytes_of(&water_params));
        let boundaries = storage_buffer(d, "water boundaries", &boundaries, Default::default());
        let local = storage_buffer(d, "local water", &local, Default::default());
        let lines = storage_buffer(d, "water lines", &lines, Default::default());
        let bytes = u64::from(tile.cols) * u64::from(tile.rows) * std::mem::size_of::<GpuWaterPost>() as u64;
        let output = d.create_buffer(&wgpu::BufferDescriptor {
            label: Some("water posts"),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let staging = d.create_buffer(&wgpu::BufferDescriptor {
            label: Some("water staging"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let resources: [&wgpu::Buffer; 8] = [&params, &boundaries, &self.polygon_points, &water_params, &local, &lines, &self.line_points, &output];
        let entries: Vec<wgpu::BindGroupEntry> =
            binding::ALL.iter().zip(resources).map(|(&binding, b)| wgpu::BindGroupEntry { binding, resource: b.as_entire_binding() }).collect();
        let bind = d.create_bind_group(&wgpu::BindGroupDescriptor { label: Some("water_pass"), layout: &self.layout, entries: &entries });
        let mut enc = d.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("water_pass") });
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("water_pass"), timestamp_writes: None });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &bind, &[]);
            pass.dispatch_workgroups(tile.cols.div_ceil(8), tile.rows.div_ceil(8), 1);
        }
        enc.copy_buffer_to_buffer(&output, 0, &staging, 0, bytes);
        let submission = self.ctx.queue.submit([enc.finish()]);
        InFlight { tile, readback: Readback::start(staging, submission) }
    }

    fn finish(&self, f: InFlight, sink: &mut dyn FnMut(TileSpec, &[GpuWaterPost])) -> Result<(), GpuError> {
        f.readback.finish(&self.ctx.device, "a water tile", |bytes| sink(f.tile, bytemuck::cast_slice(bytes)))
    }

    /// The water surface height at every post of `grid`, row-major from the south (the GPU
    /// twin of mapping [`WaterTables::height_at`] over the grid's posts).
    pub fn run(&self, grid: &Grid) -> Result<Vec<Option<f32>>, GpuError> {
        let cols = grid.cols as usize;
        let mut levels = vec![None; cols * grid.rows as usize];
        if !self.tables.has_any() {
            return Ok(levels);
        }
        let mut sink = |t: TileSpec, posts: &[GpuWaterPost]| {
            for r in 0..t.rows as usize {
                let dst = (t.r0 as usize + r) * cols + t.c0 as usize;
                let src = r * t.cols as usize;
                for (out, p) in levels[dst..dst + t.cols as usize].iter_mut().zip(&posts[src..src + t.cols as usize]) {
                    *out = p.level();
                }
            }
        };
        let tiles = trnbake_swg::grid::tiles(grid, TILE);
        two_in_flight(&self.ctx.device, tiles, |t| self.submit(grid, t), |f| self.finish(f, &mut sink))?;
        Ok(levels)
    }
}

/// The water levels of `tables` at every post of `grid` on the GPU.
pub fn evaluate(ctx: &GpuContext, grid: &Grid, tables: &WaterTables) -> Result<Vec<Option<f32>>, GpuError> {
    GpuWaterPass::new(ctx, tables)?.run(grid)
}
