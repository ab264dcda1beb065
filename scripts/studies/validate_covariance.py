#!/usr/bin/env python3
"""Theory against simulation with a feature covariance at d = 1000 (the
acceptance of issue #28, docs/theory.md §2.4 and §3.4): Huber and logistic,
objective and output perturbation, a rank power law of condition number 100
with the teacher spread, aligned and anti-aligned; then DP-GD and DP-SGD.
Every metric at every point (and, for DP-GD/DP-SGD, every evaluated step)
by the §5 rule; prints pass counts and rms z (theory and simulation
standard errors combined) per configuration.

    cargo build --release -p propdp-cli; python3 scripts/studies/validate_covariance.py [--reps 20]

Writes configs and results under target/validate_covariance/ (about 3 minutes).
"""

import argparse
import json
import math
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROPDP = ROOT / "target" / "release" / "propdp"
OUT = ROOT / "target" / "validate_covariance"

PROBLEM = {
    "huber": 's2 = 1.0\nhuber_m = 1.0\nnoise = { law = "gaussian", sd = 0.5 }',
    "logistic": "s2 = 4.0",
}
STATIC = {
    "objective": 'kind = "objective"\nlambda = 0.1\nsigma = [0.0, 1.0]',
    "output": 'kind = "output"\nlambda = 0.1\ntau = [0.0, 0.5]',
}
DYNAMIC = {
    "dpgd": 'kind = "dpgd"\nlambda = 0.1\nsigma = [0.0, 1.0]\neta = 0.02\nsteps = 60',
    "dpsgd": 'kind = "dpsgd"\nlambda = 0.1\nsigma = 1.0\neta = 0.02\nsteps = 60\nsample_rate = 0.2\nclip = 1.0',
}


def config(model, teacher, algorithm, body, deltas, reps):
    return (
        f'[problem]\nmodel = "{model}"\ndelta = {deltas}\n{PROBLEM[model]}\n'
        f'covariance = {{ family = "power_law", exponent = 1.0, condition = 100.0, atoms = 100, teacher = "{teacher}" }}\n'
        f"[algorithm]\n{body}\n[simulation]\nd = 1000\nreps = {reps}\nseed = 7\n"
    )


def z_scores(results):
    """(metric, step, z) of every simulated value against the theory."""
    recs = [json.loads(l) for l in results.read_text().splitlines()]
    theory = {r["index"]: r for r in recs if r["source"] == "theory"}
    out = []
    for r in recs:
        if r["source"] != "simulation":
            continue
        t = theory[r["index"]]
        if r.get("per_step"):
            at = r.get("per_step_at") or list(range(len(next(iter(r["per_step"].values())))))
            for m, vals in r["per_step"].items():
                for j, step in enumerate(at):
                    if step == 0:
                        continue
                    tv, tse = t["per_step"][m][step], t["per_step_stderr"][m][step]
                    sv, sse = vals[j], r["per_step_stderr"][m][j]
                    out.append((m, step, (sv - tv) / math.sqrt(sse * sse + tse * tse + 1e-300)))
        else:
            for m, tv in t["metrics"].items():
                if m in r["metrics"]:
                    out.append((m, None, (r["metrics"][m] - tv) / max(r["stderr"][m], 1e-300)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    cases = [
        (model, teacher, alg, body, "[0.3, 1.0, 3.0]")
        for model in PROBLEM
        for teacher in ["spread", "aligned", "anti_aligned"]
        for alg, body in STATIC.items()
    ]
    cases += [(model, teacher, alg, body, "[0.5, 2.0]") for model, teacher in
              [("huber", "aligned"), ("logistic", "anti_aligned")] for alg, body in DYNAMIC.items()]
    print("| model | teacher | algorithm | §5 rule | comparisons | rms z | largest |z| |")
    print("|---|---|---|---|---|---|---|")
    for model, teacher, alg, body, deltas in cases:
        tag = f"{model}_{teacher}_{alg}"
        cfg = OUT / f"{tag}.toml"
        cfg.write_text(config(model, teacher, alg, body, deltas, a.reps))
        # a fresh directory: records of an earlier build are not reused
        shutil.rmtree(OUT / tag, ignore_errors=True)
        out = subprocess.run([str(PROPDP), "validate", str(cfg), "--out", str(OUT / tag)],
                             capture_output=True, text=True)
        rule = next((l for l in out.stdout.splitlines() if "comparisons pass" in l), out.stderr.strip())
        zs = z_scores(OUT / tag / "results.jsonl")
        rms = math.sqrt(sum(z * z for _, _, z in zs) / len(zs))
        worst = max(zs, key=lambda x: abs(x[2]))
        print(f"| {model} | {teacher} | {alg} | {rule.split(' (')[0]} | {len(zs)} | {rms:.2f} | "
              f"{abs(worst[2]):.2f} ({worst[0]}{'' if worst[1] is None else f', t = {worst[1]}'}) |")


if __name__ == "__main__":
    main()
