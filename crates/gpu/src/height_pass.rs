//! The height pass: `kernels/height.wgsl` over `walk_strip.wgsl`, tile by tile, with two
//! tiles in flight so the GPU computes tile k+1 while the CPU consumes tile k (gpu.md §2.4).

use trnbake_swg::eval::Grid;
use trnbake_swg::plan::BakePlan;
use wgpu::util::DeviceExt;

use crate::records::{GpuParams, HEIGHT_CULL_BLOCK};
use crate::upload::{block_lists, plan_buffers, storage_buffer, two_in_flight, wait_for, Readback};
use crate::{GpuContext, GpuError, TileSpec};

/// The plan uploaded once, for many tiles.
pub struct GpuHeightPass<'a> {
    ctx: &'a GpuContext,
    plan: &'a BakePlan,
    buffers: Vec<wgpu::Buffer>,
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
        let entries: Vec<wgpu::BindGroupEntry> =
            resources.iter().enumerate().map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.as_entire_binding() }).collect();
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
