"""Which noise for one DP-SGD problem (``propdp mechanism``): DP-SGD against
BandMF in cyclic groups and a BLT in the fixed order, each σ calibrated to
the same (ε, δ), ranked by propdp's predicted metric
(docs/correlated_noise.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from . import _native
from ._config import ConfigLike, config_error, plain, resolve
from ._progress import ProgressLike, callback


@dataclass(frozen=True)
class Candidate:
    """One mechanism at the budget: ``origin`` ("dpsgd", "prefix_sum",
    "optimized" or "blt"), ``groups`` G, ``sample_rate`` p inside the
    eligible group (q·G; 1 for a BLT, in the fixed order), the strategy's
    ``coefficients`` (‖c‖ = 1; a BLT's first T), a BLT's ``blt``
    (``buf_decay``, ``output_scale``; None when banded), the step size
    ``eta`` (the config's), the calibrated ``sigma`` on the summed clipped
    gradient, its certified ``epsilon``, and the ``metric`` ``predicted`` at
    step T with its ``stderr``."""

    origin: str
    groups: int
    sample_rate: float
    coefficients: List[float]
    blt: Optional[Dict[str, List[float]]]
    eta: Optional[float]
    sigma: float
    epsilon: float
    metric: str
    predicted: float
    stderr: float


@dataclass(frozen=True)
class Mechanism:
    """The ``best`` candidate, every candidate tried, the budget's
    ``neighbouring`` relation, ``clip`` C (noise multipliers are σ/C) and the
    best run in jax_privacy's names as the command line gives it (None
    without a clip)."""

    best: Candidate
    candidates: List[Candidate]
    neighbouring: str
    clip: Optional[float]
    jax_privacy: Optional[Dict[str, Any]]

    def to_jax_privacy(self) -> Dict[str, Any]:
        """The best run in jax_privacy's conventions: ``noise_multiplier``
        (σ/C), ``sampling_prob`` (p), ``num_bands`` (G, the groups of
        amplified BandMF) and the strategy's ``coefficients``; for a BLT
        ``min_sep`` (G), ``buf_decay`` and ``output_scale``, and the noise
        multiplier of the stream's one Gaussian release (σ over C times the
        strategy's sensitivity). Without a clip, C = 1."""
        if self.jax_privacy is not None:
            return dict(self.jax_privacy)
        if self.best.blt is not None:
            raise ValueError("a BLT's noise multiplier needs the clip C: the problem has none")
        return {
            "noise_multiplier": self.best.sigma,
            "sampling_prob": self.best.sample_rate,
            "num_bands": self.best.groups,
            "coefficients": list(self.best.coefficients),
        }


def mechanism(
    config: Optional[ConfigLike] = None,
    *,
    epsilon: float,
    delta_priv: float = 1e-6,
    metric: Optional[str] = None,
    model: Optional[str] = None,
    solver: Optional[Dict[str, Any]] = None,
    progress: ProgressLike = True,
    **params: Any,
) -> Mechanism:
    """The best noise for one DP-SGD problem at (``epsilon``, ``delta_priv``):
    a ``config`` (a path, TOML text or a dict with one DP-SGD point), or
    ``model`` and its ``[problem]``/``[algorithm]`` keywords (``delta``,
    ``s2``, ``lambda_``, ``eta``, ``steps``, ``sample_rate`` = the expected
    batch fraction, ``clip``; a ``sigma`` is replaced by the calibration).
    The relation is ``neighbouring`` (the config's), by default
    "add_remove_one" (amplified BandMF's, jax_privacy's and
    dp_accounting's). ``metric`` defaults to est_err2 (regression) or
    test_class_err (logistic). Raises :class:`propdp.ConfigError` naming a
    bad argument."""
    if (config is None) == (model is None):
        raise config_error("give a config or model= and its keywords (not both)", "config")
    cfg = None
    if config is not None:
        if params:
            raise config_error(f"{sorted(params)[0]} applies to keywords without a config: put it in the config",
                               sorted(params)[0])
        cfg, _ = resolve(config)
    text = _native.mechanism(cfg, model, float(epsilon), float(delta_priv), metric, solver, callback(progress),
                             **plain(params))
    d = json.loads(text)
    candidates = [Candidate(**c) for c in d["candidates"]]
    best = Candidate(**d["best"])
    return Mechanism(best=best, candidates=candidates, neighbouring=d["neighbouring"], clip=d["clip"],
                     jax_privacy=d["jax_privacy"])
