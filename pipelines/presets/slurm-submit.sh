#!/usr/bin/env bash
# Sharded build as a SLURM batch job: plan, a job array of build-shard (one task per shard), finalize, chained by afterok.
#
# Usage: pipelines/presets/slurm-submit.sh OUT SHARDS INPUT... [BUILD OPTIONS...]
# Environment: MUDM_TILES   the CLI on the compute nodes (default: mudm-tiles)
#              CPUS         cores per task, passed to --workers (default: 4)
#              SBATCH_ARGS  extra sbatch arguments for every job, e.g. "--partition=cpu --time=02:00:00"
# OUT must be on storage every node mounts (the shards share its work directory). Prints the three job ids.
set -euo pipefail

if [ $# -lt 3 ]; then
  sed -n '4,8p' "$0" | sed 's/^# \{0,1\}//' >&2
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

# --wrap runs through sh: every user-given word is quoted once here, so spaces in paths survive.
quoted=$(printf ' %q' "$@")
qout=$(printf '%q' "$out")

plan=$(sbatch --parsable "${extra[@]}" --job-name=mudm-plan --cpus-per-task="$cpus" \
  --wrap="$cli plan$quoted -o $qout --shards $shards --workers $cpus --log json")
# SLURM_ARRAY_TASK_ID is the shard index, as JOB_COMPLETION_INDEX is on Kubernetes.
array=$(sbatch --parsable "${extra[@]}" --job-name=mudm-shard --cpus-per-task="$cpus" \
  --dependency=afterok:"$plan" --array=0-$((shards - 1)) \
  --wrap="$cli build-shard $qout --shard \$SLURM_ARRAY_TASK_ID --workers $cpus --log json")
final=$(sbatch --parsable "${extra[@]}" --job-name=mudm-finalize --cpus-per-task="$cpus" \
  --dependency=afterok:"$array" \
  --wrap="$cli finalize $qout --log json")
echo "plan $plan, build-shard array $array (0-$((shards - 1))), finalize $final"
