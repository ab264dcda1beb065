#!/usr/bin/env python3
"""Long horizons at a stated precision (docs/theory.md §3.3, "Precision";
docs/performance.md, "Long horizons in seconds").

For each case (DP-SGD, δ = 0.5, isotropic or a power-law spectrum of 10 or
20 atoms, T up to 10⁴, q from 0.002 to 1, clipped and not) writes a config
into OUT, runs the simulation once (d = 1000, 40 repetitions; kept in
OUT/<case>/sim and reused)
and the theory under each solver setting given (`--setting NAME=TOML`, e.g.
`default=` for today's defaults, `old="dmft_points = 4096"`), timing the
theory alone (`propdp run --theory-only`, wall seconds). Prints per case and
setting: seconds, the RQMC paths per replicate, the achieved relative
standard error, the rms and max |z| of theory against simulation and the
median ratio of their standard errors, over est_err2, pred_err2, overlap,
norm2 and train_loss at 21 log-spaced checkpoints; and appends them as JSON
lines to OUT/summary.jsonl.

    cargo build --release -p propdp-cli
    python3 scripts/studies/long_horizon_precision.py OUT [--case NAME ...] [--setting NAME=TOML ...]
"""
import argparse
import json
import subprocess
import time
from pathlib import Path

from correlated_noise_validation import compare_records

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "target" / "release" / "propdp"
HUBER = 'model = "huber"\nhuber_m = 1.0\nnoise = { law = "gaussian", sd = 0.5 }'
LS = 'model = "least_squares"\nnoise = { law = "gaussian", sd = 0.5 }'
LOGISTIC = 'model = "logistic"'


def spectrum(atoms, teacher="aligned"):
    return (f'covariance = {{ family = "power_law", exponent = 1.0, condition = 20.0, atoms = {atoms}, '
            f'teacher = "{teacher}" }}')


# name: (model, s2, lambda, sigma, eta, steps, q, clip, covariance)
CASES = {
    "huber_q002_T1e4": (HUBER, 1.0, 0.05, 0.3, 0.1, 10_000, 0.002, 1.0, ""),
    "huber_q01_T1e4": (HUBER, 1.0, 0.05, 0.3, 0.1, 10_000, 0.01, 1.0, ""),
    "huber_q1_T1e4": (HUBER, 1.0, 0.05, 0.3, 0.1, 10_000, 0.1, 1.0, ""),
    "huber_full_T1e4": (HUBER, 1.0, 0.05, 0.3, 0.1, 10_000, 1.0, 1.0, ""),
    "logistic_q1_T1e4": (LOGISTIC, 4.0, 0.05, 0.3, 0.2, 10_000, 0.1, 0.5, ""),
    "logistic_unclipped_q3_T3000": (LOGISTIC, 4.0, 0.05, 0.3, 0.2, 3000, 0.3, None, ""),
    "ls_q01_T1e4": (LS, 1.0, 0.05, 0.3, 0.1, 10_000, 0.01, 1.0, ""),
    "ls_full_T3000": (LS, 1.0, 0.05, 0.3, 0.1, 3000, 1.0, 1.0, ""),
    "huber_unclipped_q03_T5000": (HUBER, 1.0, 0.05, 0.3, 0.1, 5000, 0.03, None, ""),
    "logistic_q002_T1e4": (LOGISTIC, 4.0, 0.05, 0.3, 0.2, 10_000, 0.002, None, ""),
    "ls_q3_T2000": (LS, 1.0, 0.05, 0.3, 0.1, 2000, 0.3, 1.0, ""),
    "huber_q01_T1e4_20atoms": (HUBER, 1.0, 0.05, 0.3, 0.1, 10_000, 0.01, 1.0, spectrum(20)),
    "huber_q1_T1e4_20atoms": (HUBER, 1.0, 0.05, 0.3, 0.1, 10_000, 0.1, 1.0, spectrum(20)),
    "logistic_q1_T1e4_20atoms": (LOGISTIC, 4.0, 0.05, 0.3, 0.2, 10_000, 0.1, 0.5, spectrum(20, "anti_aligned")),
    "ls_q01_T1e4_10atoms": (LS, 1.0, 0.05, 0.3, 0.1, 10_000, 0.01, 1.0, spectrum(10, "spread")),
    "huber_full_T3000_10atoms": (HUBER, 1.0, 0.05, 0.3, 0.1, 3000, 1.0, 1.0, spectrum(10, "anti_aligned")),
    # session 44: the shapes earlier sessions found slowest (docs/performance.md, sessions 24–27)
    "huber_q3_T1e4_20atoms": (HUBER, 1.0, 0.05, 0.3, 0.1, 10_000, 0.3, 1.0, spectrum(20)),
    "logistic_q3_T1e4_20atoms": (LOGISTIC, 4.0, 0.05, 0.3, 0.2, 10_000, 0.3, 0.5, spectrum(20, "anti_aligned")),
    "logistic_unclipped_q3_T1e4_20atoms": (LOGISTIC, 4.0, 0.05, 0.3, 0.2, 10_000, 0.3, None, spectrum(20, "spread")),
    "logistic_full_T1e4_20atoms": (LOGISTIC, 4.0, 0.05, 0.3, 0.2, 10_000, 1.0, 0.5, spectrum(20, "anti_aligned")),
    "huber_unclipped_q1_T1e4_20atoms": (HUBER, 1.0, 0.05, 0.3, 0.1, 10_000, 0.1, None, spectrum(20)),
}


