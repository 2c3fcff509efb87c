#!/usr/bin/env bash
# Tunes a corpus on a Slurm cluster: a job array of N shards, each tuning 1/N of the corpus's
# kernels into its own database, then a dependent job that merges the shards into one.
#
#   bash scripts/slurm-tune.sh [-c CPUS] CORPUS N OUT.db [beamlab tune options...]
#   bash scripts/slurm-tune.sh --resume I[,J...] CORPUS N OUT.db [beamlab tune options...]
#   bash scripts/slurm-tune.sh --merge-only CORPUS N OUT.db
#
# Array task i runs `beamlab tune CORPUS --shard i/N --db OUT.db.shard-i.db`. The merge job, after
# every task has ended, runs `beamlab cache merge --require-finished` (the fastest verified plan
# per key wins, provenance kept) and `beamlab cache verify`. It fails, naming the file, when a
# shard is missing, damaged or unfinished; the other shards are merged all the same.
#   -c CPUS       each task asks for CPUS cores and may share a node; beamlab's threads and
#                 workers keep to the allocation (its CPU affinity). Default: a node per task
#                 (--exclusive), so that no two tasks time against each other.
#   --resume L    resubmit the array tasks in L (e.g. 1 or 0,2): each finishes its shard's
#                 unfinished run (`beamlab tune --resume`), or tunes its shard afresh when its
#                 database doesn't exist; then a new merge job (a pending one is cancelled).
#   --merge-only  submit only the merge job (after a shard was restored by hand).
# The databases must be on a filesystem every node sees. Shards must run on machines with the
# device fingerprint of the machines that will use the plans (the cache never serves another
# device's plans), with the thread count those will run with. Logs: OUT's folder/slurm-logs.
# Extra sbatch options: SBATCH_ARGS="--partition=cpu --time=02:00:00"; beamlab: BEAMLAB=path.
set -euo pipefail

usage() {
  sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
fail() {
  echo "slurm-tune: $*" >&2
  exit 1
}

cpus="" resume="" merge_only=0
while [[ $# -gt 0 && $1 == -* ]]; do
  case $1 in
    -c | --cpus-per-task) [[ $# -ge 2 ]] || usage; cpus=$2; shift 2 ;;
    --resume) [[ $# -ge 2 ]] || usage; resume=$2; shift 2 ;;
    --merge-only) merge_only=1; shift ;;
    -h | --help) usage ;;
    *) fail "unknown option '$1' (see: bash $0 --help)" ;;
  esac
done
[[ $# -ge 3 ]] || usage
corpus=$(realpath -m "$1")
shards=$2
out=$(realpath -m "$3")
shift 3
[[ -r $corpus ]] || fail "cannot read the corpus '$corpus'"
[[ $shards =~ ^[1-9][0-9]*$ ]] || fail "N must be a positive integer, not '$shards'"
[[ -z $cpus || $cpus =~ ^[1-9][0-9]*$ ]] || fail "-c takes a positive number of cores, not '$cpus'"
if [[ -n $resume ]]; then
  [[ $resume =~ ^[0-9]+(,[0-9]+)*$ ]] || fail "--resume takes shard numbers like 1 or 0,2, not '$resume'"
  IFS=, read -r -a resumed <<< "$resume"
  for i in "${resumed[@]}"; do
    ((10#$i < shards)) || fail "--resume $resume: shard $i is not one of 0..$((shards - 1))"
  done
fi
[[ -d $(dirname "$out") ]] || fail "no folder for '$out': create $(dirname "$out") first"
command -v sbatch > /dev/null || fail "sbatch not found: run this on a Slurm login node"

root=$(cd "$(dirname "$0")/.." && pwd)
beamlab=$(realpath -m "${BEAMLAB:-$root/build/release/bin/beamlab}")
[[ -x $beamlab ]] || fail "no beamlab at '$beamlab': build it (bash scripts/setup) or set BEAMLAB"
name=$(basename "$out")
logs=$(dirname "$out")/slurm-logs
mkdir -p "$logs"
q() { printf '%q' "$1"; }
extra=""
[[ $# -gt 0 ]] && extra=$(printf ' %q' "$@")
# shellcheck disable=SC2206
sbatch_args=(${SBATCH_ARGS:-})

after=""
if ((!merge_only)); then
  if [[ -n $cpus ]]; then
    resources=(--cpus-per-task="$cpus")
  else
    resources=(--exclusive)
  fi
  array=0-$((shards - 1))
  [[ -n $resume ]] && array=$resume
  # The task script is read by sbatch now; it runs on the node with the array task's id.
  array_job=$(sbatch --parsable "${sbatch_args[@]}" "${resources[@]}" --array="$array" \
    --job-name="beamlab-tune:$name" --output="$logs/tune-%A_%a.out" << EOF
#!/usr/bin/env bash
set -euo pipefail
db=$(q "$out").shard-\$SLURM_ARRAY_TASK_ID.db
if [[ $(q "$resume") != "" && -e \$db ]]; then
  exec $(q "$beamlab") tune --resume --db "\$db" --quiet
fi
exec $(q "$beamlab") tune $(q "$corpus") --shard "\$SLURM_ARRAY_TASK_ID/$shards" --db "\$db" --quiet$extra
EOF
  )
  array_job=${array_job%%;*}
  echo "submitted the tuning array: job $array_job (shards $array of $shards)"
  after=$array_job
fi

if [[ -n $resume || $merge_only == 1 ]]; then
  # The merge of the first submission would merge too early (or has failed already): replaced.
  scancel --quiet --state=PENDING --name="beamlab-merge:$name" 2> /dev/null || true
  # Tasks of this output still queued or running: the new merge waits for them too.
  for job in $(squeue --noheader --name="beamlab-tune:$name" --format=%F 2> /dev/null | sort -u); do
    [[ $job == "$after" ]] || after+=${after:+:}$job
  done
fi
shard_files=""
for ((i = 0; i < shards; i++)); do shard_files+=" $(q "$out.shard-$i.db")"; done
merge_job=$(sbatch --parsable "${sbatch_args[@]}" ${after:+--dependency=afterany:$after} \
  --job-name="beamlab-merge:$name" --output="$logs/merge-%j.out" << EOF
#!/usr/bin/env bash
set -euo pipefail
$(q "$beamlab") cache merge --require-finished$shard_files --db $(q "$out")
exec $(q "$beamlab") cache verify --db $(q "$out")
EOF
)
merge_job=${merge_job%%;*}
echo "submitted the merge: job $merge_job${after:+ (after $after)} -> $out"
