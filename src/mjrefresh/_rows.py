"""Row ids: the one parser of the row arguments of the Python API.

Three argument families name rows, each with its own accepted forms and
wording (pinned by the tests, so callers can rely on them):

* :data:`REFRESH_ROWS` -- ``rows`` of :meth:`Refresher.refresh` and
  :class:`BoundRefresh`: a bool mask of length N, int row ids, a slice or
  one int; bounds, order and uniqueness are checked by the native core on
  every call.
* :data:`ENV_IDS` -- ``env_ids``/``rows`` of :class:`StateCache`
  (via :func:`normalize_rows`): also None, an int or a slice; ids may come
  in any order and repeat (a read returns them as asked).
* :data:`SIM_IDS` -- ``ids`` of the mjbatch-uni drop-in: int32/int64 ids,
  sorted and unique, as mjbatch-uni itself requires.

The selection of the dirty rows among the rows a read returns is here too
(a ``dirty`` mask of ``refresh_dirty_rows`` is checked and cleared by the
native core).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Union

import numpy as np

from .outputs import as_array, viewable

#: What ``env_ids``/``rows`` of a :class:`~mjrefresh.StateCache` accept: None
#: (all rows), an int, a slice, a sequence or array of int row ids, or a bool
#: mask of length N.
RowsLike = Union[int, slice, Sequence[int], np.ndarray, Any, None]  # noqa: UP007

_INT64 = np.dtype(np.int64)
_INT32_64: frozenset[np.dtype] = frozenset((np.dtype(np.int32), _INT64))


def is_int(x: object) -> bool:
    """True for a Python or numpy integer that is not a bool."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


@dataclass(frozen=True)
class RowIdsForm:
    """How one argument family spells row ids: what it accepts, how it words errors.

    Attributes:
        count: what N is called in messages (``"N"``, ``"num_sims"``).
        shape_expected: the expected value in the not-1-D message.
        dtype_expected: the expected value in the wrong-dtype message.
        dtype_error: the exception raised for a wrong dtype.
        int_dtypes: the accepted id dtypes; None accepts every int dtype.
        bounds: ``"native"`` (the native core checks bounds, order and
            uniqueness), ``"each"`` (every id in ``[0, N)``) or
            ``"sorted_unique"`` (in ``[0, N)``, strictly increasing).
        accepts: every accepted form, for the message naming what else was
            passed.
        any_array_like: convert anything ``np.asarray`` takes (a drop-in for
            an API that does); otherwise lists, tuples and ranges, or arrays
            viewed in place (numpy, DLPack, array interface).
    """

    count: str
    shape_expected: str
    dtype_expected: str
    dtype_error: type[Exception]
    int_dtypes: frozenset[np.dtype] | None
    bounds: Literal["native", "each", "sorted_unique"]
    accepts: str = ""
    any_array_like: bool = False


REFRESH_ROWS = RowIdsForm(
    count="N",
    shape_expected="a 1-D bool mask or int array",
    dtype_expected="a bool mask or int row ids",
    dtype_error=TypeError,
    int_dtypes=None,
    bounds="native",
    accepts="int row ids (a list or an int array), a slice, an int or a bool mask of length N",
)
ENV_IDS = RowIdsForm(
    count="N",
    shape_expected="a 1-D array of row ids or a bool mask",
    dtype_expected="int row ids or a bool mask",
    dtype_error=TypeError,
    int_dtypes=None,
    bounds="each",
    accepts="None, an int, a slice, int row ids (a list or an int array) or a bool mask",
)
SIM_IDS = RowIdsForm(
    count="num_sims",
    shape_expected="a 1-D array of sorted unique ids or a bool mask",
    dtype_expected="int32, int64 or a bool mask",
    dtype_error=ValueError,
    int_dtypes=_INT32_64,
    bounds="sorted_unique",
    any_array_like=True,
)


