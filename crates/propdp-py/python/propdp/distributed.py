"""Sharded sweeps and searches on a Dask cluster.

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
    with Client(LocalCluster(n_workers=2, threads_per_worker=1)) as client:
        df = propdp.distributed.sweep("configs/finite_size.toml", client)
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Dict, Optional, Union

import pandas as pd

from . import _native
from ._config import ConfigLike, resolve
from ._results import read_records, read_results


def _run_shard(text: str, label: str, out: str, index: int, count: int) -> Dict[str, Any]:
    """One shard, on a worker: ``propdp run --shard index/count --resume``."""
    summary = _native.run(text, label, Path(out), True, False, True, True, None, (index, count))
    return {k: (str(v) if isinstance(v, os.PathLike) else v) for k, v in summary.items()}


def _tune_shard(text: str, label: str, out: str, index: int, count: int) -> str:
    """One search shard, on a worker: ``propdp tune --shard index/count --resume``."""
    return str(_native.tune(text, label, Path(out), True, False, None, (index, count)))


def _shards(client: Any, shards: Optional[int]) -> int:
    return shards or max(1, len(client.scheduler_info()["workers"]))


def sweep(
    config: ConfigLike,
    client: Any,
    *,
    shards: Optional[int] = None,
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
    per_step: bool = False,
) -> pd.DataFrame:
    """Run ``config`` as ``shards`` shards (default: one per worker) on the
    Dask ``client``'s cluster, merge them into ``out/merged`` (``out``
    defaults to a temporary directory, removed afterwards) and return the
    results as :func:`propdp.sweep` does. Shards resume: rerunning after a
    failure recomputes only what is missing. ``df.attrs["shards"]`` holds the
    per-shard summaries."""
    cfg, label = resolve(config)
    text = _native.config_text(cfg) if isinstance(cfg, dict) else cfg
    count = _shards(client, shards)
    with tempfile.TemporaryDirectory(prefix="propdp-dask-") as tmp:
        root = Path(out) if out is not None else Path(tmp)
        dirs = [str(root / "shards" / str(k)) for k in range(count)]
        futures = [client.submit(_run_shard, text, label, d, k, count, pure=False) for k, d in enumerate(dirs)]
        summaries = client.gather(futures)
        merged = _native.merge(root / "merged", dirs)
        df = read_results(merged["results"], per_step=per_step)
    df.attrs["shards"] = summaries
    if out is not None:
        df.attrs["dir"] = str(root / "merged")
    return df


def tune(
    config: ConfigLike,
    client: Any,
    *,
    shards: Optional[int] = None,
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
) -> pd.DataFrame:
    """Search ``config``'s ``[tune]`` cells as ``shards`` shards (default: one
    per worker) on the Dask ``client``'s cluster, merge them into
    ``out/merged`` (tune.jsonl identical to a single search's, with the
    non-private references and figures) and return the optimums as
    :func:`propdp.tune` does. Shards resume after a failure."""
    cfg, label = resolve(config)
    text = _native.config_text(cfg) if isinstance(cfg, dict) else cfg
    count = _shards(client, shards)
    with tempfile.TemporaryDirectory(prefix="propdp-dask-") as tmp:
        root = Path(out) if out is not None else Path(tmp)
        dirs = [str(root / "shards" / str(k)) for k in range(count)]
        futures = [client.submit(_tune_shard, text, label, d, k, count, pure=False) for k, d in enumerate(dirs)]
        client.gather(futures)
        merged = _native.merge(root / "merged", dirs)
        df = pd.json_normalize(read_records(merged["tune"]))
    if out is not None:
        df.attrs["dir"] = str(root / "merged")
    return df
