"""``propdp.spectrum``: the covariance spectrum of a data matrix and the
effective model of its labels (docs/covariance.md)."""

from __future__ import annotations

from typing import Any, Optional

import pandas as pd

from . import _args, _native
from ._config import config_error, plain


def spectrum(X: Any, y: Any = None, *, standardize: bool = False, model: Optional[str] = None,
             huber_m: float = 1.0, data_model: str = "auto") -> pd.DataFrame:
    """The covariance spectrum of a data matrix ``X`` (rows × columns: a
    DataFrame, a numpy array or nested lists), as ``propdp spectrum``
    computes it: columns centred (``standardize=True``: also divided by
    their standard deviation), constant columns dropped, one row per
    eigenvalue of the sample covariance with weight 1/k and the teacher's
    relative energy — from the least-squares fit of regression labels ``y``
    (debiased), or spread without them.

    Returns a DataFrame with columns ``eigenvalue``, ``weight``, ``teacher``,
    accepted as ``covariance=`` by :func:`solve`, :func:`simulate` and in a
    :func:`sweep` config (or written with ``to_csv(path, index=False)`` as a
    ``covariance = { file = ... }``). ``df.attrs`` holds ``rows``,
    ``columns``, ``constant`` (the dropped columns), ``null_directions``, and
    with regression labels ``s2``, ``noise_sd`` (the config values in
    propdp's scale, in units of the labels' sd, ddof 0), ``r2`` and
    ``label_sd``.

    ``model`` (``"logistic"``, ``"huber"`` with threshold ``huber_m`` in
    units of sd(y), ``"least_squares"``) estimates the effective model of
    the labels ``y`` as ``propdp spectrum --model`` does (columns
    standardised; logistic labels take two values, the larger read as +1):
    ``df.attrs`` then also holds ``model``, ``s2``, ``s2_interval`` (one
    standard error), ``noise_sd``, ``rho``, ``describes`` (whether every
    check agrees within 3 s.e.), ``summary`` (the lines the command prints)
    and, for logistic, ``data_model``: ``"teacher"`` (a logistic link of a
    Gaussian field) or ``"two_cluster"`` (two Gaussian clusters, with
    ``balance`` and ``within``; then the DataFrame's spectrum is the
    within-class covariance's) — ``data_model="auto"`` (the default) chooses
    as ``propdp spectrum --data-model auto`` does, ``"teacher"`` or
    ``"two_cluster"`` forces one —
    and ``file_text``: the spectrum file with its effective-model line —
    write it (not ``df.to_csv``) for a ``covariance = { file = ... }``
    that supplies ``s2``. Computed without privacy. See docs/covariance.md.
    """
    if hasattr(X, "columns"):
        names = [str(c) for c in X.columns]
        rows = plain(X.to_numpy())
    else:
        rows = plain(X)
        names = [f"x{j}" for j in range(len(rows[0]) if _rows(rows) else 0)]
    if not _rows(rows):
        raise config_error(f"X is invalid: allowed a 2-D array of numbers (rows × columns), not {type(X).__name__} "
                           f"{_shape(rows)}", "X")
    rows = [[_args.real(f"X[{i}][{j}]", v, "a real number") for j, v in enumerate(row)] for i, row in enumerate(rows)]
    labels = None
    if y is not None:
        ys = plain(y)
        if isinstance(ys, (str, bytes)) or not isinstance(ys, list) or any(isinstance(v, list) for v in ys):
            raise config_error(f"y is invalid: allowed a 1-D array of numbers, one per row, not {type(y).__name__}",
                               "y")
        labels = [_args.real(f"y[{i}]", v, "a real number") for i, v in enumerate(ys)]
    if model is not None and not isinstance(model, str):
        raise config_error(f"model = {_args.excerpt(model)} is invalid: allowed \"logistic\", \"huber\" or "
                           "\"least_squares\"", "model")
    if not isinstance(data_model, str):
        raise config_error(f"data_model = {_args.excerpt(data_model)} is invalid: allowed \"auto\", \"teacher\" or "
                           "\"two_cluster\"", "data_model")
    out = _native.spectrum(rows, names, labels, _args.boolean("standardize", standardize), model,
                           _args.real("huber_m", huber_m), data_model)
    df = pd.DataFrame({k: out.pop(k) for k in ("eigenvalue", "weight", "teacher")})
    df.attrs.update(out)
    return df


def _rows(rows: Any) -> bool:
    """Whether ``rows`` (plain Python values) is a list of equally long lists."""
    return (isinstance(rows, list) and all(isinstance(r, list) for r in rows)
            and len({len(r) for r in rows}) <= 1)


def _shape(rows: Any) -> str:
    """A short description of what was given instead of a 2-D array."""
    if isinstance(rows, list):
        return "(a 1-D list)" if rows and not isinstance(rows[0], list) else "(ragged rows)"
    return ""
