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
from typing import Any, Dict, List, Mapping, Optional

import numpy as np

from . import _args, _native
from ._config import config_error, plain
from ._native import InferenceRefused, infer

#: The neighbouring relations' spellings the core takes.
_RELATIONS = ("replace_one", "add_remove_one", "replace-one", "add-remove-one", "add_remove")

#: Bytes of X passed to the core at a time.
_CHUNK = 1 << 22


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
        #: "proportional" (d ≥ 200: θ̂/α̂) or "classical" (d < 200, d/n ≤ 0.1: the
        #: sandwich around θ̂ for the ridge target, with an intercept)
        self.method: str = report["method"]
        self.nuisance: Dict[str, Any] = dict(report["nuisance"] or {})
        self.standardization: Optional[Dict[str, Any]] = report.get("standardization")
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
        #: the proportional fit's intercept, its field β̂ = c·b̂ (the shift of
        #: every xᵀθ̂); None without one (and for the classical interval: see
        #: ``intercept_int``)
        self.intercept: Optional[float] = report.get("intercept")

    def conf_int(self, alpha: float = 0.05) -> np.ndarray:
        """The (1 − alpha) interval of every θ*_j, shape (d, 2): lower, upper."""
        return np.asarray(self._fitted.conf_int(_args.real("alpha", alpha)))

    def contrast(self, a: Any, alpha: float = 0.05) -> Dict[str, float]:
        """The (1 − alpha) interval of ⟨a, θ*⟩: estimate, se, lower, upper.
        A contrast aligned with θ* carries α̂'s error (delta method)."""
        a = _args.real_array("a", a, max(np.ndim(a), 1)).astype(np.float64).ravel()
        est, se, lo, hi = self._fitted.contrast(a.tolist(), _args.real("alpha", alpha))
        return {"estimate": est, "se": se, "lower": lo, "upper": hi}

    def intercept_int(self, alpha: float = 0.05) -> Optional[Dict[str, float]]:
        """The classical interval's (1 − alpha) interval for the ridge
        target's intercept (estimate, se, lower, upper); None for the
        proportional interval, whose fitted intercept (``intercept``) has no
        interval: its intervals are for θ*."""
        c = self._fitted.intercept_int(_args.real("alpha", alpha))
        return None if c is None else dict(zip(("estimate", "se", "lower", "upper"), c))

    def test_error_int(self, alpha: float = 0.05) -> Dict[str, Any]:
        """The (1 − alpha) interval of θ̂'s population test error — the
        misclassification rate (logistic) or the squared error clipped at
        ``test_clip`` (Huber) a fresh row would show — from the rows held
        out of the fit (``PrivateGLM(holdout=...)``, released privately and
        charged): estimate, se, lower, upper, metric and held-out rows."""
        est, se, lo, hi = self._fitted.test_error_int(_args.real("alpha", alpha))
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
            f"n {approx} {self.n}, d = {self.d} (d/n = {self.d / self.n:.3f}); method: {self.method}",
            f"privacy: epsilon <= {self.privacy.epsilon:.4f} (lower bound {self.privacy.epsilon_lower:.4f}), "
            f"delta = {self.privacy.delta:g}, {self.privacy.neighbouring}",
        ]
        lines += [f"  released: {r}" for r in self.privacy.releases]
        if self.privacy.extra_ridge > 0:
            lines.append(f"  extra ridge {self.privacy.extra_ridge:.6f} (objective perturbation's floor exceeded half of "
                         f"epsilon): fitted at lambda + extra = {self.privacy.lambda_:.6f}")
        lines += [
            f"rows projected onto ||x|| <= {s['row_norm']}: shrunk by {100 * self.rows['shrink']:.2f}% on average "
            f"(released, noise sd {100 * self.rows['shrink_sd']:.2f}%)",
        ]
        if self.method == "classical":
            b = self.intercept_int(alpha) or {}
            lines.append(f"classical interval for the ridge target (theta*_lambda, not the model's theta*), "
                         f"intercept {b['estimate']:.4f} [{b['lower']:.4f}, {b['upper']:.4f}]")
        else:
            lines.append(f"bias factor alpha = {nu['alpha']:.4f} (se {nu['alpha_se']:.4f}), "
                         f"sigma_eff = {nu['sigma_eff']:.4f}, signal s2 = {nu['s2']:.4f}")
        if self.standardization is not None:
            lines.append("columns standardised by released means and scales (coefficients per released sd)")
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
            f"PrivateGLMResults(d={self.d}, n={self.n}, method={self.method!r}, "
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
    ``privacy.lambda`` — and ``"refuse"`` keeps λ and refuses such an ε.
    ``standardize=True`` clips, centres and scales each column by released
    means and standard deviations (charged) before the projection.
    ``intercept`` fits a constant feature (default: ``True`` for logistic,
    whose labels are rarely balanced, ``False`` for Huber; not for Huber
    DP-SGD); without one, logistic labels whose released mean is off 0 are
    refused (``unbalanced_labels``). Below
    d = 200 features and at d/n ≤ 0.1 the result is the classical private
    interval (``method == "classical"``, with ``intercept_int``) for the
    ridge target θ*_λ; a λ below what its released Hessian needs is refused
    (``noisy_hessian``, naming it; docs/inference.md)."""

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
        standardize: bool = False,
        intercept: Optional[bool] = None,
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
        self.standardize = standardize
        self.intercept = intercept
        self._settings()

    def _settings(self) -> Dict[str, Any]:
        """Every keyword checked by the one argument checker
        (:mod:`propdp._args`): a string, a bool or ``None`` where a number is
        required, a non-integer ``steps``, a name not allowed raise
        ConfigError naming the keyword (ranges are the core's to check).
        Checked when made and again at :meth:`fit`, as the attributes may
        have been set since."""
        if self.noise is not None and not isinstance(self.noise, Mapping):
            raise config_error(
                f"noise = {_args.excerpt(self.noise)} is invalid: allowed None or a dict such as "
                "{'law': 'student_t', 'dof': 3, 'scale': 0.5}",
                "noise",
            )
        if self.covariance is not None:
            _args.real_array("covariance", self.covariance, 2)
        return dict(
            model=_args.choice("model", self.model, ("logistic", "huber")),
            algorithm=_args.choice("algorithm", self.algorithm, ("objective", "output", "dpsgd")),
            lambda_=_args.real("lambda_", self.lambda_),
            epsilon=_args.real("epsilon", self.epsilon),
            delta_priv=_args.real("delta_priv", self.delta_priv),
            neighbouring=_args.choice("neighbouring", self.neighbouring, _RELATIONS, _args.NEIGHBOURING),
            row_norm=_args.real("row_norm", self.row_norm),
            huber_m=_args.real("huber_m", self.huber_m),
            noise=None if self.noise is None else json.dumps(plain(self.noise)),
            holdout=_args.real("holdout", self.holdout),
            test_clip=_args.optional_real("test_clip", self.test_clip),
            steps=_args.optional_integer("steps", self.steps),
            eta=_args.optional_real("eta", self.eta),
            sample_rate=_args.optional_real("sample_rate", self.sample_rate),
            clip=_args.optional_real("clip", self.clip),
            extra_ridge=_args.choice("extra_ridge", self.extra_ridge, ("auto", "refuse")),
            standardize=_args.boolean("standardize", self.standardize),
            intercept=None if self.intercept is None else _args.boolean("intercept", self.intercept),
        )

    def fit(self, X: Any, y: Any, seed: Optional[int] = None) -> PrivateGLMResults:
        """Fit privately to rows ``X`` (n × d) and labels ``y`` (n); ``seed``
        fixes the privacy noise (None: fresh randomness). The seed is never part of
        the result: anyone holding it regenerates the noise and subtracts it, so
        keep a seed you pass secret.

        ``X`` and ``y`` are arrays of real numbers (integers or floats; a
        complex, bool, object or string array is refused naming it). They
        reach the core a chunk of rows at a time, into one buffer reserved
        first: the fit holds X and one copy of it at the peak, and a buffer
        the machine cannot give raises ``MemoryError`` before any work."""
        settings = self._settings()
        X = _args.real_array("X", X, 2)
        n, d = X.shape
        y = _args.real_array("y", y, 2 if np.ndim(y) == 2 else 1)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        if y.shape != (n,):
            raise config_error(f"y has shape {y.shape}: allowed one label per row of X, shape ({n},)", "y")
        seed = _args.optional_integer("seed", seed, minimum=0)
        cov = None
        if self.covariance is not None:
            c = _args.real_array("covariance", self.covariance, 2)
            if c.shape != (d, d):
                raise config_error(
                    f"covariance has shape {c.shape}: allowed {d} × {d} (one row and column per feature)", "covariance"
                )
            cov = np.ascontiguousarray(c, dtype=np.float64).tobytes()
        rows = _native.Rows(n, d)
        step = max(1, _CHUNK // (8 * max(d, 1)))
        for i in range(0, n, step):
            rows.push(
                np.ascontiguousarray(X[i : i + step], dtype=np.float64).tobytes(),
                np.ascontiguousarray(y[i : i + step], dtype=np.float64).tobytes(),
            )
        fitted = infer(rows, seed=seed, covariance=cov, **settings)
        return PrivateGLMResults(fitted)

    def __repr__(self) -> str:
        return (
            f"PrivateGLM(model={self.model!r}, algorithm={self.algorithm!r}, lambda_={self.lambda_}, "
            f"epsilon={self.epsilon}, delta_priv={self.delta_priv}, neighbouring={self.neighbouring!r}, "
            f"row_norm={self.row_norm}, huber_m={self.huber_m})"
        )
