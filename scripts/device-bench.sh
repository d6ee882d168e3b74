#!/usr/bin/env bash
# The GPU-machine figures in one run (full tatooine at 2 m and 1 m: plan upload, compute
# without read-back, heights in host memory; the standard bench; end-to-end bakes, heights only
# and every map at 2 m and 1 m on both backends; the 0.5 m planet's heights), for a session that is lent a device machine. Prepare on this machine, run there once:
#
#   cargo build --release
#   # tatooine and the bitmaps it reads (terrain/*.tga and colorramp/, about 9 MB), laid out as the data root; never committed
#   mkdir -p .devdata/terrain && cp -r ../shared/data/swg/terrain/{tatooine.trn,*.tga,colorramp} .devdata/terrain/
#   echo /.devdata/ >> .git/info/exclude
#   # a dry run here first (PLANET=64 PLANET_1=64 HALF=64 OUT=/tmp/dry bash scripts/device-bench.sh): every step must print figures
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
TRN="${TRN:-.devdata/terrain/tatooine.trn}"
# The data root the .trn's bitmaps resolve against (docs/src/spec/swg-trn.md §2.4: terrain/NAME.tga).
DATA="${DATA:-.devdata}"
# Everything printed goes to $OUT/log.txt as well; the device tool returns at most 8 files, so
# the JSON of the planet variants shares one file.
exec > >(tee -a "$OUT/log.txt") 2>&1
# Spacings of the full-planet case (a quick local dry run: PLANET=64 PLANET_1=64).
PLANET="${PLANET:-2,1}"
PLANET_1="${PLANET_1:-1}"
# Spacing of the finest heights-only bake (step 4b; a dry run: HALF=64).
HALF="${HALF:-0.5}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1
"$BIN" adapters
# Device time is short: stop at once when no hardware Vulkan adapter shows (a CPU one only).
if ! "$BIN" adapters | grep -q 'Vulkan \(DiscreteGpu\|IntegratedGpu\|VirtualGpu\)' && [ -z "${ALLOW_CPU_ADAPTER:-}" ]; then
  echo "no hardware Vulkan adapter; VK_DRIVER_FILES=${VK_DRIVER_FILES:-unset}"; ls /usr/local/nvidia/share/vulkan/icd.d /usr/share/vulkan/icd.d 2>&1
  exit 3
fi
# Steps in the order of their worth, so a run cut short keeps the figures that matter most.
# 1. The full planet at 2 m and 1 m on the GPU: plan upload, compute without read-back, heights in host memory.
timeout 150 "$BIN" bench "$TRN" --data-root "$DATA" --planet "$PLANET" --json | tee "$OUT/planet.json"
# 2. The standard cases (8 m full map, 2 m region with and without culling, surface passes), GPU and CPU.
timeout 90 "$BIN" bench "$TRN" --data-root "$DATA" --json | tee "$OUT/bench.json"
# 3. Every map the file feeds (surface maps streamed by bands on the GPU), at 2 m and 1 m
#    (issue #23's H200 goal: every map of the 1 m planet in 30 s). The manifests' timing.surface
#    splits the surface stage (passes, checkpoints, writing).
for SP in 2 1; do
  rm -rf /tmp/bakeall
  TRNBAKE_PROGRESS_SECS=10 /usr/bin/time -v timeout $((60 + 60 * (3 - SP))) "$BIN" bake "$TRN" --data-root "$DATA" --backend gpu --spacing "$SP" -o /tmp/bakeall 2>&1 | grep -v -E '^\s+(Average|Major|Minor|Voluntary|Involuntary|Swaps|File system|Socket|Signals|Page size|Exit status)'
  cp /tmp/bakeall/manifest.json "$OUT/bakeall_${SP}m_manifest.json" 2>/dev/null || true
done
rm -rf /tmp/bakeall
# 4. End to end through the bake (GeoTIFF + PNG written) at 2 m, heights only.
rm -rf /tmp/bake2m
/usr/bin/time -v timeout 60 "$BIN" bake "$TRN" --data-root "$DATA" --backend gpu --maps height -o /tmp/bake2m 2>&1 | grep -E 'Elapsed|Maximum resident|Percent of CPU|error'
cat /tmp/bake2m/manifest.json >> "$OUT/heights_manifests.txt" 2>/dev/null || true
rm -rf /tmp/bake2m
# 4b. The 0.5 m planet, heights only (32769², 1.07 G posts; issue #39's target ≤ 60 s): streamed
#     tile by tile, so RSS stays flat (38 MB on 2 cores, 117 s); its manifest joins the 2 m one.
rm -rf /tmp/bakehalf
/usr/bin/time -v timeout 150 "$BIN" bake "$TRN" --data-root "$DATA" --backend gpu -q --spacing "$HALF" --maps height -o /tmp/bakehalf 2>&1 | grep -E 'Elapsed|Maximum resident|Percent of CPU|User time|error'
cat /tmp/bakehalf/manifest.json >> "$OUT/heights_manifests.txt" 2>/dev/null || true
rm -rf /tmp/bakehalf
# 5. Variants of the planet case, one JSON array each in planet_variants.json: the CPU backend at
#    2 m (the GPU/CPU ratio); the height kernel's strip of 4 posts per invocation (lavapipe's
#    default, 1.8x faster there; a real GPU walks one post per invocation by default, 2x faster
#    on the H200); 512² tiles (more culling, more dispatches).
{
  timeout 60 "$BIN" bench "$TRN" --data-root "$DATA" --planet "${PLANET%%,*}" --planet-cpu --json
  TRNBAKE_GPU_STRIP=4 timeout 60 "$BIN" bench "$TRN" --data-root "$DATA" --planet "$PLANET_1" --json
  timeout 60 "$BIN" bench "$TRN" --data-root "$DATA" --planet "$PLANET_1" --planet-tile 512 --json
} | tee "$OUT/planet_variants.json"
# 6. Every map on the CPU backend of the same machine (the GPU/CPU ratio of the whole bake), both
#    manifests in one file.
for SP in 2 1; do
  rm -rf /tmp/bakecpu
  /usr/bin/time -v timeout $((60 + 60 * (3 - SP))) "$BIN" bake "$TRN" --data-root "$DATA" --backend cpu -q --spacing "$SP" -o /tmp/bakecpu 2>&1 | grep -E 'Elapsed|Maximum resident|Percent of CPU|User time|error'
  cat /tmp/bakecpu/manifest.json >> "$OUT/bakeall_cpu_manifests.txt" 2>/dev/null || true
done
rm -rf /tmp/bakecpu
echo "device-bench done"
