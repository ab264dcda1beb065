#!/usr/bin/env python3
"""The real-data study of docs/real_data.md: predicted vs simulated error on
real rows (scikit-learn's bundled digits and breast_cancer; nothing is
downloaded), beside the Gaussian-data control with the same Σ and the
isotropic prediction.

For each data set, model (Huber, logistic), teacher (spread, aligned with
the strong directions) and algorithm (objective perturbation σ ∈ {0, 1},
output perturbation τ = 0.5) at two δ:
  - theory with the data's spectrum (`propdp spectrum`),
  - simulation on the data's rows (`[simulation] data`),
  - simulation on Gaussian rows with the same spectrum (the control),
  - theory for isotropic features (what propdp predicted before).

Needs numpy and scikit-learn (pip install numpy scikit-learn) and a built
propdp (cargo build --release -p propdp-cli). Writes into target/real_data/
and prints the markdown tables. Usage: python3 scripts/studies/real_data_study.py [--reps 100] [--labels-only]
"""

import argparse
import json
import subprocess
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits

ROOT = Path(__file__).resolve().parents[2]
PROPDP = ROOT / "target" / "release" / "propdp"
OUT = ROOT / "target" / "real_data"

DATASETS = {
    # name: (loader, standardize, deltas)
    "digits": (load_digits, False, [0.25, 0.5]),
    "breast_cancer": (load_breast_cancer, True, [0.1, 0.25]),
}
MODELS = {
    "huber": 's2 = 1.0\nhuber_m = 1.0\nnoise = { law = "gaussian", sd = 0.5 }',
    "logistic": "s2 = 4.0",
}
ALGORITHMS = {
    "objective": 'kind = "objective"\nlambda = 0.5\nsigma = [0.0, 1.0]',
    "output": 'kind = "output"\nlambda = 0.5\ntau = 0.5',
}


def run(args):
    subprocess.run([str(PROPDP), *args], check=True, capture_output=True, text=True)


def spectrum_files(name, loader, standardize, out=OUT):
    """The data's CSV, its spectrum (spread teacher) and an aligned variant,
    written into `out`."""
    x = loader().data
    data = out / f"{name}.csv"
    np.savetxt(data, x, delimiter=",", header=",".join(f"c{i}" for i in range(x.shape[1])), comments="")
    spread = out / f"{name}_spread.csv"
    if spread.exists():
        spread.unlink()
    run(["spectrum", str(data), "--out", str(spread)] + (["--standardize"] if standardize else []))
    lines = spread.read_text().splitlines()
    comments = [l for l in lines if l.startswith("#")]
    rows = [l.split(",") for l in lines if l and not l.startswith("#")][1:]
    aligned = out / f"{name}_aligned.csv"
    body = ["eigenvalue,weight,teacher"] + [f"{e},{w},{e}" for e, w, _ in rows]
    aligned.write_text("\n".join(comments + ["# teacher aligned: energy ∝ eigenvalue"] + body) + "\n")
    return data, {"spread": spread, "aligned": aligned}, len(rows)


