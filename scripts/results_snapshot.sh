#!/usr/bin/env bash
# Run every config of configs/ (run configs with `propdp run`, tune configs
# with `propdp tune`) with one propdp binary into OUT/<config stem>/.
# Used to check that a refactoring changes no number:
#   scripts/results_snapshot.sh OLD_BINARY /tmp/before
#   scripts/results_snapshot.sh target/release/propdp /tmp/after
#   python3 scripts/compare_results.py --exact /tmp/before /tmp/after
set -uo pipefail
bin=${1:?usage: results_snapshot.sh PROPDP_BINARY OUT_DIR}
out=${2:?usage: results_snapshot.sh PROPDP_BINARY OUT_DIR}
cd "$(dirname "$0")/.."
mkdir -p "$out"
for cfg in configs/*.toml; do
  stem=$(basename "$cfg" .toml)
  if grep -q '^\[tune\]' "$cfg"; then cmd=tune; else cmd=run; fi
  echo "== $cmd $cfg"
  "$bin" "$cmd" "$cfg" --out "$out/$stem" --overwrite > "$out/$stem.log" 2>&1
  echo "   exit $? ($(wc -l < "$out/$stem.log") log lines)"
done
