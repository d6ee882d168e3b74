#!/usr/bin/env bash
# Fuzz every reader of user files, one target after the other, and print a Markdown table.
#
#   scripts/fuzz.sh [MINUTES]      # minutes per target (default 3)
#
# Targets (fuzz/fuzz_targets/, see each file's header for what it asserts): parse_trn,
# tga_bitmap, convert_readers (.ter, GeoTIFF, 16-bit PNG, RAW), compile_json, parse_nwn2,
# parse_scs.
#
# Environment:
#   FUZZ_WORK     work folder, outside the repository (default /tmp/trnbake-fuzz): corpora in
#                 corpus/TARGET (kept between runs), each run's logs and artifacts in
#                 runs/STAMP/TARGET/
#   FUZZ_TARGETS  space-separated subset of the targets
#   TRNBAKE_DATA  the shared data folder (default ../shared/data, relative to the repo root)
#   FUZZ_RSS_MB   libFuzzer -rss_limit_mb (default 2048)
#   FUZZ_SANITIZER  cargo-fuzz sanitizer (default none: AddressSanitizer only catches memory
#                 errors in unsafe code, which no reader has, and runs the .trn target 8x slower;
#                 `address` turns it back on)
#
# Needs a nightly toolchain (`rustup toolchain install nightly`); installs cargo-fuzz when
# missing. Exits 1 when any target left a crash-*/oom-*/timeout-*/leak-* artifact.
set -euo pipefail

