#!/usr/bin/env python3
"""Theory against simulation along a trajectory, for #26's criterion.

Reads the results.jsonl of `propdp run CONFIG` (theory and simulation records
of the same points) and prints, per point and metric, at the checkpoints
t = 1, 2, 5, 10, …, T (those the simulation evaluated):

- rms z and max |z|, z = (theory − simulation) / √(se_theory² + se_sim²);
- the ratio se_theory / se_sim (median and largest over the checkpoints).

A checkpoint where both standard errors are below 1e-12 (t = 0, where both
sides are exact) is skipped. Usage:

    target/release/propdp run configs/dpsgd_long_logistic.toml --out DIR
    python3 scripts/studies/long_horizon_agreement.py DIR/results.jsonl [...]
"""
import json
import math
import sys


def checkpoints(steps):
    out, decade = [], 1
    while decade <= steps:
        out += [m * decade for m in (1, 2, 5) if m * decade <= steps]
        decade *= 10
    return sorted(set(out + [steps]))


def main(paths):
    all_z = []
    for path in paths:
        recs = [json.loads(line) for line in open(path) if line.strip()]
        theory = {r["index"]: r for r in recs if r["source"] == "theory"}
        sims = {r["index"]: r for r in recs if r["source"] == "simulation"}
        for index in sorted(theory.keys() & sims.keys()):
            a, b = theory[index], sims[index]
            at = b.get("per_step_at") or list(range(len(next(iter(b["per_step"].values())))))
            where = {t: i for i, t in enumerate(at)}
            steps = at[-1]
            label = ", ".join(f"{k} = {v:g}" for k, v in sorted(a["params"].items()) if k in ("sample_rate", "steps"))
            print(f"{path} point {index} ({label}; window {a['solver'].get('window')}, "
                  f"approx_error {a['solver'].get('approx_error', 0):.1e})")
            point_z = []
            for m in sorted(a["per_step"].keys() & b["per_step"].keys()):
                zs, ratios = [], []
                for t in checkpoints(steps):
                    if t not in where:
                        continue
                    i = where[t]
                    sa, sb = a["per_step_stderr"][m][t], b["per_step_stderr"][m][i]
                    if max(sa, sb) < 1e-12:
                        continue
                    zs.append((a["per_step"][m][t] - b["per_step"][m][i]) / math.hypot(sa, sb))
                    if sb > 0:
                        ratios.append(sa / sb)
                ratios.sort()
                rms = math.sqrt(sum(z * z for z in zs) / len(zs))
                print(f"  {m:15s} rms z {rms:5.2f}  max |z| {max(abs(z) for z in zs):5.2f}  "
                      f"se ratio median {ratios[len(ratios) // 2]:5.2f} max {ratios[-1]:5.2f}  ({len(zs)} checkpoints)")
                point_z += zs
            rms = math.sqrt(sum(z * z for z in point_z) / len(point_z))
            print(f"  every metric: rms z {rms:.2f} over {len(point_z)} comparisons")
            all_z += point_z
    if all_z:
        print(f"all: rms z {math.sqrt(sum(z * z for z in all_z) / len(all_z)):.2f} over {len(all_z)} comparisons")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
