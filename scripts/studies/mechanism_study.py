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

With `--blt`, the batch against the fixed order: least squares and Huber,
isotropic, q ∈ {0.02, 0.1, 0.5} at 20 epochs (T = 20/q) and ε ∈ {4, 16};
the BLT candidate (fixed order, ⌈1/q⌉ groups) is simulated too.

With `--jax` (run by a Python with jax-privacy installed), six problems of
the issue's hidden check's kind, and beside propdp's choice and DP-SGD
jax_privacy's own: `toeplitz.optimize_coefs_for_amplifications(T,
dataset_size = d/δ, expected_batch_size = q·d/δ, ε, δ_priv)` — its bands b
as the groups (rate q·b) and its coefficients, with σ calibrated to the
same ε by the same accountant as every other candidate (`propdp privacy`;
jax_privacy's own, from RDP, is recorded as `jax_sigma`), simulated alike.

    python scripts/studies/mechanism_study.py target/release/propdp results/mechanism_study.jsonl [--sweep|--blt]
"""
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

BIN, OUT = sys.argv[1], Path(sys.argv[2])
SWEEP = "--sweep" in sys.argv[3:]
BLT = "--blt" in sys.argv[3:]
JAX = "--jax" in sys.argv[3:]
MODELS = {
    "least_squares": ('model = "least_squares"\nnoise = { law = "gaussian", sd = 0.5 }', 0.02, 0.1),
    "huber": ('model = "huber"\nhuber_m = 1.0\nnoise = { law = "gaussian", sd = 0.5 }', 0.01, 0.1),
    "logistic": ('model = "logistic"', 0.01, 0.5),
}
SPECTRA = {
    "isotropic": "",
    "power_law": 'covariance = { family = "power_law", exponent = 1.0, condition = 20.0, atoms = 8, teacher = "aligned" }',
}


def config(model, spectrum, lam, eta, steps=1024, q=0.02, delta=0.5, extra=""):
    head, _, _ = MODELS[model]
    return f"""[problem]
{head}
delta = {delta}
s2 = 1.0
{SPECTRA[spectrum]}
[algorithm]
kind = "dpsgd"
lambda = {lam}
eta = {eta}
steps = {steps}
sample_rate = {q}
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
    """(model, spectrum, ε, λ, η, T, q, δ) of every problem of the study."""
    if JAX:
        return [("huber", "isotropic", 16.0, 0.01, 0.1, 1024, 0.02, 0.5),
                ("least_squares", "isotropic", 4.0, 0.02, 0.1, 2048, 0.05, 0.5),
                ("logistic", "isotropic", 4.0, 0.01, 0.5, 1024, 0.02, 0.5),
                ("least_squares", "isotropic", 2.0, 0.001, 0.05, 1024, 0.05, 0.2),
                ("huber", "power_law", 4.0, 0.01, 0.1, 1024, 0.02, 0.5),
                ("least_squares", "isotropic", 16.0, 0.02, 0.4, 1000, 0.02, 0.5)]
    if SWEEP:
        grid = [(eta, epochs, 4.0) for eta in (0.05, 0.2, 0.4) for epochs in (5, 20, 50)]
        grid += [(0.4, 20, 1.0), (0.4, 20, 16.0)]
        return [("least_squares", "isotropic", eps, 0.02, eta, round(epochs / 0.02), 0.02, 0.5)
                for eta, epochs, eps in grid]
    if BLT:
        return [(model, "isotropic", eps, MODELS[model][1], MODELS[model][2], round(20 / q), q, 0.5)
                for model in ("least_squares", "huber") for q in (0.02, 0.1, 0.5) for eps in (4.0, 16.0)]
    return [(model, spectrum, eps, lam, eta, 1024, 0.02, 0.5) for model, (_, lam, eta) in MODELS.items()
            for spectrum in SPECTRA for eps in (1.0, 4.0, 16.0)]


def key(r):
    return (r["model"], r["spectrum"], r["epsilon"], r.get("eta", MODELS[r["model"]][2]), r.get("steps", 1024),
            r.get("q", 0.02), r.get("delta", 0.5))


def jax_choice(steps, q, delta, eps):
    """jax_privacy's amplified BandMF for the problem, as a candidate."""
    from absl import logging
    from jax_privacy.matrix_factorization import toeplitz
    logging.set_verbosity(logging.ERROR)
    n = round(1000 / delta)
    coef, stddev = toeplitz.optimize_coefs_for_amplifications(
        steps, dataset_size=n, expected_batch_size=round(q * n), epsilon=eps, delta=1e-5)
    coef = [float(c) for c in coef]
    norm = sum(c * c for c in coef) ** 0.5
    b = len(coef)
    args = ["privacy", "--algorithm", "dpsgd", "--clip", "1", "--sample-rate", repr(q * b), "--steps", str(steps),
            "--epsilon", repr(eps), "--delta-priv", "1e-5", "--neighbouring", "add-remove-one", "--json"]
    if b > 1:
        args += ["--groups", str(b)]
    privacy = json.loads(subprocess.run([BIN, *args], capture_output=True, text=True, check=True).stdout)
    return {"origin": "jax_privacy", "groups": b, "sample_rate": q * b, "coefficients": [c / norm for c in coef],
            "sigma": privacy["noise"], "jax_sigma": float(stddev) / norm}


done = set()
if OUT.exists():
    done = {key(r) for r in map(json.loads, OUT.read_text().splitlines())}
for model, spectrum, eps, lam, eta, steps, q, delta in problems():
    row = {"model": model, "spectrum": spectrum, "epsilon": eps, "lambda": lam, "eta": eta, "steps": steps, "q": q,
           "delta": delta}
    if key(row) in done:
        continue
    base = config(model, spectrum, lam, eta, steps, q, delta)
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
    blt = next((c for c in d["candidates"] if c["origin"] == "blt"), None) if BLT else None
    jax = dict(jax_choice(steps, q, delta, eps), metric=row["metric"]) if JAX else None
    for name, c in [("best", d["best"]), ("dpsgd", d["candidates"][0]), ("prefix", prefix), ("blt", blt),
                    ("jax", jax)]:
        if c is None:
            continue
        run = base.replace(f"sample_rate = {q}", f"sample_rate = {c['sample_rate']!r}")
        if c.get("blt"):
            b = c["blt"]
            strategy = f"{{ blt = {{ buf_decay = {b['buf_decay']!r}, output_scale = {b['output_scale']!r} }} }}"
        else:
            strategy = f"{{ coefficients = {c['coefficients']!r} }}"
        run += f"sigma = {c['sigma']!r}\ngroups = {c['groups']}\nstrategy = {strategy}\n"
        sim = simulate(run, c["metric"])
        row[name] = {k: c.get(k) for k in ("origin", "groups", "sigma", "epsilon", "predicted", "stderr", "jax_sigma")
                     if k in c}
        row[name]["simulated"] = sim
    with OUT.open("a") as out:
        out.write(json.dumps(row) + "\n")
    print(json.dumps(row), flush=True)