MINUTES=${1:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
DATA=${TRNBAKE_DATA:-../shared/data}
WORK=${FUZZ_WORK:-/tmp/trnbake-fuzz}
TARGETS=${FUZZ_TARGETS:-parse_trn tga_bitmap convert_readers compile_json parse_nwn2 parse_scs}
RSS_MB=${FUZZ_RSS_MB:-2048}
SANITIZER=${FUZZ_SANITIZER:-none}
SECONDS_PER_TARGET=$((MINUTES * 60))
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
RUN="$WORK/runs/$STAMP"
mkdir -p "$RUN"

case "$WORK" in
  "$ROOT"|"$ROOT"/*) echo "FUZZ_WORK must be outside the repository" >&2; exit 2 ;;
esac
if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  echo "fuzz.sh needs a nightly toolchain: rustup toolchain install nightly" >&2
  exit 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "== installing cargo-fuzz"
  cargo install cargo-fuzz --locked
fi
if [ ! -d "$DATA" ]; then
  echo "warning: $DATA not found; corpora get only the seeds made here" >&2
fi

echo "== building trnbake (for seed files) and the fuzz targets"
cargo build --release --quiet --bin trnbake
TRNBAKE="$ROOT/target/release/trnbake"
# -O: optimised; -a: debug assertions and overflow checks on, so a size product that
# overflows is a crash (the first finding was exactly that).
# shellcheck disable=SC2086
for t in $TARGETS; do cargo +nightly fuzz build -O -a -s "$SANITIZER" "$t"; done
BIN_DIR="$ROOT/fuzz/target/$(rustc -vV | sed -n 's/^host: //p')/release"

# ---------------------------------------------------------------------------------------------
# Seeds, made at run time (no game file is ever stored in the repository).
seed() { # seed TARGET FILE [NAME]
  local dir="$WORK/corpus/$1"
  mkdir -p "$dir"
  cp -f "$2" "$dir/${3:-$(basename "$2")}"
}
SEEDS="$WORK/seeds-$STAMP"
mkdir -p "$SEEDS"

for t in $TARGETS; do mkdir -p "$WORK/corpus/$t"; done

if [[ " $TARGETS " == *" parse_trn "* ]] && [ -d "$DATA" ]; then
  while IFS= read -r f; do seed parse_trn "$f"; done < <(find "$DATA" -name '*.trn' -size -64k)
fi

if [[ " $TARGETS " == *" compile_json "* ]]; then
  for f in golden/*.json; do
    [ "$(basename "$f")" = golden.json ] || seed compile_json "$f"
  done
  if [ -d "$DATA" ]; then
    while IFS= read -r f; do
      out="$SEEDS/$(basename "$f" .trn).json"
      "$TRNBAKE" -q decompile "$f" -o "$out" && seed compile_json "$out"
    done < <(find "$DATA" -name '*.trn' -size -8k)
  fi
fi

if [[ " $TARGETS " == *" tga_bitmap "* ]] && [ -d "$DATA" ]; then
  while IFS= read -r f; do seed tga_bitmap "$f"; done < <(find "$DATA" -name '*.tga' -size -64k)
fi

if [[ " $TARGETS " == *" convert_readers "* ]]; then
  # Tiny heightmaps in every readable format: a bake of the demo terrain (compiled here from
  # golden/demo.json) at a coarse spacing, and a convert of it.
  "$TRNBAKE" -q compile golden/demo.json -o "$SEEDS/demo.trn"
  "$TRNBAKE" -q bake "$SEEDS/demo.trn" -o "$SEEDS/bake" --spacing 512 --backend cpu \
    --format tif,tif16,ter,png,r16,r32
  "$TRNBAKE" -q convert "$SEEDS/bake/height.tif" "$SEEDS/conv.ter"
  "$TRNBAKE" -q convert "$SEEDS/bake/height.tif" "$SEEDS/conv.png"
  prefixed() { # prefixed SELECTOR_BYTE_OCTAL FILE NAME
    { printf "\\$1"; cat "$2"; } > "$SEEDS/$3" && seed convert_readers "$SEEDS/$3"
  }
  le32() { printf "\\$(printf %03o $(($1 & 255)))\\$(printf %03o $((($1 >> 8) & 255)))\\$(printf %03o $((($1 >> 16) & 255)))\\$(printf %03o $((($1 >> 24) & 255)))"; }
  prefixed 000 "$SEEDS/bake/height.ter" ter-bake
  prefixed 000 "$SEEDS/conv.ter" ter-conv
  prefixed 001 "$SEEDS/bake/height.tif" tif-f32
  prefixed 001 "$SEEDS/bake/height_u16.tif" tif-u16
  prefixed 002 "$SEEDS/bake/height.png" png-bake
  prefixed 002 "$SEEDS/conv.png" png-conv
  for f in r16 r32; do
    n=$(wc -c < "$SEEDS/bake/height.$f")
    bytes=$([ $f = r16 ] && echo 2 || echo 4)
    side=$(awk -v n="$n" -v b="$bytes" 'BEGIN { print int(sqrt(n / b) + 0.5) }')
    flag=$([ $f = r16 ] && echo 000 || echo 001)
    { printf '\003'; le32 "$side"; le32 "$side"; printf "\\$flag"; cat "$SEEDS/bake/height.$f"; } > "$SEEDS/raw-$f"
    seed convert_readers "$SEEDS/raw-$f"
  done
fi

if [[ " $TARGETS " == *" parse_nwn2 "* ]]; then
  # The real areas are megabytes; a small area exported here from a tiny heightmap keeps runs
  # fast and still has every packet (TRWH, TRRN, ASWM with tiles, islands and path tables).
  "$TRNBAKE" -q compile golden/demo.json -o "$SEEDS/demo-nwn2.trn"
  "$TRNBAKE" -q bake "$SEEDS/demo-nwn2.trn" -o "$SEEDS/nwn2-hm" --spacing 64 --backend cpu --maps height --format tif
  "$TRNBAKE" -q nwn2 export "$SEEDS/nwn2-hm/height.tif" --megatiles 1x1 --height-range -20,20 \
    -o "$SEEDS/area.trn" --trx >/dev/null 2>&1 && { seed parse_nwn2 "$SEEDS/area.trn"; seed parse_nwn2 "$SEEDS/area.trx"; }
fi

if [[ " $TARGETS " == *" parse_scs "* ]] && [ -d "$DATA/scs" ]; then
  while IFS= read -r f; do seed parse_scs "$f" "$(basename "$(dirname "$f")")-$(basename "$f")"; done < <(find "$DATA/scs" -type f)
fi

# ---------------------------------------------------------------------------------------------
echo "== fuzzing: $MINUTES minute(s) per target, one after the other; logs in $RUN"
ROWS=()
TOTAL_FINDINGS=0
for t in $TARGETS; do
  out="$RUN/$t"
  mkdir -p "$out/artifacts"
  echo "-- $t"
  set +e
  "$BIN_DIR/$t" "$WORK/corpus/$t" \
    -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb="$RSS_MB" -timeout=20 \
    -print_final_stats=1 -artifact_prefix="$out/artifacts/" > "$out/log" 2>&1
  rc=$?
  set -e
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$out/log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$out/log" | tail -1 | cut -d' ' -f2)
  ft=$(grep -o 'ft: [0-9]*' "$out/log" | tail -1 | cut -d' ' -f2)
  found=$(find "$out/artifacts" -type f \( -name 'crash-*' -o -name 'oom-*' -o -name 'timeout-*' -o -name 'leak-*' \) | wc -l)
  if [ "$found" -eq 0 ] && [ "$rc" -ne 0 ]; then
    found=1 # libFuzzer failed without an artifact (e.g. a panic while loading the corpus)
  fi
  TOTAL_FINDINGS=$((TOTAL_FINDINGS + found))
  ROWS+=("| $t | ${runs:-?} | ${rate:-?} | cov ${cov:-?}, ft ${ft:-?} | $found |")
  [ "$found" -eq 0 ] || { echo "   finding(s) in $out (see $out/log):"; ls "$out/artifacts"; }
done

echo
echo "Fuzzing, $MINUTES min per target ($STAMP):"
echo
echo "| target | runs | runs/s | coverage | findings |"
echo "|---|---:|---:|---|---:|"
printf '%s\n' "${ROWS[@]}"
[ "$TOTAL_FINDINGS" -eq 0 ] || { echo; echo "$TOTAL_FINDINGS finding(s): artifacts under $RUN"; exit 1; }
