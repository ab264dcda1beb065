#!/usr/bin/env python3
"""Overhead of the Python package against Rust and the CLI (issue: a Python
solve of one Huber point ≤ 2× the Rust call; a 1000-point sweep to a
DataFrame ≤ 10% over the CLI). Run from the repository root with the package
installed (bash scripts/test_python.sh sets up target/python-venv):

    target/python-venv/bin/python scripts/bench/bench_python.py
"""
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import propdp

ROOT = Path(__file__).resolve().parents[2]
PARAMS = dict(delta=0.5, s2=1.0, huber_m=1.0, noise={"law": "gaussian", "sd": 0.5}, lambda_=1.0, sigma=1.0)
SWEEP = """
[problem]
model = "huber"
delta = { from = 0.1, to = 3.0, steps = 100, scale = "log" }
s2 = 1.0
huber_m = 1.0
noise = { law = "gaussian", sd = 0.5 }
[algorithm]
kind = "objective"
lambda = [0.5, 1.0]
sigma = { from = 0.0, to = 4.5, steps = 5 }
"""


def median_ns(f, n=2000):
    times = []
    for _ in range(n):
        t = time.perf_counter_ns()
        f()
        times.append(time.perf_counter_ns() - t)
    return statistics.median(times)


def main():
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "propdp-cli"], cwd=ROOT, check=True)
    baseline = ["cargo", "bench", "-q", "-p", "propdp", "--bench", "solve"]
    # interleaved rounds; the least-disturbed (minimum) median of each
    rust_solve, rust_config, python = [], [], []
    for _ in range(5):
        out = subprocess.run(baseline, cwd=ROOT, capture_output=True, text=True, check=True)
        rust = {k: float(v) for k, v in (line.split() for line in out.stdout.splitlines() if line.startswith("rust_"))}
        rust_solve.append(rust["rust_solve_ns"])
        rust_config.append(rust["rust_config_and_solve_ns"])
        python.append(median_ns(lambda: propdp.solve("huber", "objective", **PARAMS)))
    rs, rc, py = min(rust_solve), min(rust_config), min(python)
    print(f"one Huber point: Rust solve {rs / 1e3:.1f} µs, Rust config + solve {rc / 1e3:.1f} µs, "
          f"Python solve {py / 1e3:.1f} µs → {py / rs:.2f}× the solve, {py / rc:.2f}× Rust through a config")
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "sweep.toml"
        cfg.write_text(SWEEP)
        cli, pys = [], []
        for i in range(5):
            t = time.perf_counter()
            subprocess.run([ROOT / "target/release/propdp", "run", cfg, "--out", Path(tmp) / f"cli{i}"], check=True,
                           capture_output=True)
            cli.append(time.perf_counter() - t)
            t = time.perf_counter()
            df = propdp.sweep(cfg, progress=False)
            pys.append(time.perf_counter() - t)
        assert len(df) == 1000
        c, p = statistics.median(cli), statistics.median(pys)
        print(f"1000-point Huber sweep: CLI run (with figures) {c:.3f} s, Python sweep → DataFrame {p:.3f} s "
              f"→ ratio {p / c:.2f}")


if __name__ == "__main__":
    main()
