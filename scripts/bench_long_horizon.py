#!/usr/bin/env python3
"""Time one DP-SGD theory point at long horizons: T in {100, 1000, 10000} x
q in {1, 0.01, 0.002}, for unclipped least squares (the exact spectral
solution, docs/theory.md §3.2) and for Huber and clipped logistic (the
full-memory state evolution at T = 100, the long-horizon one beyond, §3.3,
at the default budget). Prints per point: wall time, peak memory (RSS of
`propdp run --theory-only`), the solver's method and its reported errors
(approximation error, largest RQMC standard error) — or the refusal, naming
the field, when the solver does not serve the point.

Usage: python3 scripts/bench_long_horizon.py [PROPDP_BINARY]
(default target/release/propdp; build it first: cargo build --release).
Standard library only.
"""

import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BINARY = Path(sys.argv[1] if len(sys.argv) > 1 else "target/release/propdp")

MODELS = {
    "least_squares": (
        'model = "least_squares"\nnoise = { law = "gaussian", sd = 0.5 }',
        "",
    ),
    "huber": ('model = "huber"\nhuber_m = 1.0\nnoise = { law = "gaussian", sd = 0.5 }', ""),
    "logistic, C = 1": ('model = "logistic"', "clip = 1.0\n"),
}


def config(problem: str, extra: str, steps: int, q: float) -> str:
    return f"""[problem]
{problem}
delta = 0.5
s2 = 1.0

[algorithm]
kind = "dpsgd"
lambda = 0.05
sigma = 0.3
eta = 0.3
steps = {steps}
sample_rate = {q}
{extra}"""


def point(text: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "c.toml"
        cfg.write_text(text)
        start = time.perf_counter()
        run = subprocess.run(
            ["/usr/bin/time", "-v", str(BINARY), "run", str(cfg), "--out", f"{tmp}/out", "--theory-only"],
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - start
        peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", run.stderr)
        mb = int(peak.group(1)) / 1024 if peak else float("nan")
        if run.returncode != 0:
            why = [line for line in run.stderr.splitlines() if line.startswith("error")]
            return f"refused: {why[0][7:] if why else run.stderr.strip()[:200]}"
        results = Path(tmp) / "out" / "results.jsonl"
        lines = results.read_text().splitlines() if results.exists() else []
        if not lines:
            errors = (Path(tmp) / "out" / "errors.jsonl").read_text()
            return f"failed: {json.loads(errors.splitlines()[0])['error'][:160]}"
        solver = json.loads(lines[0])["solver"]
        approx = solver.get("approx_error")
        return (
            f"{wall:8.2f} s {mb:8.0f} MB  method {solver.get('method', '-'):12}"
            f" approx_error {'-' if approx is None else f'{approx:.1e}':8}"
            f" largest stderr {solver['residual']:.1e}"
        )


def main() -> None:
    if not BINARY.exists():
        sys.exit(f"{BINARY} does not exist: cargo build --release first, or pass the binary")
    print(f"{'model':16} {'T':>6} {'q':>6}  result")
    for name, (problem, extra) in MODELS.items():
        for steps in (100, 1000, 10000):
            for q in (1.0, 0.01, 0.002):
                print(f"{name:16} {steps:6} {q:6}  {point(config(problem, extra, steps, q))}", flush=True)


if __name__ == "__main__":
    main()
