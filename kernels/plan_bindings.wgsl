// plan_bindings.wgsl — bindings 1–16, the plan and the tile's culled layer lists, declared
// once for every module (crates/gpu/src/records.rs `binding` names them; `plan_buffers` uploads
// 1–14 once per bake, 15–16 per tile). Each module declares its own `params` (binding 0) and
// the bindings from 17 on.

@group(0) @binding(1) var<storage, read> layers: array<LayerRecord>;
@group(0) @binding(2) var<storage, read> boundaries: array<BoundaryRecord>;
@group(0) @binding(3) var<storage, read> filters: array<FilterRecord>;
@group(0) @binding(4) var<storage, read> affectors: array<AffectorRecord>;
@group(0) @binding(5) var<storage, read> roads: array<RoadRecord>;
@group(0) @binding(6) var<storage, read> points: array<vec2<f32>>;
@group(0) @binding(7) var<storage, read> road_segments: array<vec2<u32>>;
@group(0) @binding(8) var<storage, read> road_samples: array<vec4<f32>>;
@group(0) @binding(9) var<storage, read> road_heights: array<f32>;
@group(0) @binding(10) var<storage, read> fractals: array<FractalRecord>;
@group(0) @binding(11) var<storage, read> perm: array<u32>;
@group(0) @binding(12) var<storage, read> gradients: array<vec2<f32>>;
@group(0) @binding(13) var<storage, read> bitmaps: array<BitmapRecord>;
@group(0) @binding(14) var<storage, read> bitmap_words: array<u32>;
@group(0) @binding(15) var<storage, read> tile_layers: array<TileLayer>;
@group(0) @binding(16) var<storage, read> tile_boundaries: array<u32>;
