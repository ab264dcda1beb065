#!/usr/bin/env bash
# Every `propdp privacy` invocation of scripts/privacy_outputs/invocations.txt
# (those README.md and docs/*.md quote, and more: DP-SGD, schedules,
# objective perturbation, zCDP targets, both relations, refusals), its
# stdout, stderr and exit code. `bash scripts/privacy_outputs.sh` compares
# them with scripts/privacy_outputs/expected.txt (exit 1 on a difference);
# `--record` rewrites that file. PROPDP overrides the binary. Paths of
# the checkout are written DIR, as invocations.txt writes them.
set -u
here=$(cd "$(dirname "$0")" && pwd)
dir="$here/privacy_outputs"
bin=${PROPDP:-"$here/../target/release/propdp"}
out=$(mktemp)
while IFS= read -r line; do
    case "$line" in ''|'#'*) continue ;; esac
    args=${line//DIR/$dir}
    echo "\$ propdp privacy $line" >>"$out"
    # shellcheck disable=SC2086
    "$bin" privacy $args 2>&1 | sed "s#$dir#DIR#g" >>"$out"
    echo "[exit ${PIPESTATUS[0]}]" >>"$out"
done <"$dir/invocations.txt"
if [ "${1:-}" = "--record" ]; then
    mv "$out" "$dir/expected.txt"
    echo "recorded $(grep -c '^\$ propdp' "$dir/expected.txt") invocations"
elif diff -u "$dir/expected.txt" "$out"; then
    echo "identical: $(grep -c '^\$ propdp' "$out") invocations"
    rm "$out"
else
    echo "differs (output kept in $out)"
    exit 1
fi
