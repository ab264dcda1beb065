#!/usr/bin/env bash
# Regenerate the paper figure set into results/figures/<config>/figures/ and
# copy the README gallery to docs/figures/. About 5 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p propdp-cli
bin=target/release/propdp
for cfg in configs/figures/*.toml; do
  name=$(basename "$cfg" .toml)
  echo "== $name"
  "$bin" run "$cfg" --out "results/figures/$name" --overwrite
done
mkdir -p docs/figures
for name in huber_objective logistic_objective huber_output finite_size dpgd; do
  # each of these configs draws exactly one figure
  cp results/figures/"$name"/figures/*.png "docs/figures/$name.png"
done
ls -l docs/figures
