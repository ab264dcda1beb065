"""Google dp_accounting's ``DpEvent`` objects, read by their attributes.

propdp does not import dp_accounting: an event is recognised by its class
name and its fields (``GaussianDpEvent.noise_multiplier``,
``PoissonSampledDpEvent.sampling_probability`` and ``.event``,
``SampledWithoutReplacementDpEvent.source_dataset_size``, ``.sample_size``
and ``.event``, ``SelfComposedDpEvent.event`` and ``.count``,
``ComposedDpEvent.events``, ``NoOpDpEvent``, ``NonPrivateDpEvent``). What
the certified accountant composes is a ledger of Gaussian releases, each
``(noise_multiplier, sample_rate, count)`` under one batch scheme: Poisson
(a full-batch Gaussian is rate 1) or fixed-size batches drawn without
replacement. Any other event is refused naming its type.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, List, Optional, Tuple

from . import _args
from ._config import config_error

#: The event types the certified accountant composes.
SUPPORTED = (
    "GaussianDpEvent",
    "PoissonSampledDpEvent",
    "SampledWithoutReplacementDpEvent",
    "SelfComposedDpEvent",
    "ComposedDpEvent",
    "NoOpDpEvent",
    "NonPrivateDpEvent",
)


class Unsupported(Exception):
    """An event the certified accountant cannot compose; the message says which and why."""


@dataclass
class Ledger:
    """Gaussian releases ``(noise_multiplier, sample_rate, count)``: ``poisson``
    (Poisson-sampled or full-batch) and ``fixed_size`` (sampled without
    replacement); ``non_private`` once a release without noise is composed."""

    poisson: List[Tuple[float, float, int]] = field(default_factory=list)
    fixed_size: List[Tuple[float, float, int]] = field(default_factory=list)
    non_private: bool = False

    def __len__(self) -> int:
        return sum(t for _, _, t in self.poisson) + sum(t for _, _, t in self.fixed_size)


def _name(event: Any) -> str:
    return type(event).__name__


def _attr(event: Any, name: str) -> Any:
    try:
        return getattr(event, name)
    except AttributeError:
        raise Unsupported(f"{_name(event)} has no attribute {name!r}: not a dp_accounting event") from None


def _noise(event: Any) -> Optional[float]:
    """A Gaussian event's noise multiplier (None: no noise, non-private)."""
    z = float(_attr(event, "noise_multiplier"))
    if not z >= 0.0 or z == float("inf"):
        raise Unsupported(f"GaussianDpEvent(noise_multiplier={z}): allowed 0 ≤ noise_multiplier < ∞")
    return None if z == 0.0 else z


def _add(ledger: Ledger, scheme: str, z: Optional[float], q: float, count: int) -> None:
    if z is None:
        ledger.non_private = True
        return
    target = ledger.poisson if scheme == "poisson" else ledger.fixed_size
    if target and target[-1][:2] == (z, q):
        target[-1] = (z, q, target[-1][2] + count)
    else:
        target.append((z, q, count))


def _sampled_inner(event: Any, outer: str) -> Optional[Tuple[Optional[float], int]]:
    """The Gaussian inside a sampled event: (noise, count), None for a no-op."""
    inner = _attr(event, "event")
    kind = _name(inner)
    if kind == "GaussianDpEvent":
        return _noise(inner), 1
    if kind == "NoOpDpEvent":
        return None
    if kind == "NonPrivateDpEvent":
        return None, 1
    raise Unsupported(
        f"{outer}({kind}): the certified accountant composes a sampled GaussianDpEvent only "
        "(a sampled composition is not the composition of sampled steps)"
    )


def read(event: Any, count: int, ledger: Ledger) -> None:
    """Add ``count`` compositions of ``event`` to ``ledger``; raises
    :class:`Unsupported` naming an event it cannot compose."""
    kind = _name(event)
    if kind == "NoOpDpEvent":
        return
    if kind == "NonPrivateDpEvent":
        ledger.non_private = True
    elif kind == "GaussianDpEvent":
        _add(ledger, "poisson", _noise(event), 1.0, count)
    elif kind == "PoissonSampledDpEvent":
        q = float(_attr(event, "sampling_probability"))
        if not 0.0 <= q <= 1.0:
            raise Unsupported(f"PoissonSampledDpEvent(sampling_probability={q}): allowed 0 ≤ q ≤ 1")
        inner = _sampled_inner(event, kind)
        if inner is not None and q > 0.0:
            _add(ledger, "poisson", inner[0], q, count * inner[1])
    elif kind == "SampledWithoutReplacementDpEvent":
        n = int(_attr(event, "source_dataset_size"))
        b = int(_attr(event, "sample_size"))
        if not 0 <= b <= n or n <= 0:
            raise Unsupported(f"SampledWithoutReplacementDpEvent(source_dataset_size={n}, sample_size={b}): "
                              "allowed 0 ≤ sample_size ≤ source_dataset_size, source_dataset_size ≥ 1")
        inner = _sampled_inner(event, kind)
        if inner is not None and b > 0:
            _add(ledger, "fixed_size", inner[0], b / n, count * inner[1])
    elif kind == "SelfComposedDpEvent":
        times = _attr(event, "count")
        if not isinstance(times, int) or isinstance(times, bool) or times < 0:
            raise Unsupported(f"SelfComposedDpEvent(count={_args.excerpt(times)}): allowed an integer ≥ 0")
        read(_attr(event, "event"), count * times, ledger)
    elif kind == "ComposedDpEvent":
        for e in _attr(event, "events"):
            read(e, count, ledger)
    else:
        raise Unsupported(
            f"{kind} is not supported by propdp's certified accountant (it composes "
            + ", ".join(SUPPORTED) + ")"
        )


def checked_count(count: Any) -> int:
    """``compose``'s count: an integer ≥ 1."""
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise config_error(f"count = {_args.excerpt(count)} is invalid: allowed an integer ≥ 1", "count")
    return count


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
    if name not in spelled:
        raise config_error(
            f"neighboring_relation = {_args.excerpt(neighboring_relation)} is invalid: allowed ADD_OR_REMOVE_ONE or "
            "REPLACE_ONE (dp_accounting's NeighboringRelation), or \"add_remove_one\", \"replace_one\"",
            "neighboring_relation",
        )
    return spelled[name]
