#!/usr/bin/env python3
"""Tuning DP-SGD on the data's spectrum against tuning it on the isotropic
model (issue #42 item 5, docs/covariance.md "Tuning on your spectrum").

For scikit-learn's bundled digits and breast_cancer (nothing is
downloaded): the rows' spectrum by `propdp spectrum` with a teacher aligned
with the strong directions (energy ∝ eigenvalue, as docs/real_data.md);
then at each ε ∈ {1, 4, 8}
  - `propdp tune` with `problem.covariance` = that spectrum: the best DP-SGD run,
  - `propdp tune` without it (isotropic features): the run the isotropic
    model recommends,
and both runs simulated on the data's own rows with the same teacher
(`propdp run --sim-only`, `[simulation] data`, the same seed and
repetitions): what tuning on the wrong model costs at equal privacy.

Needs numpy and scikit-learn (pip install numpy scikit-learn) and a built
propdp (cargo build --release -p propdp-cli). Writes into
target/tune_spectrum/ and prints a markdown table.
Usage: python3 scripts/studies/tune_spectrum_study.py [--reps 40]
"""

import argparse
import json
import subprocess
from pathlib import Path

from real_data_study import spectrum_files
from sklearn.datasets import load_breast_cancer, load_digits

ROOT = Path(__file__).resolve().parents[2]
PROPDP = ROOT / "target" / "release" / "propdp"
OUT = ROOT / "target" / "tune_spectrum"

# name: (loader, standardize, δ)
DATASETS = {
    "digits": (load_digits, False, 0.25),
    "breast_cancer": (load_breast_cancer, True, 0.1),
}
PROBLEM = 'model = "huber"\ns2 = 1.0\nhuber_m = 1.0\nnoise = { law = "gaussian", sd = 0.5 }'
TUNE = """algorithms = ["dpsgd"]
delta_priv = 1e-5
epochs = [2, 10, 50]
sample_rate = [0.1, 1.0]
eta_fraction = [0.25, 0.75]
clip = [1.0]
lambda_min = 1e-3
lambda_max = 10.0
"""
EPSILONS = [1.0, 4.0, 8.0]


def run(args):
    subprocess.run([str(PROPDP), *args], check=True, capture_output=True, text=True)


def aligned_spectrum(name, loader, standardize):
    """The data's CSV and its spectrum with an aligned teacher
    (`real_data_study.spectrum_files`); d."""
    data, spectra, d = spectrum_files(name, loader, standardize, OUT)
    return data, spectra["aligned"], d


def best_runs(path):
    """ε → the best DP-SGD line of a tune.jsonl."""
    out = {}
    for line in (path / "tune.jsonl").read_text().splitlines():
        b = json.loads(line)
        out[b["epsilon"]] = b
    return out


def simulate(tag, delta, spectrum, data, d, standardize, best, reps):
    """The run `best` simulated on the data's rows with the spectrum's teacher."""
    clip = f"clip = {best['clip']}\n" if best.get("clip") is not None else ""
    text = (
        f'[problem]\n{PROBLEM}\ndelta = {delta}\ncovariance = {{ file = "{spectrum.name}" }}\n'
        f'[algorithm]\nkind = "dpsgd"\nlambda = {best["lambda"]}\nsigma = {best["noise"]}\neta = {best["eta"]}\n'
        f'steps = {best["steps"]}\nsample_rate = {best["sample_rate"]}\n{clip}'
        f'[simulation]\nd = {d}\nreps = {reps}\nseed = 7\n'
        f'data = {{ file = "{data.name}"{", standardize = true" if standardize else ""} }}\n'
    )
    cfg = OUT / f"{tag}.toml"
    cfg.write_text(text)
    run(["run", str(cfg), "--sim-only", "--out", str(OUT / tag), "--overwrite"])
    rec = json.loads((OUT / tag / "results.jsonl").read_text().splitlines()[0])
    return rec["metrics"]["est_err2"], rec["stderr"]["est_err2"]


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--reps", type=int, default=40)
    args = a.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    print(f"commit {commit}, {args.reps} repetitions per simulation\n")
    print("| data | d | δ | ε | tuned on the spectrum: run | predicted | simulated | "
          "tuned isotropic: run | simulated | loss |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, (loader, standardize, delta) in DATASETS.items():
        data, spectrum, d = aligned_spectrum(name, loader, standardize)
        sim = f'[simulation]\nd = {d}\nreps = 4\nseed = 1\ndata = {{ file = "{data.name}"{", standardize = true" if standardize else ""} }}\n'
        found = {}
        for kind, cov in [("spectrum", f'covariance = {{ file = "{spectrum.name}" }}\n'), ("isotropic", "")]:
            cfg = OUT / f"{name}_tune_{kind}.toml"
            cfg.write_text(
                f"[problem]\n{PROBLEM}\ndelta = {delta}\n{cov}[tune]\n{TUNE}epsilon = {EPSILONS}\n"
                f"[solver]\ndmft_points = 1024\n" + (sim if kind == "spectrum" else "")
            )
            run(["tune", str(cfg), "--out", str(OUT / f"{name}_tune_{kind}"), "--overwrite"])
            found[kind] = best_runs(OUT / f"{name}_tune_{kind}")
        for eps in EPSILONS:
            s, i = found["spectrum"].get(eps), found["isotropic"].get(eps)
            if s is None or i is None:
                print(f"| {name} | {d} | {delta} | {eps:g} | unreachable | | | | | |")
                continue
            sv, sse = simulate(f"{name}_{eps:g}_spectrum", delta, spectrum, data, d, standardize, s, args.reps)
            iv, ise = simulate(f"{name}_{eps:g}_isotropic", delta, spectrum, data, d, standardize, i, args.reps)

            def desc(b):
                return f"q={b['sample_rate']:.3g}, T={b['steps']}, η={b['eta']:.3g}, λ={b['lambda']:.3g}, σ={b['noise']:.3g}"

            print(
                f"| {name} | {d} | {delta} | {eps:g} | {desc(s)} | {s['value']:.4f} | {sv:.4f} ± {sse:.4f} | "
                f"{desc(i)} | {iv:.4f} ± {ise:.4f} | {100 * (iv - sv) / sv:+.1f}% |",
                flush=True,
            )


if __name__ == "__main__":
    main()
