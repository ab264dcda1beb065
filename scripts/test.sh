#!/usr/bin/env bash
# The test command of README.md, which CI runs: the Rust workspace, then the
# Python package (scripts/test_python.sh). Arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release --workspace
bash scripts/test_python.sh "$@"
