"""Argument arrays in other memory layouts and dtypes, and row ids or dirty
masks that view the bytes of other arrays."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np


def relayout(a: np.ndarray, kind: str, fill: float = 777.25) -> np.ndarray:
    """`a`'s values in another memory layout (a new buffer; `fill` elsewhere)."""
    a = np.asarray(a)
    if kind == "c":
        return np.ascontiguousarray(a).copy()
    if kind == "row_strided":
        buf = np.full((a.shape[0] * 3, *a.shape[1:]), fill, dtype=a.dtype)
        buf[1::3] = a
        return buf[1::3]
    if kind == "negative_rows":
        return a[::-1].copy()[::-1]
    if kind == "fortran":
        return np.asfortranarray(a.copy())
    if kind == "last_strided":
        buf = np.full((*a.shape[:-1], a.shape[-1] * 2), fill, dtype=a.dtype)
        buf[..., ::2] = a
        return buf[..., ::2]
    if kind == "negative_last":
        return a[..., ::-1].copy()[..., ::-1]
    if kind == "wide_rows":  # each row inside a wider row: a backend's interleaved state
        buf = np.full((*a.shape[:-1], a.shape[-1] + 5), fill, dtype=a.dtype)
        buf[..., 2 : 2 + a.shape[-1]] = a
        return buf[..., 2 : 2 + a.shape[-1]]
    if kind == "item_strided":
        buf = np.full((a.shape[0], a.shape[1] * 2, *a.shape[2:]), fill, dtype=a.dtype)
        buf[:, ::2] = a
        return buf[:, ::2]
    if kind == "item_reversed":
        return a[:, ::-1].copy()[:, ::-1]
    if kind == "broadcast":  # read-only, row stride 0: every row is row 0
        return np.broadcast_to(a[:1].copy(), a.shape)
    if kind == "broadcast_writable":
        base = a[:1].copy()
        return np.lib.stride_tricks.as_strided(
            base, shape=a.shape, strides=(0, *base.strides[1:]), writeable=True
        )
    if kind == "readonly":
        b = a.copy()
        b.flags.writeable = False
        return b
    if kind == "unaligned":
        raw = np.zeros(a.nbytes + a.itemsize, dtype=np.uint8)
        b = raw[1 : 1 + a.nbytes].view(a.dtype).reshape(a.shape)
        b[...] = a
        return b
    raise ValueError(f"unknown layout {kind!r}")


LAYOUTS = (
    "c",
    "row_strided",
    "negative_rows",
    "fortran",
    "last_strided",
    "negative_last",
    "wide_rows",
    "broadcast",
    "readonly",
    "unaligned",
)
ITEM_LAYOUTS = ("item_strided", "item_reversed")


def retyped(a: Any, dtype: Any) -> np.ndarray:
    """`a` converted to `dtype` (zeros of that dtype where numpy cannot convert)."""
    a = np.asarray(a)
    dt = np.dtype(dtype)
    if dt.kind == "V":
        return np.zeros(a.shape, dtype=dt)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return a.astype(dt)
    except (TypeError, ValueError):
        return np.zeros(a.shape, dtype=dt)


def int64_view_into(arr: np.ndarray, row: int, first_col: int, ids: Sequence[int]) -> np.ndarray:
    """Row ids written as int64 into the bytes of `arr[row]` from column
    `first_col` on (a row's planned output columns), returned as an int64
    view of them; only as many ids as fit (the first ones) are kept."""
    seg = arr[row].reshape(-1)[first_col:]
    raw = seg.view(np.uint8)
    k = min(len(ids), raw.size // 8)
    view = raw[: 8 * k].view(np.int64)
    view[:] = ids[:k]
    return view


def bool_view_into(arr: np.ndarray, byte: int = 0) -> np.ndarray:
    """A writable (N,) bool view of byte `byte` of each row of `arr` (all False)."""
    first = arr[(slice(None),) + (0,) * (arr.ndim - 2)]  # (N, width): each row's first item
    mask = first.view(np.uint8)[:, byte].view(np.bool_)
    mask[:] = False
    return mask
