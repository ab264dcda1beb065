"""propdp from Python: the exact accuracy of differentially private learners
when the number of features d is comparable to the number of samples n
(d/n → δ) — theory, simulation of the real algorithms, sweeps, tuning and
privacy accounting, over the Rust library (the same code, records and
validation as the ``propdp`` command line).

>>> import propdp
>>> r = propdp.solve(model="huber", algorithm="objective", delta=0.5, s2=1.0,
...                  huber_m=1.0, noise={"law": "gaussian", "sd": 0.5}, lambda_=1.0, sigma=1.0)
>>> r.converged and r["est_err2"] > 0
True

Keys keep the spelling of the TOML configs (``lambda`` is ``lambda_`` as a
keyword; ``kappa`` is accepted for ``delta``). Bad values raise
:class:`ConfigError` (a ``ValueError``) whose ``field`` names the key; a
computation that fails raises :class:`PropdpError`. See docs/theory.md for
the equations and conventions.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import pandas as pd

from . import _native
from . import _args
from ._config import ConfigLike, config_error, plain, resolve
from ._progress import ProgressLike, callback
from ._results import Result, read_records, read_results
from ._results import frame as _frame
from ._spectrum import spectrum
from ._mechanism import Mechanism, mechanism
from .inference import InferenceRefused, PrivateGLM, PrivateGLMResults

__version__: str = _native.__version__
#: The git commit the extension was built from (recorded in every result's provenance).
GIT_COMMIT: str = _native.GIT_COMMIT
ConfigError = _native.ConfigError
PropdpError = _native.PropdpError

__all__ = [
    "solve",
    "PrivateGLM",
    "PrivateGLMResults",
    "InferenceRefused",
    "simulate",
    "spectrum",
    "sweep",
    "read_results",
    "check",
    "privacy",
    "calibrate",
    "mechanism",
    "Mechanism",
    "parameters",
    "tune",
    "figures",
    "plot",
    "Result",
    "PrivacyReport",
    "ConfigError",
    "PropdpError",
    "__version__",
]


def solve(
    model: str,
    algorithm: str,
    *,
    solver: Optional[Mapping[str, Any]] = None,
    precision: Optional[float] = None,
    **params: Any,
) -> Result:
    if precision is not None:
        # the [solver] table's key: `precision=` is `solver={"precision": ...}`
        solver = {**(solver or {}), "precision": precision}
    return _native.solve(model, algorithm, solver=solver, **plain(params))


solve.__doc__ = (_native.solve.__doc__ or "") + """

