#!/usr/bin/env bash
# Wall time of a 16-point simulation sweep (Huber objective perturbation,
# d = 400, 16 repetitions per point) as 1, 2 and 4 shards run at once on
# this machine (each shard with 2/N rayon threads, at least 1), and the cost
# of merging them (merge includes drawing the figures). Scaling beyond one machine is the shards' independence:
# N machines run N shards in the time of one.
#   bash scripts/bench/bench_shards.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="$root/target/release/propdp"
[ -x "$bin" ] || (cd "$root" && cargo build --release -q -p propdp-cli)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/c.toml" <<'TOML'
[problem]
model = "huber"
delta = { from = 0.25, to = 2.0, steps = 16 }
s2 = 1.0
huber_m = 1.0
noise = { law = "gaussian", sd = 0.5 }
[algorithm]
kind = "objective"
lambda = 1.0
sigma = 1.0
[simulation]
d = 400
reps = 16
seed = 1
TOML
now() { date +%s.%N; }
for n in 1 2 4; do
  threads=$(( 2 / n )); [ "$threads" -ge 1 ] || threads=1
  t0=$(now)
  for k in $(seq 0 $((n - 1))); do
    RAYON_NUM_THREADS=$threads "$bin" run "$work/c.toml" --shard "$k/$n" --out "$work/n$n/s$k" > /dev/null &
  done
  wait
  t1=$(now)
  "$bin" merge "$work"/n$n/s* --out "$work/n$n/merged" > /dev/null
  t2=$(now)
  echo "shards $n: $(echo "$t1 - $t0" | bc) s (rayon threads per shard: $threads), merge $(echo "$t2 - $t1" | bc) s"
done
