"""Result records as Python values: one record as a :class:`Result`, a
results file or a list of records as a tidy pandas DataFrame."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, List, Optional, Union

import numpy as np
import pandas as pd


def _arrays(m: Optional[Dict[str, List[float]]]) -> Optional[Dict[str, np.ndarray]]:
    return None if m is None else {k: np.asarray(v, dtype=float) for k, v in m.items()}


class Result:
    """One record, exactly as ``propdp run`` writes it to results.jsonl.

    ``metrics`` holds the prediction (theory) or the mean over repetitions
    (simulation); DP-GD records add every metric at every step
    (``per_step``, numpy arrays of length T + 1, or over the steps
    ``per_step_at`` lists) and their standard errors;
    simulation records add ``stderr``, ``per_rep`` (numpy arrays), ``n``,
    ``d``, ``reps`` and ``seed``. ``record`` is the record as a dict.

    A Result is a read-only view of its record: the attributes read the dict
    (arrays are built on first access), so making one costs next to nothing
    next to the solve.
    """

    __slots__ = ("record", "_cache")

    def __init__(self, record: Dict[str, Any]) -> None:
        self.record = record
        self._cache: Optional[Dict[str, Any]] = None

    @classmethod
    def from_record(cls, r: Dict[str, Any]) -> "Result":
        """The Result of a record dict (a line of results.jsonl)."""
        return cls(r)

    def _array_field(self, key: str) -> Optional[Dict[str, np.ndarray]]:
        if self._cache is None:
            self._cache = {}
        if key not in self._cache:
            self._cache[key] = _arrays(self.record.get(key))
        return self._cache[key]

    source = property(lambda self: self.record["source"], doc='"theory" or "simulation".')
    model = property(lambda self: self.record["model"], doc="The model kind.")
    algorithm = property(lambda self: self.record["algorithm"], doc="The algorithm kind.")
    params = property(lambda self: self.record["params"], doc="The point's parameters.")
    metrics = property(lambda self: self.record["metrics"], doc="Prediction or mean over repetitions.")
    converged = property(lambda self: self.record["solver"]["converged"], doc="Whether the solver converged.")
    iterations = property(lambda self: self.record["solver"]["iterations"], doc="The solver's iterations.")
    residual = property(lambda self: self.record["solver"]["residual"], doc="The solver's final residual.")
    provenance = property(lambda self: self.record["provenance"], doc="Config hash, crate version, git commit.")
    per_step = property(
        lambda self: self._array_field("per_step"),
        doc="DP-GD: metric → array over t = 0…T, or over the steps ``per_step_at``.",
    )
    per_step_at = property(
        lambda self: None if "per_step_at" not in self.record else np.asarray(self.record["per_step_at"]),
        doc="The steps of the per-step arrays when not every step (a simulation beyond 1000 steps).",
    )
    per_step_stderr = property(lambda self: self._array_field("per_step_stderr"), doc="DP-GD: their standard errors.")
    privacy = property(lambda self: self.record.get("privacy"), doc="The privacy guarantee, for DP records.")
    stderr = property(lambda self: self.record.get("stderr"), doc="Simulation: standard errors of the means.")
    per_rep = property(lambda self: self._array_field("per_rep"), doc="Simulation: metric → per-repetition array.")
    n = property(lambda self: self.record.get("n"), doc="Simulation: samples.")
    d = property(lambda self: self.record.get("d"), doc="Simulation: features.")
    reps = property(lambda self: self.record.get("reps"), doc="Simulation: repetitions.")
    seed = property(lambda self: self.record.get("seed"), doc="Simulation: the config seed.")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Result) and self.record == other.record

    __hash__ = None  # type: ignore[assignment]

    def __getitem__(self, metric: str) -> float:
        return self.metrics[metric]

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v:g}" for k, v in self.params.items())
        def value(k: str, v: float) -> str:
            if self.stderr and k in self.stderr:
                return f"{k}={v:.6g}±{self.stderr[k]:.2g}"
            return f"{k}={v:.6g}"
        metrics = ", ".join(value(k, v) for k, v in self.metrics.items())
        size = f", d={self.d}, n={self.n}, reps={self.reps}" if self.d is not None else ""
        return (
            f"Result({self.source}, {self.model}/{self.algorithm}, {params}{size}: {metrics}; "
            f"converged={self.converged}, iterations={self.iterations}, residual={self.residual:.2g})"
        )


def read_records(path: Union[str, "os.PathLike[str]"]) -> List[Dict[str, Any]]:
    """Every record of a results.jsonl file (a run directory is read as its results.jsonl)."""
    path = os.fspath(path)
    if os.path.isdir(path):
        path = os.path.join(path, "results.jsonl")
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def frame(records: Iterable[Dict[str, Any]], per_step: bool = False) -> pd.DataFrame:
    """A tidy DataFrame of records: one row per record (point, source and,
    for simulations, d) with a column per parameter and per metric, the
    simulation's standard errors as ``<metric>_stderr``, and the solver's
    ``converged``/``iterations``/``residual``. With ``per_step``, one row per
    record and step (column ``step``; ``per_step_at`` where a simulation
    evaluated only some steps) for DP-GD records, metrics by step.
    ``df.attrs["provenance"]`` holds the records' provenance."""
    rows: List[Dict[str, Any]] = []
    provenance: List[Dict[str, str]] = []
    for r in records:
        base: Dict[str, Any] = {
            "source": r["source"],
            "model": r["model"],
            "algorithm": r["algorithm"],
            "index": r["index"],
        }
        for key in ("d", "n", "reps", "seed", "design"):
            if key in r:
                base[key] = r[key]
        base.update(r["params"])
        solver = r["solver"]
        base.update(converged=solver["converged"], iterations=solver["iterations"], residual=solver["residual"])
        privacy = r.get("privacy")
        if privacy:
            base.update({f"privacy_{k}": v for k, v in privacy.items()})
        if r.get("non_private_reference"):
            base["non_private_reference"] = True
        if r["provenance"] not in provenance:
            provenance.append(r["provenance"])
        if per_step and r.get("per_step"):
            steps = r["per_step"]
            errors = r.get("per_step_stderr") or {}
            count = len(next(iter(steps.values())))
            at = r.get("per_step_at") or range(count)
            for i, t in enumerate(at):
                row = dict(base, step=t)
                row.update({m: v[i] for m, v in steps.items()})
                row.update({f"{m}_stderr": v[i] for m, v in errors.items()})
                rows.append(row)
            continue
        row = dict(base)
        row.update(r["metrics"])
        row.update({f"{m}_stderr": v for m, v in (r.get("stderr") or {}).items()})
        rows.append(row)
    df = pd.DataFrame(rows)
    df.attrs["provenance"] = provenance
    return df


def read_results(path: Union[str, "os.PathLike[str]"], per_step: bool = False) -> pd.DataFrame:
    """The results.jsonl written by ``propdp run`` (or :func:`propdp.sweep`)
    as a tidy DataFrame (see :func:`frame`); a run directory may be given.
    Every line is read as a record (a torn last line, left by a killed run,
    is skipped with a warning); a damaged line, a number that is not finite
    or a record given twice raises :class:`propdp.PropdpError` naming the
    file and the line."""
    from . import _native

    path = os.fspath(path)
    if os.path.isdir(path):
        path = os.path.join(path, "results.jsonl")
    return frame(_native.records(path), per_step=per_step)