def records(path):
    out = {}
    for line in (path / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        out[(r["source"], r["index"])] = r
    return out


def config(model, algorithm, deltas, covariance, simulation):
    cov = f'covariance = {{ file = "{covariance.name}" }}\n' if covariance else ""
    sim = f"[simulation]\n{simulation}\n" if simulation else ""
    return (
        f'[problem]\nmodel = "{model}"\ndelta = {deltas}\n{MODELS[model]}\n{cov}'
        f"[algorithm]\n{ALGORITHMS[algorithm]}\n{sim}"
    )


# the data's own regression labels: (name, loader, target, standardize, deltas)
LABELLED = [
    ("digits_value", load_digits, lambda b: b.target.astype(float), False, [0.1, 0.25, 0.5]),
    ("diabetes", load_diabetes, lambda b: b.target, False, [0.05, 0.1]),
]


def own_labels(a):
    """Theory with the spectrum, s² and noise `propdp spectrum --label` finds,
    against simulations fitting the data's own labels on its rows."""
    for name, loader, target, standardize, deltas in LABELLED:
        bunch = loader()
        x, y = bunch.data, target(bunch)
        # standardised as `[simulation] data = { labels }` does it (docs/training_loop.md): `propdp spectrum`
        # then reports s² and noise in the units the simulation fits
        y = (y - y.mean()) / y.std()
        data = OUT / f"{name}.csv"
        cols = [f"c{i}" for i in range(x.shape[1])] + ["y"]
        np.savetxt(data, np.column_stack([x, y]), delimiter=",", header=",".join(cols), comments="")
        spec = OUT / f"{name}_labels.csv"
        if spec.exists():
            spec.unlink()
        run(["spectrum", str(data), "--label", "y", "--out", str(spec)] + (["--standardize"] if standardize else []))
        comment = next(l for l in spec.read_text().splitlines() if "R² =" in l)
        s2 = float(comment.split("s2 = ")[1].split(",")[0])
        sd = float(comment.split("sd = ")[1].split(" ")[0])
        r2 = float(comment.split("R² = ")[1].split(")")[0])
        d = sum(1 for l in spec.read_text().splitlines() if l and not l.startswith("#")) - 1
        print(f"\n### {name}: the data's own labels (d = {d}, R² of the linear fit {r2:.3f}, s² = {s2:.4g}, noise sd = {sd:.4g})\n")
        print("| loss | algorithm | δ | metric | theory (Σ) | real rows, real labels | theory (isotropic) | real vs theory |")
        print("|---|---|---|---|---|---|---|---|")
        for loss, m in [("least squares (M = 10³)", 1000.0), ("Huber M = 1", 1.0)]:
            for algorithm, alg in [("objective", 'kind = "objective"\nlambda = 0.5\nsigma = [0.0, 3.0]'), ("output", 'kind = "output"\nlambda = 0.5\ntau = 0.5')]:
                problem = f'[problem]\nmodel = "huber"\ndelta = {deltas}\ns2 = {s2}\nhuber_m = {m}\nnoise = {{ law = "gaussian", sd = {sd} }}\n'
                sim = f'[simulation]\nd = {d}\nreps = {a.reps}\nseed = 3\ndata = {{ file = "{data.name}", labels = "y"{", standardize = true" if standardize else ""} }}\n'
                tag = f"{name}_{m:g}_{algorithm}"
                got = {}
                for kind, text in {
                    "real": problem + f'covariance = {{ file = "{spec.name}" }}\n[algorithm]\n{alg}\n' + sim,
                    "iso": problem + f"[algorithm]\n{alg}\n",
                }.items():
                    cfg = OUT / f"{tag}_{kind}.toml"
                    cfg.write_text(text)
                    run(["run", str(cfg), "--out", str(OUT / f"{tag}_{kind}"), "--overwrite"])
                    got[kind] = records(OUT / f"{tag}_{kind}")
                for (src, index), th in sorted(got["real"].items()):
                    if src != "theory":
                        continue
                    sim_r = got["real"][("simulation", index)]
                    p = th["params"]
                    noise = f"σ = {p['sigma']:g}" if "sigma" in p else f"τ = {p['tau']:g}"
                    for metric in ["test_mse", "train_resid_trunc"]:
                        t, sv, se = th["metrics"][metric], sim_r["metrics"][metric], sim_r["stderr"][metric]
                        iso = got["iso"][("theory", index)]["metrics"][metric]
                        print(
                            f"| {loss} | {algorithm} {noise} | {p['delta']:g} | {metric} | {t:.4g} | {sv:.4g} ± {se:.2g} | "
                            f"{iso:.4g} | {100 * (sv - t) / t:+.1f}% |"
                        )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--labels-only", action="store_true", help="only the data's own labels")
    a = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    if a.labels_only:
        own_labels(a)
        return
    for name, (loader, standardize, deltas) in DATASETS.items():
        data, spectra, d = spectrum_files(name, loader, standardize)
        print(f"\n### {name} (d = {d} directions, {'standardised' if standardize else 'centred'} columns)\n")
        print("| model | teacher | algorithm | δ | metric | theory (Σ) | real rows | Gaussian rows, same Σ | theory (isotropic) | real vs theory |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for model in MODELS:
            for teacher, spec in spectra.items():
                for algorithm in ALGORITHMS:
                    tag = f"{name}_{model}_{teacher}_{algorithm}"
                    real_sim = (
                        f'd = {d}\nreps = {a.reps}\nseed = 1\n'
                        f'data = {{ file = "{data.name}"{", standardize = true" if standardize else ""} }}'
                    )
                    gauss_sim = f"d = {d}\nreps = {a.reps}\nseed = 2"
                    runs = {
                        "real": config(model, algorithm, deltas, spec, real_sim),
                        "gauss": config(model, algorithm, deltas, spec, gauss_sim),
                        "iso": config(model, algorithm, deltas, None, None),
                    }
                    got = {}
                    for kind, text in runs.items():
                        cfg = OUT / f"{tag}_{kind}.toml"
                        cfg.write_text(text)
                        out = OUT / f"{tag}_{kind}"
                        run(["run", str(cfg), "--out", str(out), "--overwrite"] + (["--sim-only"] if kind == "gauss" else []))
                        got[kind] = records(out)
                    metrics = ["pred_err2", "est_err2"] + (["test_class_err"] if model == "logistic" else [])
                    for (src, index), th in sorted(got["real"].items()):
                        if src != "theory":
                            continue
                        sim = got["real"][("simulation", index)]
                        gs = got["gauss"][("simulation", index)]
                        iso = got["iso"][("theory", index)]
                        p = th["params"]
                        noise = f"σ = {p['sigma']:g}" if "sigma" in p else f"τ = {p['tau']:g}"
                        for m in metrics:
                            t, s, se = th["metrics"][m], sim["metrics"][m], sim["stderr"][m]
                            g, gse = gs["metrics"][m], gs["stderr"][m]
                            print(
                                f"| {model} | {teacher} | {algorithm} {noise} | {p['delta']:g} | {m} | {t:.4g} | "
                                f"{s:.4g} ± {se:.2g} | {g:.4g} ± {gse:.2g} | {iso['metrics'][m]:.4g} | {100 * (s - t) / t:+.1f}% |"
                            )
    own_labels(a)


if __name__ == "__main__":
    main()
