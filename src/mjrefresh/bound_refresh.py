"""A refresh bound to arrays checked once: :class:`BoundRefresh`, and :class:`RefreshError`.

:meth:`Refresher.bind <mjrefresh.Refresher.bind>` hands every array to the
native core, which checks them all once (types, dtypes, shapes, strides,
writability, memory overlaps, model fields, the clock-sensor time rule:
``cpp/bindings/parse.cc``) and keeps them. A :class:`BoundRefresh` call then
only parses the rows; the core checks the rows (and a dirty mask) against
the bound arrays and runs. ``Refresher.refresh`` is a bind followed by one
call.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._not_copyable import NotCopyable
from ._rows import REFRESH_ROWS, row_ids
from .outputs import RefreshOutputs, as_array, exporter


class RefreshError(RuntimeError):
    """MuJoCo raised an error while refreshing some rows.

    All other rows of the call were refreshed; the failing rows' outputs were
    left as they were. ``rows`` lists the failing rows (sorted).
    """

    def __init__(self, message: str, rows: Sequence[int]) -> None:
        super().__init__(message)
        self.rows: tuple[int, ...] = tuple(int(r) for r in rows)


def raise_failures(failed: Sequence[int], message: str) -> None:
    """RefreshError for the rows a native call reports as failed (if any)."""
    if failed:
        extra = f" ({len(failed) - 1} other rows also failed)" if len(failed) > 1 else ""
        raise RefreshError(
            f"MuJoCo error while refreshing row {failed[0]}: {message}{extra}; "
            "all other rows were refreshed",
            failed,
        )


def memory_of(obj: Any) -> tuple[Any, ...]:
    """Where an array object's memory is now: (address, shape, strides)."""
    data_ptr = getattr(obj, "data_ptr", None)
    if callable(data_ptr):  # torch: no export needed
        return (data_ptr(), tuple(obj.shape), tuple(obj.stride()))
    interface = getattr(obj, "__array_interface__", None)
    if isinstance(interface, dict):
        data = interface.get("data")
        if isinstance(data, tuple):  # (address, read-only flag)
            return (data[0], interface["shape"], interface.get("strides"))
        # `data` may be a buffer object (the spec allows it; data[0] is then
        # its first item, not an address): ask numpy where the view points.
        view = np.asarray(obj)
        return (view.__array_interface__["data"][0], view.shape, view.strides)
    if hasattr(obj, "__dlpack__"):
        view = np.from_dlpack(obj)
        return (view.__array_interface__["data"][0], view.shape, view.strides)
    # The buffer protocol (a memoryview, ...): its exporter cannot move the
    # memory while the bound call holds the buffer, so nothing to watch.
    return ()


def moved(arrays: dict[str, Any]) -> list[tuple[str, Any, tuple[Any, ...]]]:
    """(name, object, its memory now) for each of `arrays` that is not numpy
    memory (a torch tensor, another DLPack or array-interface exporter):
    what a bound call checks has not moved before each run."""
    watch = []
    for name, obj in arrays.items():
        source = exporter(obj)
        # A scalar (time=2.5, np.float64(2.5)) is taken by value.
        if source is not None and not isinstance(source, (numbers.Number, np.generic)):
            watch.append((name, source, memory_of(source)))
    return watch


class BoundRefresh(NotCopyable):
    """Refreshes rows of arrays that :meth:`Refresher.bind` checked once.

    The arrays are kept, not copied: each call reads the state arrays as they
    are then and writes the outputs in place. Bind again after replacing an
    array (a new object); writing into the bound ones needs no rebind.
    Calling it after the refresher is closed raises ``RuntimeError``.

    ``bound(rows)`` is ``bound.refresh(rows)``.
    """

    _instead = "bind again with Refresher.bind"

    __slots__ = ("_inputs", "_keep", "_native", "_out", "_watch")

    def __init__(
        self,
        native: Any,
        inputs: dict[str, Any],
        out: RefreshOutputs,
        keep: object = None,
        model_fields: dict[str, Any] | None = None,
    ) -> None:
        # Built by Refresher.bind from a native bound call; not for direct use.
        # `keep`: objects the native call points into that it does not own
        # (the MjData of an MjData-list binding).
        self._native = native
        self._inputs = inputs
        self._out = out
        self._keep = keep
        # Objects that can move their memory under the core's views (torch
        # tensors, ...), checked before each run (~1 us each); numpy
        # arrays cannot while the core holds them.
        self._watch = moved({**inputs, **out.arrays(), **(model_fields or {})})

    @property
    def num_envs(self) -> int:
        """N, the number of rows of the bound arrays."""
        return int(self._native.num_envs)

    @property
    def inputs(self) -> dict[str, Any]:
        """The bound state arrays by name (``qpos``, ``qvel`` and, when given,
        ``mocap_pos``, ``mocap_quat``, ``time``): the very arrays read, not copies."""
        return dict(self._inputs)

    @property
    def out(self) -> RefreshOutputs:
        """The outputs written."""
        return self._out

    def __call__(self, rows: Any) -> int:
        """Same as :meth:`refresh`."""
        return self.refresh(rows)

    def refresh(self, rows: Any) -> int:
        """Refresh `rows`: sorted unique int ids, a slice, an int or a bool
        mask of length N.

        Returns:
            The number of rows refreshed.

        Raises:
            TypeError, ValueError: bad `rows` (nothing was written).
            RefreshError: MuJoCo raised an error in some rows (the others
                were refreshed).
        """
        ids = row_ids("rows", rows, self.num_envs, REFRESH_ROWS)
        self._refresh_ids(ids)
        return int(ids.shape[0])

    def _check_memory(self) -> None:
        """ValueError naming a bound object whose memory moved since binding:
        the core would read or write the memory it had (freed by then)."""
        for name, obj, where in self._watch:
            if memory_of(obj) != where:
                raise ValueError(
                    f"{name}: its memory moved since it was bound (the {type(obj).__name__} was "
                    "reallocated, e.g. by torch's resize_ or set_), and the refresh would use the "
                    "memory it had; bind it again as it is now (Refresher.bind, a new cache)"
                )

    def refresh_dirty_rows(self, dirty: Any) -> int:
        """Refresh the rows where the writable bool array `dirty` (length N) is
        true, then clear those entries. Returns the number of rows refreshed.
        On a RefreshError the failing rows stay dirty."""
        self._check_memory()
        count, failed, message = self._native.run_dirty(as_array("dirty", dirty, written=True))
        raise_failures(failed, message)
        return int(count)

    def stage_seconds(self, rows: Any) -> float | None:
        """Seconds the planned MuJoCo stage functions alone take for `rows` on
        one thread, timed inside the core with no outputs written: the cost
        floor of the exact engine (None for the fast engine). A benchmark
        hook; the values of the bound arrays are read as for a refresh."""
        ids = row_ids("rows", rows, self.num_envs, REFRESH_ROWS)
        self._check_memory()
        seconds = self._native.stage_seconds(ids)
        return None if seconds is None else float(seconds)

    def _refresh_ids(self, ids: np.ndarray) -> None:
        """One native call over the contiguous int64 `ids`."""
        self._check_memory()
        raise_failures(*self._native.run(ids))

    def __repr__(self) -> str:
        return f"<mjrefresh.BoundRefresh N={self.num_envs}, outputs {sorted(self._native.outputs)}>"
