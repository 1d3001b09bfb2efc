"""Byte snapshots of the buffers behind a call's arrays: the bytes a call
changed, outside the ones it may write."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np


def _root(a: np.ndarray) -> np.ndarray:
    r = a
    while isinstance(r.base, np.ndarray):
        r = r.base
    return r


def _addr(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def _raw(root: np.ndarray) -> np.ndarray | None:
    if root.dtype.hasobject or not root.flags.c_contiguous or root.nbytes == 0:
        return None
    return root.reshape(-1).view(np.uint8)


class Memory:
    """Byte snapshots of the buffers behind every array a call was given."""

    def __init__(self, arrays: Iterable[np.ndarray]) -> None:
        self.roots: dict[int, np.ndarray] = {}
        self.before: dict[int, np.ndarray] = {}
        self.marks: dict[int, np.ndarray] = {}
        self.fallback: list[tuple[np.ndarray, np.ndarray]] = []
        for a in arrays:
            root = _root(a)
            raw = _raw(root)
            if raw is None:
                if not a.dtype.hasobject:
                    self.fallback.append((a, a.copy()))
                continue
            if id(root) not in self.roots:
                self.roots[id(root)] = root
                self.before[id(root)] = raw.copy()
                self.marks[id(root)] = np.zeros(raw.shape, dtype=bool)

    def allow(self, a: np.ndarray, index: Any) -> None:
        """The bytes of `a[index]` may change."""
        root = _root(a)
        if id(root) not in self.roots or a.size == 0:
            return
        off = _addr(a) - _addr(root)
        view = np.lib.stride_tricks.as_strided(
            self.marks[id(root)][off:], shape=a.shape + (a.itemsize,), strides=a.strides + (1,)
        )
        view[index] = True

    def changed(self, allowed: bool) -> list[str]:
        """Descriptions of changed bytes (outside the allowed ones if `allowed`)."""
        problems = []
        for k, root in self.roots.items():
            now = _raw(root)
            assert now is not None
            diff = now != self.before[k]
            if allowed:
                diff &= ~self.marks[k]
            if diff.any():
                where = np.flatnonzero(diff)
                problems.append(
                    f"{diff.sum()} bytes of a {root.dtype} buffer of shape {root.shape} changed "
                    f"(first at byte {where[0]}, element {where[0] // root.itemsize})"
                )
        for a, before in self.fallback:
            if not allowed and not np.array_equal(a, before, equal_nan=True):
                problems.append(f"a non-contiguous {a.dtype} array of shape {a.shape} changed")
        return problems
