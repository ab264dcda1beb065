"""Argument checks of the Python API, one home: every value of the wrong
kind — ``None`` where a number is required, a list, a complex number, a
string, ``True`` for a number, an integer beyond 64 bits — raises
:class:`propdp.ConfigError` naming the argument and what it allows, as the
Rust core does for values out of range. numpy scalars (``np.float64``,
``np.int64``) are numbers like Python's."""

from __future__ import annotations

import numbers
from typing import Any, Optional, Sequence

from ._config import config_error

# the largest step count (and integer) the native module takes: u64 values
# above i64's range are refused by the core anyway
MAX_INT = 2**63 - 1


def real(name: str, value: Any, allowed: str = "a finite real number") -> float:
    """``value`` as a float if it is a real number (not ``bool``); the range
    is the core's to check."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise config_error(f"{name} = {value!r} is invalid: allowed {allowed}", name)
    try:
        return float(value)
    except OverflowError:
        raise config_error(f"{name} = {value!r} is invalid: too large for a 64-bit float", name) from None


def optional_real(name: str, value: Any, allowed: str = "a finite real number") -> Optional[float]:
    """:func:`real`, or ``None`` left as it is."""
    return None if value is None else real(name, value, allowed)


def integer(name: str, value: Any, minimum: int = 1) -> int:
    """``value`` as an int if it is an integer (Python's or numpy's, not
    ``bool``) in [minimum, 2⁶³ − 1]."""
    allowed = f"an integer in [{minimum}, 2^63 − 1]"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise config_error(f"{name} = {value!r} is invalid: allowed {allowed}", name)
    v = int(value)
    if not minimum <= v <= MAX_INT:
        raise config_error(f"{name} = {v!r} is invalid: allowed {allowed}", name)
    return v


def optional_integer(name: str, value: Any, minimum: int = 1) -> Optional[int]:
    """:func:`integer`, or ``None`` left as it is."""
    return None if value is None else integer(name, value, minimum)


def choice(name: str, value: Any, options: Sequence[str]) -> str:
    """``value`` if it is one of ``options`` (strings)."""
    if not isinstance(value, str) or value not in options:
        allowed = ", ".join(repr(o) for o in options)
        raise config_error(f"{name} = {value!r} is invalid: allowed one of {allowed}", name)
    return value


NEIGHBOURING = ("add_remove_one", "replace_one")

#: The neighbouring relation when none is given, everywhere in propdp (the
#: command line, configs, :func:`propdp.privacy`, :mod:`propdp.accounting`,
#: inference): replace-one, the relation of the objective- and
#: output-perturbation guarantees; the larger ε of the two for DP-SGD. Pass
#: ``neighbouring="add_remove_one"`` for Opacus' and dp-accounting's default.
DEFAULT_NEIGHBOURING = "replace_one"


def relation_label(neighbouring: str) -> str:
    """The relation as reports and reprs name it: "replace-one" or "add/remove-one"."""
    return "replace-one" if neighbouring in ("replace_one", "replace-one") else "add/remove-one"


def segments(name: str, value: Any) -> list:
    """A schedule: a non-empty sequence of ``(noise_multiplier, sample_rate,
    steps)``, each checked; a segment is named ``segment[i]``."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) == 0:
        raise config_error(
            f"{name} = {value!r} is invalid: allowed a non-empty list of (noise_multiplier, sample_rate, steps)", name
        )
    out = []
    for i, seg in enumerate(value):
        field = "" if len(value) == 1 else f"segment[{i}]."
        if isinstance(seg, (str, bytes)) or not isinstance(seg, Sequence) or len(seg) != 3:
            raise config_error(
                f"segment[{i}] = {seg!r} is invalid: allowed a (noise_multiplier, sample_rate, steps) triple",
                f"segment[{i}]",
            )
        z, q, t = seg
        out.append(
            (real(f"{field}noise_multiplier", z), real(f"{field}sample_rate", q), integer(f"{field}steps", t))
        )
    return out
