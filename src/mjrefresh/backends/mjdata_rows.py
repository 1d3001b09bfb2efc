"""Refreshing rows that live in separate ``mujoco.MjData``, natively.

:func:`bind_mjdata` checks a list of ``MjData`` once (type, model sizes, no
duplicates) and returns a :class:`~mjrefresh.BoundRefresh` whose calls enter
the native core with one ``mjData*`` address per row: the core reads each
row's state from its ``MjData`` through per-row pointer tables and, right
after refreshing a row, writes its selected ``sensordata`` columns into it
(and, with ``write_poses=True``, the selected body and site poses), with no
Python per row. :func:`refresh_mjdata` is the one-call form;
:class:`~mjrefresh.backends.mjdata_list.MjDataListCache` builds on the bound
form.

Lifetime ("freed data"): a Python ``MjData`` is freed when its last
reference goes. The bound call keeps its own list of the ``MjData`` it was
given, so none of them can be freed while it is alive; replacing or deleting
an element of the caller's list afterwards does not change which ``MjData``
are refreshed (bind again to refresh other ones).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mujoco
import numpy as np

from ..bound_refresh import BoundRefresh
from ..outputs import OUTPUTS, RefreshOutputs
from ..refresher import Refresher
from ._checks import check_flag, check_refresher, check_same_values

#: Outputs the core copies into each ``MjData`` -> the ``MjData`` field
#: (all but ``sensordata`` only with ``write_poses=True``), from the
#: native output table.
MIRRORED = {o.name: o.mjdata_field for o in OUTPUTS if o.mjdata_field is not None}


def check_datas(refresher: Refresher, datas: Any) -> list[mujoco.MjData]:
    """`datas` as a new list, each an ``MjData`` of the refresher's model sizes, no repeats.

    Raises:
        TypeError: `datas` is not a sequence of ``mujoco.MjData``.
        ValueError: empty, an ``MjData`` of another model (its sizes differ,
            or values a refresh reads), or the same ``MjData`` twice.
    """
    if isinstance(datas, mujoco.MjData) or not isinstance(datas, Sequence):
        raise TypeError(f"datas: expected a sequence of mujoco.MjData, got {type(datas).__name__}")
    datas = list(datas)
    if not datas:
        raise ValueError("datas: expected at least one mujoco.MjData, got an empty sequence")
    m = refresher.model
    # (field, size name, expected): the sizes every pointer the core takes relies on.
    sizes = (
        ("qpos", "nq", m.nq),
        ("qvel", "nv", m.nv),
        ("mocap_pos", "nmocap", m.nmocap),
        ("sensordata", "nsensordata", m.nsensordata),
        ("xpos", "nbody", m.nbody),
        ("site_xpos", "nsite", m.nsite),
    )
    seen: dict[int, int] = {}
    same: dict[int, mujoco.MjModel] = {}  # models checked: datas usually share one
    for i, d in enumerate(datas):
        if not isinstance(d, mujoco.MjData):
            raise TypeError(f"datas[{i}]: expected mujoco.MjData, got {type(d).__name__}")
        if d.qpos.shape[0] != m.nq or d.qvel.shape[0] != m.nv:
            raise ValueError(
                f"datas[{i}]: expected an MjData of the refresher's model (nq={m.nq}, "
                f"nv={m.nv}), got nq={d.qpos.shape[0]}, nv={d.qvel.shape[0]}"
            )
        for field, size, want in sizes[2:]:
            got = getattr(d, field).shape[0]
            if got != want:
                raise ValueError(
                    f"datas[{i}]: expected an MjData of the refresher's model "
                    f"({size}={want}), got {size}={got}"
                )
        model = getattr(d, "model", None)  # the model it was made with (mujoco >= 3.x)
        if model is not None and id(model) not in same:
            check_same_values(refresher, model, f"datas[{i}]", per_row=False)
            same[id(model)] = model  # kept, so the id stays this model's
        first = seen.setdefault(int(d._address), i)
        if first != i:
            raise ValueError(
                f"datas[{i}]: the same MjData as datas[{first}]; expected one MjData per row"
            )
    return datas


def bind_mjdata(
    refresher: Refresher, datas: Any, out: RefreshOutputs, *, write_poses: bool = False
) -> BoundRefresh:
    """Check `datas` and `out` once and return a call that refreshes rows of them.

    Each call reads row i's ``qpos``, ``qvel``, mocap state and ``time`` from
    ``datas[i]``, writes its outputs into `out` and copies into ``datas[i]``
    the refreshed ``sensordata`` columns and, with `write_poses`,
    ``xpos``/``xquat`` of the selected bodies and ``site_xpos``/``site_xmat``
    of the selected sites (every other field is left as it was). The outputs
    of `out` copied into the ``MjData`` must be float64.

    Args:
        refresher: what to compute; its model's sizes must match every ``MjData``.
        datas: one ``MjData`` per row (a new list of them is kept).
        out: the outputs, N = ``len(datas)`` rows (e.g. ``refresher.outputs(N)``).
        write_poses: also copy the body and site poses into each ``MjData``
            (about 0.1 µs more per row on the quadruped tracking selection:
            more scattered memory written per row).

    Raises:
        TypeError, ValueError: a bad argument, naming it.
        RuntimeError: the refresher is closed.
    """
    check_refresher(refresher)
    datas = check_datas(refresher, datas)
    write_poses = check_flag("write_poses", write_poses)
    # The native core checks `out` (and that what is copied into the MjData
    # is float64) and keeps the tables; the list keeps the MjData alive.
    return refresher._bind_mjdata(datas, out, write_poses)


def refresh_mjdata(
    refresher: Refresher,
    datas: Sequence[mujoco.MjData],
    rows: Any = None,
    *,
    out: RefreshOutputs | None = None,
    write_poses: bool = False,
) -> RefreshOutputs:
    """Refresh `rows` of a list of ``MjData`` in place, in one native call.

    Row i's state is read from ``datas[i]``; its refreshed ``sensordata``
    columns (with `write_poses`, also ``xpos``/``xquat`` of the selected
    bodies and ``site_xpos``/``site_xmat`` of the selected sites) are written
    into ``datas[i]``, all other fields are unchanged. Every output (body
    poses, velocities and relative poses too) is written into `out`. This checks `datas` on
    every call; to refresh the same list repeatedly, bind it once with
    :func:`~mjrefresh.bind_mjdata_list`.

    Args:
        refresher: what to compute; its model's sizes must match every ``MjData``.
        datas: one ``MjData`` per row.
        rows: sorted unique row ids, a slice, an int, a bool mask of length
            N, or None (all rows).
        out: outputs for N = ``len(datas)`` rows (float64 where copied into
            the ``MjData``); allocated if None.
        write_poses: also copy the body and site poses into each ``MjData``.

    Returns:
        `out` (or the outputs allocated), with the refreshed rows written.

    Raises:
        TypeError, ValueError: a bad argument, naming it.
        RefreshError: MuJoCo raised an error in some rows (the others were
            refreshed and written into their ``MjData``).
    """
    check_refresher(refresher)
    if out is None:
        n = len(datas) if isinstance(datas, Sequence) else 0
        out = refresher.outputs(n)
    bound = bind_mjdata(refresher, datas, out, write_poses=write_poses)
    bound.refresh(np.arange(bound.num_envs, dtype=np.int64) if rows is None else rows)
    return out
