"""Private inference in the proportional regime: :class:`PrivateGLM` fits a
logistic or Huber model privately (objective or output perturbation) and
returns confidence intervals for its coefficients θ* that keep their
coverage when d/n is not small (docs/inference.md).

>>> import numpy as np, propdp
>>> rng = np.random.default_rng(0)
>>> n, d = 800, 400
>>> X = rng.normal(size=(n, d)) / np.sqrt(d)
>>> theta = rng.normal(size=d)
>>> y = np.where(rng.random(n) < 1 / (1 + np.exp(-X @ theta)), 1.0, -1.0)
>>> res = propdp.PrivateGLM(model="logistic", lambda_=1.0, epsilon=8.0).fit(X, y, seed=1)
>>> res.conf_int(alpha=0.05).shape
(400, 2)
>>> bool(res.privacy.epsilon <= 8.0)
True

The estimate's law is θ̂ ≈ α·θ* + σ_eff·Z per coordinate (rows N(0, I/d));
the interval is centred at θ̂/α̂ — not at θ̂, whose private Wald interval
misses α ≠ 1 — and its width carries the error of α̂. Every statistic the
nuisances need is released privately and charged: the reported ε covers
everything.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

import numpy as np

from . import _args
from ._native import ConfigError, InferenceRefused, infer


@dataclass(frozen=True)
class InferencePrivacy:
    """What a private fit certifies: ``epsilon`` (the accountant's certified
    upper bound for everything released), ``epsilon_lower`` (its lower bound),
    ``delta``, the ``neighbouring`` relation, the list of ``releases``, and
    the ridge the estimator was fitted at, ``lambda_`` = λ + ``extra_ridge``
    (objective perturbation's extra ridge Δ where its floor exceeded half of
    ε; 0 otherwise)."""

    epsilon: float
    epsilon_lower: float
    delta: float
    neighbouring: str
    releases: List[str]
    extra_ridge: float
    lambda_: float


class PrivateGLMResults:
    """A private fit: ``params`` (the released θ̂), ``params_debiased``
    (θ̂/α̂), ``bse`` (standard errors of the debiased estimate),
    ``conf_int(alpha)``, ``contrast(a, alpha)``, ``test_error_int(alpha)``
    (with rows held out of the fit), ``nuisance`` (α̂, σ̂_eff, ŝ² with their
    errors), ``privacy``, ``rows`` and ``summary()``. Nothing in it is an
    exact statistic of the private rows but through a charged release:
    ``rows`` holds the rows' mean shrink by the projection (released) and,
    under add/remove, their count (``n`` is then the released count; under
    replace-one n is public); the noise's seed is never kept."""

    def __init__(self, fitted: Any):
        self._fitted = fitted
        report = json.loads(fitted.report())
        self._report: Dict[str, Any] = report
        self.params = np.asarray(fitted.params)
        self.params_debiased = np.asarray(fitted.params_debiased)
        self.bse = np.asarray(fitted.bse)
        self.nuisance: Dict[str, Any] = dict(report["nuisance"])
        if report.get("residuals"):
            self.nuisance["residuals"] = report["residuals"]
        p = report["privacy"]
        self.privacy = InferencePrivacy(
            epsilon=p["epsilon"],
            epsilon_lower=p["epsilon_lower"],
            delta=p["delta"],
            neighbouring=p["neighbouring"],
            releases=list(p["releases"]),
            extra_ridge=p["extra_ridge"],
            lambda_=p["lambda"],
        )
        self.noise: float = report["noise"]
        self.n: int = report["n"]
        self.d: int = report["d"]
        self.rows: Dict[str, float] = dict(report["rows"])
        self.test_error: Optional[Dict[str, Any]] = report.get("test_error")

    def conf_int(self, alpha: float = 0.05) -> np.ndarray:
        """The (1 − alpha) interval of every θ*_j, shape (d, 2): lower, upper."""
        return np.asarray(self._fitted.conf_int(alpha))

    def contrast(self, a: Any, alpha: float = 0.05) -> Dict[str, float]:
        """The (1 − alpha) interval of ⟨a, θ*⟩: estimate, se, lower, upper.
        A contrast aligned with θ* carries α̂'s error (delta method)."""
        est, se, lo, hi = self._fitted.contrast(np.asarray(a, dtype=float).ravel().tolist(), alpha)
        return {"estimate": est, "se": se, "lower": lo, "upper": hi}

    def test_error_int(self, alpha: float = 0.05) -> Dict[str, Any]:
        """The (1 − alpha) interval of θ̂'s population test error — the
        misclassification rate (logistic) or the squared error clipped at
        ``test_clip`` (Huber) a fresh row would show — from the rows held
        out of the fit (``PrivateGLM(holdout=...)``, released privately and
        charged): estimate, se, lower, upper, metric and held-out rows."""
        est, se, lo, hi = self._fitted.test_error_int(alpha)
        t = self.test_error or {}
        return {
            "estimate": est,
            "se": se,
            "lower": lo,
            "upper": hi,
            "metric": t.get("metric", {}).get("metric"),
            "rows": t.get("rows"),
        }

    def summary(self, alpha: float = 0.05, rows: int = 10) -> str:
        """A text summary: settings, privacy, nuisances and the first intervals."""
        s = self._report["spec"]
        nu = self.nuisance
        ci = self.conf_int(alpha)
        how = {"objective": "objective perturbation", "output": "output perturbation", "dpsgd": "DP-SGD"}
        model = "logistic regression" if s["model"]["model"] == "logistic" else f"Huber regression (M = {s['model']['m']})"
        approx = "~" if self.rows["fitted_sd"] > 0 else "="
        lines = [
            f"PrivateGLM: {model} by {how[s['release']]}, lambda = {s['lambda']}, "
            f"n {approx} {self.n}, d = {self.d} (d/n = {self.d / self.n:.3f})",
            f"privacy: epsilon <= {self.privacy.epsilon:.4f} (lower bound {self.privacy.epsilon_lower:.4f}), "
            f"delta = {self.privacy.delta:g}, {self.privacy.neighbouring}",
        ]
        lines += [f"  released: {r}" for r in self.privacy.releases]
        lines += [
            f"rows projected onto ||x|| <= {s['row_norm']}: shrunk by {100 * self.rows['shrink']:.2f}% on average "
            f"(released, noise sd {100 * self.rows['shrink_sd']:.2f}%)",
            f"bias factor alpha = {nu['alpha']:.4f} (se {nu['alpha_se']:.4f}), sigma_eff = {nu['sigma_eff']:.4f}, "
            f"signal s2 = {nu['s2']:.4f}",
        ]
        if self.test_error is not None:
            t = self.test_error_int(alpha)
            lines.append(
                f"test error ({t['metric']}) on {t['rows']} held-out rows: {t['estimate']:.4f}, "
                f"{1 - alpha:g} interval [{t['lower']:.4f}, {t['upper']:.4f}]"
            )
        lines += [
            ("rows whitened by the public covariance (rows N(0, Sigma/d), penalty lambda/2 theta' Sigma theta)"
             if self._report.get("whitened") else "assumes: rows with isotropic covariance I/d")
            + f", no intercept; intervals per coordinate at level {1 - alpha:g}",
            f"{'j':>5} {'theta_hat':>11} {'debiased':>11} {'se':>9} {'lower':>11} {'upper':>11}",
        ]
        for j in range(min(rows, self.d)):
            lines.append(
                f"{j:>5} {self.params[j]:>11.4f} {self.params_debiased[j]:>11.4f} {self.bse[j]:>9.4f} "
                f"{ci[j, 0]:>11.4f} {ci[j, 1]:>11.4f}"
            )
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"PrivateGLMResults(d={self.d}, n={self.n}, alpha={self.nuisance['alpha']:.4f}, "
            f"epsilon<={self.privacy.epsilon:.4f}, {self.privacy.neighbouring})"
        )


