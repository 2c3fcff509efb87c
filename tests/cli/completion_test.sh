#!/usr/bin/env bash
# The bash completion script the build wrote: valid bash, the same as the binary makes now (so
# it cannot have fallen behind the options), and completing subcommands, options, option values
# and workload names.
#   completion_test.sh BEAMLAB SCRIPT
set -euo pipefail
beamlab=$1 script=$2
bash -n "$script"
"$beamlab" completion bash | cmp -s - "$script" || { echo "$script is stale: rebuild beamlab-share"; exit 1; }

# What _beamlab replies to a command line whose last word is being completed.
reply() {
  bash -c '. "$0"; COMP_WORDS=("${@}"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _beamlab; echo "${COMPREPLY[*]}"' \
    "$script" "$@"
}
expect() {
  local want=$1
  shift
  local got
  got=$(reply "$@")
  [[ $got == "$want" ]] || { echo "completing '$*': expected '$want', got '$got'"; exit 1; }
}
expect "demo ir run tune cache device bench report search-replay model" beamlab ""
expect "tune" beamlab tu
expect "list" beamlab cache l
expect "--format" beamlab cache --db x.db list --f
expect "text json" beamlab run --format ""
expect "read-only" beamlab tune matmul --cache r
expect "matmul" beamlab run matm
expect "" beamlab run --db ""
expect "eval" beamlab model ""
expect "rank regression" beamlab model eval --objective ""
echo "completion ok"
