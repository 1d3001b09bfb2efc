"""Calls from several Python threads at once, their failures collected."""

from __future__ import annotations

import threading
from collections.abc import Callable


def run_on_threads(work: Callable[[int], object], count: int) -> list[BaseException]:
    """Run ``work(k)`` for k in 0..count-1, each on its own Python thread,
    all started before any is joined; return what they raised (empty when
    every call returned), for the test to assert on in the main thread."""
    failures: list[BaseException] = []

    def run(k: int) -> None:
        try:
            work(k)
        except BaseException as exc:  # reported to the caller
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return failures