class PrivateGLM:
    """A logistic (``model="logistic"``, labels ±1 or 0/1) or Huber
    (``model="huber"``, threshold ``huber_m``) regression with ridge
    ``lambda_``, fitted by objective or output perturbation at budget
    (``epsilon``, ``delta_priv``) under ``neighbouring`` ("replace_one" or
    "add_remove_one"). Rows with ‖x‖ > ``row_norm`` are projected onto that
    ball (the mechanism's sensitivity needs the bound). For Huber, ``noise``
    (a dict such as ``{"law": "student_t", "dof": 3, "scale": 0.5}``, the
    config's spelling) gives the label noise's law if known: then nothing but
    θ̂ is released; without it two residual statistics are released too (for
    output perturbation de-blurred from the residuals at the released θ̂). ``holdout`` (0 ≤ h
    < 1) holds that share of the rows out of the fit and releases θ̂'s test
    error on them (``test_error_int``), composing in parallel with the fit;
    for Huber the squared error is clipped at ``test_clip`` (default
    (3·huber_m)²). ``covariance`` (a d × d array) is a public feature
    covariance Σ of rows N(0, Σ/d): the rows are whitened by it, the fit
    made there (its penalty is then (λ/2)θᵀΣθ) and every interval for θ*
    read as a contrast of the whitened fit; without it the rows are assumed
    isotropic. ``algorithm="dpsgd"`` releases ``steps`` steps of DP-SGD
    from θ₀ = 0 (step size ``eta`` on the summed gradient, Poisson
    ``sample_rate``, default 1: full-batch DP-GD; per-example ``clip``,
    default none) with its noise calibrated to the budget; its bias factor
    and effective noise come from the state evolution, whose RQMC error is
    carried into the intervals (slower: the curve is solved 30–60 times).
    ``extra_ridge``: where objective perturbation's floor 2·log(1 + βR²/λ)
    (add/remove: log(1 + βR²/λ)) exceeds half of ε, ``"auto"`` (the
    standard algorithm) adds the extra ridge Δ that brings it to ε/2 and
    spends the other half on the noise — the fit, its theory and its
    debiasing are at λ + Δ, reported in ``privacy.extra_ridge`` and
    ``privacy.lambda`` — and ``"refuse"`` keeps λ and refuses such an ε."""

    def __init__(
        self,
        model: str = "logistic",
        algorithm: str = "objective",
        lambda_: float = 1.0,
        epsilon: float = 1.0,
        delta_priv: float = 1e-6,
        neighbouring: str = _args.DEFAULT_NEIGHBOURING,
        row_norm: float = 1.0,
        huber_m: float = 1.0,
        noise: Optional[Dict[str, Any]] = None,
        holdout: float = 0.0,
        test_clip: Optional[float] = None,
        covariance: Any = None,
        steps: Optional[int] = None,
        eta: Optional[float] = None,
        sample_rate: Optional[float] = None,
        clip: Optional[float] = None,
        extra_ridge: str = "auto",
    ):
        self.model = model
        self.algorithm = algorithm
        self.lambda_ = lambda_
        self.epsilon = epsilon
        self.delta_priv = delta_priv
        self.neighbouring = neighbouring
        self.row_norm = row_norm
        self.huber_m = huber_m
        self.noise = noise
        self.holdout = holdout
        self.test_clip = test_clip
        self.covariance = covariance
        self.steps = steps
        self.eta = eta
        self.sample_rate = sample_rate
        self.clip = clip
        self.extra_ridge = extra_ridge

    def fit(self, X: Any, y: Any, seed: Optional[int] = None) -> PrivateGLMResults:
        """Fit privately to rows ``X`` (n × d) and labels ``y`` (n); ``seed``
        fixes the privacy noise (None: fresh randomness). The seed is never part of
        the result: anyone holding it regenerates the noise and subtracts it, so
        keep a seed you pass secret."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        y = np.ascontiguousarray(y, dtype=np.float64).ravel()
        if X.ndim != 2:
            raise ConfigError(f"`X` must be a 2-d array (n rows × d features); got shape {X.shape}")
        n, d = X.shape
        cov = None
        if self.covariance is not None:
            cov = np.ascontiguousarray(self.covariance, dtype=np.float64)
            if cov.shape != (d, d):
                raise ConfigError(f"`covariance` must be {d} × {d} (one row and column per feature); got shape {cov.shape}")
            cov = cov.tobytes()
        fitted = infer(
            X.tobytes(),
            n,
            d,
            y.tobytes(),
            model=self.model,
            algorithm=self.algorithm,
            lambda_=float(self.lambda_),
            epsilon=float(self.epsilon),
            delta_priv=float(self.delta_priv),
            neighbouring=self.neighbouring,
            row_norm=float(self.row_norm),
            huber_m=float(self.huber_m),
            seed=seed,
            noise=None if self.noise is None else json.dumps(self.noise),
            holdout=float(self.holdout),
            test_clip=None if self.test_clip is None else float(self.test_clip),
            covariance=cov,
            steps=None if self.steps is None else int(self.steps),
            eta=None if self.eta is None else float(self.eta),
            sample_rate=None if self.sample_rate is None else float(self.sample_rate),
            clip=None if self.clip is None else float(self.clip),
            extra_ridge=self.extra_ridge,
        )
        return PrivateGLMResults(fitted)

    def __repr__(self) -> str:
        return (
            f"PrivateGLM(model={self.model!r}, algorithm={self.algorithm!r}, lambda_={self.lambda_}, "
            f"epsilon={self.epsilon}, delta_priv={self.delta_priv}, neighbouring={self.neighbouring!r}, "
            f"row_norm={self.row_norm}, huber_m={self.huber_m})"
        )
