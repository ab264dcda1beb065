"""Argument checks of the Python API, one home: every value of the wrong
kind — ``None`` where a number is required, a list, a complex number, a
string, ``True`` for a number, an integer beyond 64 bits, a complex,
object or string array — raises :class:`propdp.ConfigError` naming the
argument and what it allows, as the Rust core does for values out of range.
numpy scalars (``np.float64``, ``np.int64``) are numbers like Python's. A
message quotes at most a short excerpt of the value (:func:`excerpt`), never
a whole array."""

from __future__ import annotations

import numbers
import reprlib
from typing import Any, Optional, Sequence

import numpy as np

from ._config import config_error

#: The longest excerpt of a value a message quotes.
EXCERPT = 80

_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxtuple, _SHORT.maxdict = 2, 6, 6, 4
_SHORT.maxset = _SHORT.maxfrozenset = _SHORT.maxdeque = _SHORT.maxarray = 6
_SHORT.maxstring, _SHORT.maxother, _SHORT.maxlong = 40, 60, 40


def excerpt(value: Any) -> str:
    """``repr(value)`` cut to at most :data:`EXCERPT` characters (a list to
    its first elements, an array to its shape and dtype): a message names a
    value, it does not echo a whole array back."""
    if isinstance(value, np.ndarray) and value.size > 6:
        return f"array of shape {value.shape}, dtype {value.dtype}"
    if isinstance(value, int) and value.bit_length() > 128:
        return f"an integer of {value.bit_length()} bits"
    try:
        text = _SHORT.repr(value)
    except Exception:  # a repr that fails (or a huge number Python will not print)
        return f"a {type(value).__name__}"
    return text if len(text) <= EXCERPT else text[: EXCERPT - 3] + "..."

# the largest step count (and integer) the native module takes: u64 values
# above i64's range are refused by the core anyway
MAX_INT = 2**63 - 1


def real(name: str, value: Any, allowed: str = "a finite real number") -> float:
    """``value`` as a float if it is a real number (not ``bool``); the range
    is the core's to check."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise config_error(f"{name} = {excerpt(value)} is invalid: allowed {allowed}", name)
    try:
        return float(value)
    except OverflowError:
        raise config_error(f"{name} = {excerpt(value)} is invalid: too large for a 64-bit float", name) from None


def optional_real(name: str, value: Any, allowed: str = "a finite real number") -> Optional[float]:
    """:func:`real`, or ``None`` left as it is."""
    return None if value is None else real(name, value, allowed)


def integer(name: str, value: Any, minimum: int = 1) -> int:
    """``value`` as an int if it is an integer (Python's or numpy's, not
    ``bool``) in [minimum, 2⁶³ − 1]."""
    allowed = f"an integer in [{minimum}, 2^63 − 1]"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise config_error(f"{name} = {excerpt(value)} is invalid: allowed {allowed}", name)
    v = int(value)
    if not minimum <= v <= MAX_INT:
        raise config_error(f"{name} = {excerpt(v)} is invalid: allowed {allowed}", name)
    return v


def optional_integer(name: str, value: Any, minimum: int = 1) -> Optional[int]:
    """:func:`integer`, or ``None`` left as it is."""
    return None if value is None else integer(name, value, minimum)


def boolean(name: str, value: Any) -> bool:
    """``value`` if it is ``True`` or ``False`` (Python's or numpy's), not a
    string or a number."""
    if not isinstance(value, (bool, np.bool_)):
        raise config_error(f"{name} = {excerpt(value)} is invalid: allowed True or False", name)
    return bool(value)


def choice(name: str, value: Any, options: Sequence[str], shown: Optional[Sequence[str]] = None) -> str:
    """``value`` if it is one of ``options`` (strings); the message lists
    ``shown`` (default: all of them)."""
    if not isinstance(value, str) or value not in options:
        allowed = ", ".join(repr(o) for o in (shown or options))
        raise config_error(f"{name} = {excerpt(value)} is invalid: allowed one of {allowed}", name)
    return value


def real_array(name: str, value: Any, ndim: int) -> np.ndarray:
    """``value`` as a numpy array of ``ndim`` dimensions holding real
    numbers (an integer or float dtype), without a copy where it is one
    already; ``None``, a string, a ragged list, and bool, complex, object,
    string or date arrays are refused naming ``name``."""
    shape = "(n rows × d features)" if ndim == 2 else "(one value per row)"
    allowed = f"a {ndim}-d array of real numbers {shape}"
    if value is None or isinstance(value, (str, bytes)):
        raise config_error(f"{name} = {excerpt(value)} is invalid: allowed {allowed}", name)
    try:
        a = np.asarray(value)
    except (TypeError, ValueError) as e:
        raise config_error(f"{name} is invalid: allowed {allowed}, not {type(value).__name__} ({e})", name) from None
    if a.dtype.kind not in "iuf":
        raise config_error(
            f"{name} has dtype {a.dtype}: allowed {allowed} (integers or floats; not bool, complex, object or "
            "strings — convert with .astype(float) where that is meant)",
            name,
        )
    if a.ndim != ndim:
        raise config_error(f"{name} has shape {a.shape}: allowed {allowed}", name)
    return a


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
            f"{name} = {excerpt(value)} is invalid: allowed a non-empty list of (noise_multiplier, sample_rate, steps)",
            name,
        )
    out = []
    for i, seg in enumerate(value):
        field = "" if len(value) == 1 else f"segment[{i}]."
        if isinstance(seg, (str, bytes)) or not isinstance(seg, Sequence) or len(seg) != 3:
            raise config_error(
                f"segment[{i}] = {excerpt(seg)} is invalid: allowed a (noise_multiplier, sample_rate, steps) triple",
                f"segment[{i}]",
            )
        z, q, t = seg
        out.append(
            (real(f"{field}noise_multiplier", z), real(f"{field}sample_rate", q), integer(f"{field}steps", t))
        )
    return out
