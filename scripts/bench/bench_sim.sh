#!/usr/bin/env bash
# Simulation benchmarks: criterion fits at (2000, 1000), then the large
# (8000, 4000) fits and the 1-vs-2-thread speed-up. Takes ~5 minutes.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo bench -p propdp-sim --bench fit
cargo bench -p propdp-sim --bench large
