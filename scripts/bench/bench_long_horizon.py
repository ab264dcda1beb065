#!/usr/bin/env python3
"""Time one DP-SGD theory point at long horizons: T in {100, 1000, 10000} x
q in {1, 0.01, 0.002}, for unclipped least squares (the exact spectral
solution, docs/theory.md §3.2) and for Huber and clipped logistic (the
full-memory state evolution at T = 100, the long-horizon one beyond, §3.3,
at the default budget). Prints per point: wall time, peak memory (RSS of
`propdp run --theory-only`), the solver's method and its reported errors
(approximation error, largest RQMC standard error) — or the refusal, naming
the field, when the solver does not serve the point.

With --atoms K1,K2,...: clipped Huber DP-SGD at (T, q) = (2000, 0.01) and
(10000, 0.002) on isotropic features and on power-law spectra of K atoms
(condition 20, aligned teacher), alternating, best of --repeat runs (default
2), with each spectrum's time as a ratio to the isotropic one of the same run
(the long horizon with a spectrum, docs/theory.md §3.4; issue #42's goal: at
most 2x at K = 10, 4x at K = 20).

Usage: python3 scripts/bench/bench_long_horizon.py [PROPDP_BINARY] [--atoms 10,20] [--repeat N]
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

ARGS = sys.argv[1:]
OPTIONS = {ARGS[i]: ARGS[i + 1] for i in range(len(ARGS) - 1) if ARGS[i].startswith("--")}
POSITIONAL = [a for i, a in enumerate(ARGS) if not a.startswith("--") and (i == 0 or not ARGS[i - 1].startswith("--"))]
BINARY = Path(POSITIONAL[0] if POSITIONAL else "target/release/propdp")

MODELS = {
    "least_squares": (
        'model = "least_squares"\nnoise = { law = "gaussian", sd = 0.5 }',
        "",
    ),
    "huber": ('model = "huber"\nhuber_m = 1.0\nnoise = { law = "gaussian", sd = 0.5 }', ""),
    "logistic, C = 1": ('model = "logistic"', "clip = 1.0\n"),
}


def config(problem: str, extra: str, steps: int, q: float, atoms: int = 0, eta: float = 0.3) -> str:
    spectrum = (
        f'covariance = {{ family = "power_law", exponent = 1.0, condition = 20.0, atoms = {atoms}, teacher = "aligned" }}'
        if atoms
        else ""
    )
    return f"""[problem]
{problem}
delta = 0.5
s2 = 1.0
{spectrum}

[algorithm]
kind = "dpsgd"
lambda = 0.05
sigma = 0.3
eta = {eta}
steps = {steps}
sample_rate = {q}
{extra}"""


def point(text: str) -> str:
    return timed(text)[1]


def timed(text: str) -> tuple[float, str]:
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
            return wall, f"refused: {why[0][7:] if why else run.stderr.strip()[:200]}"
        results = Path(tmp) / "out" / "results.jsonl"
        lines = results.read_text().splitlines() if results.exists() else []
        if not lines:
            errors = (Path(tmp) / "out" / "errors.jsonl").read_text()
            return wall, f"failed: {json.loads(errors.splitlines()[0])['error'][:160]}"
        solver = json.loads(lines[0])["solver"]
        approx = solver.get("approx_error")
        return wall, (
            f"{wall:8.2f} s {mb:8.0f} MB  method {solver.get('method', '-'):12}"
            f" approx_error {'-' if approx is None else f'{approx:.1e}':8}"
            f" largest stderr {solver['residual']:.1e}"
        )


def spectra(atoms: list[int], repeat: int) -> None:
    problem = MODELS["huber"][0]
    print(f"{'atoms':>6} {'T':>6} {'q':>6}  best of {repeat}   ratio  last run")
    for steps, q in ((2000, 0.01), (10000, 0.002)):
        best = {k: float("inf") for k in [0] + atoms}
        last = {}
        for _ in range(repeat):
            for k in [0] + atoms:
                wall, line = timed(config(problem, "clip = 1.0\n", steps, q, k, eta=0.1))
                best[k], last[k] = min(best[k], wall), line
        for k in [0] + atoms:
            print(f"{k or 'iso':>6} {steps:6} {q:6}  {best[k]:8.2f} s  {best[k] / best[0]:5.2f}x  {last[k]}", flush=True)


def main() -> None:
    if not BINARY.exists():
        sys.exit(f"{BINARY} does not exist: cargo build --release first, or pass the binary")
    if "--atoms" in OPTIONS:
        spectra([int(k) for k in OPTIONS["--atoms"].split(",")], int(OPTIONS.get("--repeat", "2")))
        return
    print(f"{'model':16} {'T':>6} {'q':>6}  result")
    for name, (problem, extra) in MODELS.items():
        for steps in (100, 1000, 10000):
            for q in (1.0, 0.01, 0.002):
                print(f"{name:16} {steps:6} {q:6}  {point(config(problem, extra, steps, q))}", flush=True)


if __name__ == "__main__":
    main()