``precision`` is the long-horizon theory's target relative standard error
at the last step (``solver.precision``: 1e-4 to 0.2, default 0.02); its
RQMC paths follow from a pilot solve, and the record's ``solver["rqmc"]``
gives the paths and the precision reached."""


def parameters() -> List[Dict[str, Any]]:
    """The parameters' table, one dict per parameter: ``name`` (the config
    key), ``keyword`` (as :func:`solve`, :func:`simulate` and
    :func:`privacy` take it: ``lambda_`` for ``lambda``), ``table`` (its TOML
    table), ``symbol``, ``label`` (the figures' axis label), ``allowed``
    (its range in words) and ``algorithms`` (the kinds that take it; empty:
    all)."""
    return _native.parameters()


def simulate(
    model: str,
    algorithm: str,
    *,
    d: int,
    reps: int,
    design: str = "gaussian",
    prior: Optional[Mapping[str, Any]] = None,
    seed: int = 0,
    grad_tol: Optional[float] = None,
    data: Optional[Mapping[str, Any]] = None,
    progress: ProgressLike = True,
    executor: Any = None,
    **params: Any,
) -> Result:
    """The real algorithm on synthetic data at one point: ``reps``
    repetitions at dimension ``d`` (n = d/δ), in parallel, each from its own
    random stream derived from (seed, point, d, repetition).

    ``params`` as in :func:`solve`; ``design`` is "gaussian", "rademacher" or
    "gaussian_projected", ``prior`` e.g. ``{"law": "sparse", "p": 0.1}``.
    ``data`` simulates on the rows of a data set instead, as the
    ``[simulation] data`` table: ``{"file": "x.csv", "drop": [...],
    "standardize": False, "labels": "y"}`` (docs/covariance.md; ``d`` must be
    its number of directions). Returns a :class:`Result` with the mean
    (``metrics``), ``stderr`` and ``per_rep`` values. Ctrl-C stops after the
    current repetitions. With ``executor`` (``concurrent.futures`` or a
    pool's ``map``, :mod:`propdp.distributed`) the repetitions run as blocks
    on its workers; the record is the same, byte for byte (a spawn process
    pool in a script: under ``if __name__ == "__main__":``, as in
    :func:`sweep`).
    """
    # the kinds here; the ranges are the core's to check
    simulation: Dict[str, Any] = {
        "d": _args.integer("simulation.d", d, minimum=0),
        "reps": _args.integer("simulation.reps", reps, minimum=0),
        "design": design,
        "seed": _args.integer("simulation.seed", seed, minimum=0),
    }
    if prior is not None:
        if not isinstance(prior, Mapping):
            raise config_error(f"prior = {_args.excerpt(prior)} is invalid: allowed a dict such as {{'law': 'sparse', 'p': 0.1}}",
                               "simulation.prior")
        simulation["prior"] = dict(prior)
    if grad_tol is not None:
        simulation["grad_tol"] = _args.real("simulation.grad_tol", grad_tol)
    if data is not None:
        if not isinstance(data, Mapping):
            raise config_error(f"data = {_args.excerpt(data)} is invalid: allowed a dict such as {{'file': 'x.csv', "
                               "'labels': 'y'}, as the [simulation] data table", "simulation.data")
        simulation["data"] = plain(dict(data))
    if executor is not None:
        from . import distributed

        tables: Dict[str, Dict[str, Any]] = {"problem": {"model": model}, "algorithm": {"kind": algorithm}}
        where = {p["keyword"]: (p["name"], p["table"]) for p in parameters()}
        for key, value in plain(params).items():
            name, table = where.get(key, (key, "algorithm"))  # an unknown key: the core names it
            tables.setdefault(table, {})[name] = value
        # (the shards' merge wants the point's theory record too: one solve beside the repetitions)
        df = distributed.sweep({**tables, "simulation": simulation}, executor=executor)
        return Result(next(r for r in df.attrs["records"] if r["source"] == "simulation"))
    return Result(_native.simulate(model, algorithm, plain(params), simulation, None, callback(progress)))


def check(config: ConfigLike) -> str:
    """Validate a config (path, TOML text or dict) and describe its sweep, as
    ``propdp check`` prints it; raises :class:`ConfigError` naming the field."""
    cfg, label = resolve(config)
    return _native.describe(cfg, label)


def sweep(
    config: ConfigLike,
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
    *,
    resume: bool = False,
    overwrite: bool = False,
    theory: bool = True,
    simulation: bool = True,
    per_step: bool = False,
    progress: ProgressLike = True,
    executor: Any = None,
) -> pd.DataFrame:
    """Run a config — a path, TOML text, or a dict of tables
    (``{"problem": {...}, "algorithm": {...}, "simulation": {...}}``) —
    exactly as ``propdp run`` does, and return its results as a tidy
    DataFrame (see :func:`read_results`; ``per_step=True`` for DP-GD steps in
    long format).

    With ``out``, records are written to ``out/results.jsonl`` as they finish
    (``resume=True`` continues an interrupted run, ``overwrite=True`` starts
    over); without it, to a temporary directory removed afterwards. Points
    that fail are left out with a warning and listed in
    ``df.attrs["errors"]``. Ctrl-C stops between points (the records written
    so far stay in ``out``) and raises ``KeyboardInterrupt``.

    With ``executor`` — any object with ``submit`` returning futures
    (``concurrent.futures.ProcessPoolExecutor``, submitit, Dask's
    ``client.get_executor()``) or with ``map`` (``multiprocessing.Pool``,
    Ray's ``Pool``) — the work runs as shards on its workers
    (:func:`propdp.distributed.sweep`: ``out/shards/K``, merged into
    ``out/merged``, resumed on a rerun), byte for byte the same records. A
    process pool spawns its workers, which import the main script again: in
    a script, make it under the main guard::

        if __name__ == "__main__":
            ctx = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(2, mp_context=ctx) as pool:
                df = propdp.sweep("configs/finite_size.toml", "results/fs", executor=pool)
    """
    if resume and overwrite:
        raise config_error("resume=True and overwrite=True contradict each other: give one", "resume")
    if not theory and not simulation:
        raise config_error("theory=False and simulation=False leave nothing to compute", "theory")
    if executor is not None:
        from . import distributed

        if overwrite:
            raise config_error("overwrite=True with executor=: shards always resume; remove out to start over",
                               "overwrite")
        return distributed.sweep(config, executor=executor, out=out, per_step=per_step, theory=theory,
                                 simulation=simulation)
    cfg, label = resolve(config)
    with tempfile.TemporaryDirectory(prefix="propdp-") as tmp:
        target = Path(out) if out is not None else Path(tmp) / "run"
        summary = _native.run(cfg, label, target, resume, overwrite, theory, simulation, callback(progress))
        df = _frame(_native.records(summary["results"]), per_step=per_step)
        errors = _errors(Path(summary["errors"]))
    df.attrs["errors"] = errors
    if out is not None:
        df.attrs["dir"] = str(target)
    if errors:
        warnings.warn(f"{len(errors)} point(s) failed (df.attrs['errors']); first: {errors[0].get('error')}", stacklevel=2)
    return df


def _errors(path: Path) -> List[Dict[str, Any]]:
    if not path.is_file():
        return []
    import json

    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def tune(
    config: ConfigLike,
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
    *,
    resume: bool = False,
    overwrite: bool = False,
    progress: ProgressLike = True,
    executor: Any = None,
) -> pd.DataFrame:
    """The best hyperparameters per algorithm and privacy budget, as
    ``propdp tune`` searches them (a config with a ``[tune]`` table). One row
    per (problem point, budget, algorithm) cell, nested fields flattened with
    dots (``best.lambda``…). With ``out`` the files (tune.jsonl,
    non_private.json, frontier and winner-map figures) are kept there.
    ``executor`` fans the cells out as :func:`sweep`'s does
    (:func:`propdp.distributed.tune`; the files in ``out/merged``)."""
    if resume and overwrite:
        raise config_error("resume=True and overwrite=True contradict each other: give one", "resume")
    if executor is not None:
        from . import distributed

        if overwrite:
            raise config_error("overwrite=True with executor=: shards always resume; remove out to start over",
                               "overwrite")
        return distributed.tune(config, executor=executor, out=out)
    cfg, label = resolve(config)
    text = _native.config_text(cfg) if isinstance(cfg, dict) else cfg
    with tempfile.TemporaryDirectory(prefix="propdp-") as tmp:
        target = Path(out) if out is not None else Path(tmp) / "tune"
        directory = Path(_native.tune(text, label, target, resume, overwrite, callback(progress)))
        df = pd.json_normalize(read_records(directory / "tune.jsonl"))
    if out is not None:
        df.attrs["dir"] = str(directory)
    return df


def figures(
    results: Union[str, "os.PathLike[str]"],
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
    *,
    x: Optional[str] = None,
    series: Optional[str] = None,
    metrics: Optional[Sequence[str]] = None,
    y_log: Optional[bool] = None,
) -> List[Path]:
    """Draw the figures of a results file or run directory (PNG and SVG, the
    same as ``propdp plot``: theory as lines, simulation as points with ±2
    s.e. bars); returns the files. ``x``, ``series``, ``metrics`` and
    ``y_log`` replace the config's ``[plot]`` keys (``propdp plot --x …``);
    one that names nothing in the results raises ``ValueError``. A file that
    cannot be drawn with the config's layout (e.g. a single point) gives an
    empty list and a warning saying why."""
    path = Path(results)
    if path.is_dir():
        path = path / "results.jsonl"
    files, skipped = _native.draw(
        path,
        None if out is None else Path(out),
        x=x,
        series=series,
        metrics=None if metrics is None else list(metrics),
        y_log=y_log,
    )
    if skipped:
        warnings.warn(f"no figure drawn: {skipped}", stacklevel=2)
    return [Path(f) for f in files]


def plot(
    df: pd.DataFrame,
    metric: str,
    x: str = "delta",
    series: Optional[str] = None,
    ax: Any = None,
) -> Any:
    """A matplotlib panel of a results DataFrame: theory as lines, simulation
    as points with ±2 standard-error bars, one curve per value of ``series``.
    Returns the Axes (matplotlib must be installed). For the gallery's
    figures as files, see :func:`figures`."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots()
    rows = {p["name"]: p for p in parameters()}
    groups = [(None, df)] if series is None else list(df.groupby(series))
    for i, (value, g) in enumerate(groups):
        color = f"C{i}"
        symbol = rows[series]["symbol"] if series in rows else series
        label = None if value is None else f"{symbol} = {value:g}"
        theory = g[g["source"] == "theory"].sort_values(x)
        if len(theory):
            ax.plot(theory[x], theory[metric], color=color, label=label)
            label = None
        sim = g[g["source"] == "simulation"].sort_values(x)
        if len(sim):
            err = 2 * sim[f"{metric}_stderr"] if f"{metric}_stderr" in sim else None
            ax.errorbar(sim[x], sim[metric], yerr=err, fmt="o", color=color, ms=4, capsize=2, label=label)
    ax.set_xlabel(rows[x]["label"] if x in rows else x)
    ax.set_ylabel(metric)
    if series is not None:
        ax.legend()
    return ax


@dataclass
class PrivacyReport:
    """The guarantee of a noise level in every notion (what ``propdp privacy
    --json`` prints): ``noise`` (σ for objective perturbation, DP-GD and
    DP-SGD, τ for output perturbation; calibrated when a target was given —
    ``calibrated_to`` names it, ``target`` is its level), ``epsilon`` at
    ``delta_priv`` (None when no finite ε reaches it; a certified upper
    bound, ``epsilon_lower`` a certified lower one — DP-SGD: the PLD
    bracket, refined on a grid of width ``bracket_grid`` until 0.1% wide,
    ``bracket_reached`` saying whether it was; ``rdp_epsilon`` the looser
    RDP bound), zCDP ``rho``, ``mu`` of
    μ-GDP (output perturbation, DP-GD, DP-SGD at q = 1), objective
    perturbation's loss bound (c, A) and its RDP ε(α) at α = 2, 8, 32, and
    the mechanism's ``lambda``, ``steps``, ``sample_rate``, ``clip``,
    ``groups``, ``bands`` and the ``rounds`` composed where they apply;
    ``epsilon_add_remove`` (DP-SGD: Opacus' ε), ``extra_ridge``, ``lambda_effective``."""

    algorithm: str
    model: str
    neighbouring: str
    noise: float
    epsilon: Optional[float]
    delta_priv: float
    rho: float
    mu: Optional[float]
    objective_bound: Optional[Tuple[float, float]]
    rdp: List[Tuple[float, float]]
    text: str
    rdp_epsilon: Optional[float] = None
    epsilon_lower: Optional[float] = None
    bracket_grid: Optional[float] = None
    bracket_reached: Optional[bool] = None
    calibrated_to: Optional[str] = None
    target: Optional[float] = None
    lambda_: Optional[float] = None
    steps: Optional[int] = None
    sample_rate: Optional[float] = None
    clip: Optional[float] = None
    groups: Optional[int] = None
    bands: Optional[int] = None
    rounds: Optional[int] = None
    extra_ridge: Optional[float] = None
    lambda_effective: Optional[float] = None
    epsilon_add_remove: Optional[float] = None

    def __str__(self) -> str:
        return self.text


def privacy(
    algorithm: str,
    model: str = "logistic",
    *,
    noise: Optional[float] = None,
    epsilon: Optional[float] = None,
    rho: Optional[float] = None,
    delta_priv: Optional[float] = None,
    lambda_: Optional[float] = None,
    steps: Optional[int] = None,
    huber_m: Optional[float] = None,
    neighbouring: Optional[str] = None,
    sample_rate: Optional[float] = None,
    clip: Optional[float] = None,
    extra_ridge: Optional[str] = None,
    groups: Optional[int] = None,
) -> PrivacyReport:
    """The privacy guarantee of ``noise`` for ``algorithm`` ("objective",
    "output", "dpgd", "dpsgd") — or, with ``epsilon`` (at ``delta_priv``,
    default 1e-6) or ``rho`` instead, the smallest noise meeting it and its
    guarantee. Sensitivity conventions (R = 1, ``neighbouring``
    "replace_one" or "add_remove_one") as in docs/theory.md §4. ``lambda_``
    (default 1) applies to objective and output perturbation, ``steps``
    (an integer, default 1) to DP-GD and DP-SGD, ``huber_m`` (default 1) to
    the Huber model; DP-SGD takes ``sample_rate`` q and optionally ``clip``
    C (noise multiplier σ/min(C, L)); its ε is the PLD accountant's. DP-SGD
    in ``groups`` cyclic groups with a noise strategy of at most that many
    bands (amplified BandMF) is certified as Poisson DP-SGD over ⌈T/G⌉
    rounds (``report.rounds``), under "add_remove_one" unless
    ``neighbouring`` says otherwise (jax_privacy's relation; otherwise the
    default is "replace_one"). An
    argument that does not apply, a float ``steps`` or two of
    noise/epsilon/rho raise :class:`ConfigError` naming the argument — the
    same rules as the ``propdp privacy`` command (one query builder in the
    library). Objective perturbation calibrated to a target whose floor
    exceeds half of it runs at λ + Δ, the extra ridge that halves the floor
    (``extra_ridge="auto"``, the default; ``report.extra_ridge`` and
    ``report.lambda_effective``), or is refused (``"refuse"``)."""
    d = _native.privacy(
        algorithm, model, huber_m=huber_m, lambda_=lambda_, steps=steps, neighbouring=neighbouring,
        delta_priv=delta_priv, noise=noise, epsilon=epsilon, rho=rho, sample_rate=sample_rate, clip=clip,
        extra_ridge=extra_ridge, groups=groups,
    )
    d["lambda_"] = d.pop("lambda")
    d["objective_bound"] = None if d["objective_bound"] is None else tuple(d["objective_bound"])
    d["rdp"] = [tuple(r) for r in d["rdp"]]
    return PrivacyReport(**d)


def calibrate(
    algorithm: str,
    model: str = "logistic",
    *,
    epsilon: Optional[float] = None,
    rho: Optional[float] = None,
    delta_priv: Optional[float] = None,
    lambda_: Optional[float] = None,
    steps: Optional[int] = None,
    huber_m: Optional[float] = None,
    neighbouring: Optional[str] = None,
    sample_rate: Optional[float] = None,
    clip: Optional[float] = None,
    extra_ridge: Optional[str] = None,
    groups: Optional[int] = None,
) -> PrivacyReport:
    """The smallest noise meeting (``epsilon``, ``delta_priv``) or ``rho``
    (give one), with its guarantee in every notion (``report.noise``); the
    arguments as for :func:`privacy`."""
    if (epsilon is None) == (rho is None):
        raise config_error("give exactly one target: epsilon (with delta_priv) or rho", "epsilon")
    return privacy(
        algorithm, model, epsilon=epsilon, rho=rho, delta_priv=delta_priv, lambda_=lambda_, steps=steps,
        huber_m=huber_m, neighbouring=neighbouring, sample_rate=sample_rate, clip=clip, extra_ridge=extra_ridge,
        groups=groups,
    )
