"""Configs from Python values: TOML text, a file or a dict of tables — all
validated by the Rust core, so every key keeps the spelling of the TOML
configs. (Keyword arguments of solve/simulate are routed to their tables in
Rust.)"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Tuple, Union

from . import _native

ConfigLike = Union[str, "os.PathLike[str]", Mapping[str, Any]]


def config_error(message: str, field: Optional[str]) -> Exception:
    """A ``ConfigError`` (a ``ValueError``) naming ``field``."""
    err = _native.ConfigError(message)
    err.field = field
    return err


_PLAIN = (float, int, str, bool)


def plain(value: Any) -> Any:
    """numpy scalars and arrays as Python numbers and lists; dicts recursively."""
    if type(value) in _PLAIN:
        return value
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if hasattr(value, "columns") and hasattr(value, "to_dict"):
        # a DataFrame, e.g. a spectrum from propdp.spectrum: its columns as lists
        return {str(c): plain(value[c].tolist()) for c in value.columns}
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def resolve(config: ConfigLike) -> Tuple[Union[str, Dict[str, Any]], str]:
    """(TOML text or dict, label) of a config: a path to a file (``str`` or
    ``PathLike``), TOML text, or a dict of tables."""
    if isinstance(config, Mapping):
        return plain(config), "python"
    if isinstance(config, str) and not config.strip():
        raise config_error("config is empty: give a path to a TOML file, TOML text or a dict of tables", None)
    if isinstance(config, os.PathLike) or (isinstance(config, str) and "\n" not in config and "=" not in config):
        path = Path(config)
        if path.exists() and not path.is_file():
            # a FIFO would block the read, a device never end: only regular files are read
            raise config_error(f"config file {str(path)!r} is not a regular file: give a file's path", None)
        if not path.is_file():
            raise config_error(f"config file {str(path)!r} does not exist", None)
        return path.read_text(), str(path)
    if isinstance(config, str):
        return config, "python"
    raise TypeError(f"config must be a path, TOML text or a dict, not {type(config).__name__}")
