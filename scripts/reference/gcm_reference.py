#!/usr/bin/env python3
"""Peer check of propdp's feature-covariance static theory (docs/theory.md §2.4)
against the Gaussian covariate model (GCM) of Loureiro et al. (2021): ridge
case, and ridge-regularised logistic regression with a logistic teacher
(σ = 0; see LOGISTIC CASE at the end of this docstring).

    python3 scripts/reference/gcm_reference.py [--propdp BIN] [--tol 1e-6] [--tol-logistic 1e-9]
                                     [--mc D REPS]

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

Exit status 1 if any ridge theory-vs-theory relative difference exceeds --tol,
or any logistic one exceeds --tol-logistic (default 1e-9, against propdp at its
default settings; see LOGISTIC CASE), or
the logistic GCM's own quadrature-doubling check exceeds 1e-9.
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
    normalises independently; propdp is fed the RAW eigenvalues and teacher
    energies, so its own normalisation is tested too, and the weights
    normalised, w_k = 1/K: propdp refuses weights whose sum is not 1 within
    1e-6);
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

LOGISTIC CASE
-------------
Problem: y = ±1, P(y = +1 | x) = sigmoid(xᵀθ*) (a LOGISTIC teacher channel),
θ̂ = argmin Σ_i log(1 + exp(−y_i x_iᵀθ)) + (λ/2)‖θ‖², σ = 0; same spectra,
s² ∈ {1, 4}, δ ∈ {0.3, 1, 3}, λ ∈ {0.1, 1}; propdp model = "logistic".

What GCMProject assumes: its models/logistic_regression.py with
auxiliary/logistic_integrals.py is the SIGN teacher y = sign(ν) (noiseless):
the ξ-integrands carry (1 ± erf(ω*/√(2V*)))/2 = P(sign ν = ±1 | ξ), the m̂
integrand exp(−ω*²/(2V*))/√(2πV*) = ∂_{ω*} of it, and its test error is
arccos(m/√(qρ))/π — the sign channel, not a logistic one.  So the channel is
written here from the GCM's general saddle-point equations (arXiv:2102.08127,
their variables; prior part identical to the ridge case above), with
    ξ ~ N(0, 1),  ω = √q ξ (student field),  ω* = (m/√q) ξ,  V* = ρ − m²/q,
    Z_out(y, ω*, V*) = E_z sigmoid(y(ω* + √V* z))        (logistic teacher),
    ∂_{ω*}Z_out(y)   = y E_z sigmoid'(ω* + √V* z),
    f_out(y, ω, V)   = (prox_y(ω) − ω)/V,
    prox_y(ω) = argmin_x (x − ω)²/(2V) + log(1 + e^{−yx})   (safeguarded Newton),
    ∂_ω f_out = −ℓ''(p)/(1 + Vℓ''(p)),  ℓ''(p) = sigmoid(p) sigmoid(−p),
  and
    V̂ = −α E_ξ Σ_y Z_out ∂_ω f_out,   q̂ = α E_ξ Σ_y Z_out f_out²,
    m̂ = (α/√γ) E_ξ Σ_y ∂_{ω*}Z_out f_out,
    V = ⟨ω/D⟩, q = ⟨(ω²q̂ + m̂²ωt)/D²⟩, m = (m̂/√γ)⟨t/D⟩,  D = λ + V̂ω.
  Embedding: no label noise, so the teacher is θ₀ = √γ(θ*, 0) on u = (v, ζ):
  ρ = s²⟨ωe⟩, t = γω²s²e (γ = 1.5 again drops out).  Both y = ±1 terms are
  computed (no symmetry used).  Outputs, in GCM variables:
    pred_err2 = q − 2m + ρ,
    test_class_err = E_ξ[Z_out(−1) 1{ξ > 0} + Z_out(+1) 1{ξ < 0}]
                   = 2 ∫₀^∞ φ(ξ) Z_out(−1, (m/√q)ξ, V*) dξ   (conditioned on the
                   student field; propdp conditions on the teacher field),
    test_logloss  = E_ξ Σ_y Z_out(y) log(1 + e^{−yω}),
    train_logloss = E_ξ Σ_y Z_out(y) log(1 + e^{−y prox_y(ω)})  (GCM training loss),
  and the parameter-space overlaps from the GCM's student weights in Ω's
  eigenbasis, ŵ_i = (m̂c_i + √(q̂ω_i) Z)/D_i, c_i = (UᵀΦᵀθ₀)_i = √γ ω_i θ̃*_i:
    overlap = θ̂ᵀθ*/d = (m̂/√γ)⟨t/(ωD)⟩,  norm2 = ⟨(m̂²t + q̂ω)/D²⟩,
    est_err2 = norm2 − 2 overlap + s².
Numerics: every expectation is a product rule of composite Gauss–Legendre
panels (10 nodes each) on [−8.5, 8.5] in ξ and in z with the Gaussian weight
in the integrand.  The integrands are analytic in a strip: prox_y(ω) has its
branch points at Im ω = ±π exactly (1 + Vℓ''(p) = 0 needs sigmoid(p) real
outside (0, 1), i.e. Im p = π, and then Im ω = Im p), i.e. |Im ξ| = π/√q;
sigmoid(ω* + √V* z) has poles at |Im z| = π/√V*, and in ξ the teacher's
scale adds π√q/|m|.  Panels are 0.6 × the strip half-width (at least 12),
so each panel's Bernstein ellipse has ρ_B ≈ 6.8 and a 10-node error
~ρ_B^−20 ≈ 1e-17.  (Plain Gauss–Hermite converges only like exp(−c√n),
c ∝ π/√q: at the aligned s² = 4, δ = 0.3, λ = 0.1 point, q ≈ 17, 200 nodes
per dimension still leave 1.7e-8 in pred_err2 — the bias of a low-order
product rule.)
Solve: a coarse 48 × 48 Gauss–Hermite solve (damped iteration, then Powell's
hybrid method) in x = (m/√ρ, ln(q − m²/ρ), ln V), then chord-Newton polishing
with the fine rule (coarse Jacobian) to |Δx| < 1e-14, then again with every
panel halved (the doubling check: the change is reported, must be < 1e-9;
it is ≤ 4e-15).  At the hardest point (aligned, s² = 4, δ = 0.3, λ = 0.1)
the three hats agree with nested scipy `quad` (adaptive, epsrel 1e-13) to
2e-16, and test_class_err with the teacher-conditioned formula
2E[sigmoid(ν)Φ(−(m/ρ)ν/√(q − m²/ρ))], ν ~ N(0, ρ), by adaptive quad, to 2e-16.

Result and tolerance: against propdp at its default settings every metric
agrees to ≤ 3e-11 (gate 1e-9).  This check found an error in propdp: it
integrated the teacher field ν by 96-node Gauss–Hermite, which converges like
exp(−c√n) with c ∝ 1/√ρ; at ρ = s²⟨ωe⟩ ≈ 24 (aligned teacher, s² = 4)
pred_err2 was off by up to 2.1e-3 (and, without a covariance, by 4.2e-4 at
s² = 24.3); with quad_nodes = 32, 64, 96, 128, 192, 256 propdp's pred_err2
at (aligned, s² = 4, δ = 0.3, λ = 0.1) was 2.4997, 2.00617, 1.977014,
1.973578, 1.9729148, 1.9728836 against this script's 1.9728810010.  propdp
then integrated ν by Gauss–Legendre panels of width 2/√ρ beyond ρ = 4 and
agreed to 3e-11 at its default settings.  Since, propdp integrates ν given
the estimator's field by rules chosen from its conditional spread
(docs/theory.md §2.2), and [solver] quad_nodes sets only the ν rule of its
separability threshold (λ = 0).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
from scipy.optimize import brentq, root
from scipy.special import expit

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

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
# GCM saddle point, logistic teacher and logistic loss, in GCM variables


LOGI_S2 = [1.0, 4.0]
L_CUT = 8.5            # integrate |ξ|, |z| ≤ 8.5: 2Φ(−8.5) = 1.9e-17
GL_NODES = 10          # Gauss–Legendre nodes per panel
PANEL = 0.6            # panel width / half-width of the strip of analyticity
MIN_PANELS = 12
SQ2PI = math.sqrt(2.0 * math.pi)
_GL_X, _GL_W = np.polynomial.legendre.leggauss(GL_NODES)


def gauss_rule(h, a=-L_CUT, b=L_CUT):
    """(x, w) with Σ w f(x) ≈ ∫_a^b φ(x) f(x) dx: composite Gauss–Legendre,
    panels of width ≤ h, the standard normal density φ put in the weights."""
    panels = max(MIN_PANELS, int(math.ceil((b - a) / h)))
    edges = np.linspace(a, b, panels + 1)
    lo, hi = edges[:-1, None], edges[1:, None]
    x = ((hi - lo) / 2 * _GL_X + (hi + lo) / 2).ravel()
    w = ((hi - lo) / 2 * _GL_W).ravel() * np.exp(-0.5 * x * x) / SQ2PI
    return x, w


def hermite_rule(n):
    x, w = np.polynomial.hermite_e.hermegauss(n)
    return x, w / SQ2PI


def logistic_prox(omega, V, y):
    """argmin_x (x − ω)²/(2V) + log(1 + e^{−yx}) elementwise, y = ±1: the root
    of g(x) = x − ω − V y sigmoid(−yx), increasing (g' = 1 + Vℓ''(x) ≥ 1) and
    bracketed by [ω, ω + V] (y = +1) or [ω − V, ω] (y = −1).  Newton, with the
    bracket updated from the sign of g and a bisection whenever a Newton
    step would leave it."""
    lo = omega - (V if y < 0 else 0.0)
    hi = omega + (V if y > 0 else 0.0)
    x = omega + V * y * expit(-y * omega)
    for _ in range(200):
        s = expit(-y * x)
        g = x - omega - V * y * s
        lo = np.where(g < 0, x, lo)
        hi = np.where(g > 0, x, hi)
        xn = x - g / (1.0 + V * s * (1.0 - s))
        xn = np.where((xn <= lo) | (xn >= hi), 0.5 * (lo + hi), xn)
        step = float(np.max(np.abs(xn - x)))
        x = xn
        if step <= 2e-16 * (1.0 + float(np.max(np.abs(x)))):
            return x
    raise RuntimeError("logistic prox: Newton did not converge")


def logistic_channel(m, q, rho, xi, rz):
    """Logistic teacher at the student-field nodes ξ: Z_out(+1), Z_out(−1) and
    ∂_{ω*}Z_out(+1) = E_z sigmoid'(ν), ν = ω* + √V* z, ω* = (m/√q)ξ,
    V* = ρ − m²/q (teacher field given the student field)."""
    z, wz = rz
    nu = (m / math.sqrt(q)) * xi[:, None] + math.sqrt(rho - m * m / q) * z[None, :]
    sp, sm = expit(nu), expit(-nu)
    return sp @ wz, sm @ wz, (sp * sm) @ wz


def logistic_hats(m, q, V, alpha, dm, rx, rz):
    """(V̂, q̂, m̂) of the GCM channel part, both labels summed explicitly."""
    xi, wx = rx
    omega = math.sqrt(q) * xi
    Zp, Zm, dZ = logistic_channel(m, q, dm["rho"], xi, rz)
    Vh = qh = mh = 0.0
    for y, Z, dZy in ((1.0, Zp, dZ), (-1.0, Zm, -dZ)):
        p = logistic_prox(omega, V, y)
        f = (p - omega) / V                          # f_out(y, ω, V)
        l2 = expit(p) * expit(-p)                    # ℓ''(p), both labels
        Vh += alpha * float(np.dot(wx, Z * l2 / (1.0 + V * l2)))
        qh += alpha * float(np.dot(wx, Z * f * f))
        mh += alpha / math.sqrt(dm["gamma"]) * float(np.dot(wx, dZy * f))
    return Vh, qh, mh


def gcm_prior(Vh, qh, mh, lamb, dm):
    """The GCM's prior (ridge penalty) part: (m, q, V) from the hats."""
    om, t, g, w = dm["spec"], dm["t"], dm["gamma"], dm["weight"]
    D = lamb + Vh * om
    V = float(np.dot(w, om / D))
    q = float(np.dot(w, (om ** 2 * qh + mh ** 2 * om * t) / D ** 2))
    m = mh / math.sqrt(g) * float(np.dot(w, t / D))
    return m, q, V


def logistic_outputs(m, q, V, alpha, lamb, dm, s2, rx, rz, rhalf):
    rho, om, t, g, w = dm["rho"], dm["spec"], dm["t"], dm["gamma"], dm["weight"]
    xi, wx = rx
    omega = math.sqrt(q) * xi
    Zp, Zm, _ = logistic_channel(m, q, rho, xi, rz)
    test_ll = float(np.dot(wx, Zp * np.logaddexp(0.0, -omega) + Zm * np.logaddexp(0.0, omega)))
    train_ll = 0.0
    for y, Z in ((1.0, Zp), (-1.0, Zm)):
        p = logistic_prox(omega, V, y)
        train_ll += float(np.dot(wx, Z * np.logaddexp(0.0, -y * p)))
    xh, wh = rhalf                                   # ξ ∈ [0, L]
    _, Zm_half, _ = logistic_channel(m, q, rho, xh, rz)
    class_err = 2.0 * float(np.dot(wh, Zm_half))
    Vh, qh, mh = logistic_hats(m, q, V, alpha, dm, rx, rz)
    D = lamb + Vh * om
    overlap = mh / math.sqrt(g) * float(np.dot(w, t / (om * D)))
    norm2 = float(np.dot(w, (mh ** 2 * t + qh * om) / D ** 2))
    return dict(m=m, q=q, V=V, pred_err2=q - 2.0 * m + rho, test_class_err=class_err,
                test_logloss=test_ll, train_logloss=train_ll, overlap=overlap, norm2=norm2,
                est_err2=norm2 - 2.0 * overlap + s2)


def gcm_logistic(alpha, lamb, dm, s2):
    """Solve the logistic GCM fixed point (see the module docstring) and
    return the outputs with the fine rule and with every panel halved."""
    rho = dm["rho"]
    sr = math.sqrt(rho)

    def unpack(x):
        m = x[0] * sr
        return m, math.exp(x[1]) + m * m / rho, math.exp(x[2])

    def resid(x, rx, rz):
        m, q, V = unpack(x)
        mn, qn, Vn = gcm_prior(*logistic_hats(m, q, V, alpha, dm, rx, rz), lamb, dm)
        return np.array([mn / sr - x[0], math.log(qn - mn * mn / rho) - x[1], math.log(Vn) - x[2]])

    # coarse solve: 48 × 48 Gauss–Hermite, a few damped steps, then Powell
    rc = hermite_rule(48)
    m, q, V = 0.1 * rho, 0.5 * rho, 0.5 / lamb
    for _ in range(20):
        mn, qn, Vn = gcm_prior(*logistic_hats(m, q, V, alpha, dm, rc, rc), lamb, dm)
        m, q, V = 0.5 * (m + mn), 0.5 * (q + qn), 0.5 * (V + Vn)
    sol = root(resid, np.array([m / sr, math.log(q - m * m / rho), math.log(V)]),
               args=(rc, rc), method="hybr", options=dict(xtol=1e-10))
    if not sol.success:
        raise RuntimeError(f"logistic GCM coarse solve failed: {sol.message}")
    x = sol.x
    J = np.empty((3, 3))
    for j in range(3):
        e = np.zeros(3)
        e[j] = 1e-5
        J[:, j] = (resid(x + e, rc, rc) - resid(x - e, rc, rc)) / 2e-5
    Jinv = np.linalg.inv(J)

    # fine rules: chord-Newton polishing, then again with the panels halved
    levels = []
    for level in (1, 2):
        m, q, V = unpack(x)
        hx = PANEL / level * math.pi / max(math.sqrt(q), abs(m) / math.sqrt(q))
        hz = PANEL / level * math.pi / math.sqrt(rho - m * m / q)
        rx, rz = gauss_rule(hx), gauss_rule(hz)
        rhalf = gauss_rule(hx, 0.0, L_CUT)
        for it in range(1, 41):
            dx = Jinv @ resid(x, rx, rz)
            x = x - dx
            if np.max(np.abs(dx)) < 1e-14:
                break
        else:
            raise RuntimeError("logistic GCM: polishing did not converge")
        out = logistic_outputs(*unpack(x), alpha, lamb, dm, s2, rx, rz, rhalf)
        out.update(nodes=(len(rx[0]), len(rz[0])), iters=it)
        levels.append(out)
    return levels


# ----------------------------------------------------------------------------
# propdp CLI


def toml_list(a):
    return "[" + ", ".join(repr(float(x)) for x in a) + "]"


def run_propdp(binary, omega_raw, weight, teacher_raw, workdir, tag, model="huber", quad_nodes=None):
    """propdp's theory on the δ × λ (× s² for logistic) grid; weights must be
    normalised (sum 1 within 1e-6), eigenvalues and teacher energies may be raw."""
    if model == "huber":
        problem = f"""model = "huber"
delta = {toml_list(DELTAS)}
s2 = {S2!r}
huber_m = 1e6
noise = {{ law = "gaussian", sd = {SD!r} }}"""
    else:
        problem = f"""model = "logistic"
delta = {toml_list(DELTAS)}
s2 = {toml_list(LOGI_S2)}"""
    cfg = f"""name = "gcm reference {tag}"
[problem]
{problem}
covariance = {{ eigenvalue = {toml_list(omega_raw)}, weight = {toml_list(weight)}, teacher = {toml_list(teacher_raw)} }}

[algorithm]
kind = "objective"
lambda = {toml_list(LAMBDAS)}
sigma = 0.0
"""
    if quad_nodes is not None:
        cfg += f"\n[solver]\nquad_nodes = {int(quad_nodes)}\n"
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
            key = (round(p["delta"], 12), round(p["lambda"], 12))
            if model != "huber":
                key += (round(p["s2"], 12),)
            res[key] = r["metrics"]
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
    ap.add_argument("--tol-logistic", type=float, default=1e-9,
                    help="relative tolerance of the logistic comparison (see the docstring)")
    ap.add_argument("--quad-nodes", type=int, default=None,
                    help="propdp [solver] quad_nodes of the logistic run (default: propdp's default; "
                         "it sets only the separability threshold's ν rule)")
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
            pd = run_propdp(args.propdp, omega_raw, weight_raw / np.sum(weight_raw), teacher_raw, tmp, tag)
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
    ok = worst <= args.tol

    # ---- logistic, σ = 0 ----------------------------------------------------
    print(f"\nLOGISTIC (logistic teacher P(y=1|x) = sigmoid(xᵀθ*), logistic loss, σ = 0); "
          f"propdp with [solver] quad_nodes = {args.quad_nodes or 'default'}")
    keys = ["pred_err2", "test_class_err", "test_logloss", "train_logloss", "overlap", "norm2", "est_err2"]
    hdr = (f"{'teacher':8} {'s2':>3} {'delta':>5} {'lam':>4} | {'GCM pred_err2':>16} {'propdp':>16} {'rel':>7} | "
           f"{'GCM class_err':>15} {'propdp':>15} {'rel':>7} | {'logloss':>7} {'train':>7} {'overlap':>7} "
           f"{'norm2':>7} {'est_err2':>8} | {'doubling':>8} {'nodes':>7}")
    print(hdr)
    print("-" * len(hdr))
    worst_l = {k: 0.0 for k in keys}
    worst_dbl = 0.0
    with tempfile.TemporaryDirectory(prefix="gcm_ref_logi_") as tmp:
        for tag, teacher_raw in teachers.items():
            om, w, e = normalise(omega_raw, weight_raw, teacher_raw)
            wn = weight_raw / np.sum(weight_raw)
            pd = run_propdp(args.propdp, omega_raw, wn, teacher_raw, tmp, "logistic_" + tag,
                            model="logistic", quad_nodes=args.quad_nodes)
            for s2 in LOGI_S2:
                dm = gcm_inputs(om, w, e, s2, 0.0)
                for lam in LAMBDAS:
                    for delta in DELTAS:
                        g1, g2 = gcm_logistic(1.0 / delta, lam, dm, s2)
                        key = (round(delta, 12), round(lam, 12), round(s2, 12))
                        p = pd[key]
                        r = {k: rel(g2[k], p[k]) for k in keys}
                        dbl = max(rel(g1[k], g2[k]) for k in keys)
                        for k in keys:
                            worst_l[k] = max(worst_l[k], r[k])
                        worst_dbl = max(worst_dbl, dbl)
                        print(f"{tag:8} {s2:3.0f} {delta:5.1f} {lam:4.1f} | {g2['pred_err2']:16.12f} "
                              f"{p['pred_err2']:16.12f} {r['pred_err2']:7.1e} | {g2['test_class_err']:15.13f} "
                              f"{p['test_class_err']:15.13f} {r['test_class_err']:7.1e} | "
                              f"{r['test_logloss']:7.1e} {r['train_logloss']:7.1e} {r['overlap']:7.1e} "
                              f"{r['norm2']:7.1e} {r['est_err2']:8.1e} | {dbl:8.1e} "
                              f"{g1['nodes'][0]}x{g1['nodes'][1]:<3}")
    print("\nrel = |GCM − propdp|/propdp (GCM with the halved panels); logloss, train = test_logloss,"
          " train_logloss;\noverlap, norm2, est_err2 in parameter space from the GCM student weights;"
          " doubling = largest relative\nchange of any GCM output when every panel is halved; nodes = ξ × z"
          " nodes of the fine rule")
    worst_logi = max(worst_l.values())
    print("largest relative differences: " + ", ".join(f"{k} {v:.1e}" for k, v in worst_l.items()))
    print(f"logistic: largest relative difference {worst_logi:.2e} (tolerance {args.tol_logistic:.0e}); "
          f"GCM quadrature doubling {worst_dbl:.1e} (tolerance 1e-9)")
    ok = ok and worst_logi <= args.tol_logistic and worst_dbl <= 1e-9
    if not ok:
        print("FAIL", file=sys.stderr)
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
