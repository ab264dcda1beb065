#!/usr/bin/env python3
"""Correlated-noise DP-SGD (docs/correlated_noise.md): theory against the
simulated algorithm on the cases of docs/theory.md §3.7's validation table.

Writes one config per case into OUT, runs `propdp run` (theory and a
d = 1000, 40-repetition simulation), and prints per case the rms z and max
|z| of est_err2, pred_err2, overlap, norm2 and train_loss at 21 checkpoints
(log-spaced over 1..T), the median ratio of the theory's standard error to
the simulation's, and the wall time. Takes about 5 minutes on 2 cores.

    cargo build --release -p propdp-cli
    python3 scripts/studies/correlated_noise_validation.py OUT [CASE ...]
"""
import json
import math
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "target" / "release" / "propdp"
METRICS = ["est_err2", "pred_err2", "overlap", "norm2", "train_loss"]

# jax_privacy's 4-band prefix-sum-optimal coefficients (T = 1024); the
# first 8 and 32 Taylor coefficients of (1 − x)^(−1/2) (the T → ∞
# prefix-sum optimum, Fichtenberger et al. 2023), normalised by propdp
BANDS4 = [0.5863, 0.5036, 0.4685, 0.4279]


def sqrt_series(b):
    c = [1.0]
    for k in range(1, b):
        c.append(c[-1] * (2 * k - 1) / (2 * k))
    return c


# a BLT strategy: (buf_decay, output_scale)
BLT_1024_32 = ([0.9638688021548572], [0.4395754230012441])
BLT_1024_16 = ([0.9431615726498437], [0.5654134200769894])
BLT_2 = ([0.9, 0.5], [0.3, 0.2])

SPECTRUM = 'covariance = { family = "power_law", exponent = 1.0, condition = 20.0, atoms = 10, teacher = "aligned" }'

# name: (model lines, algorithm lines)
HUBER = 'model = "huber"\nhuber_m = 1.0\nnoise = { law = "gaussian", sd = 0.5 }'
LS = 'model = "least_squares"\nnoise = { law = "gaussian", sd = 0.5 }'
LOGISTIC = 'model = "logistic"'
CASES = {
    "huber_b4_g1_q02": (HUBER, 0.01, 0.5, 0.1, 1024, 0.02, 1, 1.0, BANDS4, ""),
    "logistic_b4_g4_q2": (LOGISTIC, 0.01, 0.5, 0.5, 1024, 0.2, 4, 1.0, BANDS4, ""),
    "ls_b4_g1_q05_exact": (LS, 0.02, 1.0, 0.1, 2048, 0.05, 1, None, BANDS4, ""),
    "ls_b2_g8_fixed_order": (LS, 0.02, 1.0, 0.1, 1000, 1.0, 8, 1.0, [0.8, 0.6], ""),
    "huber_b8_g2_q1_spectrum": (HUBER, 0.01, 0.5, 0.1, 1500, 0.1, 2, 1.0, sqrt_series(8), SPECTRUM),
    "logistic_b32_g32_q05": (LOGISTIC, 0.01, 0.5, 0.5, 2048, 0.05, 32, 1.0, sqrt_series(32), ""),
    "huber_b16_g4_q1_fixed": (HUBER, 0.01, 0.5, 0.1, 1024, 1.0, 4, 1.0, sqrt_series(16), ""),
    "ls_b8_g2_q3_spectrum": (LS, 0.02, 1.0, 0.1, 1200, 0.3, 2, 1.0, sqrt_series(8), SPECTRUM),
    "ls_unclipped_b4_g4_q25": (LS, 0.02, 1.0, 0.1, 1024, 0.25, 4, None, BANDS4, ""),
    "huber_b32_g1_q05": (HUBER, 0.01, 0.5, 0.1, 2048, 0.05, 1, 1.0, sqrt_series(32), ""),
    "ls_unclipped_b4_g1_q1_spectrum": (LS, 0.02, 1.0, 0.1, 1024, 0.1, 1, None, BANDS4, SPECTRUM),
    "logistic_b16_g8_q5_spectrum": (LOGISTIC, 0.01, 0.5, 0.5, 1024, 0.5, 8, 1.0, sqrt_series(16), SPECTRUM),
    # BLTs: jax_privacy 2.0's buffered_toeplitz.optimize(n=1024, min_sep=G, max_participations=None)
    "huber_blt_g32_q1_fixed": (HUBER, 0.01, 0.5, 0.1, 1024, 1.0, 32, 1.0, BLT_1024_32, ""),
    "logistic_blt2_g1_q02": (LOGISTIC, 0.01, 0.5, 0.5, 1024, 0.02, 1, 1.0, BLT_2, ""),
    "ls_blt_g1_q05_exact": (LS, 0.02, 1.0, 0.1, 2048, 0.05, 1, None, BLT_1024_32, ""),
    "huber_blt_g16_q1_spectrum": (HUBER, 0.01, 0.5, 0.1, 1024, 1.0, 16, 1.0, BLT_1024_16, SPECTRUM),
}


