#!/usr/bin/env bash
# What a config would take on an N-node cluster, measured rather than
# modelled: every shard K/N of the config is run here, one after another,
# each on one thread (as one node of N would run it, minus its other cores),
# and timed; the N-node wall time is the slowest shard plus the merge, the
# one-core time the sum. Prints per config: one-core total, slowest shard,
# speed-up (total / slowest), the balance (mean / slowest) and the merge.
#   bash scripts/bench/bench_cluster.sh 64 configs/finite_size.toml configs/tune_dpsgd.toml
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="$root/target/release/propdp"
[ -x "$bin" ] || (cd "$root" && cargo build --release -q -p propdp-cli)
n="$1"; shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
for config in "$@"; do
  cmd=run
  if grep -q '^\[tune\]' "$config"; then cmd=tune; fi
  name=$(basename "$config" .toml)
  times=()
  for k in $(seq 0 $((n - 1))); do
    t0=$(now)
    RAYON_NUM_THREADS=1 "$bin" $cmd "$config" --shard "$k/$n" --out "$work/$name/s$k" > /dev/null 2>&1
    t1=$(now)
    times+=("$(echo "$t1 - $t0" | bc)")
  done
  t0=$(now)
  "$bin" merge "$work/$name"/s* --out "$work/$name/merged" > /dev/null 2>&1
  merge=$(echo "$(now) - $t0" | bc)
  printf '%s\n' "${times[@]}" | awk -v name="$name" -v n="$n" -v merge="$merge" '
    { s += $1; if ($1 > m) m = $1 }
    END { printf "%s on %d shards: one core %.1f s, slowest shard %.2f s, speed-up %.1f×, balance %.2f, merge %.2f s\n",
                 name, n, s, m, s / m, s / n / m, merge }'
done
