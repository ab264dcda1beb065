"""Progress of long calls: a tqdm bar (when tqdm is installed and output is a
terminal or a notebook), a user callback, or nothing."""

from __future__ import annotations

import sys
from typing import Any, Callable, Optional, Union

#: ``callback(event, text, n)``: event "begin" (text = stage, n = total units),
#: "advance" (n more units), "message" (text, e.g. a point that failed), "end".
Callback = Callable[[str, str, int], Any]
ProgressLike = Union[bool, None, Callback]


def _interactive() -> bool:
    return sys.stderr.isatty() or "ipykernel" in sys.modules


class _Bar:
    """Draws one tqdm bar per stage; messages go above it."""

    def __init__(self, tqdm: Any) -> None:
        self.tqdm = tqdm
        self.bar: Any = None

    def __call__(self, event: str, text: str, n: int) -> None:
        if event == "begin":
            self.close()
            self.bar = self.tqdm(total=n, desc=text, leave=False)
        elif event == "advance" and self.bar is not None:
            self.bar.update(n)
        elif event == "message":
            (self.bar.write if self.bar is not None else print)(text, file=sys.stderr)
        elif event == "end":
            self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def callback(progress: ProgressLike) -> Optional[Callback]:
    """The callback for ``progress``: a callable as given; True for a tqdm bar
    when interactive (silent otherwise, or without tqdm); False/None for none."""
    if progress is None or progress is False:
        return None
    if callable(progress):
        return progress
    if not _interactive():
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return _Bar(tqdm)
