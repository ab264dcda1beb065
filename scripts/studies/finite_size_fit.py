"""Fit the O(1/d) finite-size gap of `propdp validate` runs (docs/theory.md §5.1).

For every (point, metric) of one or more validate output directories (each
holding validation.csv, written by `propdp validate CONFIG --out DIR` of a
config with several `simulation.d`), fit sim − theory = a/d by weighted least
squares through the origin (weights 1/stderr²), and report the relative
constant c = a/max(|theory|, 0.1) with its standard error and the fit's χ²
per degree of freedom. Per metric family (propdp_core::validation::Family)
it prints the largest |c|, and over the measured fits — se(c) ≤ 0.15 or
|c| > 3·se(c) (a small metric, an overlap of 0.03, with its standard error
leaves c unmeasured) — the largest |c| + 2·se(c): the envelope the
acceptance rule's finite-size allowance C_f·max(|theory|, 0.1)/d is rounded
up from. Run it once on the isotropic studies and once on those with a
covariance: the rule has a constant for each.

    python3 scripts/studies/finite_size_fit.py --min-d 10 DIR [DIR ...]
"""

import argparse
import csv
import math
from collections import defaultdict
from pathlib import Path

# keep in step with propdp_core::validation::Family::of
FAMILIES = {
    "est_err2": "errors", "pred_err2": "errors", "est_err": "errors", "norm2": "errors",
    "test_mse": "errors", "train_resid_trunc": "errors",
    "overlap": "overlaps", "noise_corr": "overlaps",
    "bias_factor": "ratios",
    "test_class_err": "class error",
    "test_logloss": "losses", "train_logloss": "losses", "train_loss": "losses",
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("--min-d", type=int, default=0, help="fit only d ≥ this")
    ap.add_argument("--verbose", action="store_true", help="print every (point, metric) fit")
    a = ap.parse_args()
    fits = []
    for d in a.dirs:
        by = defaultdict(list)
        with open(d / "validation.csv") as f:
            for r in csv.DictReader(f):
                if int(r["d"]) < a.min_d:
                    continue
                se = math.hypot(float(r["sim_stderr"]), float(r["theory_stderr"]))
                by[(r["index"], r["metric"])].append(
                    (int(r["d"]), float(r["sim_mean"]) - float(r["theory"]), se, float(r["theory"]))
                )
        for (index, metric), rows in sorted(by.items()):
            if len(rows) < 2 or any(se <= 0 for _, _, se, _ in rows):
                continue
            sxx = sum((1 / dd) ** 2 / se**2 for dd, _, se, _ in rows)
            sxy = sum((1 / dd) * g / se**2 for dd, g, se, _ in rows)
            amp = sxy / sxx
            amp_se = 1 / math.sqrt(sxx)
            chi2 = sum(((g - amp / dd) / se) ** 2 for dd, g, se, _ in rows) / (len(rows) - 1)
            scale = max(abs(rows[0][3]), 0.1)
            fits.append((d.name, index, metric, amp / scale, amp_se / scale, chi2))
    fam = defaultdict(list)
    for name, index, metric, c, se, chi2 in fits:
        if a.verbose:
            print(f"{name:<28} {index:>3} {metric:<18} c = {c:+8.3f} ± {se:.3f}  χ²/dof = {chi2:5.2f}")
        fam[FAMILIES.get(metric, metric)].append((abs(c), se, chi2, name, index, metric))
    print(f"{'family':<12} {'fits':>5} {'max |c|':>9} {'measured':>8} {'envelope':>9} {'median χ²/dof':>14}  envelope at")
    for f, v in sorted(fam.items()):
        precise = [x for x in v if x[1] <= 0.15 or x[0] > 3 * x[1]]
        env = max(precise, key=lambda x: x[0] + 2 * x[1]) if precise else None
        chis = sorted(x[2] for x in v)
        print(f"{f:<12} {len(v):>5} {max(v)[0]:>9.3f} {len(precise):>8} "
              f"{(env[0] + 2 * env[1]) if env else float('nan'):>9.3f} {chis[len(chis) // 2]:>14.2f}  "
              + (f"{env[3]} point {env[4]} {env[5]}" if env else "—"))


if __name__ == "__main__":
    main()
