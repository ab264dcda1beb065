#!/usr/bin/env python3
"""Peer check of propdp's feature-covariance static theory (docs/theory.md §2.4)
against the Gaussian covariate model (GCM) of Loureiro et al. (2021), ridge case.

    python3 scripts/gcm_reference.py [--propdp BIN] [--tol 1e-6] [--mc D REPS]

Three independent computations of the same limit, for a power-law spectrum
(κ = 100, K = 100 equally weighted atoms, x_k = k/(K−1), ω_k ∝ 1/(1 + (κ−1)x_k)),
teacher aligned (e ∝ ω) and spread (e = 1), δ ∈ {0.3, 1, 3}, λ ∈ {0.1, 1},
noise sd = 0.5, s² = 1:

  * GCM: the ridge saddle-point equations of the GCM, written here from the
    equations (not copied) in the GCM's own variables (α, γ, ρ, spec(Ω), t_i),
    iterated as a plain fixed point;
  * DE:  the deterministic equivalent of ridge regression (Stieltjes transform
    of the sample covariance; effective regularisation κ), written in the
    averaged-loss convention of the random-matrix literature;
  * propdp: `propdp run CONFIG --theory-only` (model = "huber", huber_m = 1e6,
    i.e. least squares in practice; algorithm "objective", σ = 0).

Exit status 1 if any theory-vs-theory relative difference exceeds --tol.
--mc D REPS adds a small Monte Carlo at dimension D (informative only, not in
the exit status).

CONVENTIONS AND THE MAPPING (what was found in IdePHICS/GCMProject)
-------------------------------------------------------------------
GCM (arXiv:2102.08127, repo IdePHICS/GCMProject, state_evolution/):
  teacher y = θ₀ᵀu/√k, student ŷ = wᵀv/√p, (u, v) jointly Gaussian with
  Ψ = E uuᵀ (k×k), Φ = E u vᵀ, Ω = E vvᵀ (p×p); p = student dimension,
  k = teacher dimension, γ = k/p, α = n/p ("sample complexity n/p" in
  real_data/simulation.py, X.shape[1] = p).  ρ = θ₀ᵀΨθ₀/k = E y²,
  t_i = (Uᵀ Φᵀθ₀θ₀ᵀΦ U)_ii in Ω's eigenbasis U, and the test error of ridge
  is ρ + q − 2m = E(y − ŷ)², q = wᵀΩw/p, m = θ₀ᵀΦw/√(kp).
  Ridge: their simulation's estimator is (XᵀX/p + λI)⁻¹Xᵀy/√p, i.e.
      ŵ = argmin_w  ½ Σ_μ (y_μ − wᵀv_μ/√p)² + (λ/2)‖w‖²,
  loss SUMMED over the n samples, penalty (λ/2)‖w‖² — which is also what the
  SE says: V̂ = α/(1+V) (n unit Hessians per coordinate, no 1/n) and λ enters
  as D_i = λ + V̂ω_i.  Their iteration (models/ridge_regression.py) is, with
  the mean over the p eigenvalues of Ω,
      V̂ = α/(1+V),  m̂ = α/(√γ(1+V)),  q̂ = α(ρ + q − 2m)/(1+V)²,
      V = ⟨ω/D⟩,  m = m̂/√γ ⟨t/D⟩,  q = ⟨(ω²q̂ + m̂² ω t)/D²⟩.
  Their ridge SE has NO label noise (y is a deterministic function of u).

propdp: x = Σ^{1/2}z/√d, y = xᵀθ* + ε, θ̂ = argmin Σ_i ρ_M(y_i − x_iᵀθ)
  + (λ/2)‖θ‖², ρ_M(r) = r²/2 for |r| ≤ M, n = d/δ.

Mapping:
  * student features v := Σ^{1/2}z (so v/√p = x with p = d), Ω := Σ with the
    spectrum normalised as propdp does: Σw = 1, Σwω = 1, Σwe = 1 (this script
    normalises independently; propdp is fed the RAW un-normalised atoms so
    its own normalisation is tested too);
  * α = n/p = 1/δ;
  * λ_GCM = λ_propdp (both: summed ½-square loss + (λ/2)‖·‖², same 1/√d
    feature scale).  NB: in the averaged convention (1/n)Σ(y − z̃ᵀβ)² + μ‖β‖²
    with β = θ/√d, z̃ = Σ^{1/2}z, one has μ = δλ (used by the DE below);
  * label noise: the GCM code has none, so it is put INSIDE the GCM as
    k − p extra teacher coordinates ζ ~ N(0, I), independent of v
    (Ψ = diag(Σ, I), Φ = [Σ; 0]), with θ₀ = √γ (θ*, η), ‖η‖²/p = sd²:
    then y = θ₀ᵀu/√k = θ*ᵀv/√p + ηᵀζ/√p = xᵀθ* + ε exactly.  This gives
        ρ = s²⟨ωe⟩ + sd²,   t_i = γ ω_i² θ̃*_i²  → γ ω_k² s² e_k per atom,
    (θ̃* = Uᵀθ*, whose squared coordinates average s² e_k over atom k; the
    equations are linear in them, so the atom average is exact in the limit).
    γ drops out (checked: it is set to 1.5 here, any value gives the same);
    the noise only enters through ρ (ρ → ρ + Δ, Δ = sd²);
  * the GCM mean over the p eigenvalues ↔ the w-weighted mean over atoms (for
    equal weights, literally np.mean over a spec_Omega vector of K entries);
  * outputs: GCM test error ρ + q − 2m = E(y − ŷ)² = propdp test_mse
    = sd² + pred_err2; GCM q − 2m + (ρ − sd²) = pred_err2.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
from scipy.optimize import brentq

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

KAPPA, K_ATOMS = 100.0, 100
DELTAS = [0.3, 1.0, 3.0]
LAMBDAS = [0.1, 1.0]
SD, S2 = 0.5, 1.0
GAMMA = 1.5  # teacher/student dimension ratio of the GCM embedding (drops out)


# ----------------------------------------------------------------------------
# spectrum


def power_law_raw(kappa=KAPPA, K=K_ATOMS):
    x = np.arange(K) / (K - 1)
    omega = 1.0 / (1.0 + (kappa - 1.0) * x)
    return omega, np.ones(K)


def normalise(omega, weight, teacher):
    w = np.asarray(weight, float) / np.sum(weight)
    om = np.asarray(omega, float) / np.dot(w, omega)
    e = np.asarray(teacher, float) / np.dot(w, teacher)
    return om, w, e


# ----------------------------------------------------------------------------
# GCM ridge saddle point, in GCM variables


def gcm_inputs(om, w, e, s2, sd, gamma=GAMMA):
    """CustomSpectra-style inputs (rho, spec_Omega, t, gamma, weights) of the
    GCM embedding described in the module docstring."""
    rho = s2 * np.dot(w, om * e) + sd * sd          # θ₀ᵀΨθ₀/k, noise included
    t = gamma * om ** 2 * s2 * e                    # diag(UᵀΦᵀθ₀θ₀ᵀΦU), atom-averaged
    return dict(rho=rho, spec=om, t=t, gamma=gamma, weight=w)


def gcm_ridge(alpha, lamb, dm, tol=1e-15, max_steps=2_000_000):
    """Iterate the GCM ridge saddle-point equations (V, q, m) -> hats -> (V, q, m)
    from an uninformative start until the summed change is < tol."""
    om, t, g, rho, w = dm["spec"], dm["t"], dm["gamma"], dm["rho"], dm["weight"]
    mean = lambda a: float(np.dot(w, a))
    V, q, m = 1.0, 0.0, 0.0
    for it in range(1, max_steps + 1):
        Vh = alpha / (1.0 + V)
        mh = alpha / (math.sqrt(g) * (1.0 + V))
        qh = alpha * (rho + q - 2.0 * m) / (1.0 + V) ** 2
        D = lamb + Vh * om
        Vn = mean(om / D)
        mn = mh / math.sqrt(g) * mean(t / D)
        qn = mean((om ** 2 * qh + mh ** 2 * om * t) / D ** 2)
        diff = abs(Vn - V) + abs(qn - q) + abs(mn - m)
        V, q, m = Vn, qn, mn
        if diff < tol * (1.0 + abs(q)):
            break
    else:
        raise RuntimeError(f"GCM SE did not converge (alpha={alpha}, lambda={lamb})")
    # the same fixed point solved directly: V from its scalar equation, then q
    # from the linear equation it satisfies (m does not depend on q)
    Vd = brentq(lambda v: v - mean(om / (lamb + alpha / (1 + v) * om)), 0.0, 1.0 / lamb + 1.0,
                xtol=1e-16, rtol=1e-15, maxiter=500)
    Vh = alpha / (1 + Vd)
    mh = alpha / (math.sqrt(g) * (1 + Vd))
    D = lamb + Vh * om
    md = mh / math.sqrt(g) * mean(t / D)
    c = alpha / (1 + Vd) ** 2 * mean(om ** 2 / D ** 2)     # dq/dq of the map
    qd = (c * (rho - 2 * md) + mh ** 2 * mean(om * t / D ** 2)) / (1 - c)
    return dict(V=V, q=q, m=m, iters=it, test_error=rho + q - 2 * m,
                test_error_direct=rho + qd - 2 * md)


# ----------------------------------------------------------------------------
# deterministic equivalent (random-matrix theory; averaged-loss convention)


def ridge_de(delta, lam, om, w, e, s2, sd):
    """β = θ/√d, z̃ = Σ^{1/2}z, y = z̃ᵀβ* + ε: ridge with averaged loss
    (1/n)‖y − Z̃β‖² + μ‖β‖², μ = δλ.  Effective regularisation κ > 0:
        μ = κ (1 − df₁/n),  df₁/n = δ⟨ω/(ω+κ)⟩,  df₂/n = δ⟨ω²/(ω+κ)²⟩,
    E‖β̂ − β*‖²_A = κ²β*ᵀ(Σ+κ)⁻¹A(Σ+κ)⁻¹β*
                  + (tr AΣ(Σ+κ)⁻²/n)(κ²β*ᵀΣ(Σ+κ)⁻²β* + sd²)/(1 − df₂/n)
    with A = Σ (pred_err2) and A = I (est_err2); β*ᵀf(Σ)β* = s²⟨f(ω)e⟩."""
    mean = lambda a: float(np.dot(w, a))
    mu = delta * lam
    f = lambda k: k - delta * mean(k * om / (om + k)) - mu   # convex, f(0) = −μ < 0
    hi = 1.0
    while f(hi) <= 0:
        hi *= 2.0
    k = brentq(f, 0.0, hi, xtol=1e-16, rtol=1e-15, maxiter=500)
    df2 = delta * mean(om ** 2 / (om + k) ** 2)
    bias_pred = k * k * s2 * mean(om * e / (om + k) ** 2)
    pred = (bias_pred + sd * sd * df2) / (1 - df2)
    est = k * k * s2 * mean(e / (om + k) ** 2) + \
        delta * mean(om / (om + k) ** 2) * (bias_pred + sd * sd) / (1 - df2)
    return dict(kappa=k, pred_err2=pred, est_err2=est)


# ----------------------------------------------------------------------------
# propdp CLI


def toml_list(a):
    return "[" + ", ".join(repr(float(x)) for x in a) + "]"


def run_propdp(binary, omega_raw, weight_raw, teacher_raw, workdir, tag):
    cfg = f"""name = "gcm reference {tag}"
