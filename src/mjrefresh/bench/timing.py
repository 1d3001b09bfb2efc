"""Warm-up, calibration and interleaved repetitions, plus summary statistics."""

from __future__ import annotations

import gc
import math
import statistics
import time
from collections.abc import Callable, Sequence


def time_calls(fn: Callable[[], None], calls: int) -> float:
    """Seconds per call, averaged over ``calls`` back-to-back calls."""
    t0 = time.perf_counter_ns()
    for _ in range(calls):
        fn()
    return (time.perf_counter_ns() - t0) * 1e-9 / calls


def calibrate(fn: Callable[[], None], min_sample_s: float, max_calls: int = 10_000) -> int:
    """Calls per sample so that one sample lasts at least ``min_sample_s``."""
    per_call = time_calls(fn, 1)
    if per_call <= 0:
        return max_calls
    return int(min(max_calls, max(1, math.ceil(min_sample_s / per_call))))


def interleaved(
    fns: dict[str, Callable[[], None]],
    calls_per_sample: dict[str, int],
    repeats: int,
    warmup: int = 1,
) -> dict[str, list[float]]:
    """Time every function ``repeats`` times, interleaved A B C A B C ...

    Each function is warmed up first. A sample is the mean time per call over
    ``calls_per_sample[name]`` back-to-back calls. The garbage collector is off
    while timing.
    """
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    samples: dict[str, list[float]] = {name: [] for name in fns}
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            for name, fn in fns.items():
                samples[name].append(time_calls(fn, calls_per_sample[name]))
    finally:
        if enabled:
            gc.enable()
    return samples


def summary(samples: Sequence[float]) -> dict[str, float]:
    """Median, min and max of per-call times in seconds."""
    return {
        "median_s": statistics.median(samples),
        "min_s": min(samples),
        "max_s": max(samples),
    }


def per_row_text(st: dict[str, float], rows: int) -> str:
    """A :func:`summary` as ``median (min-max)`` microseconds per row (median 7 wide)."""
    return (
        f"{st['median_s'] * 1e6 / rows:>7.3f} "
        f"({st['min_s'] * 1e6 / rows:.3f}-{st['max_s'] * 1e6 / rows:.3f})"
    )
