#!/usr/bin/env bash
# Build the Python package (maturin, through pip) into a virtual environment
# and run its pytest suite. The suite compares against the CLI binary, built
# here if missing. Usage: bash scripts/test_python.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${PROPDP_VENV:-target/python-venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q --upgrade pip
"$venv/bin/pip" install -q "maturin>=1.9.4,<2" pytest numpy scipy pandas "dask[distributed]"
cargo build --release -q -p propdp-cli
"$venv/bin/pip" install -q --force-reinstall --no-deps ./crates/propdp-py
"$venv/bin/python" -c "import propdp; print('propdp', propdp.__version__, propdp.GIT_COMMIT)"
"$venv/bin/python" -m pytest -q crates/propdp-py/tests "$@"
"$venv/bin/python" python/examples/gallery_dpgd.py target/python-example
