#!/usr/bin/env python3
"""DP-SGD accountant speed and accuracy, propdp against dp-accounting in the
same run: T = 10⁴ steps, q = 0.004, z = 0.6, δ = 1e-5 (the issue's case).
The accurate ε is dp-accounting's at discretisation 1e-5. Both accountants
reach a given accuracy at the same grid (connect-the-dots discretisation), so
the speed-up is read per grid; best of 3 runs each. propdp's time includes
process start (its example binary) and building the FFT plans.

    pip install dp-accounting
    python scripts/bench_dpsgd_accountant.py
"""
import subprocess
import time
from pathlib import Path

from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant

ROOT = Path(__file__).resolve().parents[1]
Z, Q, T, DELTA = 0.6, 0.004, 10_000, 1e-5


def dp_accounting_eps(grid):
    start = time.perf_counter()
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=grid)
    acc.compose(dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(Q, dp_event.GaussianDpEvent(Z)), T))
    return acc.get_epsilon(DELTA), time.perf_counter() - start


def propdp_eps(grid):
    out = subprocess.run([ROOT / "target/release/examples/dpsgd_epsilon", str(Z), str(Q), str(T), str(DELTA), str(grid)],
                         capture_output=True, text=True, check=True).stdout.split()
    return float(out[1]), float(out[3])


def best_of(f, grid, rounds=3):
    """(ε, fastest wall time) over `rounds` runs."""
    runs = [f(grid) for _ in range(rounds)]
    return runs[0][0], min(r[1] for r in runs)


def main():
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "propdp-accountant", "--example", "dpsgd_epsilon"], cwd=ROOT,
                   check=True)
    exact, _ = dp_accounting_eps(1e-5)
    print(f"reference ε (dp-accounting, grid 1e-5) = {exact:.8f}")
    times = {}
    for grid in [1e-3, 5e-4, 2e-4, 1e-4]:
        for name, f in [("dp-accounting", dp_accounting_eps), ("propdp", propdp_eps)]:
            eps, seconds = best_of(f, grid)
            times[name, grid] = seconds
            print(f"{name:14s} grid {grid:.0e}: ε = {eps:.8f} (rel. error {eps / exact - 1:+.2e}), {seconds:.3f} s")
        print(f"  speed-up at grid {grid:.0e}: {times['dp-accounting', grid] / times['propdp', grid]:.1f}×")


if __name__ == "__main__":
    main()
