"""The memory-traffic floor of a refresh, as a call the benchmark tools time
next to the refresh: only the bytes any refresh of the rows must move, split
over the same number of threads."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait

import numpy as np


def split_rows(n: int, threads: int, part: Callable[[int, int], None]) -> Callable[[], None]:
    """A call running ``part(lo, hi)`` on ``threads`` contiguous slices of ``n``
    rows: the calling thread takes the first, Python worker threads the others
    (numpy releases the GIL for the array work of a part)."""
    bounds = np.linspace(0, n, threads + 1).astype(int)
    parts = list(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True))
    pool = ThreadPoolExecutor(max_workers=threads - 1) if threads > 1 else None

    def run() -> None:
        others = [pool.submit(part, lo, hi) for lo, hi in parts[1:]] if pool else []
        part(*parts[0])
        wait(others)

    return run


def sensor_columns(model, n: int, columns: tuple[int, int]) -> np.ndarray:
    """The (n, b - a) view, columns ``columns`` = (a, b), of a zeroed
    (n, nsensordata) array: output columns with the row stride a refresh of
    selected sensor columns writes at."""
    a, b = columns
    return np.zeros((n, model.nsensordata))[:, a:b]


def read_once(arrays: Sequence[np.ndarray], lo: int, hi: int) -> None:
    """Read rows ``lo:hi`` of each (N, ...) array once (numpy sums)."""
    for values in arrays:
        values[lo:hi].sum()


def rows_read(arrays: Sequence[np.ndarray], threads: int) -> Callable[[], None]:
    """A call reading every row of each (N, ...) array once, the rows split
    over ``threads`` threads like ``refresh_traffic``'s."""
    return split_rows(arrays[0].shape[0], threads, lambda lo, hi: read_once(arrays, lo, hi))


def refresh_traffic(
    qpos: np.ndarray,
    qvel: np.ndarray,
    columns: np.ndarray,
    threads: int,
    per_row: Sequence[np.ndarray] = (),
) -> Callable[[], None]:
    """Only the traffic of a refresh of every row: each row's ``qpos``/``qvel``
    read once (numpy sums) and its output ``columns`` (an (N, width) view)
    read and written once in place (``*= 1.0``: the values stay as they are,
    signed zeros and NaNs included; a store to a line not in cache reads it
    first anyway). ``per_row``: more (N, ...) arrays each row reads once (per-
    environment model fields), read like qpos."""

    def part(lo: int, hi: int) -> None:
        read_once((qpos, qvel, *per_row), lo, hi)
        columns[lo:hi] *= 1.0

    return split_rows(qpos.shape[0], threads, part)
