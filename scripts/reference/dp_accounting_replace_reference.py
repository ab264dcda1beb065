#!/usr/bin/env python3
"""Reference ε of DP-SGD under replace-one (Poisson-subsampled Gaussian,
T-fold composition) from Google's dp-accounting PLD accountant,
`NeighboringRelation.REPLACE_ONE` — the pair (1 − q)N(0, z²) + qN(−1, z²)
against (1 − q)N(0, z²) + qN(1, z²) of Zhu, Dong, Wang (2022) — for
propdp's accountant tests. Writes
crates/propdp-accountant/tests/data/dp_accounting_replace_eps.csv.

    python3 -m venv /tmp/refvenv && /tmp/refvenv/bin/pip install dp-accounting==0.6.0
    /tmp/refvenv/bin/python scripts/reference/dp_accounting_replace_reference.py

Pessimistic connect-the-dots PLDs, discretisation 1e-4 (2e-5 where ε < 1,
1e-5 for one step), so the references are accurate to well below the 0.1%
the tests allow. Each row also holds dp-accounting's δ at 0.999·ε (as in
dp_accounting_reference.py: where that already meets δ, get_epsilon rounded
up).
"""
import csv
import sys
from pathlib import Path

import dp_accounting
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant

OUT = Path(__file__).resolve().parents[2] / "crates/propdp-accountant/tests/data/dp_accounting_replace_eps.csv"
REPLACE = dp_accounting.NeighboringRelation.REPLACE_ONE

CASES = [
    # (z, q, T, δ): q from 0.001 to 1
    (1.0, 0.01, 2000, 1e-5),
    (0.6, 0.001, 5000, 1e-5),
    (0.8, 0.001, 10_000, 1e-5),
    (2.0, 0.01, 1000, 1e-6),
    (1.0, 0.1, 100, 1e-5),
    (3.0, 0.1, 1000, 1e-8),
    (2.0, 0.5, 50, 1e-5),
    (5.0, 0.5, 200, 1e-5),
    (2.0, 1.0, 10, 1e-5),
    (0.5, 0.01, 1, 1e-5),
    (1.0, 0.1, 1, 1e-6),
]


def epsilon(z, q, steps, delta, grid):
    acc = pld_privacy_accountant.PLDAccountant(neighboring_relation=REPLACE, value_discretization_interval=grid)
    acc.compose(dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(z)), steps))
    eps = acc.get_epsilon(delta)
    return eps, acc.get_delta(eps * 0.999)


def main():
    rows = []
    for z, q, steps, delta in CASES:
        grid = 1e-5 if steps == 1 else 1e-4
        eps, below = epsilon(z, q, steps, delta, grid)
        if eps < 1 and grid > 2e-5:
            grid = 2e-5
            eps, below = epsilon(z, q, steps, delta, grid)
        rows.append({"z": z, "q": q, "steps": steps, "delta": delta, "grid": grid, "epsilon": repr(float(eps)),
                     "delta_at_0999_epsilon": repr(float(below))})
        print(rows[-1], flush=True)
    if "--print" in sys.argv[1:]:
        return
    with OUT.open("w", newline="") as f:
        f.write(f"# dp-accounting {dp_accounting_version()} PLDAccountant, replace-one, "
                "made by scripts/reference/dp_accounting_replace_reference.py\n")
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def dp_accounting_version():
    from importlib.metadata import version
    return version("dp-accounting")


if __name__ == "__main__":
    main()
