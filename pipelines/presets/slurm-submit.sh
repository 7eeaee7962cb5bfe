#!/usr/bin/env bash
# Sharded build as a SLURM batch job: plan, a job array of build-shard (one task per shard), finalize, chained by afterok.
#
# Usage: pipelines/presets/slurm-submit.sh OUT SHARDS INPUT... [BUILD OPTIONS...]
# Environment: MUDM_TILES   the CLI on the compute nodes (default: mudm-tiles)
#              CPUS         cores per task, passed to --workers (default: 4)
#              SBATCH_ARGS  extra sbatch arguments for every job, e.g. "--partition=cpu --time=02:00:00"
# Of the BUILD OPTIONS, those that say how a step runs (--workers, --memory-budget, --progress, --log, -q) go to
# every job, and win over CPUS (--workers) and --log json; the others go to plan, which fixes them for the shards.
# OUT must be on storage every node mounts (the shards share its work directory). Prints the three job ids.
set -euo pipefail

if [ $# -lt 3 ]; then
  sed -n '4,10p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
out=$1
shards=$2
shift 2
case $shards in
  '' | *[!0-9]* | 0) echo "slurm-submit.sh: SHARDS must be a positive integer, found '$shards'" >&2; exit 2 ;;
esac
cli=${MUDM_TILES:-mudm-tiles}
cpus=${CPUS:-4}
read -r -a extra <<< "${SBATCH_ARGS:-}"

# shellcheck source=step-options.sh
. "$(dirname "${BASH_SOURCE[0]}")/step-options.sh"
step_options "$@"

# --wrap runs through sh: every user-given word is quoted once here, so spaces in paths survive.
quoted=$(printf ' %q' "$@")
qout=$(printf '%q' "$out")
# printf ' %q' of no word prints '', which sh would pass on as an empty argument.
qsteps=''
if [ ${#step_options[@]} -gt 0 ]; then qsteps=$(printf ' %q' "${step_options[@]}"); fi

# The defaults first: what the user gave comes after them, and wins.
plan=$(sbatch --parsable "${extra[@]}" --job-name=mudm-plan --cpus-per-task="$cpus" \
  --wrap="$cli plan --workers $cpus --log json$quoted -o $qout --shards $shards")
# SLURM_ARRAY_TASK_ID is the shard index, as JOB_COMPLETION_INDEX is on Kubernetes.
array=$(sbatch --parsable "${extra[@]}" --job-name=mudm-shard --cpus-per-task="$cpus" \
  --dependency=afterok:"$plan" --array=0-$((shards - 1)) \
  --wrap="$cli build-shard $qout --shard \$SLURM_ARRAY_TASK_ID --workers $cpus --log json$qsteps")
final=$(sbatch --parsable "${extra[@]}" --job-name=mudm-finalize --cpus-per-task="$cpus" \
  --dependency=afterok:"$array" \
  --wrap="$cli finalize $qout --workers $cpus --log json$qsteps")
echo "plan $plan, build-shard array $array (0-$((shards - 1))), finalize $final"
