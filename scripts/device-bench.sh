#!/usr/bin/env bash
# The GPU-machine figures in one run (full tatooine at 2 m and 1 m: plan upload, compute
# without read-back, heights in host memory; the standard bench; end-to-end bakes, heights only
# and every map at 2 m and 1 m), for a session that is lent a device machine. Prepare on this machine, run there once:
#
#   cargo build --release
#   mkdir -p .devdata && cp ../shared/data/swg/terrain/tatooine.trn .devdata/   # never committed
#   echo /.devdata/ >> .git/info/exclude
#   # plus the Vulkan loader debs in .gl (see the device tool's README), then
#   run(command="bash scripts/device-bench.sh", carry=["target/release/trnbake", ".devdata", ".gl"], timeout_s=540)
#
# Everything it prints is also written to $OUT (JSON per step), so a killed run keeps what it had.
set -uo pipefail
OUT="${OUT:-/tmp/device-out}"
mkdir -p "$OUT"
for f in .gl/*.deb; do [ -e "$f" ] && dpkg -x "$f" /; done
ldconfig 2>/dev/null || true
if [ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
BIN=target/release/trnbake
TRN="${TRN:-.devdata/tatooine.trn}"
# Spacings of the full-planet case (a quick local dry run: PLANET=64 PLANET_1=64).
PLANET="${PLANET:-2,1}"
PLANET_1="${PLANET_1:-1}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | tee "$OUT/gpu.txt"
"$BIN" adapters | tee "$OUT/adapters.txt"
# 1. The full planet at 2 m and 1 m on the GPU (and the CPU backend at 2 m for the ratio).
timeout 200 "$BIN" bench "$TRN" --planet "$PLANET" --json | tee "$OUT/planet.json"
# The height kernel walks a strip of 4 posts per invocation (one record load for four posts;
# 1.8x faster on lavapipe); the one-post kernel beside it decides whether a real GPU agrees.
TRNBAKE_GPU_STRIP=1 timeout 100 "$BIN" bench "$TRN" --planet "$PLANET_1" --json | tee "$OUT/planet_strip1.json"
# Smaller tiles cull more layers per tile; is that worth the extra dispatches on this GPU?
timeout 100 "$BIN" bench "$TRN" --planet "$PLANET_1" --planet-tile 512 --json | tee "$OUT/planet_tile512.json"
timeout 120 "$BIN" bench "$TRN" --planet "${PLANET%%,*}" --planet-cpu --json | tee "$OUT/planet_cpu.json"
# 2. The standard cases (8 m full map, 2 m region with and without culling, surface passes).
timeout 120 "$BIN" bench "$TRN" --json | tee "$OUT/bench.json"
# 3. End to end through the bake (GeoTIFF + PNG written) at 2 m, heights only.
rm -rf /tmp/bake2m
/usr/bin/time -v timeout 120 "$BIN" bake "$TRN" --backend gpu --maps height -o /tmp/bake2m 2>&1 | tail -25 | tee "$OUT/bake2m.txt"
cp /tmp/bake2m/manifest.json "$OUT/bake2m_manifest.json" 2>/dev/null || true
# 4. Every map the file feeds (surface maps streamed by bands on the GPU), at 2 m and 1 m
#    (issue #23's H200 goal: every map of the 1 m planet in 30 s). The manifests' timing.surface
#    splits the surface stage (passes, checkpoints, writing).
for SP in 2 1; do
  rm -rf /tmp/bakeall
  TRNBAKE_PROGRESS_SECS=10 /usr/bin/time -v timeout 200 "$BIN" bake "$TRN" --backend gpu --spacing "$SP" -o /tmp/bakeall 2>&1 | tail -40 | tee "$OUT/bakeall_${SP}m.txt"
  cp /tmp/bakeall/manifest.json "$OUT/bakeall_${SP}m_manifest.json" 2>/dev/null || true
done
rm -rf /tmp/bakeall
