#!/usr/bin/env bash
# A real Slurm run of a sharded bake (docs/src/clusters.md): installs Debian's slurm-wlm and
# munge when missing, starts a one-node cluster on this machine (munged, slurmctld and slurmd
# on localhost, everything under a temp folder), submits the bake as a job array
# (`sbatch --array`, each task `trnbake bake --shard auto`) and the merge as a job that waits
# for it (`--dependency=afterok`), then checks that every merged output (every map the terrain
# feeds: heights, normals, splat, flora, water, ..., preview) equals an unsharded bake byte for
# byte, and stops the daemons.
#
#   scripts/slurm-test.sh                 # 4 tasks over an 8 km Tatooine region at 2 m
#   TASKS=8 scripts/slurm-test.sh
#
# Needs root (apt-get, and the daemons run as root here) and target/release/trnbake (built
# when missing). Exit 0 when the merge equals the unsharded bake.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
TASKS=${TASKS:-4}
BIN=${TRNBAKE:-$REPO/target/release/trnbake}
[ -x "$BIN" ] || cargo build --release
if [ -f ../shared/data/swg/terrain/tatooine.trn ]; then
  INPUT=(../shared/data/swg/terrain/tatooine.trn --region -4096,-4096,4094,4094 --spacing 2)
else
  echo "note: ../shared/data/swg/terrain/tatooine.trn is missing; baking the built-in demo terrain"
  INPUT=(--spacing 4)
fi
BAKE=(bake "${INPUT[@]}" --data-root ../shared/data/swg --backend cpu --tile 256)
[ -f ../shared/data/swg/terrain/tatooine.trn ] || BAKE=(bake "${INPUT[@]}" --backend cpu --tile 256)

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq slurm-wlm munge >/dev/null
fi
echo "$(slurmctld -V), $(munged --version 2>&1 | head -1)"

W=$(mktemp -d /tmp/trnbake-slurm.XXXXXX)
mkdir -p "$W"/{munge,state,spool,log,out}
NODE=$(hostname -s)
MUNGE_SOCKET=$W/munge/munge.socket
cleanup() {
  set +e
  [ -n "${SLURM_CONF:-}" ] && scontrol shutdown >/dev/null 2>&1
  sleep 1
  for p in "$W"/slurmd.pid "$W"/slurmctld.pid "$W"/munge/munged.pid; do
    [ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null
  done
  echo "daemons stopped; logs and outputs in $W"
}
trap cleanup EXIT

# munge: a fresh key; --force lets it run as root with its files in the temp folder.
dd if=/dev/urandom of="$W/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$W/munge/munge.key"
munged --force --key-file="$W/munge/munge.key" --socket="$MUNGE_SOCKET" \
  --pid-file="$W/munge/munged.pid" --log-file="$W/munge/munged.log" --seed-file="$W/munge/munged.seed"

# One node, one partition; process tracking and task plugins that need no cgroups (a container).
cat >"$W/slurm.conf" <<EOF
ClusterName=trnbake
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd.pid
SlurmctldLogFile=$W/log/slurmctld.log
SlurmdLogFile=$W/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
MinJobAge=600
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=local Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$W/slurm.conf
slurmctld -i
slurmd
for _ in $(seq 30); do
  sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed|allocated)' && break
  sleep 1
done
sinfo

# The array: task i bakes the shard that SLURM_ARRAY_TASK_ID names into out/task-i.
cat >"$W/bake.sbatch" <<EOF
#!/bin/bash
#SBATCH --job-name=trnbake-bake
#SBATCH --array=1-$TASKS
#SBATCH --cpus-per-task=1
#SBATCH --output=$W/log/bake-%a.log
cd $REPO
exec $BIN ${BAKE[*]} --shard auto -o $W/out/task-\$SLURM_ARRAY_TASK_ID
EOF
cat >"$W/merge.sbatch" <<EOF
#!/bin/bash
#SBATCH --job-name=trnbake-merge
#SBATCH --output=$W/log/merge.log
exec $BIN merge -o $W/out/merged $W/out/task-*
EOF
t0=$(date +%s.%N)
ARRAY=$(sbatch --parsable "$W/bake.sbatch")
MERGE=$(sbatch --parsable --dependency=afterok:"$ARRAY" "$W/merge.sbatch")
echo "submitted array job $ARRAY (tasks 1-$TASKS) and merge job $MERGE (afterok:$ARRAY)"
state() { scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2 | sort -u | tr '\n' ' '; }
for _ in $(seq 600); do
  s=$(state "$MERGE")
  case "$s" in
    *COMPLETED*|*FAILED*|*CANCELLED*|*TIMEOUT*|*NODE_FAIL*) break ;;
  esac
  sleep 1
done
t1=$(date +%s.%N)
echo "array job: $(state "$ARRAY"); merge job: $(state "$MERGE"); $(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }") s from submission to the merged outputs"
for i in $(seq "$TASKS"); do
  echo "--- task $i: $(grep -h 'from Slurm' "$W/log/bake-$i.log" || true)"
  grep -h '^baked' "$W/log/bake-$i.log" || cat "$W/log/bake-$i.log"
done
echo "--- merge:"; grep -h '^merged' "$W/log/merge.log" || cat "$W/log/merge.log"
[ "$(state "$MERGE")" = "COMPLETED " ] || { echo "FAIL: the merge job did not complete"; exit 1; }

# The unsharded bake, outside Slurm, and the comparison.
t2=$(date +%s.%N)
"$BIN" "${BAKE[@]}" -o "$W/out/single" 2>&1 | grep '^baked'
t3=$(date +%s.%N)
echo "unsharded bake outside Slurm: $(awk "BEGIN { printf \"%.1f\", $t3 - $t2 }") s"
n=0
for p in "$W"/out/single/*; do
  f=$(basename "$p")
  case "$f" in manifest.json) continue ;; esac
  cmp "$p" "$W/out/merged/$f"
  n=$((n + 1))
done
# The manifests agree but for their timings.
python3 - "$W/out/single/manifest.json" "$W/out/merged/manifest.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for m in (a, b):
    m.pop("timing")
assert a == b, "the manifests differ beyond their timings"
PY
[ "$(ls "$W/out/merged" | wc -l)" = "$(ls "$W/out/single" | wc -l)" ] || { echo "FAIL: the merged folder has other files"; exit 1; }
echo "identical: $n files ($(ls "$W/out/merged" | grep -v manifest | tr '\n' ' '))"
echo "PASS: the merge of $TASKS Slurm array tasks equals the unsharded bake byte for byte, every map"
