"""The certified ε bracket of a privacy event (:func:`epsilon`), the events
themselves (the native module's classes, re-exported by
:mod:`propdp.accounting`) and the checks of δ and the relation every entry
point of :mod:`propdp.accounting` shares."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

from . import _args, _native
from ._config import config_error

Event = _native.Event
GaussianEvent = _native.GaussianEvent
PoissonSampledEvent = _native.PoissonSampledEvent
SelfComposedEvent = _native.SelfComposedEvent
ComposedEvent = _native.ComposedEvent
ObjectiveEvent = _native.ObjectiveEvent
dpsgd_event = _native.dpsgd_event


#: dp_accounting's ``NeighboringRelation`` names, as propdp spells them.
_DP_ACCOUNTING = {"ADD_OR_REMOVE_ONE": "add_remove_one", "REPLACE_ONE": "replace_one"}


@dataclass(frozen=True)
class Bracket:
    """A certified ε: the true ε of the accounting lies in [epsilon_lower, epsilon]."""

    epsilon: Optional[float]
    epsilon_lower: Optional[float]
    bracket_grid: Optional[float]
    bracket_reached: Optional[bool]
    #: The neighbouring relation: "replace-one" or "add/remove-one".
    neighbouring: str


def epsilon(
    event: Event,
    delta: float,
    neighbouring: Any = _args.DEFAULT_NEIGHBOURING,
    *,
    sampling: str = "poisson",
) -> Bracket:
    """The certified ε at ``delta`` of a privacy ``event``: DP-SGD
    (:func:`dpsgd_event`, or ``GaussianEvent(z).poisson(q).repeat(T)``), a
    schedule or a ledger (:class:`ComposedEvent`), objective-perturbation
    releases (:class:`ObjectiveEvent`), or a dp_accounting event read by
    :func:`from_dp_event`::

        epsilon(dpsgd_event(1.0, 0.01, 1000), 1e-5)             # one run
        epsilon(ComposedEvent([dpsgd_event(1.0, 0.02, 300),
                               dpsgd_event(2.0, 0.02, 200)]), 1e-5)  # a schedule

    ``sampling`` says how the sampled steps' batches were drawn:
    "poisson" (each example independently with probability q: the
    certified bracket), "fixed_size" (b = q·n without replacement;
    replace-one only: the add/remove pair at z/2, both orders) or
    "shuffled" (a shuffle per epoch, each segment starting one; no
    amplification is known, so the exact ε of ⌈T/⌊1/q⌋⌉ Gaussian releases
    per segment — ``epsilon(event, delta)`` is the figure had they been
    Poisson-sampled). ``neighbouring`` is "replace_one" (the default) or
    "add_remove_one", or dp_accounting's ``NeighboringRelation``. A part
    out of range raises :class:`propdp.ConfigError` naming its path in the
    event (``events[1].event.sample_rate``; ``count``,
    ``noise_multiplier`` for the outermost event), as do a bad ``delta``,
    ``neighbouring`` or ``sampling``."""
    relation = _relation(neighbouring)
    if not isinstance(sampling, str):
        raise config_error(f"sampling = {_args.excerpt(sampling)} is invalid: allowed 'poisson', 'fixed_size' or "
                           "'shuffled'", "sampling")
    d = _native.epsilon(event, delta, relation, sampling)
    return Bracket(**d, neighbouring=_args.relation_label(relation))


def _plan(segments: Sequence[Tuple[float, float, int]]) -> List[Tuple[float, float, int]]:
    """The segments as the native module takes them, each value checked
    (:mod:`propdp._args`): a wrong kind raises ConfigError naming it."""
    return _args.segments("segments", segments)


def _delta(delta: float) -> float:
    """δ, a real number in (0, 1)."""
    d = _args.real("delta", delta, "0 < delta < 1")
    if not 0.0 < d < 1.0:
        raise config_error(f"delta = {_args.excerpt(delta)} is invalid: allowed 0 < delta < 1", "delta")
    return d


def _relation(neighbouring: Any) -> str:
    """The neighbouring relation's name (its spelling checked by the core);
    dp_accounting's ``NeighboringRelation`` is read by its ``name``."""
    name = getattr(neighbouring, "name", None)
    if isinstance(name, str) and name in _DP_ACCOUNTING:
        neighbouring = _DP_ACCOUNTING[name]
    if not isinstance(neighbouring, str):
        allowed = " or ".join(repr(n) for n in _args.NEIGHBOURING)
        raise config_error(f"neighbouring = {_args.excerpt(neighbouring)} is invalid: allowed {allowed}", "neighbouring")
    return neighbouring
