"""Type stubs of the Rust extension `propdp._native` (see `propdp` for the documented API)."""

from os import PathLike
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ._results import Result

__version__: str
GIT_COMMIT: str

class ConfigError(ValueError):
    """A config or argument is invalid; ``field`` names it (e.g. ``algorithm.sigma``)."""

    field: Optional[str]

class PropdpError(RuntimeError):
    """A computation failed: no convergence, no solution, a file not written."""

_Config = Union[str, Mapping[str, Any]]
_Progress = Optional[Callable[[str, str, int], Any]]
_Path = Union[str, "PathLike[str]"]

def parameters() -> List[Dict[str, Any]]: ...
def solve(model: str, algorithm: str, *, solver: Optional[Mapping[str, Any]] = None, **params: Any) -> Result: ...
def simulate(
    model: str,
    algorithm: str,
    params: Mapping[str, Any],
    simulation: Mapping[str, Any],
    solver: Optional[Mapping[str, Any]] = None,
    progress: _Progress = None,
) -> Dict[str, Any]: ...
def run(
    config_: _Config,
    label: str,
    out: _Path,
    resume: bool = False,
    overwrite: bool = False,
    theory: bool = True,
    simulation: bool = True,
    progress: _Progress = None,
    shard: Optional[Tuple[int, int]] = None,
) -> Dict[str, Any]: ...
def spectrum(
    x: List[List[float]],
    names: List[str],
    y: Optional[List[float]] = None,
    standardize: bool = False,
    model: Optional[str] = None,
    huber_m: float = 1.0,
    data_model: str = "auto",
) -> Dict[str, Any]: ...
def records(path: _Path) -> List[Dict[str, Any]]: ...
def merge(out: _Path, shards: List[_Path]) -> Dict[str, Any]: ...
def tune(
    text: str,
    label: str,
    out: _Path,
    resume: bool = False,
    overwrite: bool = False,
    progress: _Progress = None,
    shard: Optional[Tuple[int, int]] = None,
) -> str: ...
def draw(
    results: _Path,
    out: Optional[_Path] = None,
    *,
    x: Optional[str] = None,
    series: Optional[str] = None,
    metrics: Optional[List[str]] = None,
    y_log: Optional[bool] = None,
) -> Tuple[List[str], Optional[str]]: ...
def mechanism(
    config_: Optional[Any],
    model: Optional[str],
    epsilon: float,
    delta_priv: float,
    metric: Optional[str] = None,
    solver: Optional[Dict[str, Any]] = None,
    progress: Optional[Any] = None,
    **params: Any,
) -> str: ...
def privacy(
    algorithm: str,
    model: str,
    *,
    huber_m: Optional[float] = None,
    lambda_: Optional[float] = None,
    steps: Optional[int] = None,
    neighbouring: Optional[str] = None,
    delta_priv: Optional[float] = None,
    noise: Optional[float] = None,
    epsilon: Optional[float] = None,
    rho: Optional[float] = None,
    sample_rate: Optional[float] = None,
    clip: Optional[float] = None,
    extra_ridge: Optional[str] = None,
    groups: Optional[int] = None,
) -> Dict[str, Any]: ...
class Event:
    """A privacy event (the accountant's one event type); its subclasses build it."""

    def poisson(self, sample_rate: float) -> "PoissonSampledEvent": ...
    def repeat(self, count: int) -> "SelfComposedEvent": ...

class GaussianEvent(Event):
    """One release of the Gaussian mechanism at noise multiplier σ/Δ."""

    noise_multiplier: float
    def __init__(self, noise_multiplier: float) -> None: ...

class PoissonSampledEvent(Event):
    """A Gaussian event run on a Poisson sample of rate ``sample_rate``."""

    sample_rate: float
    event: Event
    def __init__(self, sample_rate: float, event: Event) -> None: ...

class SelfComposedEvent(Event):
    """``event`` composed with itself ``count`` times."""

    event: Event
    count: int
    def __init__(self, event: Event, count: int) -> None: ...

class ComposedEvent(Event):
    """Events composed in order."""

    events: List[Event]
    def __init__(self, events: Sequence[Event]) -> None: ...

class ObjectiveEvent(Event):
    """A model released by objective perturbation (privacy loss ≤ c + A|Z|)."""

    parameters: Tuple[float, float, float, float, float]
    def __init__(
        self, lipschitz: float, curvature: float, lambda_: float, sigma: float, radius: Optional[float] = None
    ) -> None: ...

def dpsgd_event(noise_multiplier: float, sample_rate: float, steps: int) -> SelfComposedEvent: ...
def epsilon(event: Event, delta: float, neighbouring: str, sampling: str) -> Dict[str, Any]: ...
def admits(event: Event, neighbouring: str) -> None: ...
def from_dp_event(dp_event: Any) -> Event: ...
def calibrate_run(
    knob: str,
    noise_multiplier: float,
    sample_rate: float,
    steps: int,
    epsilon: Optional[float],
    delta: Optional[float],
    rho: Optional[float],
    neighbouring: str,
) -> Dict[str, Any]: ...
def membership_run(segments: List[Tuple[float, float, int]], fprs: List[float], neighbouring: str) -> Dict[str, Any]: ...
def describe(config_: _Config, label: str) -> str: ...
def config_text(config_: _Config) -> str: ...

class InferenceRefused(PropdpError):
    """The data do not support a valid interval; ``reason`` names why."""

    reason: Optional[str]

class Rows:
    """The n × d rows and n labels of one fit, filled a chunk at a time;
    reserved when made (``MemoryError`` when the machine cannot give them)."""

    def __init__(self, n: int, d: int) -> None: ...
    def push(self, x: bytes, y: bytes) -> None: ...

class Fitted:
    params: List[float]
    params_debiased: List[float]
    bse: List[float]
    def conf_int(self, alpha: float) -> List[Tuple[float, float]]: ...
    def contrast(self, a: List[float], alpha: float) -> Tuple[float, float, float, float]: ...
    def test_error_int(self, alpha: float) -> Tuple[float, float, float, float]: ...
    def intercept_int(self, alpha: float) -> Optional[Tuple[float, float, float, float]]: ...
    def report(self) -> str: ...

def infer(
    rows: Rows,
    *,
    model: str,
    algorithm: str,
    lambda_: float,
    epsilon: float,
    delta_priv: float,
    neighbouring: str,
    row_norm: float,
    huber_m: float,
    seed: Optional[int],
    noise: Optional[str] = None,
    holdout: float = 0.0,
    test_clip: Optional[float] = None,
    covariance: Optional[bytes] = None,
    steps: Optional[int] = None,
    eta: Optional[float] = None,
    sample_rate: Optional[float] = None,
    clip: Optional[float] = None,
    extra_ridge: str = "auto",
    standardize: bool = False,
    intercept: Optional[bool] = None,
) -> Fitted: ...
