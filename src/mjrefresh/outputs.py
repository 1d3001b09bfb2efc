"""Output arrays of a refresh, and conversion of caller arrays without copies.

The native core's output table (``cpp/core/io_tables.h`` ``kOutputs``,
exported as ``_core.OUTPUTS``) is the one list of outputs: their names, what
their middle axis is indexed by, their width and the ``MjData`` field each
mirrors. Everything here derives from it: :class:`RefreshOutputs` is a
dataclass generated with one field per output.
"""

from __future__ import annotations

import weakref
from dataclasses import field, make_dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ._native import core as _core


class OutputSpec(NamedTuple):
    """One row of the native output table."""

    name: str
    #: what the middle axis is indexed by: "bodies", "relative" (the same
    #: bodies in the relative_to frame), "sites", or "sensordata" (the
    #: (N, nsensordata) array, no middle axis)
    indexed_by: str
    width: int  # values per item
    mjdata_field: str | None  # the MjData field it mirrors, for MjData lists


#: The native output table, in the core's order.
OUTPUTS: tuple[OutputSpec, ...] = tuple(
    OutputSpec(str(name), str(by), int(width), None if field is None else str(field))
    for name, by, width, field in _core.OUTPUTS
)
OUTPUT_NAMES: tuple[str, ...] = tuple(o.name for o in OUTPUTS)

#: The native input table: (name, mjModel count of the middle axis or None, width).
INPUT_NAMES: tuple[str, ...] = tuple(str(name) for name, _, _ in _core.INPUTS)


_DOC = """Arrays a refresh writes into; ``None`` fields are not written.

Fields, one per output of the native table (:data:`OUTPUT_NAMES`), with N
rows, B selected bodies, S selected sites:
``body_pos (N,B,3)``, ``body_quat (N,B,4)``, ``body_linvel (N,B,3)``,
``body_angvel (N,B,3)`` in the world frame at the body frame origin (the
values of framepos/framequat/framelinvel/frameangvel sensors on the
body's xbody frame); ``body_pos_rel (N,B,3)``, ``body_quat_rel (N,B,4)``
in the ``relative_to`` body's frame; ``site_pos (N,S,3)``,
``site_mat (N,S,9)`` (row-major, like ``MjData.site_xmat``);
``sensordata (N, nsensordata)`` of which only the planned columns are
written. Each array is float64 or float32 with a contiguous last axis;
row strides are free (a backend's row-strided views work in place).
"""


def _arrays(self: Any) -> dict[str, np.ndarray]:
    """The non-None output arrays by name."""
    return {name: getattr(self, name) for name in OUTPUT_NAMES if getattr(self, name) is not None}


if TYPE_CHECKING:

    class RefreshOutputs:  # the generated dataclass below, as type checkers see it
        def __init__(self, **arrays: np.ndarray | None) -> None: ...
        def __getattr__(self, name: str) -> np.ndarray | None: ...
        def __setattr__(self, name: str, value: np.ndarray | None) -> None: ...
        def arrays(self) -> dict[str, np.ndarray]: ...

else:
    # Generated from the native table: a new output is a row there, not here.
    RefreshOutputs = make_dataclass(
        "RefreshOutputs",
        [(name, "np.ndarray | None", field(default=None)) for name in OUTPUT_NAMES],
        namespace={"arrays": _arrays, "__doc__": _DOC, "__module__": __name__},
        # identity equality and hash: field-wise == of arrays has no truth value
        eq=False,
    )


def viewable(obj: Any) -> bool:
    """Whether :func:`as_array` can view `obj` in place: a numpy array, a
    DLPack exporter or an object with ``__array_interface__``."""
    return isinstance(obj, np.ndarray) or any(
        hasattr(obj, k) for k in ("__dlpack__", "__array_interface__")
    )


#: The object each view made by as_array came from (a torch tensor, ...):
#: such an object can move its memory while the view still points at the old
#: one (torch's resize_/set_ free it), which a bound call checks before it
#: runs (bound_refresh.moved). By id of the view: an entry lives as long as
#: its view (arrays are unhashable, so no WeakKeyDictionary).
_EXPORTERS: dict[int, Any] = {}


def exporter(obj: Any) -> Any:
    """The object whose memory `obj` views: `obj` itself unless it is a
    numpy array, the object a numpy view of :func:`as_array` came from, or
    None for a numpy array that owns or views numpy memory."""
    return _EXPORTERS.get(id(obj)) if isinstance(obj, np.ndarray) else obj


def _buffer_view(name: str, obj: Any, written: bool) -> np.ndarray:
    """Numpy view of a buffer-protocol object (a memoryview, a ctypes array,
    an ``array.array``), or the TypeError naming `name`. Through a
    memoryview: it always states its strides (a ctypes array exports none)."""
    try:
        buffer = memoryview(obj)
        view = np.asarray(buffer)
    except (TypeError, ValueError, BufferError):  # no buffer, or items numpy cannot read
        raise TypeError(_core.not_an_array(name, type(obj).__name__, written)) from None
    if written and buffer.readonly:
        raise ValueError(
            f"{name}: expected a writable buffer, got a read-only {type(obj).__name__}"
        )
    return view


def as_array(name: str, obj: Any, written: bool = False) -> np.ndarray:
    """View `obj` as a numpy array without copying, or raise TypeError.

    Accepts numpy arrays, objects exporting DLPack (torch CPU tensors, ...),
    objects with ``__array_interface__`` and buffer-protocol objects
    (memoryview, ctypes arrays, ``array.array``). Never copies: a copy of an
    output (`written`) would silently receive the results instead of the
    caller's array. The error text is the native core's.
    """
    if isinstance(obj, np.ndarray):
        return obj
    _core.refuse_lazy_view(name, obj)  # torch's neg/conj bits: DLPack exports raw memory
    if hasattr(obj, "__dlpack__"):
        try:
            view = np.from_dlpack(obj)
        except (BufferError, TypeError, RuntimeError, ValueError, AttributeError) as exc:
            raise TypeError(f"{name}: cannot view {type(obj).__name__} in place ({exc})") from None
    elif hasattr(obj, "__array_interface__"):
        view = np.asarray(obj)
    else:
        view = _buffer_view(name, obj, written)
    _EXPORTERS[id(view)] = obj
    weakref.finalize(view, _EXPORTERS.pop, id(view), None)
    return view
