#!/usr/bin/env python3
"""Reference ε far beyond ln(DBL_MAX) ≈ 709.78 for propdp's accountant tests
(issue 59, C): where e^ε leaves f64, the accountant once read δ(ε) = 0 and
certified ε = 709.78 for a true 1398.95. Writes
crates/propdp-accountant/tests/data/large_epsilon.csv, one row per case:
relation, z, q, steps, delta, and the reference's lower and upper ends.

    python3 -m venv /tmp/refvenv && /tmp/refvenv/bin/pip install dp-accounting==0.6.0 mpmath
    /tmp/refvenv/bin/python scripts/reference/large_epsilon_reference.py

Three kinds of reference, none from propdp:

- ``one_step``: one step of the Poisson-subsampled Gaussian, its exact curve
  in mpmath at 60 digits (the threshold form of docs/privacy.md), the ε
  solved by bisection to 1e-40: lower = upper.
- ``mixture``: T steps at a tiny noise multiplier (z = 10⁻³), where an
  included example's loss is ln q + 1/(2z²) + G/z (add/remove, remove
  direction) or ln(q/(1 − q)) + 1/(2z²) − G/z (replace-one), up to
  e^{−4·10⁵}, and an excluded one's ln(1 − q) or 0: the composed loss is a
  binomial mixture of normals, whose δ(ε) = Σ_k P(k)·E[(1 − e^{ε−L})₊ | k]
  is a closed form (the add direction's δ is 0 beyond T·|ln(1 − q)|). The
  neglected terms are below 10⁻¹⁰⁰⁰⁰⁰ relative: lower = upper. (``mixture_upper``:
  a case whose composition passes the PLD's point budget, where only an
  upper end, the RDP accountant's, is stated.)
- ``gaussian``: a full-batch Gaussian step (μ = 1/z_1, add/remove) beside
  a subsampled one (z_2, q_2), whose PLD path composes the full batch's
  remove and add directions far beyond 709: the true ε lies between the
  Gaussian mechanism's at μ = 1/z_1 (the second step only adds loss) and at
  μ = √(1/z_1² + 1/z_2²) (the second step is dominated by its full batch),
  both exact in mpmath. Schedules are written with ``;`` between segments.
- ``dp_accounting``: replace-one compositions above 709, from
  dp-accounting's connect-the-dots (pessimistic: an upper bound) and
  privacy-buckets optimistic (a lower bound) PLDs at grid 10⁻³, with δ(ε)
  read off their PMFs here in a stable form (each loss above ε contributes
  p·(1 − e^{ε−l}), which never overflows). dp-accounting's own
  ``get_epsilon_for_delta`` sums p·e^{−l}, which is subnormal beyond a loss
  of 708 and underflows at 745: it reads 730.80 for the case whose PMF says
  729.846 (δ(729.846) = 2.2280e-4 read off the same PMF, as its own
  ``get_delta_for_epsilon`` agrees).
"""
import csv
import sys
from pathlib import Path

import mpmath as mp

OUT = Path(__file__).resolve().parents[2] / "crates/propdp-accountant/tests/data/large_epsilon.csv"
mp.mp.dps = 60


def one_step_delta(z, q, eps, relation):
    """The exact δ(ε) of one step (the worse direction under add/remove)."""
    z, q, eps = mp.mpf(z), mp.mpf(q), mp.mpf(eps)
    Phi = mp.ncdf
    if relation == "replace":
        rho = (1 - q) * mp.sinh(eps / 2) * mp.exp(1 / (2 * z * z)) / q
        x = -z * z * (eps / 2 + mp.asinh(rho))
        p = (1 - q) * Phi(x / z) + q * Phi((x + 1) / z)
        qq = (1 - q) * Phi(x / z) + q * Phi((x - 1) / z)
        return p - mp.exp(eps) * qq
    # remove: P = (1 − q)N(0, z²) + qN(1, z²) against N(0, z²), threshold x*
    r = mp.expm1(eps) + q
    x = z * z * mp.log(r / q) + mp.mpf(1) / 2
    remove = q * Phi((1 - x) / z) - r * Phi(-x / z)
    # add: δ = 0 once e^{−ε} ≤ 1 − q
    s = mp.expm1(-eps) + q
    add = mp.mpf(0)
    if s > 0:
        b = z * z * mp.log(s / q) + mp.mpf(1) / 2
        add = (1 - mp.exp(eps) * (1 - q)) * Phi(b / z) - mp.exp(eps) * q * Phi((b - 1) / z)
    return max(remove, add)


def mixture_delta(z, q, steps, eps, relation):
    """δ(ε) of T steps at tiny z: a binomial mixture of normal losses."""
    z, q, eps = mp.mpf(z), mp.mpf(q), mp.mpf(eps)
    if relation == "replace":
        per, rest = mp.log(q / (1 - q)) + 1 / (2 * z * z), mp.mpf(0)
    else:
        per, rest = mp.log(q) + 1 / (2 * z * z), mp.log(1 - q)
    total = mp.mpf(0)
    for k in range(steps + 1):
        weight = mp.binomial(steps, k) * q**k * (1 - q) ** (steps - k)
        m = k * per + (steps - k) * rest
        if k == 0:
            total += weight * max(0, -mp.expm1(eps - m))
            continue
        s = mp.sqrt(k) / z
        # E[(1 − e^{ε−L})₊], L ~ N(m, s²)
        a = (m - eps) / s
        total += weight * (mp.ncdf(a) - mp.exp(eps - m + s * s / 2) * mp.ncdf(a - s))
    return total


