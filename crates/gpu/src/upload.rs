//! What every pass shares: the plan's storage buffers uploaded once, the per-block culled
//! layer lists, read-back of a tile, and two tiles in flight (gpu.md §2.4).

use std::sync::mpsc;

use bytemuck::Pod;
use trnbake_swg::eval::Grid;
use trnbake_swg::plan::{BakePlan, TileLayer, TileList};
use wgpu::util::DeviceExt;

use crate::{GpuError, TileSpec};

pub(crate) fn storage_buffer<T: Pod>(device: &wgpu::Device, label: &str, data: &[T], fallback: T) -> wgpu::Buffer {
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
pub(crate) fn plan_buffers(d: &wgpu::Device, plan: &BakePlan) -> Vec<wgpu::Buffer> {
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
    let origins: Vec<(u32, u32)> =
        (0..tile.rows).step_by(block as usize).flat_map(|br| (0..tile.cols).step_by(block as usize).map(move |bc| (bc, br))).collect();
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
        self.done.recv().map_err(|e| GpuError::Runtime(e.to_string()))?.map_err(|e| GpuError::Runtime(format!("reading {what} back failed: {e}")))?;
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
pub(crate) fn wait_for(device: &wgpu::Device, submission: wgpu::SubmissionIndex) -> Result<(), GpuError> {
    device.poll(wgpu::PollType::Wait { submission_index: Some(submission), timeout: None }).map(|_| ()).map_err(|e| GpuError::Runtime(e.to_string()))
}
