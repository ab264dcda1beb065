"""Google dp_accounting's vocabulary with propdp's certified bracket: a
``DpEvent`` read as propdp's event (:func:`from_dp_event`) and a drop-in
``PrivacyAccountant`` (:class:`CertifiedAccountant`), re-exported by
:mod:`propdp.accounting`."""
from __future__ import annotations

import math
from typing import Any, List

from . import _args, _native
from ._bracket import Bracket, ComposedEvent, Event, epsilon
from ._config import config_error


def from_dp_event(dp_event: Any) -> Event:
    """The propdp event of a Google dp_accounting event, read by its
    attributes — dp_accounting need not be installed: ``GaussianDpEvent``
    → :class:`GaussianEvent`, ``PoissonSampledDpEvent`` →
    :class:`PoissonSampledEvent`, ``SelfComposedDpEvent`` →
    :class:`SelfComposedEvent`, ``ComposedDpEvent`` → :class:`ComposedEvent`::

        event = dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(0.004, dp_accounting.GaussianDpEvent(0.6)), 10_000)
        accounting.epsilon(accounting.from_dp_event(event), 1e-5)   # as `propdp privacy --algorithm dpsgd …`

    Any other event (``NoOpDpEvent``, ``NonPrivateDpEvent``,
    ``SampledWithoutReplacementDpEvent``, ``LaplaceDpEvent``, …) raises
    :class:`propdp.ConfigError` naming its type and its path in the tree
    (``events[2]``). The values are checked when the event is accounted,
    once, a bad one named by the same path (``events[2].sample_rate``)."""
    return _native.from_dp_event(dp_event)


def relation(neighboring_relation: Any) -> str:
    """propdp's name of a relation given as dp_accounting's
    ``NeighboringRelation`` (by its ``name``) or as propdp's string."""
    name = getattr(neighboring_relation, "name", neighboring_relation)
    spelled = {
        "ADD_OR_REMOVE_ONE": "add_remove_one",
        "REPLACE_ONE": "replace_one",
        "add_remove_one": "add_remove_one",
        "add-remove-one": "add_remove_one",
        "replace_one": "replace_one",
        "replace-one": "replace_one",
    }
    if not isinstance(name, str) or name not in spelled:
        raise config_error(
            f"neighboring_relation = {_args.excerpt(neighboring_relation)} is invalid: allowed ADD_OR_REMOVE_ONE or "
            "REPLACE_ONE (dp_accounting's NeighboringRelation), or \"add_remove_one\", \"replace_one\"",
            "neighboring_relation",
        )
    return spelled[name]


class CertifiedAccountant:
    """dp_accounting's ``PrivacyAccountant`` with propdp's certified bracket:
    :meth:`supports`, :meth:`compose` (returns the accountant, so calls
    chain), :meth:`get_epsilon`, :meth:`get_delta`, and the bracket itself
    (:meth:`get_epsilon_bracket`). ``events`` holds what is composed, as
    propdp's events (:func:`from_dp_event`). ``neighboring_relation`` takes
    dp_accounting's ``NeighboringRelation`` (``ADD_OR_REMOVE_ONE``,
    ``REPLACE_ONE``) or propdp's strings; the default is propdp's one default,
    replace-one (dp_accounting's own is add/remove-one)."""

    def __init__(self, neighboring_relation: Any = _args.DEFAULT_NEIGHBOURING):
        self.neighbouring = relation(neighboring_relation)
        self.events: List[Event] = []

    def supports(self, event: Any) -> bool:
        """Whether :meth:`compose` takes ``event``: by the one decision
        :meth:`compose` and :func:`epsilon` make (the event's types and the
        ranges of its parts beside what is composed already)."""
        try:
            self._composed(event, 1)
        except ValueError:
            return False
        return True

    def compose(self, event: Any, count: int = 1) -> "CertifiedAccountant":
        """Add ``count`` compositions of ``event``; an event the accountant
        cannot compose beside what it holds (:meth:`supports` is False)
        raises :class:`propdp.ConfigError` naming the field and leaves the
        accountant as it was."""
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise config_error(f"count = {_args.excerpt(count)} is invalid: allowed an integer ≥ 1", "count")
        self.events = self._composed(event, count)
        return self

    def _composed(self, event: Any, count: int) -> List[Event]:
        """The events with ``count`` compositions of ``event`` added, or
        ConfigError (a ``ValueError``) naming why not."""
        e = from_dp_event(event)
        events = self.events + [e if count == 1 else e.repeat(count)]
        _native.admits(ComposedEvent(events), self.neighbouring)
        return events

    def get_epsilon_bracket(self, target_delta: float) -> Bracket:
        """The certified bracket of everything composed, at ``target_delta``
        (nothing composed: ε = 0, once ``target_delta`` is checked)."""
        if not self.events:
            d = _args.real("target_delta", target_delta, "0 < target_delta < 1")
            if not 0.0 < d < 1.0:
                raise config_error(f"target_delta = {_args.excerpt(target_delta)} is invalid: allowed 0 < target_delta < 1",
                                   "target_delta")
            return Bracket(0.0, 0.0, 0.0, True, _args.relation_label(self.neighbouring))
        return epsilon(ComposedEvent(self.events), target_delta, self.neighbouring)

    def get_epsilon(self, target_delta: float) -> float:
        """The certified upper bound on ε at ``target_delta`` (``inf`` when none is finite)."""
        e = self.get_epsilon_bracket(target_delta).epsilon
        return float("inf") if e is None else e

    def get_delta(self, target_epsilon: float) -> float:
        """A certified δ at ``target_epsilon``: the smallest δ (to 0.1%, by
        bisection in log δ) whose certified upper ε is at most
        ``target_epsilon``; the composition is (target_epsilon, δ)-DP."""
        eps = _args.real("target_epsilon", target_epsilon, "0 ≤ target_epsilon < ∞")
        if not 0.0 <= eps < float("inf"):
            raise config_error(f"target_epsilon = {_args.excerpt(target_epsilon)} is invalid: allowed 0 ≤ target_epsilon < ∞",
                               "target_epsilon")
        if not self.events:
            return 0.0

        def meets(log_delta: float) -> bool:
            return self.get_epsilon(math.exp(log_delta)) <= eps

        lo, hi = math.log(1e-300), math.log(0.999)
        if not meets(hi):
            return 1.0
        if meets(lo):
            return 1e-300
        while hi - lo > 1e-3:
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if meets(mid) else (mid, hi)
        return math.exp(hi)
