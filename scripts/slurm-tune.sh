#!/usr/bin/env bash
# Tunes a corpus on a Slurm cluster: a job array of N shards, each tuning 1/N of the corpus's
# kernels into its own database, then a dependent job that merges the shards into one.
#
#   bash scripts/slurm-tune.sh CORPUS N OUT.db [beamlab tune options...]
#   bash scripts/slurm-tune.sh corpora/standard.json 8 tuned.db --beam 4 --budget 3600
#
# Each array task runs `beamlab tune CORPUS --db OUT.db.shard-<i>.db ...`; beamlab reads its
# shard from SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT. The merge job runs
# `beamlab cache merge` (the fastest verified plan per key wins, provenance kept) and
# `beamlab cache verify`. Shards must run on machines with the same device fingerprint as the
# machines that will use the plans (the cache never serves another device's plans).
# Extra sbatch options: SBATCH_ARGS="--partition=cpu --time=02:00:00".
set -euo pipefail

if [[ $# -lt 3 ]]; then
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
corpus=$(realpath "$1")
shards=$2
out=$(realpath -m "$3")
shift 3
[[ -r $corpus ]] || { echo "slurm-tune: cannot read the corpus '$corpus'" >&2; exit 1; }
[[ $shards =~ ^[1-9][0-9]*$ ]] || { echo "slurm-tune: N must be a positive integer, not '$shards'" >&2; exit 1; }
command -v sbatch >/dev/null || { echo "slurm-tune: sbatch not found: run this on a Slurm login node" >&2; exit 1; }

root=$(cd "$(dirname "$0")/.." && pwd)
beamlab=${BEAMLAB:-$root/build/release/bin/beamlab}
[[ -x $beamlab ]] || { echo "slurm-tune: no beamlab at '$beamlab': build it (bash scripts/setup) or set BEAMLAB" >&2; exit 1; }
extra=$(printf ' %q' "$@")
logs=$(dirname "$out")/slurm-logs
mkdir -p "$logs"

# shellcheck disable=SC2086
array_job=$(sbatch --parsable ${SBATCH_ARGS:-} --array=0-$((shards - 1)) \
  --job-name=beamlab-tune --output="$logs/tune-%A_%a.out" --exclusive \
  --wrap="$(printf '%q' "$beamlab") tune $(printf '%q' "$corpus") --db $(printf '%q' "$out").shard-\${SLURM_ARRAY_TASK_ID}.db --quiet$extra")
echo "submitted the tuning array: job $array_job ($shards shards)"

shard_files=""
for ((i = 0; i < shards; i++)); do shard_files+=" $(printf '%q' "$out.shard-$i.db")"; done
# shellcheck disable=SC2086
merge_job=$(sbatch --parsable ${SBATCH_ARGS:-} --dependency=afterany:"$array_job" \
  --job-name=beamlab-merge --output="$logs/merge-%j.out" \
  --wrap="$(printf '%q' "$beamlab") cache merge$shard_files --db $(printf '%q' "$out") && $(printf '%q' "$beamlab") cache verify --db $(printf '%q' "$out")")
echo "submitted the merge: job $merge_job (after $array_job) -> $out"
