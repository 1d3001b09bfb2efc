"""Progress of a benchmark run on stderr: a bar (``rich``) when stderr is a
terminal, else plain lines, so logs and pipes stay readable."""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any

from mjrefresh.bench.output import progress


class ProgressBar:
    """Counts measurement groups; :meth:`log` prints a line above the bar.

    Use as a context manager. ``enabled=False`` (or a stderr that is not a
    terminal, or no ``rich``) gives plain progress lines instead of a bar.
    """

    def __init__(self, total: int, enabled: bool = True) -> None:
        self.total = total
        self._bar: Any = None
        self._task: Any = None
        if not (enabled and sys.stderr.isatty()):
            return
        try:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )
        except ImportError:
            return
        self._bar = Progress(
            TextColumn("{task.description:<36}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )

    def __enter__(self) -> ProgressBar:
        if self._bar is not None:
            self._bar.start()
            self._task = self._bar.add_task("measuring", total=self.total)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.stop()

    def log(self, msg: str) -> None:
        """A progress line on stderr (above the bar when there is one)."""
        if self._bar is not None:
            self._bar.console.print(msg, markup=False, highlight=False)
        else:
            progress(msg)

    def step(self, what: str) -> None:
        """Name the group being measured now."""
        if self._bar is not None:
            self._bar.update(self._task, description=what)

    def advance(self) -> None:
        """One group done."""
        if self._bar is not None:
            self._bar.advance(self._task)
