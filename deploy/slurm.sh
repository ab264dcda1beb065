#!/usr/bin/env bash
# A propdp sweep as a Slurm job array: N shards, then a merge job that runs
# once every shard has succeeded.
#
#   bash deploy/slurm.sh configs/finite_size.toml 16 results/finite_size
#
# Each array task runs `propdp run CONFIG --shard $SLURM_ARRAY_TASK_ID/N`
# (`propdp tune` for a config with a [tune] table) into OUT/shards/K
# (resubmitting a failed task resumes it: --resume); the dependent job
# merges OUT/shards/* into OUT. Adjust --time/--cpus-per-task to your config (`propdp check CONFIG` lists its points); the repetitions of
# a simulated point use every CPU of its task.
set -euo pipefail
config="$1"; n="$2"; out="$3"
cmd=run
if grep -q '^\[tune\]' "$config"; then cmd=tune; fi
mkdir -p "$out/shards" "$out/logs"
array=$(sbatch --parsable --array=0-$((n - 1)) --cpus-per-task=4 --time=02:00:00 \
  --output="$out/logs/shard-%a.log" --job-name=propdp-shard \
  --wrap="propdp $cmd '$config' --shard \$SLURM_ARRAY_TASK_ID/$n --out '$out/shards/'\$SLURM_ARRAY_TASK_ID --resume")
sbatch --dependency=afterok:"$array" --output="$out/logs/merge.log" --job-name=propdp-merge \
  --wrap="propdp merge '$out'/shards/* --out '$out/merged'"
echo "submitted array $array ($n shards) and its merge → $out/merged"