def config(name, case, solver):
    model, s2, lam, sigma, eta, steps, q, clip, cov = case
    lines = [f'name = "{name}"', f'description = "long-horizon precision study: {name}"', "[problem]", model,
             "delta = 0.5", f"s2 = {s2}"]
    if cov:
        lines.append(cov)
    lines += ["[algorithm]", 'kind = "dpsgd"', f"lambda = {lam}", f"sigma = {sigma}", f"eta = {eta}",
              f"steps = {steps}", f"sample_rate = {q}"]
    if clip is not None:
        lines.append(f"clip = {clip}")
    if solver:
        lines += ["[solver]", solver]
    lines += ["[simulation]", "d = 1000", "reps = 40", "seed = 63"]
    return "\n".join(lines) + "\n"


def record(path, source):
    return next(json.loads(line) for line in open(path) if line.strip() and json.loads(line)["source"] == source)


def run(args):
    subprocess.run([str(BIN), "run", *args, "--overwrite", "--quiet"], check=True, stderr=subprocess.DEVNULL)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--case", action="append")
    ap.add_argument("--setting", action="append", default=None)
    a = ap.parse_args()
    settings = dict(s.split("=", 1) for s in (a.setting or ["default="]))
    a.out.mkdir(parents=True, exist_ok=True)
    for name in a.case or CASES:
        case = CASES[name]
        sim_dir = a.out / name / "sim"
        if not (sim_dir / "results.jsonl").exists():
            cfg = a.out / f"{name}_sim.toml"
            cfg.write_text(config(name, case, ""))
            start = time.time()
            run([str(cfg), "--sim-only", "--out", str(sim_dir)])
            print(f"{name}: simulation {time.time() - start:.0f} s", flush=True)
        sim = record(sim_dir / "results.jsonl", "simulation")
        for label, solver in settings.items():
            cfg = a.out / f"{name}_{label}.toml"
            cfg.write_text(config(name, case, solver))
            out = a.out / name / label
            start = time.time()
            run([str(cfg), "--theory-only", "--out", str(out)])
            seconds = time.time() - start
            theory = record(out / "results.jsonl", "theory")
            rms, worst, ratio = compare_records(theory, sim)
            rqmc = theory["solver"].get("rqmc") or {}
            row = {"case": name, "setting": label, "seconds": round(seconds, 2), "points": rqmc.get("points"),
                   "precision": rqmc.get("precision"), "rms_z": round(rms, 3), "max_z": round(worst, 3),
                   "se_ratio_median": round(ratio, 3), "window": theory["solver"].get("window")}
            print(json.dumps(row), flush=True)
            with open(a.out / "summary.jsonl", "a") as f:
                f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
