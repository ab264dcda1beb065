"""The certified ε bracket of a DP-SGD schedule or of a ledger of Gaussian
releases, with the checks of δ and the relation every entry point of
:mod:`propdp.accounting` shares."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

from . import _args, _dp_event, _native
from ._config import config_error


@dataclass(frozen=True)
class Bracket:
    """A certified ε: the true ε of the accounting lies in [epsilon_lower, epsilon]."""

    epsilon: Optional[float]
    epsilon_lower: Optional[float]
    bracket_grid: Optional[float]
    bracket_reached: Optional[bool]
    #: The neighbouring relation: "replace-one" or "add/remove-one".
    neighbouring: str


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


def _relation(neighbouring: str) -> str:
    """The neighbouring relation's name (its spelling checked by the core)."""
    if not isinstance(neighbouring, str):
        allowed = " or ".join(repr(n) for n in _args.NEIGHBOURING)
        raise config_error(f"neighbouring = {_args.excerpt(neighbouring)} is invalid: allowed {allowed}", "neighbouring")
    return neighbouring


def _bracket(segments: Sequence[Tuple[float, float, int]], delta: float, neighbouring: str) -> Bracket:
    d = _native.accounting(_plan(segments), _delta(delta), _relation(neighbouring))
    return Bracket(**d, neighbouring=_args.relation_label(neighbouring))


@dataclass(frozen=True)
class _Plan:
    """What a ledger composes to: ``fixed`` (a non-private release: ∞;
    nothing: 0), or ``segments`` under ``relation`` (the native module's
    name), reported under ``label``."""

    fixed: Optional[float]
    segments: List[Tuple[float, float, int]]
    relation: str
    label: str


def _ledger_plan(ledger: _dp_event.Ledger, neighbouring: str) -> _Plan:
    """The one decision of whether and how a ledger of Gaussian releases is
    composed — :func:`propdp.accounting.from_dp_event`,
    ``CertifiedAccountant.compose``, ``.supports`` and its brackets all
    decide by it: one batch scheme per ledger, fixed-size batches under
    replace-one only, and the segments' ranges as the native accountant
    checks them before composing (``_native.check_plan``); a refusal
    raises ConfigError naming the field."""
    label = _args.relation_label(neighbouring)
    if ledger.non_private:
        return _Plan(float("inf"), [], neighbouring, label)
    if not ledger.poisson and not ledger.fixed_size:
        return _Plan(0.0, [], neighbouring, label)
    if not ledger.fixed_size:
        segments, relation = list(ledger.poisson), neighbouring
    else:
        # fixed-size batches (and full-batch releases) under replace-one: the
        # add/remove pair at z/2 dominates each, in both orders (docs/privacy.md
        # "Sampling schemes")
        if label != "replace-one":
            raise config_error(
                "neighbouring = add/remove-one is invalid with SampledWithoutReplacementDpEvent: sampling "
                "without replacement is accounted under replace-one (n is public), as dp_accounting does",
                "neighbouring",
            )
        mixed = [s for s in ledger.poisson if s[1] < 1.0]
        if mixed:
            raise config_error(
                "the events mix Poisson-sampled and without-replacement releases: propdp certifies one batch "
                f"scheme per ledger (Poisson segment {mixed[0]} beside fixed-size batches)",
                "event",
            )
        segments = [(z / 2, q, t) for z, q, t in ledger.fixed_size + ledger.poisson]
        relation = "add_remove_one"
    segments = _plan(segments)
    _native.check_plan(segments, _relation(relation))
    return _Plan(None, segments, relation, label)


def _ledger_bracket(ledger: _dp_event.Ledger, delta: float, neighbouring: str) -> Bracket:
    """The certified bracket of a ledger of Gaussian releases (:func:`_ledger_plan`)."""
    delta = _delta(delta)
    plan = _ledger_plan(ledger, neighbouring)
    if plan.fixed is not None:
        grid = None if math.isinf(plan.fixed) else 0.0
        return Bracket(plan.fixed, plan.fixed, grid, True, plan.label)
    b = _bracket(plan.segments, delta, plan.relation)
    return Bracket(b.epsilon, b.epsilon_lower, b.bracket_grid, b.bracket_reached, plan.label)


def _read(event: Any, count: int = 1, ledger: Optional[_dp_event.Ledger] = None) -> _dp_event.Ledger:
    ledger = ledger if ledger is not None else _dp_event.Ledger()
    try:
        _dp_event.read(event, count, ledger)
    except _dp_event.Unsupported as e:
        raise config_error(str(e), "event") from None
    return ledger