[problem]
model = "huber"
delta = {toml_list(DELTAS)}
s2 = {S2!r}
huber_m = 1e6
noise = {{ law = "gaussian", sd = {SD!r} }}
covariance = {{ eigenvalue = {toml_list(omega_raw)}, weight = {toml_list(weight_raw)}, teacher = {toml_list(teacher_raw)} }}

[algorithm]
kind = "objective"
lambda = {toml_list(LAMBDAS)}
sigma = 0.0
"""
    path = os.path.join(workdir, f"{tag}.toml")
    out = os.path.join(workdir, f"out_{tag}")
    with open(path, "w") as fh:
        fh.write(cfg)
    subprocess.run([binary, "run", path, "--out", out, "--theory-only"], check=True,
                   stdout=subprocess.DEVNULL)
    res = {}
    with open(os.path.join(out, "results.jsonl")) as fh:
        for line in fh:
            r = json.loads(line)
            if r.get("source") != "theory":
                continue
            p = r["params"]
            if not r["solver"]["converged"]:
                raise RuntimeError(f"propdp did not converge at {p}")
            res[(round(p["delta"], 12), round(p["lambda"], 12))] = r["metrics"]
    return res


# ----------------------------------------------------------------------------
# optional Monte Carlo


def monte_carlo(delta, lam, om, w, e, d, reps, rng):
    counts = np.round(w * d).astype(int)
    counts[-1] = d - counts[:-1].sum()
    omd = np.repeat(om, counts)
    ed = np.repeat(e, counts)
    n = int(round(d / delta))
    pe, ee = [], []
    for _ in range(reps):
        theta = rng.standard_normal(d) * np.sqrt(S2 * ed)
        X = rng.standard_normal((n, d)) * np.sqrt(omd / d)   # Σ diagonal in its eigenbasis
        y = X @ theta + SD * rng.standard_normal(n)
        th = np.linalg.solve(X.T @ X + lam * np.eye(d), X.T @ y)
        r = th - theta
        pe.append(np.dot(omd * r, r) / d)
        ee.append(np.dot(r, r) / d)
    return (np.mean(pe), np.std(pe, ddof=1) / math.sqrt(reps),
            np.mean(ee), np.std(ee, ddof=1) / math.sqrt(reps))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--propdp", default=os.path.join(REPO, "target", "release", "propdp"))
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--mc", nargs=2, type=int, metavar=("D", "REPS"))
    args = ap.parse_args()

    omega_raw, weight_raw = power_law_raw()
    teachers = {"aligned": omega_raw.copy(), "spread": np.ones_like(omega_raw)}
    rng = np.random.default_rng(20210216)
    worst = 0.0
    rel = lambda a, b: abs(a - b) / max(abs(b), 1e-300)

    with tempfile.TemporaryDirectory(prefix="gcm_ref_") as tmp:
        hdr = (f"{'teacher':8} {'delta':>5} {'lam':>4} | {'GCM pred_err2':>15} {'propdp pred_err2':>17} "
               f"{'rel':>8} | {'GCM test_mse':>14} {'propdp test_mse':>15} {'rel':>8} | "
               f"{'DE pred':>8} {'DE est':>15} {'propdp est_err2':>15} {'rel':>8} | it")
        print(hdr)
        print("-" * len(hdr))
        mc_rows = []
        for tag, teacher_raw in teachers.items():
            om, w, e = normalise(omega_raw, weight_raw, teacher_raw)
            pd = run_propdp(args.propdp, omega_raw, weight_raw, teacher_raw, tmp, tag)
            dm = gcm_inputs(om, w, e, S2, SD)
            for lam in LAMBDAS:
                for delta in DELTAS:
                    g = gcm_ridge(1.0 / delta, lam, dm)
                    de = ridge_de(delta, lam, om, w, e, S2, SD)
                    p = pd[(round(delta, 12), round(lam, 12))]
                    gcm_test = g["test_error"]
                    gcm_pred = gcm_test - SD * SD
                    r_pred = rel(gcm_pred, p["pred_err2"])
                    r_test = rel(gcm_test, p["test_mse"])
                    r_de_pred = rel(de["pred_err2"], p["pred_err2"])
                    r_de_est = rel(de["est_err2"], p["est_err2"])
                    r_it = rel(g["test_error"], g["test_error_direct"])
                    worst = max(worst, r_pred, r_test, r_de_pred, r_de_est, r_it)
                    print(f"{tag:8} {delta:5.1f} {lam:4.1f} | {gcm_pred:15.12f} {p['pred_err2']:17.12f} "
                          f"{r_pred:8.1e} | {gcm_test:14.11f} {p['test_mse']:15.11f} {r_test:8.1e} | "
                          f"{r_de_pred:8.1e} {de['est_err2']:15.12f} {p['est_err2']:15.12f} "
                          f"{r_de_est:8.1e} | {g['iters']}")
                    if args.mc:
                        mc = monte_carlo(delta, lam, om, w, e, args.mc[0], args.mc[1], rng)
                        mc_rows.append((tag, delta, lam, p["pred_err2"], p["est_err2"], mc))
        print("\nrel = |reference − propdp|/propdp; 'DE pred' = rel. diff. of the deterministic-"
              "equivalent pred_err2; it = GCM fixed-point iterations")
        if mc_rows:
            d, reps = args.mc
            print(f"\nMonte Carlo, d = {d}, {reps} reps (mean ± s.e.; finite-size, informative only)")
            for tag, delta, lam, pp, pe, (mp, sp, me, se) in mc_rows:
                print(f"{tag:8} {delta:5.1f} {lam:4.1f} | pred_err2 {mp:.5f} ± {sp:.5f} vs {pp:.5f} "
                      f"(z = {(mp - pp) / sp:+.2f}) | est_err2 {me:.5f} ± {se:.5f} vs {pe:.5f} "
                      f"(z = {(me - pe) / se:+.2f})")
    print(f"\nlargest relative difference {worst:.2e} (tolerance {args.tol:.0e})")
    if not worst <= args.tol:
        print("FAIL", file=sys.stderr)
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
