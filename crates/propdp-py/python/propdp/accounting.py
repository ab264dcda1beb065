"""DP-SGD privacy accounting with a certified two-sided ε (``propdp-accountant``).

Every ε comes as a bracket: ``epsilon`` is an upper bound (the guarantee to
state), ``epsilon_lower`` a lower bound on the same accounting, refined until
the bracket is 0.1% wide or a memory limit is hit (``bracket_reached`` says
which). Arguments use the names practitioners already use —
``noise_multiplier`` (σ/C), ``sample_rate`` (Poisson rate q), ``steps``,
``delta`` — and :class:`Accountant` has the shape of Opacus' accountants, so a
training loop can call it after every optimiser step::

    from propdp.accounting import Accountant
    acc = Accountant()
    for batch in loader:
        ...                      # optimizer.step()
        acc.step(noise_multiplier=1.1, sample_rate=0.004)
    acc.get_epsilon(delta=1e-5)  # certified upper bound
    acc.get_epsilon_bracket(delta=1e-5)  # (lower, upper)

The neighbouring relation is replace-one by default, as everywhere in
propdp (the command line, configs, :func:`propdp.privacy`): a replaced
example is accounted on its tight pair (1 − q)N(0, z²) + qN(∓1, z²), as
dp-accounting's REPLACE_ONE does. Opacus and dp-accounting default to
add/remove-one (sensitivity C, the smaller ε): pass
``neighbouring="add_remove_one"`` for their numbers (docs/privacy.md). Every
result names its relation.

Every figure here is the Rust accountant's: its one ``epsilon`` of an event
and its one ``calibrate`` of a knob of one (docs/privacy.md, "The
accountant"). An event is built from :class:`GaussianEvent`,
:class:`PoissonSampledEvent`, :class:`SelfComposedEvent`,
:class:`ComposedEvent` and :class:`ObjectiveEvent` (dp_accounting's
``DpEvent`` shapes; :func:`from_dp_event` reads those), and
:func:`epsilon` is its certified bracket::

    from propdp.accounting import GaussianEvent, ComposedEvent, dpsgd_event, epsilon
    epsilon(GaussianEvent(1.1).poisson(0.004).repeat(1500), 1e-5)   # one DP-SGD run
    epsilon(dpsgd_event(1.1, 0.004, 1500), 1e-5)                     # the same event
    epsilon(ComposedEvent([dpsgd_event(1.0, 0.02, 300), dpsgd_event(2.0, 0.02, 200)]), 1e-5)
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

from . import _args, _native
from ._bracket import (
    Bracket,
    ComposedEvent,
    Event,
    GaussianEvent,
    ObjectiveEvent,
    PoissonSampledEvent,
    SelfComposedEvent,
    _delta,
    _plan,
    _relation,
    dpsgd_event,
    epsilon,
)
from ._config import config_error
from ._dp_accounting import CertifiedAccountant, from_dp_event

__all__ = [
    "Accountant",
    "Bracket",
    "Calibration",
    "CertifiedAccountant",
    "ComposedEvent",
    "Event",
    "GaussianEvent",
    "MembershipInference",
    "ObjectiveEvent",
    "PoissonSampledEvent",
    "SelfComposedEvent",
    "calibrate",
    "calibrate_batch_size",
    "calibrate_noise_multiplier",
    "calibrate_num_updates",
    "dpsgd_event",
    "epsilon",
    "from_dp_event",
    "membership_inference",
]


@dataclass(frozen=True)
class Calibration:
    """A calibrated DP-SGD run and its guarantee read back: ``epsilon`` (the
    certified upper end, never above the target) and ``epsilon_lower`` for an
    (ε, δ) target (``None`` for ρ), the run's zCDP ``rho``, and how many
    certified brackets the search evaluated."""

    noise_multiplier: float
    sample_rate: float
    steps: int
    epsilon: Optional[float]
    epsilon_lower: Optional[float]
    bracket_grid: Optional[float]
    bracket_reached: Optional[bool]
    rho: float
    evaluations: int


_KNOBS = ("noise_multiplier", "steps", "sample_rate")


def calibrate(
    knob: str,
    *,
    noise_multiplier: Optional[float] = None,
    sample_rate: Optional[float] = None,
    steps: Optional[int] = None,
    epsilon: Optional[float] = None,
    delta: Optional[float] = None,
    rho: Optional[float] = None,
    neighbouring: str = _args.DEFAULT_NEIGHBOURING,
) -> Calibration:
    """The smallest ``noise_multiplier``, or the most ``steps``, or the
    largest ``sample_rate`` meeting (``epsilon``, ``delta``) or ``rho``, the
    other two knobs given (the calibrated one left out). Searched on the
    certified ε, so the ε read back is never above the target::

        c = calibrate("noise_multiplier", sample_rate=0.004, steps=10_000, epsilon=1.0, delta=1e-5)
        assert c.epsilon <= 1.0

    A target no value meets raises :class:`propdp.ConfigError` naming it."""
    if knob not in _KNOBS:
        raise config_error(f"knob = {_args.excerpt(knob)} is invalid: allowed {', '.join(map(repr, _KNOBS))}", "knob")
    given = {"noise_multiplier": noise_multiplier, "sample_rate": sample_rate, "steps": steps}
    if given[knob] is not None:
        raise config_error(f"{knob} is given: it is what calibrate({knob!r}) solves for; leave it out", knob)
    for name, value in given.items():
        if name != knob and value is None:
            raise config_error(f"{name} is required to calibrate {knob}", name)
    noise_multiplier = _args.optional_real("noise_multiplier", noise_multiplier)
    sample_rate = _args.optional_real("sample_rate", sample_rate)
    steps = _args.optional_integer("steps", steps)
    d = _native.calibrate_run(
        knob,
        1.0 if noise_multiplier is None else noise_multiplier,
        1.0 if sample_rate is None else sample_rate,
        1 if steps is None else steps,
        _args.optional_real("epsilon", epsilon),
        None if delta is None else _delta(delta),
        _args.optional_real("rho", rho),
        _relation(neighbouring),
    )
    return Calibration(**d)


@dataclass(frozen=True)
class MembershipInference:
    """What a DP-SGD guarantee means for membership inference: at each false
    positive rate in ``fpr``, ``tpr_upper`` is the largest true positive rate
    any attack reaches (from the certified privacy profile; exact at
    ``sample_rate`` 1). ``mu`` is the μ-GDP reading — exact when
    ``mu_exact``, else the central-limit approximation (not a bound);
    ``None`` for a schedule of several subsampled segments."""

    fpr: List[float]
    tpr_upper: List[float]
    mu: Optional[float]
    mu_exact: Optional[bool]


def membership_inference(
    noise_multiplier: Optional[float] = None,
    sample_rate: Optional[float] = None,
    steps: Optional[int] = None,
    *,
    segments: Optional[Sequence[Tuple[float, float, int]]] = None,
    fpr: Sequence[float] = (1e-5, 1e-4, 1e-3, 1e-2, 1e-1),
    neighbouring: str = _args.DEFAULT_NEIGHBOURING,
) -> MembershipInference:
    """The largest TPR of any membership-inference attack at each FPR, for
    ``steps`` steps at (``noise_multiplier``, ``sample_rate``) or a schedule
    of ``segments``::

        m = membership_inference(1.0, 0.01, 1000, fpr=[0.001])
        m.tpr_upper[0]   # ≤ 0.0041: no attack does better at FPR 0.1%

    Arguments out of range raise :class:`propdp.ConfigError` naming them."""
    if segments is None:
        run = {"noise_multiplier": noise_multiplier, "sample_rate": sample_rate, "steps": steps}
        for name, value in run.items():
            if value is None:
                raise config_error(f"{name} is required (or give segments)", name)
        segments = [(noise_multiplier, sample_rate, steps)]
    elif any(v is not None for v in (noise_multiplier, sample_rate, steps)):
        raise config_error("segments is given: leave out noise_multiplier, sample_rate and steps", "segments")
    if isinstance(fpr, (str, bytes)) or not isinstance(fpr, Sequence):
        raise config_error(f"fpr = {_args.excerpt(fpr)} is invalid: allowed a list of rates in (0, 1)", "fpr")
    rates = [_args.real(f"fpr[{i}]", a, "a rate in (0, 1)") for i, a in enumerate(fpr)]
    d = _native.membership_run(_plan(segments), rates, _relation(neighbouring))
    return MembershipInference(**d)


class Accountant:
    """An accountant with Opacus' shape: :meth:`step` after each optimiser
    step, :meth:`get_epsilon` for the guarantee so far, ``history`` as a list
    of ``(noise_multiplier, sample_rate, steps)`` (consecutive equal steps
    merged), and ``objectives``, the objective-perturbation releases of
    :meth:`objective` as ``(lipschitz, curvature, radius, lambda_, sigma)``.
    Both can be saved (they are plain data) and extended later."""

    def __init__(
        self,
        history: Optional[List[Tuple[float, float, int]]] = None,
        neighbouring: str = _args.DEFAULT_NEIGHBOURING,
        objectives: Optional[List[Tuple[float, float, float, float, float]]] = None,
    ):
        self.history: List[Tuple[float, float, int]] = _args.segments("history", history) if history else []
        self.neighbouring = _relation(neighbouring)
        self.objectives: List[Tuple[float, float, float, float, float]] = []
        shape = "(lipschitz, curvature, radius, lambda_, sigma)"
        if objectives is not None and (isinstance(objectives, (str, bytes)) or not isinstance(objectives, Sequence)):
            raise config_error(
                f"objectives = {_args.excerpt(objectives)} is invalid: allowed a list of {shape} tuples", "objectives"
            )
        for i, o in enumerate(objectives or []):
            if isinstance(o, (str, bytes)) or not isinstance(o, Sequence) or len(o) != 5:
                raise config_error(
                    f"objectives[{i}] = {_args.excerpt(o)} is invalid: allowed a {shape} tuple", f"objectives[{i}]"
                )
            lipschitz, curvature, radius, lambda_, sigma = o
            self.objective(lipschitz=lipschitz, curvature=curvature, lambda_=lambda_, sigma=sigma, radius=radius)

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Record one step at ``noise_multiplier`` (σ/C) and ``sample_rate`` (q)."""
        noise_multiplier = _args.real("noise_multiplier", noise_multiplier)
        sample_rate = _args.real("sample_rate", sample_rate)
        if self.history and self.history[-1][:2] == (noise_multiplier, sample_rate):
            z, q, t = self.history[-1]
            self.history[-1] = (z, q, t + 1)
        else:
            self.history.append((noise_multiplier, sample_rate, 1))

    def gaussian(self, *, noise_multiplier: float, count: int = 1) -> None:
        """Record ``count`` releases of a Gaussian mechanism in the same
        ledger: a DP-GD run (``count`` = its steps), output perturbation, or
        a statistic published beside the model. ``noise_multiplier`` is σ/Δ
        with Δ the add/remove-one sensitivity (μ = 1/noise_multiplier per
        release; replace-one doubles Δ, as for DP-SGD). Each release is a
        full-batch step (sample rate 1), composed with the subsampled steps
        in one certified bracket; at rate 1 throughout the bracket is the
        exact Gaussian ε."""
        count = _args.integer("count", count)
        noise_multiplier = _args.real("noise_multiplier", noise_multiplier)
        if self.history and self.history[-1][:2] == (noise_multiplier, 1.0):
            z, q, t = self.history[-1]
            self.history[-1] = (z, q, t + count)
        else:
            self.history.append((noise_multiplier, 1.0, count))

    def objective(self, *, lipschitz: float, curvature: float, lambda_: float, sigma: float, radius: float = 1.0) -> None:
        """Record one model released by objective perturbation in the same
        ledger: the loss's Lipschitz constant L and curvature bound β (a
        logistic loss: L = 1, β = 1/4; Huber at M: L = M, β = 1), the ridge
        λ and the noise σ of the perturbation, and the row norm bound R
        (‖x‖ ≤ R; 1, as propdp's models assume). Its privacy loss is at most c + A|Z|, c = log(1 + βR²/λ)
        + A²/2, A = LR/σ; that bound enters the certified composition as
        its own privacy-loss distribution (under replace-one, the convex
        hull of group privacy of size 2 on it). Arguments out of range raise
        :class:`propdp.ConfigError` naming them, and so does
        :meth:`get_epsilon` for a release whose loss is too wide for the
        accountant's point budget (a huge L/σ: its ``a`` by its place in
        :meth:`event`, ``events[1].a``, saying what to change). One release alone is its closed form."""
        release = ObjectiveEvent(lipschitz, curvature, lambda_, sigma, radius)
        self.objectives.append(release.parameters)

    def __len__(self) -> int:
        return sum(t for _, _, t in self.history) + len(self.objectives)

    def mechanism(self) -> str:
        """The accountant's name, as Opacus' accountants report theirs."""
        return "propdp_pld_bracket"

    def get_epsilon_bracket(self, delta: float) -> Bracket:
        """The certified bracket of every step so far at ``delta`` (with
        nothing recorded yet: ε = 0, once ``delta`` and the relation are
        checked)."""
        delta = _delta(delta)
        _relation(self.neighbouring)
        if not self.history and not self.objectives:
            if self.neighbouring not in _args.NEIGHBOURING + ("add-remove-one", "replace-one"):
                allowed = " or ".join(repr(n) for n in _args.NEIGHBOURING)
                raise config_error(f"neighbouring = {_args.excerpt(self.neighbouring)} is invalid: allowed {allowed}",
                                   "neighbouring")
            return Bracket(0.0, 0.0, 0.0, True, _args.relation_label(self.neighbouring))
        return epsilon(self.event(), delta, self.neighbouring)

    def event(self) -> ComposedEvent:
        """Everything recorded as one event: the DP-SGD segments of
        ``history`` in order, then the objective releases."""
        runs = [dpsgd_event(z, q, t) for z, q, t in self.history]
        releases = [ObjectiveEvent(l, beta, lam, sigma, r) for l, beta, r, lam, sigma in self.objectives]
        return ComposedEvent(runs + releases)

    def get_epsilon(self, delta: float) -> float:
        """The certified upper bound on ε at ``delta`` (``inf`` when no finite ε reaches it)."""
        e = self.get_epsilon_bracket(delta).epsilon
        return float("inf") if e is None else e

    def state_dict(self) -> dict:
        """The accountant as plain data (Opacus' ``state_dict``): the history,
        the objective releases and the relation; :meth:`load_state_dict`
        restores it."""
        return {
            "history": list(self.history),
            "objectives": list(self.objectives),
            "neighbouring": self.neighbouring,
        }

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore what :meth:`state_dict` returned, each value checked."""
        fresh = Accountant(
            history=[tuple(s) for s in state_dict.get("history", [])],
            neighbouring=state_dict.get("neighbouring", _args.DEFAULT_NEIGHBOURING),
            objectives=[tuple(o) for o in state_dict.get("objectives", [])],
        )
        self.history, self.objectives, self.neighbouring = fresh.history, fresh.objectives, fresh.neighbouring

    def get_optimizer_hook_fn(self, sample_rate: float):
        """The hook Opacus' ``PrivacyEngine`` attaches to its ``DPOptimizer``:
        one :meth:`step` per optimiser step at the optimiser's noise
        multiplier and ``sample_rate`` × its accumulated iterations."""

        def hook_fn(optim: Any) -> None:
            self.step(
                noise_multiplier=optim.noise_multiplier,
                sample_rate=sample_rate * getattr(optim, "accumulated_iterations", 1),
            )

        return hook_fn


# --- jax_privacy's calibration vocabulary ------------------------------------


def _budget(target_epsilon: Any, target_delta: Any) -> dict:
    return {"epsilon": _args.real("target_epsilon", target_epsilon), "delta": _delta(target_delta)}


def _rate(batch_size: Any, num_samples: Any) -> float:
    b = _args.integer("batch_size", batch_size)
    n = _args.integer("num_samples", num_samples)
    if not 1 <= b <= n:
        raise config_error(f"batch_size = {_args.excerpt(batch_size)} is invalid: allowed 1 ≤ batch_size ≤ num_samples = {n}",
                           "batch_size")
    return b / n


def calibrate_noise_multiplier(
    *,
    target_epsilon: float,
    batch_size: int,
    num_updates: int,
    num_samples: int,
    target_delta: float,
    neighbouring: str = _args.DEFAULT_NEIGHBOURING,
) -> float:
    """The smallest noise multiplier whose certified ε after ``num_updates``
    Poisson-sampled steps of expected size ``batch_size`` out of
    ``num_samples`` is at most ``target_epsilon`` (jax_privacy's
    ``calibrate_noise_multiplier``); never over the target, within 0.1% of
    it in ε (:func:`calibrate`)."""
    return calibrate("noise_multiplier", sample_rate=_rate(batch_size, num_samples), steps=num_updates,
                     neighbouring=neighbouring, **_budget(target_epsilon, target_delta)).noise_multiplier


def calibrate_num_updates(
    *,
    target_epsilon: float,
    noise_multiplier: float,
    batch_size: int,
    num_samples: int,
    target_delta: float,
    neighbouring: str = _args.DEFAULT_NEIGHBOURING,
) -> int:
    """The most steps whose certified ε is at most ``target_epsilon``
    (jax_privacy's ``calibrate_num_updates``); one more step is over it."""
    return calibrate("steps", noise_multiplier=noise_multiplier, sample_rate=_rate(batch_size, num_samples),
                     neighbouring=neighbouring, **_budget(target_epsilon, target_delta)).steps


def calibrate_batch_size(
    *,
    target_epsilon: float,
    noise_multiplier: float,
    num_updates: int,
    num_samples: int,
    target_delta: float,
    neighbouring: str = _args.DEFAULT_NEIGHBOURING,
) -> int:
    """The largest expected batch size (Poisson rate batch_size/num_samples)
    whose certified ε after ``num_updates`` steps is at most
    ``target_epsilon`` (jax_privacy's ``calibrate_batch_size``), read back
    at the integer size returned."""
    n = _args.integer("num_samples", num_samples)
    c = calibrate("sample_rate", noise_multiplier=noise_multiplier, steps=num_updates, neighbouring=neighbouring,
                  **_budget(target_epsilon, target_delta))
    b = int(math.floor(c.sample_rate * n))
    budget = _budget(target_epsilon, target_delta)

    def over(b: int) -> bool:
        e = epsilon(dpsgd_event(noise_multiplier, b / n, num_updates), budget["delta"], neighbouring).epsilon
        return e is None or e > budget["epsilon"]

    while b >= 1 and over(b):
        b -= 1
    if b < 1:
        raise config_error(f"target_epsilon = {_args.excerpt(target_epsilon)} is invalid: not met even by a batch of 1 "
                           f"out of {n}", "target_epsilon")
    return b
