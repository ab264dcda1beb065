#!/usr/bin/env bash
# Wall time of a 600-point Huber sweep (`propdp run`) with its results on
# disk against the same sweep on tmpfs (/dev/shm): group commit should keep
# the disk run within 2× of the tmpfs run. Best of 5 each, interleaved.
#   bash scripts/bench/bench_sweep_io.sh [PROPDP_BINARY] [DISK_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="${1:-$root/target/release/propdp}"
disk="${2:-$root/target/bench-io}"
[ -x "$bin" ] || (cd "$root" && cargo build --release -q -p propdp-cli)
shm=/dev/shm/propdp-bench-io
mkdir -p "$disk"
cfg="$disk/h600.toml"
cat > "$cfg" <<'TOML'
[problem]
model = "huber"
delta = { from = 0.1, to = 3.0, steps = 200, scale = "log" }
s2 = 1.0
huber_m = 1.0
noise = { law = "gaussian", sd = 0.5 }

[algorithm]
kind = "objective"
lambda = 1.0
sigma = [0.0, 0.5, 2.0]
TOML
best() { sort -g | head -1; }
once() { local t0 t1; t0=$(date +%s.%N); "$bin" run "$cfg" --out "$1" --overwrite > /dev/null; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
d=(); s=()
for _ in 1 2 3 4 5; do
  d+=("$(once "$disk/out")")
  s+=("$(once "$shm/out")")
done
bd=$(printf '%s\n' "${d[@]}" | best); bs=$(printf '%s\n' "${s[@]}" | best)
echo "600-point Huber sweep: disk $(df -T "$disk" | awk 'NR==2{print $2}') ${bd} s, tmpfs ${bs} s, ratio $(echo "scale=2; $bd / $bs" | bc)"
rm -rf "$shm"
