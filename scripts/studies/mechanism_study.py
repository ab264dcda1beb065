#!/usr/bin/env python3
"""Which noise, by problem (docs/correlated_noise.md, issue #64 item 4): for
each model (least squares, logistic, Huber), feature spectrum (isotropic or
an 8-atom power law) and ε ∈ {1, 4, 16}, at a realistic horizon (q = 0.02,
T = 1024: 20 epochs), run `propdp mechanism --json`, then simulate its
choice, DP-SGD and the best prefix-sum BandMF at the same σ with
`propdp validate` (d = 1000, 40 repetitions). Writes one JSON line per
problem to OUT (appending; problems already there are skipped).

With `--sweep`, the step size against the curvature and the epochs instead:
least squares, isotropic, λ = 0.02, q = 0.02, η ∈ {0.05, 0.2, 0.4} (η·L for
the largest Hessian eigenvalue L = (1 + √δ)² ≈ 2.91: 0.15, 0.58, 1.17) ×
epochs ∈ {5, 20, 50} (T = 250, 1000, 2500) at ε = 4, and ε ∈ {1, 16} at
η = 0.4, 20 epochs.

    python scripts/studies/mechanism_study.py target/release/propdp results/mechanism_study.jsonl [--sweep]
"""
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

BIN, OUT = sys.argv[1], Path(sys.argv[2])
SWEEP = "--sweep" in sys.argv[3:]
MODELS = {
    "least_squares": ('model = "least_squares"\nnoise = { law = "gaussian", sd = 0.5 }', 0.02, 0.1),
    "huber": ('model = "huber"\nhuber_m = 1.0\nnoise = { law = "gaussian", sd = 0.5 }', 0.01, 0.1),
    "logistic": ('model = "logistic"', 0.01, 0.5),
}
SPECTRA = {
    "isotropic": "",
    "power_law": 'covariance = { family = "power_law", exponent = 1.0, condition = 20.0, atoms = 8, teacher = "aligned" }',
}


def config(model, spectrum, lam, eta, steps=1024, extra=""):
    head, _, _ = MODELS[model]
    return f"""[problem]
{head}
delta = 0.5
s2 = 1.0
{SPECTRA[spectrum]}
[algorithm]
kind = "dpsgd"
lambda = {lam}
eta = {eta}
steps = {steps}
sample_rate = 0.02
clip = 1.0
{extra}"""


def simulate(text, metric):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.toml"
        path.write_text(text + "\n[simulation]\nd = 1000\nreps = 40\nseed = 11\n")
        out = subprocess.run([BIN, "validate", str(path), "--out", str(Path(tmp) / "run")], capture_output=True,
                             text=True).stdout
    m = re.search(rf"\s{metric}\s+([-\d.e]+)\s+([-\d.e]+) ± ([-\d.e]+)", out)
    return (float(m.group(2)), float(m.group(3))) if m else None


def problems():
    """(model, spectrum, ε, λ, η, T) of every problem of the study."""
    if SWEEP:
        grid = [(eta, epochs, 4.0) for eta in (0.05, 0.2, 0.4) for epochs in (5, 20, 50)]
        grid += [(0.4, 20, 1.0), (0.4, 20, 16.0)]
        return [("least_squares", "isotropic", eps, 0.02, eta, round(epochs / 0.02)) for eta, epochs, eps in grid]
    return [(model, spectrum, eps, lam, eta, 1024) for model, (_, lam, eta) in MODELS.items() for spectrum in SPECTRA
            for eps in (1.0, 4.0, 16.0)]


def key(r):
    return r["model"], r["spectrum"], r["epsilon"], r.get("eta", MODELS[r["model"]][2]), r.get("steps", 1024)


done = set()
if OUT.exists():
    done = {key(r) for r in map(json.loads, OUT.read_text().splitlines())}
for model, spectrum, eps, lam, eta, steps in problems():
    row = {"model": model, "spectrum": spectrum, "epsilon": eps, "lambda": lam, "eta": eta, "steps": steps}
    if key(row) in done:
        continue
    base = config(model, spectrum, lam, eta, steps)
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(base)
    r = subprocess.run([BIN, "mechanism", f.name, "--epsilon", str(eps), "--delta-priv", "1e-5", "--json"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print(model, spectrum, eps, eta, steps, "failed:", r.stderr.strip()[-300:], flush=True)
        continue
    d = json.loads(r.stdout)
    prefix = min((c for c in d["candidates"] if c["origin"] == "prefix_sum"), key=lambda c: c["predicted"],
                 default=None)
    row["metric"] = d["best"]["metric"]
    for name, c in [("best", d["best"]), ("dpsgd", d["candidates"][0]), ("prefix", prefix)]:
        if c is None:
            continue
        run = base.replace("sample_rate = 0.02", f"sample_rate = {c['sample_rate']!r}")
        run += f"sigma = {c['sigma']!r}\ngroups = {c['groups']}\nstrategy = {{ coefficients = {c['coefficients']!r} }}\n"
        sim = simulate(run, c["metric"])
        row[name] = {k: c[k] for k in ("origin", "groups", "sigma", "epsilon", "predicted", "stderr")}
        row[name]["simulated"] = sim
    with OUT.open("a") as out:
        out.write(json.dumps(row) + "\n")
    print(json.dumps(row), flush=True)
