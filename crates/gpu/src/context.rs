//! The GPU context: the adapter, the device and its limits, and the errors of the GPU backend.

use crate::records::{binding, HEIGHT_PASS_WGSL};

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
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
    pub(crate) pipeline: wgpu::ComputePipeline,
    pub(crate) layout: wgpu::BindGroupLayout,
    /// Posts per invocation of the height kernel (`STRIP` in kernels/walk_strip.wgsl).
    pub strip: u32,
}

/// Posts per invocation of the height kernel on an adapter of `device_type`, unless
/// `TRNBAKE_GPU_STRIP` (1..=4) says otherwise (benchmarks that compare strips on one adapter;
/// scripts/device-bench.sh runs both). A CPU adapter (lavapipe) walks a strip of 4 posts a
/// row per invocation, each record load serving four posts: 1.8x faster there. A real GPU walks
/// one post per invocation: on the H200 the full 1 m planet computed in 0.11 s against 0.22 s
/// with strips of 4 (more invocations hide the loads better than fewer, wider ones).
pub fn height_strip(device_type: wgpu::DeviceType) -> u32 {
    let default = if device_type == wgpu::DeviceType::Cpu { 4 } else { 1 };
    match std::env::var("TRNBAKE_GPU_STRIP").ok().and_then(|v| v.trim().parse::<u32>().ok()) {
        Some(n @ 1..=4) => n,
        Some(n) => {
            tracing::warn!("TRNBAKE_GPU_STRIP={n} is not in 1..=4; using {default}");
            default
        }
        None => default,
    }
}

impl GpuContext {
    /// Pick an adapter: high-performance first (a real GPU beats lavapipe), or only software
    /// adapters with `software_only`; `name_filter` keeps adapters whose name contains it.
    pub fn new(software_only: bool, name_filter: Option<&str>) -> Result<GpuContext, GpuError> {
        Self::open(software_only, name_filter, None)
    }

    /// [`GpuContext::new`] with the height kernel walking `strip` posts (1..=4) per invocation
    /// whatever the adapter (the tests hold every strip to the same heights).
    pub fn with_height_strip(software_only: bool, name_filter: Option<&str>, strip: u32) -> Result<GpuContext, GpuError> {
        assert!((1..=4).contains(&strip), "a strip of 1 to 4 posts");
        Self::open(software_only, name_filter, Some(strip))
    }

    fn open(software_only: bool, name_filter: Option<&str>, strip: Option<u32>) -> Result<GpuContext, GpuError> {
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
        let adapter_type = adapter.get_info().device_type;
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
        let strip = strip.unwrap_or_else(|| height_strip(adapter_type));
        let module =
            device.create_shader_module(wgpu::ShaderModuleDescriptor { label: Some("height_pass"), source: wgpu::ShaderSource::Wgsl(HEIGHT_PASS_WGSL.into()) });
        let storage = |binding: u32, read_only: bool| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer { ty: wgpu::BufferBindingType::Storage { read_only }, has_dynamic_offset: false, min_binding_size: None },
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
