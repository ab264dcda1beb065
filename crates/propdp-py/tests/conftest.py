"""Fixtures shared by the Python suite."""

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def cli():
    """The command-line binary the package is compared with (built if missing)."""
    exe = ROOT / "target" / "release" / "propdp"
    if not exe.exists():
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "propdp-cli"], cwd=ROOT, check=True)
    return exe
