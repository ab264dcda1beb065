#!/usr/bin/env bash
# Regenerate the paper figure set into results/figures/<config>/figures/ and
# copy the README gallery to docs/figures/, each figure with the records it
# was drawn from (docs/figures/<name>.jsonl: the test
# crates/propdp-cli/tests/gallery_is_current.rs re-solves their theory and
# fails when the code no longer draws the figure shown). About 5 minutes on
# 2 cores (plus ~4 minutes for the two tune searches).
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
for name in huber_objective logistic_objective logistic_budget huber_output finite_size dpgd dpsgd covariance; do
  # each of these configs draws exactly one figure
  cp results/figures/"$name"/figures/*.png "docs/figures/$name.png"
  cp results/figures/"$name"/results.jsonl "docs/figures/$name.jsonl"
done
# least squares over 2000 steps (exact theory, simulation at d = 1000; ~1.5 minutes)
"$bin" run configs/dpsgd_least_squares_long.toml --out results/dpsgd_least_squares_long --overwrite
cp results/dpsgd_least_squares_long/figures/least_squares_dpsgd.png docs/figures/dpsgd_least_squares_long.png
# privacy–utility frontier: tuned hyperparameters per algorithm, every optimum simulated
for model in huber logistic; do
  echo "== tune_$model"
  "$bin" tune "configs/tune_$model.toml" --out "results/tune_$model" --overwrite
  cp "results/tune_$model/figures/winner_map.png" "docs/figures/winner_map_$model.png"
  [ "$model" = huber ] && cp "results/tune_$model/figures/winner_map_objective_vs_output.png" "docs/figures/winner_map_huber_objective_vs_output.png"
  cp "results/tune_$model/figures/${model}_by_algorithm_delta=0.1.png" "docs/figures/frontier_${model}_delta0.1.png"
done
ls -l docs/figures