def gaussian_delta(mu, eps):
    """δ(ε) of the Gaussian mechanism at μ (Balle & Wang 2018)."""
    mu, eps = mp.mpf(mu), mp.mpf(eps)
    return mp.ncdf(mu / 2 - eps / mu) - mp.exp(eps) * mp.ncdf(-mu / 2 - eps / mu)


def solve(delta_of, delta):
    """The smallest ε with δ(ε) ≤ δ, to 1e-40 relative."""
    lo, hi = mp.mpf(0), mp.mpf(1)
    while delta_of(hi) > delta:
        lo, hi = hi, 2 * hi
    while hi - lo > mp.mpf(10) ** -40 * hi:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if delta_of(mid) > delta else (lo, mid)
    return hi


def stable_epsilon(pmf, delta):
    """The smallest ε with δ(ε) ≤ δ for a dp-accounting PMF, read stably."""
    import numpy as np

    probs = np.asarray(pmf._probs)
    losses = (pmf._lower_loss + np.arange(len(probs))) * pmf._discretization

    def delta_of(eps):
        above = losses > eps
        return pmf._infinity_mass + float(np.sum(probs[above] * -np.expm1(eps - losses[above])))

    lo, hi = 0.0, 1.0
    while delta_of(hi) > delta:
        lo, hi = hi, 2 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if delta_of(mid) > delta else (lo, mid)
    return lo, hi


def dp_accounting_bounds(z, q, steps, delta):
    import dp_accounting
    from dp_accounting.pld import privacy_loss_distribution as pldm

    replace = dp_accounting.NeighboringRelation.REPLACE_ONE
    grid = 1e-3
    pess = pldm.from_gaussian_mechanism(z, sampling_prob=q, value_discretization_interval=grid,
                                        neighboring_relation=replace).self_compose(steps)
    opt = pldm.from_gaussian_mechanism(z, sampling_prob=q, value_discretization_interval=grid,
                                       pessimistic_estimate=False, use_connect_dots=False,
                                       neighboring_relation=replace).self_compose(steps)
    # the pessimistic curve's ε is an upper bound (its upper end), the optimistic one's a lower bound
    return stable_epsilon(opt._pmf_remove, delta)[0], stable_epsilon(pess._pmf_remove, delta)[1]


ONE_STEP = [
    # (relation, z, q, δ): ε from 10³ to 10⁵
    ("replace", 0.02, 0.01, 1e-5),  # the issue's: certified 709.782713, exact 1398.95
    ("add_remove", 0.02, 0.01, 1e-5),
    ("replace", 0.03, 0.5, 1e-8),
    ("add_remove", 0.005, 0.2, 1e-10),
]
MIXTURE = [
    # (relation, z, q, T, δ): ε about 1.5·10⁶ (it read 7051.78 = 10 × 705.178)
    ("add_remove", 1e-3, 0.01, 10, 1e-5),
    ("replace", 1e-3, 0.01, 10, 1e-5),
    ("add_remove", 1e-3, 0.3, 4, 1e-3),
    # too wide for the PLD's point budget: only the RDP or full-batch upper end
    ("add_remove", 1e-3, 0.01, 1000, 1e-5),
]
GAUSSIAN = [
    # (z_1, z_2, q_2, δ): add/remove, ε about 1000 and 3000
    (0.025, 10.0, 0.01, 1e-5),
    (0.015, 2.0, 0.5, 1e-9),
]
DP_ACCOUNTING = [
    # the composition, and one further out
    ("replace", 2.977616, 0.87127, 3600, 2.228e-4),
    ("replace", 2.0, 0.9, 1500, 1e-6),
]


def main():
    rows = []
    for relation, z, q, delta in ONE_STEP:
        e = solve(lambda x: one_step_delta(z, q, x, relation), delta)
        rows.append((relation, z, q, 1, delta, "one_step", e, e))
    for relation, z, q, steps, delta in MIXTURE:
        e = solve(lambda x: mixture_delta(z, q, steps, x, relation), delta)
        rows.append((relation, z, q, steps, delta, "mixture" if steps < 1000 else "mixture_upper", e, e))
    for z1, z2, q2, delta in GAUSSIAN:
        lo = solve(lambda x: gaussian_delta(1 / mp.mpf(z1), x), delta)
        hi = solve(lambda x: gaussian_delta(mp.sqrt(1 / mp.mpf(z1) ** 2 + 1 / mp.mpf(z2) ** 2), x), delta)
        rows.append(("add_remove", f"{z1!r};{z2!r}", f"1.0;{q2!r}", "1;1", delta, "gaussian", lo, hi))
    if "--no-dp-accounting" not in sys.argv[1:]:
        for relation, z, q, steps, delta in DP_ACCOUNTING:
            lo, hi = dp_accounting_bounds(z, q, steps, delta)
            rows.append((relation, z, q, steps, delta, "dp_accounting", lo, hi))
    for r in rows:
        print(r, flush=True)
    if "--print" in sys.argv[1:]:
        return
    with OUT.open("w", newline="") as f:
        f.write("# reference ε beyond 709 (mpmath closed forms; dp-accounting 0.6.0 PMFs read stably), "
                "made by scripts/reference/large_epsilon_reference.py\n")
        w = csv.writer(f)
        w.writerow(["relation", "z", "q", "steps", "delta", "kind", "lower", "upper"])
        for relation, z, q, steps, delta, kind, lo, hi in rows:
            w.writerow([relation, z if isinstance(z, str) else repr(z), q if isinstance(q, str) else repr(q),
                        steps, repr(delta), kind,
                        mp.nstr(mp.mpf(lo), 17), mp.nstr(mp.mpf(hi), 17)])


if __name__ == "__main__":
    main()
