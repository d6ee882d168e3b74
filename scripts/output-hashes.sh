#!/usr/bin/env bash
# SHA-256 of every output of two reference bakes, to show that a refactor changed no byte:
# the demo terrain (default backend, and the CPU backend) and tatooine at 16 m with every map
# and every height format on the CPU backend. `manifest.json` (timings) and `.trnbake.lock` (a PID) are left out.
#
#   scripts/output-hashes.sh [TRNBAKE] [OUTDIR]     # defaults: target/release/trnbake, /tmp/trnbake-hashes
#
# Run it with two binaries (e.g. one built from the commit before a change) and `diff` the
# two `OUTDIR.sha` lists it writes. Reads the game files from ../shared/data/swg.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$(realpath "${1:-$ROOT/target/release/trnbake}")
O=${2:-/tmp/trnbake-hashes}
D=$(realpath "$ROOT/../shared/data/swg")
rm -rf "$O"; mkdir -p "$O"
"$B" bake -o "$O/demo" -q
"$B" bake -o "$O/demo_cpu" --backend cpu -q
"$B" bake "$D/terrain/tatooine.trn" --data-root "$D" --spacing 16 \
    --maps height,normals,splat,flora,water,env,color,exclude,smap,preview,slope,spawnable \
    --format tif,png,ter,r16,r32 --backend cpu -o "$O/tat16" -q
(cd "$O" && find . -type f ! -name manifest.json ! -name .trnbake.lock | sort | xargs sha256sum) > "$O.sha"
echo "$(wc -l < "$O.sha") files; list in $O.sha; digest of the list: $(sha256sum < "$O.sha" | cut -c1-64)"
