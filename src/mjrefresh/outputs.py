"""Output arrays of a refresh, and conversion of caller arrays without copies."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from ._native import core as _core

# The native output table (cpp/core/selection.h kOutputs): (name, what the
# middle axis is indexed by: "bodies"/"relative"/"sites", or "sensordata"
# for the (N, nsensordata) array, values per item), in the core's order.
OUTPUTS: tuple[tuple[str, str, int], ...] = tuple(
    (str(name), str(by), int(width)) for name, by, width in _core.OUTPUTS
)

# name -> (per-item width) for item outputs; sensordata is (N, nsensordata).
ITEM_WIDTH: dict[str, int] = {name: width for name, by, width in OUTPUTS if by != "sensordata"}


@dataclass
class RefreshOutputs:
    """Arrays a refresh writes into; ``None`` fields are not written.

    Shapes (N rows, B selected bodies, S selected sites):
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

    body_pos: np.ndarray | None = None
    body_quat: np.ndarray | None = None
    body_linvel: np.ndarray | None = None
    body_angvel: np.ndarray | None = None
    body_pos_rel: np.ndarray | None = None
    body_quat_rel: np.ndarray | None = None
    site_pos: np.ndarray | None = None
    site_mat: np.ndarray | None = None
    sensordata: np.ndarray | None = None

    def arrays(self) -> dict[str, np.ndarray]:
        """The non-None output arrays by name."""
        return {
            f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None
        }


OUTPUT_NAMES: tuple[str, ...] = tuple(name for name, _, _ in OUTPUTS)
if OUTPUT_NAMES != tuple(f.name for f in fields(RefreshOutputs)):
    raise ImportError(
        "mjrefresh: RefreshOutputs fields "
        f"{tuple(f.name for f in fields(RefreshOutputs))} do not match the native core's "
        f"outputs {OUTPUT_NAMES}; the extension and the Python package are out of step"
    )


# Arguments a refresh writes into (besides the ``out.*`` arrays).
_WRITTEN = frozenset({*OUTPUT_NAMES, "dirty"})


def check_layout(name: str, a: np.ndarray) -> None:
    """ValueError unless `a`'s data is aligned and each stride is a whole
    number of items: the native core addresses elements, not bytes (a view of
    another dtype's buffer can be neither)."""
    if a.size and (not a.flags.aligned or any(s % a.itemsize for s in a.strides)):
        raise ValueError(
            f"{name}: expected aligned elements and strides that are whole multiples of the "
            f"item size ({a.itemsize} bytes), got strides {a.strides} (a view of another "
            f"dtype's bytes?); np.ascontiguousarray({name.split('[')[0]}) makes such a copy"
        )


def as_array(name: str, obj: Any) -> np.ndarray:
    """View `obj` as a numpy array without copying, or raise TypeError.

    Accepts numpy arrays, objects exporting DLPack (torch CPU tensors, ...)
    and objects with ``__array_interface__``. Never copies: a copy of an
    output would silently receive the results instead of the caller's array.
    """
    if isinstance(obj, np.ndarray):
        return obj
    if hasattr(obj, "__dlpack__"):
        try:
            return np.from_dlpack(obj)
        except (BufferError, TypeError, RuntimeError) as exc:
            raise TypeError(f"{name}: cannot view {type(obj).__name__} in place ({exc})") from None
    if hasattr(obj, "__array_interface__"):
        return np.asarray(obj)
    fix = (
        f"keep a numpy array and pass it: results written into a converted copy would never "
        f"reach your {type(obj).__name__}"
        if name.startswith("out") or name in _WRITTEN
        else f"convert it once with np.asarray({name.split('[')[0]}, dtype=np.float64) and "
        "keep that array (mjrefresh reads arrays in place)"
    )
    raise TypeError(
        f"{name}: expected a numpy array (or a CPU array exporting DLPack), "
        f"got {type(obj).__name__}; {fix}"
    )