def row_ids(name: str, rows: Any, n: int, form: RowIdsForm = REFRESH_ROWS) -> np.ndarray:
    """Contiguous int64 row ids from a bool mask of length `n` or int ids.

    A mask becomes the ids where it is true; an empty sequence or array (of
    any dtype) becomes no ids. `form` says which ids are accepted and how
    errors are worded; `name` is the argument named in them.

    Raises:
        TypeError: not an array-like (or, per `form`, a wrong dtype).
        ValueError: not 1-D, a mask of the wrong length, or (per `form`)
            ids out of bounds or not sorted unique.
    """
    if (
        form.bounds == "native"
        and type(rows) is np.ndarray
        and rows.dtype == _INT64
        and rows.ndim == 1
        and rows.flags.c_contiguous
        and rows.flags.aligned
    ):
        return rows  # already what the native core takes (the common case)
    if form.bounds == "native" and isinstance(rows, slice):
        start, stop, step = _slice_indices(name, rows, n)
        ids = np.arange(start, stop, step, dtype=np.int64)
        return np.ascontiguousarray(ids[::-1]) if step < 0 else ids  # ascending, as the core takes
    if form.bounds == "native" and is_int(rows):
        r = int(rows)  # any size: checked here, before it must fit an int64
        _require_in_range(name, [r], n)
        return np.array([r], dtype=np.int64)
    if form.any_array_like or isinstance(rows, (list, tuple, range)):
        try:
            a = np.asarray(rows)
        except ValueError:  # numpy's "inhomogeneous shape" of a ragged sequence
            raise ValueError(
                f"{name}: expected {form.shape_expected}, got a ragged sequence"
            ) from None
    elif viewable(rows):
        a = as_array(name, rows)
    else:
        raise TypeError(f"{name}: expected {form.accepts}, got {type(rows).__name__}")
    if a.ndim != 1:
        raise ValueError(f"{name}: expected {form.shape_expected}, got shape {a.shape}")
    if isinstance(rows, (list, tuple)) and a.dtype != np.bool_ and a.size:
        a = _list_ids(name, rows, a, n, form)
    if a.dtype == object and a.size and all(is_int(x) for x in a.tolist()):
        # numpy keeps ints past 64 bits as objects: name one out of range
        # (in-range ints of an object array get the dtype error below)
        _require_in_range(name, [int(x) for x in a.tolist()], n)
    if a.dtype == np.bool_:
        if a.shape[0] != n:
            raise ValueError(
                f"{name}: expected a bool mask of length {n} ({form.count}), "
                f"got length {a.shape[0]}"
            )
        return np.flatnonzero(a)
    if a.size == 0:
        return np.empty(0, dtype=np.int64)
    if a.dtype.kind not in "iu" or (form.int_dtypes is not None and a.dtype not in form.int_dtypes):
        raise form.dtype_error(f"{name}: expected {form.dtype_expected}, got dtype {a.dtype}")
    if a.dtype.kind == "u" and a.dtype.itemsize == 8 and int(a.max()) > np.iinfo(np.int64).max:
        raise ValueError(f"{name}: expected row ids in [0, {n}), got {int(a.max())}")
    ids = np.require(a, dtype=np.int64, requirements=("C", "A"))
    if form.bounds == "each":
        lo, hi = _min_max(ids)
        if lo < 0 or hi >= n:
            raise ValueError(f"{name}: expected row ids in [0, {n}), got {lo if lo < 0 else hi}")
    elif form.bounds == "sorted_unique" and (
        ids[0] < 0 or ids[-1] >= n or (ids.size > 1 and np.any(ids[1:] <= ids[:-1]))
    ):
        raise ValueError(f"{name}: expected sorted unique ids in [0, {n}), got {ids.tolist()[:8]}")
    return ids


def _require_in_range(name: str, ids: list[int], n: int) -> None:
    """The out-of-range ValueError for the first of the Python ints `ids`
    outside ``[0, n)`` (any size: before they must fit an int64)."""
    bad = next((v for v in ids if not 0 <= v < n), None)
    if bad is not None:
        raise ValueError(f"{name}: expected row ids in [0, {n}), got {bad}")


def _list_ids(
    name: str, rows: list[Any] | tuple[Any, ...], a: np.ndarray, n: int, form: RowIdsForm
) -> np.ndarray:
    """`a` (``np.asarray(rows)``) checked against the items numpy promoted:
    a bool among ints is refused (numpy reads it as row 0 or 1), and ints
    that no one int dtype holds (int64 with uint64, ints past 2**63) are the
    ids they are, not the float64s numpy made of them."""
    kinds = set(map(type, rows))
    if bool in kinds or np.bool_ in kinds:
        raise form.dtype_error(
            f"{name}: expected {form.dtype_expected}, got a {type(rows).__name__} mixing "
            "bools and ints"
        )
    if a.dtype.kind == "f" and all(is_int(x) for x in rows):
        values = [int(x) for x in rows]
        _require_in_range(name, values, n)
        return np.array(values, dtype=np.int64)
    return a


def _slice_indices(name: str, rows: slice, n: int) -> tuple[int, int, int]:
    """``rows.indices(n)`` with the step clamped to [-n, n] (a longer step
    selects at most `start` either way; int64 arithmetic on it then holds),
    or the error naming `name`."""
    try:
        start, stop, step = rows.indices(n)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{name}: {exc}, got {rows!r}") from None
    bound = max(n, 1)
    return start, stop, max(-bound, min(step, bound))


def _min_max(ids: np.ndarray) -> tuple[int, int]:
    """Smallest and largest of the non-empty `ids`."""
    if ids.size <= 32:  # Python's min/max beat two numpy reductions on a few ids
        values = ids.tolist()
        return min(values), max(values)
    return int(ids.min()), int(ids.max())


def normalize_rows(name: str, rows: Any, n: int) -> int | slice | np.ndarray:
    """Validate `rows` for N = `n` rows and return an index into axis 0.

    Returns an int, a slice, or an int64 array of row ids (order and
    duplicates kept; a bool mask becomes the ids where it is true).

    Raises:
        TypeError: not an int, slice, int sequence/array or bool mask.
        ValueError: a row id outside ``[0, n)`` or a mask of the wrong length.
    """
    if is_int(rows):
        r = int(rows)
        if not 0 <= r < n:
            raise ValueError(f"{name}: expected a row id in [0, {n}), got {r}")
        return r
    if isinstance(rows, slice):
        _slice_indices(name, rows, n)
        return rows
    if isinstance(rows, (bool, np.bool_, str, bytes, float)):
        raise TypeError(
            f"{name}: expected None, an int, a slice, int row ids or a bool mask, "
            f"got {type(rows).__name__} {rows!r}"
        )
    return row_ids(name, rows, n, ENV_IDS)


def dirty_among(dirty: np.ndarray, rows: int | slice | np.ndarray | None) -> np.ndarray:
    """Sorted unique int64 ids of the rows among `rows` (as :func:`normalize_rows`
    returns them; None = all) where the bool mask `dirty` is true."""
    if rows is None:
        return np.flatnonzero(dirty)
    if isinstance(rows, int):
        return np.array([rows], dtype=np.int64) if dirty[rows] else np.empty(0, np.int64)
    if isinstance(rows, slice):
        start, _, step = _slice_indices("env_ids", rows, dirty.shape[0])
        ids = np.flatnonzero(dirty[rows]) * step + start
        return ids[::-1] if step < 0 else ids
    ids = rows[dirty[rows]]
    return np.unique(ids) if ids.size else ids
