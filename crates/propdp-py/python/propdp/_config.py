"""Configs from Python values: TOML text, a file, a dict of tables, or flat
keyword arguments routed to their tables — all validated by the Rust core,
so every key keeps the spelling of the TOML configs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Tuple, Union

from . import _native

ConfigLike = Union[str, "os.PathLike[str]", Mapping[str, Any]]

#: `[problem]` and `[algorithm]` keys, as the Rust config defines them.
TABLE_KEYS: Dict[str, Tuple[str, ...]] = {table: tuple(keys) for table, keys in _native.table_keys()}

#: Python names of keys that are Python keywords.
ALIASES = {"lambda_": "lambda"}


def config_error(message: str, field: Optional[str]) -> Exception:
    """A ``ConfigError`` (a ``ValueError``) naming ``field``."""
    err = _native.ConfigError(message)
    err.field = field
    return err


def plain(value: Any) -> Any:
    """numpy scalars and arrays as Python numbers and lists; dicts recursively."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def flat(model: str, algorithm: str, params: Mapping[str, Any], **tables: Any) -> Dict[str, Any]:
    """A config dict from flat keyword arguments: each key goes to the table
    that takes it (``delta``, ``s2``, ``huber_m``, ``noise``, ``kappa`` to
    ``[problem]``; ``lambda``, ``sigma``, ``tau``, ``eta``, ``steps``,
    ``epsilon``, ``delta_priv``, … to ``[algorithm]``); ``tables`` are whole
    tables (``solver``, ``simulation``) given as dicts."""
    problem: Dict[str, Any] = {"model": model}
    alg: Dict[str, Any] = {"kind": algorithm}
    for key, value in params.items():
        key = ALIASES.get(key, key)
        if key in ("model", "kind"):
            raise config_error(f"`{key}` is given by the `model`/`algorithm` argument", key)
        if key in TABLE_KEYS["problem"]:
            problem[key] = plain(value)
        elif key in TABLE_KEYS["algorithm"]:
            alg[key] = plain(value)
        else:
            allowed = ", ".join(k for keys in TABLE_KEYS.values() for k in keys if k not in ("model", "kind"))
            raise config_error(f"`{key}` is not a parameter: allowed {allowed} (lambda as lambda_)", key)
    cfg: Dict[str, Any] = {"problem": problem, "algorithm": alg}
    for name, table in tables.items():
        if table is not None:
            cfg[name] = plain(table)
    return cfg


def resolve(config: ConfigLike) -> Tuple[Union[str, Dict[str, Any]], str]:
    """(TOML text or dict, label) of a config: a path to a file (``str`` or
    ``PathLike``), TOML text, or a dict of tables."""
    if isinstance(config, Mapping):
        return plain(config), "python"
    if isinstance(config, os.PathLike) or (isinstance(config, str) and "\n" not in config and "=" not in config):
        path = Path(config)
        if not path.is_file():
            raise config_error(f"config file {str(path)!r} does not exist", None)
        return path.read_text(), str(path)
    if isinstance(config, str):
        return config, "python"
    raise TypeError(f"config must be a path, TOML text or a dict, not {type(config).__name__}")
