#!/usr/bin/env bash
# The theory records of every config in configs/, into DIR (one
# subdirectory per config): `propdp run CFG --theory-only` for the run
# configs, `propdp tune` for tune_*.toml (its [simulation] table left out:
# the optima and their calibrated noise are what the accountant decides).
# Compare two such directories with `scripts/theory_records.sh --compare A B`
# (records equal but for the provenance's commit). PROPDP overrides the binary.
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=${PROPDP:-"$here/../target/release/propdp"}
if [ "${1:-}" = "--compare" ]; then
    status=0
    for a in "$2"/*/; do
        name=$(basename "$a")
        for f in results.jsonl tune.jsonl; do
            [ -f "$a/$f" ] || continue
            if python3 - "$a/$f" "$3/$name/$f" <<'PY'
import json, sys
def load(p):
    out = []
    for line in open(p):
        r = json.loads(line)
        def strip(x):
            if isinstance(x, dict):
                return {k: strip(v) for k, v in x.items() if k not in ("commit", "git_commit", "dirty", "elapsed_s", "seconds", "started", "finished", "timestamp", "wall_s")}
            if isinstance(x, list):
                return [strip(v) for v in x]
            return x
        out.append(json.dumps(strip(r), sort_keys=True))
    return sorted(out)
a, b = load(sys.argv[1]), load(sys.argv[2])
sys.exit(0 if a == b else 1)
PY
            then echo "identical: $name/$f ($(wc -l <"$a/$f") records)"
            else echo "DIFFERS: $name/$f"; status=1
            fi
        done
    done
    exit $status
fi
out=$1
mkdir -p "$out"
for cfg in "$here"/../configs/*.toml; do
    name=$(basename "$cfg" .toml)
    start=$(date +%s)
    case "$name" in
        tune_*)
            tmp=$(mktemp --suffix .toml)
            awk '/^\[simulation\]/{skip=1; next} /^\[/{skip=0} !skip' "$cfg" >"$tmp"
            "$bin" tune "$tmp" --out "$out/$name" --overwrite >"$out/$name.log" 2>&1
            rc=$?
            rm -f "$tmp" ;;
        *)
            "$bin" run "$cfg" --theory-only --quiet --out "$out/$name" --overwrite >"$out/$name.log" 2>&1
            rc=$? ;;
    esac
    echo "$name: exit $rc, $(( $(date +%s) - start )) s"
done