def config(name, case, seed):
    model, lam, sigma, eta, steps, q, groups, clip, coefs, cov = case
    lines = [f'name = "{name}"', f'description = "correlated-noise validation: {name}"', "[problem]", model,
             "delta = 0.5", "s2 = 1.0"]
    if cov:
        lines.append(cov)
    lines += ["[algorithm]", 'kind = "dpsgd"', f"lambda = {lam}", f"sigma = {sigma}", f"eta = {eta}",
              f"steps = {steps}", f"sample_rate = {q}", f"groups = {groups}"]
    if clip is not None:
        lines.append(f"clip = {clip}")
    if isinstance(coefs, tuple):
        decay, scale = coefs
        lines.append(f"strategy = {{ blt = {{ buf_decay = {decay!r}, output_scale = {scale!r} }} }}")
    else:
        lines.append("strategy = { coefficients = [" + ", ".join(repr(c) for c in coefs) + "] }")
    lines += ["[simulation]", "d = 1000", "reps = 40", f"seed = {seed}"]
    return "\n".join(lines) + "\n"


def checkpoints(steps, k=21):
    return sorted({max(1, min(steps, round(math.exp(i * math.log(steps) / (k - 1))))) for i in range(k)} | {steps})


def compare(path):
    recs = [json.loads(line) for line in open(path) if line.strip()]
    a = next(r for r in recs if r["source"] == "theory")
    b = next(r for r in recs if r["source"] == "simulation")
    return (*compare_records(a, b), a["solver"].get("method"))


def compare_records(a, b):
    """(rms z, max |z|, median theory/simulation s.e.) of theory record `a`
    against simulation record `b` at the checkpoints."""
    at = b.get("per_step_at") or list(range(len(b["per_step"]["est_err2"])))
    where = {t: i for i, t in enumerate(at)}
    zs, ratios = [], []
    for t in checkpoints(at[-1]):
        # the simulation's evaluated step nearest below t
        s = max(x for x in where if x <= t)
        i = where[s]
        for m in METRICS:
            sa, sb = a["per_step_stderr"][m][s], b["per_step_stderr"][m][i]
            if max(sa, sb) < 1e-12:
                continue
            zs.append((a["per_step"][m][s] - b["per_step"][m][i]) / math.hypot(sa, sb))
            if sb > 0:
                ratios.append(sa / sb)
    ratios.sort()
    rms = math.sqrt(sum(z * z for z in zs) / len(zs))
    return rms, max(abs(z) for z in zs), ratios[len(ratios) // 2]


def main(out, names):
    out.mkdir(parents=True, exist_ok=True)
    for k, name in enumerate(names or CASES):
        cfg = out / f"{name}.toml"
        cfg.write_text(config(name, CASES[name], 100 + k))
        start = time.time()
        subprocess.run([str(BIN), "run", str(cfg), "--out", str(out / name), "--overwrite", "--quiet"], check=True, stderr=subprocess.DEVNULL)
        wall = time.time() - start
        theory = time.time()
        subprocess.run([str(BIN), "run", str(cfg), "--theory-only", "--out", str(out / (name + "_theory")),
                        "--overwrite", "--quiet"], check=True, stderr=subprocess.DEVNULL)
        theory = time.time() - theory
        rms, worst, ratio, method = compare(out / name / "results.jsonl")
        print(f"{name:28s} {method:12s} rms z {rms:5.2f}  max |z| {worst:5.2f}  se ratio (median) {ratio:5.2f}  "
              f"theory {theory:5.1f} s, with simulation {wall:5.1f} s", flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
