//! The backend of a bake: a GPU context when one is asked for and usable, else the CPU; and
//! the heights of a small grid held in memory on either.

use trnbake_gpu::{GpuContext, GpuHeightPass};
use trnbake_swg::eval::{Grid, HeightEvaluator};

use crate::{Backend, Reporter, Result};

/// The determinism class of a backend for [`BakeState::backend`].
pub(crate) fn backend_class(gpu: Option<&GpuContext>) -> String {
    match gpu {
        Some(c) => format!("gpu: {} ({})", c.adapter.name, c.adapter.backend),
        None => "cpu".into(),
    }
}

/// The GPU context `backend` asks for, or `None` for the CPU backend; says which on stderr
/// to `reporter`. `Auto` takes only hardware adapters: a software adapter (lavapipe) runs
/// the kernel far slower than the CPU backend (README, Performance); `Gpu` still uses it.
pub fn choose_gpu(backend: Backend, adapter_filter: Option<&str>, reporter: &dyn Reporter) -> Result<Option<GpuContext>> {
    let gpu = match backend {
        Backend::Cpu => None,
        Backend::Gpu => Some(GpuContext::new(false, adapter_filter)?),
        Backend::Auto => match GpuContext::new(false, adapter_filter) {
            Ok(c) if c.adapter.device_type == "Cpu" && adapter_filter.is_none() => {
                reporter.note(format!(
                    "only a software GPU adapter ({}) is present; baking on the faster CPU backend (--backend gpu forces the adapter)",
                    c.adapter.name
                ));
                None
            }
            Ok(c) => Some(c),
            Err(e) => {
                reporter.note(format!("no usable GPU adapter ({e}); baking on the CPU"));
                None
            }
        },
    };
    match &gpu {
        Some(c) => reporter.info(format!("backend: GPU, adapter {} ({}, {})", c.adapter.name, c.adapter.backend, c.adapter.driver_info)),
        None => reporter.info(format!("backend: CPU ({} threads)", rayon::current_num_threads())),
    }
    Ok(gpu)
}

/// `"gpu"` or `"cpu"`: the backend [`choose_gpu`] picked, as manifests and reports name it.
pub fn backend_name(gpu: Option<&GpuContext>) -> &'static str {
    if gpu.is_some() {
        "gpu"
    } else {
        "cpu"
    }
}

/// The heights of a whole grid in memory (row-major, row 0 = south) on the GPU when `gpu`
/// is given, else on the CPU backend: for grids small enough to hold, without checkpoints.
pub fn heights_in_memory(evaluator: &HeightEvaluator, grid: &Grid, gpu: Option<&GpuContext>) -> Result<Vec<f32>> {
    let n = grid.cols as usize * grid.rows as usize;
    match gpu {
        Some(ctx) => Ok(GpuHeightPass::new(ctx, &evaluator.plan).run_grid(grid, ctx.max_tile(2048))?),
        None => {
            let _ = n;
            Ok(evaluator.grid_heights(grid))
        }
    }
}
