"""Google dp_accounting's vocabulary with propdp's certified bracket: the
bracket of a ``DpEvent`` (:func:`from_dp_event`) and a drop-in
``PrivacyAccountant`` (:class:`CertifiedAccountant`), re-exported by
:mod:`propdp.accounting`."""
from __future__ import annotations

import math
from typing import Any, Optional

from . import _args, _dp_event
from ._bracket import Bracket, _ledger_bracket, _ledger_plan, _read
from ._config import config_error


def from_dp_event(
    event: Any,
    delta: Optional[float] = None,
    *,
    neighbouring: Any = _args.DEFAULT_NEIGHBOURING,
    target_delta: Optional[float] = None,
) -> Bracket:
    """The certified bracket at ``delta`` of a Google dp_accounting event
    (``GaussianDpEvent``, ``PoissonSampledDpEvent``,
    ``SampledWithoutReplacementDpEvent``, ``SelfComposedDpEvent``,
    ``ComposedDpEvent``, ``NoOpDpEvent``, ``NonPrivateDpEvent``), read by its
    attributes — dp_accounting need not be installed::

        event = dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(0.004, dp_accounting.GaussianDpEvent(0.6)), 10_000)
        accounting.from_dp_event(event, 1e-5)   # as `propdp privacy --algorithm dpsgd …`

    ``neighbouring`` is propdp's string or dp_accounting's
    ``NeighboringRelation``; ``target_delta`` is dp_accounting's name for
    ``delta``. An unsupported event raises :class:`propdp.ConfigError`
    naming its type (field ``event``)."""
    if (delta is None) == (target_delta is None):
        raise config_error("give delta (or dp_accounting's target_delta), once", "delta")
    relation = _dp_event.relation(neighbouring)
    return _ledger_bracket(_read(event), delta if delta is not None else target_delta, relation)


class CertifiedAccountant:
    """dp_accounting's ``PrivacyAccountant`` with propdp's certified bracket:
    :meth:`supports`, :meth:`compose` (returns the accountant, so calls
    chain), :meth:`get_epsilon`, :meth:`get_delta`, and the bracket itself
    (:meth:`get_epsilon_bracket`). ``neighboring_relation`` takes
    dp_accounting's ``NeighboringRelation`` (``ADD_OR_REMOVE_ONE``,
    ``REPLACE_ONE``) or propdp's strings; the default is propdp's one default,
    replace-one (dp_accounting's own is add/remove-one)."""

    def __init__(self, neighboring_relation: Any = _args.DEFAULT_NEIGHBOURING):
        self.neighbouring = _dp_event.relation(neighboring_relation)
        self.ledger = _dp_event.Ledger()

    def supports(self, event: Any) -> bool:
        """Whether :meth:`compose` takes ``event``: by the one decision
        :meth:`compose` and :func:`from_dp_event` make (the event's types,
        one batch scheme per ledger, fixed-size batches under replace-one,
        and the ranges of the releases; a fresh accountant supports exactly
        the events :func:`from_dp_event` takes under its relation)."""
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
        count = _dp_event.checked_count(count)
        self.ledger = self._composed(event, count)
        return self

    def _composed(self, event: Any, count: int) -> _dp_event.Ledger:
        """The ledger with ``count`` compositions of ``event`` added, or
        ConfigError (a ``ValueError``) naming why not."""
        trial = _dp_event.Ledger(list(self.ledger.poisson), list(self.ledger.fixed_size), self.ledger.non_private)
        ledger = _read(event, count, trial)
        _ledger_plan(ledger, self.neighbouring)
        return ledger

    def get_epsilon_bracket(self, target_delta: float) -> Bracket:
        """The certified bracket of everything composed, at ``target_delta``."""
        return _ledger_bracket(self.ledger, target_delta, self.neighbouring)

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
        if self.ledger.non_private:
            return 1.0
        if not self.ledger.poisson and not self.ledger.fixed_size:
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
