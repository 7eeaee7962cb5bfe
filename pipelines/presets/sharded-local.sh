#!/usr/bin/env bash
# Sharded build on one machine with the workflow-engine commands: plan, every build-shard in parallel, finalize.
#
# Usage: pipelines/presets/sharded-local.sh OUT SHARDS INPUT... [BUILD OPTIONS...]
#   e.g. pipelines/presets/sharded-local.sh out 4 sample-data/slide --unit-size 512
# Environment: MUDM_TILES  the CLI to run (default: mudm-tiles; e.g. "node bin/mudm-tiles.js" in a checkout)
#              WORKERS     worker threads per shard (default: the cores divided among the shards, at least 1)
#              LOG         --log format of every step (default: text)
# Of the BUILD OPTIONS, those that say how a step runs (--workers, --memory-budget, --progress, --log, -q) go to
# every step, and win over WORKERS and LOG; the others go to plan, which fixes them for the shards.
#
# It runs the same steps a Kubernetes Indexed Job or a CWL scatter runs, so it is the quickest way to try a
# sharded layout, or to spread a build over the processes of one big node. `mudm-tiles build` is faster on one
# machine (one process, no plan on disk); use this to rehearse or debug an engine's run.
set -euo pipefail

if [ $# -lt 3 ]; then
  sed -n '4,10p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
out=$1
shards=$2
shift 2
case $shards in
  '' | *[!0-9]* | 0) echo "sharded-local.sh: SHARDS must be a positive integer, found '$shards'" >&2; exit 2 ;;
esac

# Word splitting is wanted here: MUDM_TILES may be a command with arguments.
read -r -a cli <<< "${MUDM_TILES:-mudm-tiles}"
cores=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
workers=${WORKERS:-$(( cores / shards > 0 ? cores / shards : 1 ))}
log=${LOG:-text}
# shellcheck source=step-options.sh
. "$(dirname "${BASH_SOURCE[0]}")/step-options.sh"
step_options "$@"

# The defaults first: what the user gave comes after them, and wins.
"${cli[@]}" plan --log "$log" "$@" -o "$out" --shards "$shards"

# Stop the other shards when this script is interrupted: they keep their finished units, and re-running the
# script's build-shard lines continues them (a shard skips units that have markers).
pids=()
stop() {
  trap - INT TERM
  [ ${#pids[@]} -gt 0 ] && kill -TERM "${pids[@]}" 2>/dev/null || true
  wait || true
  exit "$1"
}
trap 'stop 130' INT
trap 'stop 143' TERM

for (( i = 0; i < shards; i++ )); do
  "${cli[@]}" build-shard "$out" --shard "$i" --workers "$workers" --log "$log" "${step_options[@]}" &
  pids+=($!)
done

# Every shard is waited for (a failed one does not leave the others orphaned); the first failure is the status.
status=0
for pid in "${pids[@]}"; do
  code=0
  wait "$pid" || code=$?
  if [ $status -eq 0 ] && [ $code -ne 0 ]; then status=$code; fi
done
trap - INT TERM
if [ $status -ne 0 ]; then
  echo "sharded-local.sh: a shard failed (exit $status); fix the cause and re-run its build-shard, then finalize" >&2
  exit $status
fi

"${cli[@]}" finalize "$out" --log "$log" "${step_options[@]}"
