#!/usr/bin/env python3
"""The gallery's correlated-noise figure (docs/correlated_noise.md): Huber
DP-SGD at an expected batch of n/32 over T = 1024 steps, every mechanism
calibrated by propdp to the same ε = 8 at δ = 1e-6 (add/remove):

- DP-SGD (Poisson, independent noise);
- amplified BandMF with 2, 4 and 8 prefix-sum-optimal bands in as many
  cyclic groups;
- jax_privacy's optimised BLT in the fixed cyclic order of 32 groups (a
  Gaussian release of the strategy's sensitivity), and beside it its
  baseline, independent noise in that order (no amplification either).

Runs `propdp run` on configs/correlated_noise/*.toml (theory and a d = 1000,
20-repetition simulation each) into OUT, prints each run's σ, its final
est_err2 (theory and simulation) and the rms z of theory against
simulation, and draws predicted est_err2 against the step (lines, the
theory's ±2 s.e. shaded) with the simulated points (±2 s.e.). Needs
matplotlib. About a minute on 2 cores.

    cargo build --release -p propdp-cli
    python3 scripts/studies/correlated_noise_gallery.py OUT [--figure docs/figures/correlated_noise_vs_step.png]
"""
import argparse
import json
import math
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "target" / "release" / "propdp"
RUNS = [
    ("dpsgd", "DP-SGD (Poisson, q = 1/32)"),
    ("bandmf2", "BandMF, 2 bands, 2 groups"),
    ("bandmf4", "BandMF, 4 bands, 4 groups"),
    ("bandmf8", "BandMF, 8 bands, 8 groups"),
    ("dpsgd_fixed", "independent noise, fixed order, 32 groups"),
    ("blt", "BLT, fixed order, 32 groups"),
]
METRIC = "est_err2"


def run(name, out):
    cfg = ROOT / "configs" / "correlated_noise" / f"{name}.toml"
    subprocess.run([str(BIN), "run", str(cfg), "--out", str(out / name), "--overwrite", "--quiet"], check=True)
    recs = [json.loads(line) for line in open(out / name / "results.jsonl") if line.strip()]
    theory = next(r for r in recs if r["source"] == "theory")
    sim = next(r for r in recs if r["source"] == "simulation")
    return theory, sim


def series(rec):
    steps = rec.get("per_step_at") or list(range(len(rec["per_step"][METRIC])))
    return steps, rec["per_step"][METRIC], rec["per_step_stderr"][METRIC]


def agreement(theory, sim):
    _, tm, ts = series(theory)
    ss, sm, se = series(sim)
    zs = [(tm[s] - m) / math.hypot(ts[s], e) for s, m, e in zip(ss, sm, se) if s > 0 and math.hypot(ts[s], e) > 0]
    # the simulation's points are its evaluation grid; the theory's every step
    return math.sqrt(sum(z * z for z in zs) / len(zs)), max(abs(z) for z in zs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--figure", type=Path)
    args = ap.parse_args()
    results = {}
    for name, label in RUNS:
        theory, sim = run(name, args.out)
        results[name] = (label, theory, sim)
        rms, worst = agreement(theory, sim)
        sigma = theory["params"]["sigma"]
        t_final, s_final = theory["metrics"][METRIC], sim["metrics"][METRIC]
        print(f"{name:8s} σ = {sigma:.4f}  {METRIC} theory {t_final:.4f} ± {theory['per_step_stderr'][METRIC][-1]:.4f}, "
              f"simulation {s_final:.4f} ± {sim['stderr'][METRIC]:.4f}  (rms z {rms:.2f}, max |z| {worst:.2f})",
              flush=True)
    if args.figure:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7.5, 4.8))
        for k, (name, (label, theory, sim)) in enumerate(results.items()):
            color = f"C{k}"
            steps, mean, se = series(theory)
            xs = [s for s in steps if s > 0]
            ax.plot(xs, [mean[s] for s in xs], color=color,
                    label=f"{label}: σ = {theory['params']['sigma']:.3f}")
            ax.fill_between(xs, [mean[s] - 2 * se[s] for s in xs], [mean[s] + 2 * se[s] for s in xs],
                            color=color, alpha=0.2, linewidth=0)
            ss, sm, sse = series(sim)
            # about 30 log-spaced points
            positive = [s for s in ss if s > 0]
            keep = {min(positive, key=lambda s: abs(math.log(s) - math.log(x))) for x in
                    (math.exp(i * math.log(positive[-1]) / 29) for i in range(30))}
            pts = [(s, m, e) for s, m, e in zip(ss, sm, sse) if s > 0 and s in keep]
            ax.errorbar([p[0] for p in pts], [p[1] for p in pts], yerr=[2 * p[2] for p in pts], fmt="o",
                        color=color, markersize=3, linewidth=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("step t")
        ax.set_ylabel("est_err2 = ‖θ_t − θ*‖²/d")
        ax.set_title("Huber DP-SGD at equal privacy (ε = 8, δ = 1e-6): theory (lines) vs simulation (d = 1000)",
                     fontsize=9)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(args.figure, dpi=130)
        print(f"figure: {args.figure}")


if __name__ == "__main__":
    main()
