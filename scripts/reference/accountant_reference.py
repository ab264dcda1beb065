#!/usr/bin/env python3
"""propdp's certified DP-SGD ε bracket against Google's dp-accounting (PLD,
pessimistic, fine discretisation) and microsoft's prv_accountant (lower,
estimate, upper), for single runs and heterogeneous schedules (issue #29's
acceptance table), add/remove-one; and against dp-accounting's
`REPLACE_ONE` (the pair (1 − q)N(0, z²) + qN(∓1, z²)) for replace-one, q from
0.001 to 1 (issue #41; prv_accountant has no replace-one, so those rows
skip the overlap check).

Checks per case: the upper end is at most 0.01% below dp-accounting's ε and
at most 0.1% above it, the lower end is not above it, the bracket is at most
0.5% wide, the query takes under 5 s, and the bracket overlaps
prv_accountant's [lower, upper].

    cargo build --release
    python3 -m venv /tmp/refvenv && /tmp/refvenv/bin/pip install dp-accounting prv-accountant
    /tmp/refvenv/bin/python scripts/reference/accountant_reference.py

With --example, propdp's bracket is read from the accountant crate's
`bracket` example (the same bracket `propdp privacy` reports, default width
0.1%; `cargo build --release -p propdp-accountant --examples`) instead of
the CLI, so that only that crate need be built. Binaries are looked up in
$CARGO_TARGET_DIR (default target/).

dp-accounting's discretisation is 1e-4 (2e-5 where its ε is below 1, so its
own grid error stays near 1e-4 relative). prv_accountant runs at
eps_error = 0.01, delta_error = δ/1000.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dp_accounting
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
from prv_accountant import PRVAccountant
from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism

ROOT = Path(__file__).resolve().parents[2]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
BINARY = TARGET / "release/propdp"
EXAMPLE = TARGET / "release/examples/bracket"

# (name, [(noise multiplier z, rate q, steps T)], δ)
REPLACE_CASES = [
    ("replace: z 1, q 0.01, T 2000", [(1.0, 0.01, 2000)], 1e-5),
    ("replace: z 0.6, q 0.001, T 5000", [(0.6, 0.001, 5000)], 1e-5),
    ("replace: z 2, q 0.01, T 1000, δ 1e-6", [(2.0, 0.01, 1000)], 1e-6),
    ("replace: z 1, q 0.1, T 100", [(1.0, 0.1, 100)], 1e-5),
    ("replace: z 3, q 0.1, T 1000, δ 1e-8", [(3.0, 0.1, 1000)], 1e-8),
    ("replace: z 5, q 0.5, T 200", [(5.0, 0.5, 200)], 1e-5),
    ("replace: z 2, q 1, T 10", [(2.0, 1.0, 10)], 1e-5),
    ("replace: schedule", [(1.0, 0.01, 1000), (2.0, 0.1, 100)], 1e-5),
]
CASES = [
    ("issue's case", [(0.6, 0.004, 10_000)], 1e-5),
    ("z 1, q 0.01, T 1000", [(1.0, 0.01, 1000)], 1e-5),
    ("z 0.8, q 0.02, T 3000, δ 1e-8", [(0.8, 0.02, 3000)], 1e-8),
    ("z 3, q 0.02, T 3000, δ 1e-8", [(3.0, 0.02, 3000)], 1e-8),
    ("z 2, q 0.1, T 100", [(2.0, 0.1, 100)], 1e-5),
    ("noise halves mid-run", [(1.0, 0.02, 300), (2.0, 0.02, 200)], 1e-5),
    ("batch grows mid-run", [(0.8, 0.01, 2000), (1.5, 0.04, 500)], 1e-5),
    ("more epochs later", [(0.6, 0.004, 5000), (1.0, 0.004, 5000)], 1e-6),
]


def dp_accounting_eps(segments, delta, grid, replace=False):
    relation = (dp_accounting.NeighboringRelation.REPLACE_ONE if replace
                else dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
    acc = pld_privacy_accountant.PLDAccountant(neighboring_relation=relation, value_discretization_interval=grid)
    for z, q, t in segments:
        acc.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(z)), t)
    return acc.get_epsilon(delta)


def prv_eps(segments, delta):
    prvs = [PoissonSubsampledGaussianMechanism(sampling_probability=q, noise_multiplier=z) for z, q, _ in segments]
    steps = [t for _, _, t in segments]
    acc = PRVAccountant(prvs=prvs, max_self_compositions=steps, eps_error=0.01, delta_error=delta / 1000)
    return acc.compute_epsilon(delta=delta, num_self_compositions=steps)


def example_bracket(segments, delta, replace):
    relation = ["--replace-one"] if replace else []
    args = [str(EXAMPLE)] + relation + [repr(delta), "1e-3"] + [repr(x) for segment in segments for x in segment]
    start = time.perf_counter()
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout.split()
    seconds = time.perf_counter() - start
    return float(out[1]), float(out[3]), out[7] == "true", seconds


def propdp_bracket(segments, delta, replace=False):
    if "--example" in sys.argv[1:]:
        return example_bracket(segments, delta, replace)
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        for z, q, t in segments:
            # logistic, no clip: the sensitivity is L = 1, so σ = z
            f.write(f"[[segment]]\nnoise = {z!r}\nsample_rate = {q!r}\nsteps = {t}\n\n")
        path = f.name
    start = time.perf_counter()
    out = subprocess.run(
        [BINARY, "privacy", "--algorithm", "dpsgd", "--model", "logistic", "--schedule", path, "--delta-priv",
         repr(delta), "--neighbouring", "replace-one" if replace else "add-remove-one", "--json"],
        capture_output=True, text=True, check=True,
    ).stdout
    seconds = time.perf_counter() - start
    j = json.loads(out)
    return j["epsilon_lower"], j["epsilon"], j["bracket_reached"], seconds


def main():
    failures = 0
    print(f"{'case':32s} {'dp-accounting':>13s} {'propdp lower':>13s} {'propdp upper':>13s} {'width':>7s} "
          f"{'up/dpa-1':>9s} {'secs':>5s}  {'prv (lower, upper)':>22s} {'secs':>5s}  checks")
    cases = [(c, False) for c in CASES] + [(c, True) for c in REPLACE_CASES]
    for (name, segments, delta), replace in cases:
        rough = dp_accounting_eps(segments, delta, 1e-3, replace)
        grid = 2e-5 if rough < 1.0 else 1e-4
        dpa = dp_accounting_eps(segments, delta, grid, replace)
        lo, up, reached, secs = propdp_bracket(segments, delta, replace)
        start = time.perf_counter()
        p_lo, p_up = (float("nan"), float("nan")) if replace else prv_eps(segments, delta)[::2]
        prv_secs = time.perf_counter() - start
        width = (up - lo) / up
        checks = {
            "upper ≥ dpa − 0.01%": up >= dpa * (1 - 1e-4),
            "upper ≤ dpa + 0.1%": up <= dpa * (1 + 1e-3),
            "lower ≤ dpa": lo <= dpa,
            "width ≤ 0.5%": width <= 5e-3,
            "< 5 s": secs < 5.0,
            "overlaps prv": replace or (lo <= p_up and p_lo <= up),
        }
        failed = [k for k, ok in checks.items() if not ok]
        failures += bool(failed)
        print(f"{name:32s} {dpa:13.6f} {lo:13.6f} {up:13.6f} {100 * width:6.3f}% {up / dpa - 1:+9.2e} {secs:5.2f}  "
              f"({p_lo:9.5f}, {p_up:9.5f}) {prv_secs:5.1f}  {'ok' if not failed else 'FAILED: ' + ', '.join(failed)}"
              f"{'' if reached else ' (bracket width not reached)'}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
