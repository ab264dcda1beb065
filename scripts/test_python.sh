#!/usr/bin/env bash
# The Python package's tests, as README.md tells a user to run them: in a
# virtual environment, `pip install "./crates/propdp-py[test]"` then
# `pytest crates/propdp-py/tests` (tests needing an extra that is not
# installed skip, naming it); then the `distributed` extra is added and the
# tests that need it run, and the Python gallery example. Under CI the
# environment is made fresh. The suite compares against the CLI binary,
# built here. Usage: bash scripts/test_python.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${PROPDP_VENV:-target/python-venv}"
if [ "${CI:-}" = true ]; then
  rm -rf "$venv"
fi
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q --upgrade pip
cargo build --release -q -p propdp-cli
# the two commands of README.md
"$venv/bin/pip" install -q --force-reinstall "./crates/propdp-py[test]"
"$venv/bin/python" -c "import propdp; print('propdp', propdp.__version__, propdp.GIT_COMMIT)"
"$venv/bin/python" -m pytest -q -rs crates/propdp-py/tests "$@"
# with the distributed and plot extras and dp-accounting, the tests they skipped
"$venv/bin/pip" install -q "dask[distributed]" matplotlib dp-accounting
"$venv/bin/python" -m pytest -q crates/propdp-py/tests -k "dask or every_keyword_and_axis_label or dp_accounting" "$@"
"$venv/bin/python" python/examples/gallery_dpgd.py target/python-example
