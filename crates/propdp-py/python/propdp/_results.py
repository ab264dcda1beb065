"""Result records as Python values: one record as a :class:`Result`, a
results file or a list of records as a tidy pandas DataFrame."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Union

import numpy as np
import pandas as pd


@dataclass(repr=False)
class Result:
    """One record, exactly as ``propdp run`` writes it to results.jsonl.

    ``metrics`` holds the prediction (theory) or the mean over repetitions
    (simulation); DP-GD records add every metric at every step
    (``per_step``, numpy arrays of length T + 1) and their standard errors;
    simulation records add ``stderr``, ``per_rep`` (numpy arrays), ``n``,
    ``d``, ``reps`` and ``seed``. ``record`` is the record as a dict.
    """

    source: str
    model: str
    algorithm: str
    params: Dict[str, float]
    metrics: Dict[str, float]
    converged: bool
    iterations: int
    residual: float
    provenance: Dict[str, str]
    per_step: Optional[Dict[str, np.ndarray]] = None
    per_step_stderr: Optional[Dict[str, np.ndarray]] = None
    privacy: Optional[Dict[str, Any]] = None
    stderr: Optional[Dict[str, float]] = None
    per_rep: Optional[Dict[str, np.ndarray]] = None
    n: Optional[int] = None
    d: Optional[int] = None
    reps: Optional[int] = None
    seed: Optional[int] = None
    record: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_record(cls, r: Dict[str, Any]) -> "Result":
        """The Result of a record dict (a line of results.jsonl)."""
        arrays = lambda m: None if m is None else {k: np.asarray(v, dtype=float) for k, v in m.items()}  # noqa: E731
        solver = r["solver"]
        return cls(
            source=r["source"],
            model=r["model"],
            algorithm=r["algorithm"],
            params=r["params"],
            metrics=r["metrics"],
            converged=solver["converged"],
            iterations=solver["iterations"],
            residual=solver["residual"],
            provenance=r["provenance"],
            per_step=arrays(r.get("per_step")),
            per_step_stderr=arrays(r.get("per_step_stderr")),
            privacy=r.get("privacy"),
            stderr=r.get("stderr"),
            per_rep=arrays(r.get("per_rep")),
            n=r.get("n"),
            d=r.get("d"),
            reps=r.get("reps"),
            seed=r.get("seed"),
            record=r,
        )

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
    record and step (column ``step``) for DP-GD records, metrics by step.
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
            for t in range(len(next(iter(steps.values())))):
                row = dict(base, step=t)
                row.update({m: v[t] for m, v in steps.items()})
                row.update({f"{m}_stderr": v[t] for m, v in errors.items()})
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
    as a tidy DataFrame (see :func:`frame`); a run directory may be given."""
    return frame(read_records(path), per_step=per_step)
