"""Sharded sweeps and searches on any executor: a Dask cluster, a process
pool, Slurm through submitit, Ray.

``sweep(config, client)`` splits a config's units of work into shards
exactly as ``propdp run --shard K/N`` does (deterministic, balanced by
estimated cost), runs one shard per Dask task, merges the shard directories
(``propdp merge``: every unit exactly once, byte-identical to a single run)
and returns the same DataFrame as :func:`propdp.sweep`. ``tune(config,
client)`` does the same for a ``[tune]`` search (``propdp tune --shard
K/N``: the cells — problem point × budget × algorithm — are the units) and
returns the same DataFrame as :func:`propdp.tune`.

The shard directories must be on a filesystem every worker and the client
see: a local directory for a ``LocalCluster``; on a cluster, pass ``out`` on
a shared filesystem (NFS, Lustre, a mounted bucket). Any ``dask.distributed``
client works: ``LocalCluster`` on one machine, ``dask_jobqueue.SLURMCluster``
/ ``PBSCluster`` on HPC schedulers, ``dask_kubernetes.KubeCluster`` on
Kubernetes — the workers need the ``propdp`` package installed.

    from dask.distributed import Client, LocalCluster
    import propdp.distributed

    if __name__ == "__main__":  # spawned workers import the script again
        with Client(LocalCluster(n_workers=2, threads_per_worker=1)) as client:
            df = propdp.distributed.sweep("configs/finite_size.toml", client)

Instead of a Dask ``client``, ``executor=`` takes any object with
``submit(fn, *args)`` returning futures (the ``concurrent.futures``
protocol: ``ProcessPoolExecutor``, ``client.get_executor()``,
``mpi4py.futures.MPIPoolExecutor``, ``loky``, submitit's ``AutoExecutor``)
or with ``map(fn, iterable)`` (``multiprocessing.Pool``,
``ray.util.multiprocessing.Pool``); docs/sharding.md has the recipes. A
process pool on one machine must spawn its workers (propdp refuses a forking
one), and a spawned worker imports the main script again, so a script starts
the pool under the main guard::

    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    import propdp

    if __name__ == "__main__":
        with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
            df = propdp.sweep("configs/finite_size.toml", "results/fs", executor=pool)

The result is byte for byte the single-process run's, whichever runs it.
"""
from __future__ import annotations

import functools
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import pandas as pd

from . import _args, _native
from ._config import ConfigLike, config_error, resolve
from ._results import read_records, read_results


def _run_shard(text: str, label: str, out: str, index: int, count: int, theory: bool = True,
               simulation: bool = True) -> Dict[str, Any]:
    """One shard, on a worker: ``propdp run --shard index/count --resume``."""
    summary = _native.run(text, label, Path(out), True, False, theory, simulation, None, (index, count))
    return {k: (str(v) if isinstance(v, os.PathLike) else v) for k, v in summary.items()}


def _tune_shard(text: str, label: str, out: str, index: int, count: int) -> str:
    """One search shard, on a worker: ``propdp tune --shard index/count --resume``."""
    return str(_native.tune(text, label, Path(out), True, False, None, (index, count)))


def _star(fn: Callable[..., Any], args: Tuple[Any, ...]) -> Any:
    """``fn(*args)``: what a ``map``-only pool calls with one argument."""
    return fn(*args)


def _runner(client: Any, executor: Any) -> Any:
    """The one thing that fans work out: ``client`` or ``executor``, checked."""
    if client is not None and executor is not None:
        raise config_error("client= and executor= both given: give one", "executor")
    runner = client if client is not None else executor
    if runner is None:
        raise config_error("nothing to run the shards on: give a Dask client or executor= (an object with "
                           "submit() returning futures, or map())", "executor")
    if not (callable(getattr(runner, "submit", None)) or callable(getattr(runner, "map", None))):
        raise config_error(f"executor = {_args.excerpt(runner)} is invalid: allowed an object with submit(fn, *args) returning "
                           "futures (concurrent.futures) or with map(fn, iterable)", "executor")
    # a forked worker inherits the parent's thread pool without its threads and waits forever
    context = getattr(runner, "_mp_context", None) or getattr(runner, "_ctx", None)
    if context is not None and getattr(context, "get_start_method", lambda: None)() == "fork":
        raise config_error(
            "executor = a process pool that forks: propdp's worker threads do not survive fork(); make it with "
            "mp_context=multiprocessing.get_context(\"spawn\") (or \"forkserver\")", "executor")
    return runner


def _fan_out(runner: Any, fn: Callable[..., Any], calls: Sequence[Tuple[Any, ...]]) -> List[Any]:
    """``[fn(*args) for args in calls]``, run by ``runner``: a Dask client
    (``submit(..., pure=False)``, ``gather``), an executor's ``submit``
    (futures' ``result()``), or a pool's ``map``; results in call order."""
    if callable(getattr(runner, "gather", None)) and callable(getattr(runner, "submit", None)):
        return runner.gather([runner.submit(fn, *args, pure=False) for args in calls])
    if callable(getattr(runner, "submit", None)):
        futures = [runner.submit(fn, *args) for args in calls]
        return [f.result() for f in futures]
    return list(runner.map(functools.partial(_star, fn), list(calls)))


def _shards(runner: Any, shards: Optional[int]) -> int:
    """The shard count: given, else one per worker of the runner."""
    if shards:
        return shards
    info = getattr(runner, "scheduler_info", None)
    if callable(info):
        return max(1, len(info()["workers"]))
    for workers in ("_max_workers", "_processes"):  # concurrent.futures pools, multiprocessing.Pool
        n = getattr(runner, workers, None)
        if isinstance(n, int) and n > 0:
            return n
    return os.cpu_count() or 1


def sweep(
    config: ConfigLike,
    client: Any = None,
    *,
    executor: Any = None,
    shards: Optional[int] = None,
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
    per_step: bool = False,
    theory: bool = True,
    simulation: bool = True,
) -> pd.DataFrame:
    """Run ``config`` as ``shards`` shards (default: one per worker) on the
    Dask ``client``'s cluster or on ``executor``, merge them into
    ``out/merged`` (``out`` defaults to a temporary directory, removed
    afterwards) and return the results as :func:`propdp.sweep` does. Shards
    resume: rerunning after a failure recomputes only what is missing.
    ``df.attrs["shards"]`` holds the per-shard summaries."""
    runner = _runner(client, executor)
    cfg, label = resolve(config)
    text = _native.config_text(cfg) if isinstance(cfg, dict) else cfg
    count = _shards(runner, shards)
    with tempfile.TemporaryDirectory(prefix="propdp-shards-") as tmp:
        root = Path(out) if out is not None else Path(tmp)
        dirs = [str(root / "shards" / str(k)) for k in range(count)]
        calls = [(text, label, d, k, count, theory, simulation) for k, d in enumerate(dirs)]
        summaries = _fan_out(runner, _run_shard, calls)
        merged = _native.merge(root / "merged", dirs)
        df = read_results(merged["results"], per_step=per_step)
        df.attrs["records"] = read_records(merged["results"])
    df.attrs["shards"] = summaries
    if out is not None:
        df.attrs["dir"] = str(root / "merged")
    return df


def tune(
    config: ConfigLike,
    client: Any = None,
    *,
    executor: Any = None,
    shards: Optional[int] = None,
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
) -> pd.DataFrame:
    """Search ``config``'s ``[tune]`` cells as ``shards`` shards (default: one
    per worker) on the Dask ``client``'s cluster or on ``executor``, merge
    them into ``out/merged`` (tune.jsonl identical to a single search's, with
    the non-private references and figures) and return the optimums as
    :func:`propdp.tune` does. Shards resume after a failure."""
    runner = _runner(client, executor)
    cfg, label = resolve(config)
    text = _native.config_text(cfg) if isinstance(cfg, dict) else cfg
    count = _shards(runner, shards)
    with tempfile.TemporaryDirectory(prefix="propdp-shards-") as tmp:
        root = Path(out) if out is not None else Path(tmp)
        dirs = [str(root / "shards" / str(k)) for k in range(count)]
        _fan_out(runner, _tune_shard, [(text, label, d, k, count) for k, d in enumerate(dirs)])
        merged = _native.merge(root / "merged", dirs)
        df = pd.json_normalize(read_records(merged["tune"]))
    if out is not None:
        df.attrs["dir"] = str(root / "merged")
    return df
