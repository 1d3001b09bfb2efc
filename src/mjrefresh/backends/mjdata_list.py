"""Binding over one ``mujoco.MjData`` per environment: :class:`MjDataListCache`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import mujoco

from ..bound_refresh import BoundRefresh
from ..cache import StateCache
from ..outputs import RefreshOutputs
from ..refresher import Refresher
from ._checks import check_flag, check_refresher
from .mjdata_rows import bind_mjdata, check_datas


class MjDataListCache(StateCache):
    """A :class:`StateCache` over a list of ``mujoco.MjData``, refreshed in place.

    A refresh is one native call: the core reads each refreshed row's state
    (``qpos``, ``qvel``, mocap, ``time``) from its ``MjData`` through per-row
    pointer tables, computes the row on the worker threads into the cache's
    outputs and, right after, copies into that ``MjData`` the refreshed
    ``sensordata`` columns and, with ``write_poses=True``, ``xpos``/``xquat``
    of the selected bodies and ``site_xpos``/``site_xmat`` of the selected
    sites. Afterwards those fields equal what ``mj_forward`` gives; every
    other field, including acceleration-stage sensors, is unchanged. Body
    poses, velocities and relative poses are read from the cache
    (``body_pos`` and the other body readers). No Python runs
    per row.

    The ``MjData`` are checked once here: each must be a ``mujoco.MjData``
    with the refresher's model sizes (``nq``, ``nv``, ``nmocap``,
    ``nsensordata``, ``nbody``, ``nsite``), each one at most once. The cache
    keeps its own list of them (a copy: :attr:`datas`), so none can be freed
    while the cache lives; replacing or deleting an element of the caller's list
    afterwards changes nothing (bind a new cache to refresh other ``MjData``).

    Usage: after ``mj_step`` on env i, ``cache.mark_stepped(i)``; reads (or
    :meth:`refresh_dirty_rows`) then update the ``MjData`` in place.

    The cache's own arrays are float64, like the ``MjData`` fields they are
    copied into.

    Args:
        refresher: the refresher (its model's sizes must match every ``MjData``).
        datas: one ``MjData`` per environment (kept, not copied).
        write_poses: also copy the selected body and site poses into each
            ``MjData`` (``xpos``, ``xquat``, ``site_xpos``, ``site_xmat``), for
            code that reads them there; about 0.1 µs more per row on the
            quadruped tracking selection (more scattered memory written).
    """

    def __init__(
        self, refresher: Refresher, datas: Sequence[mujoco.MjData], *, write_poses: bool = False
    ) -> None:
        check_refresher(refresher)
        datas = check_datas(refresher, datas)
        n = len(datas)
        self._datas = datas
        self._write_poses = check_flag("write_poses", write_poses)
        # The state is read from the MjData (this binding's _bind), not from arrays.
        super().__init__(refresher, n, qpos=None, qvel=None)

    def _bind(
        self,
        inputs: dict[str, Any],
        out: RefreshOutputs,
        model_fields: Mapping[str, Any] | None,
    ) -> BoundRefresh:
        return bind_mjdata(self._refresher, self._datas, out, write_poses=self._write_poses)

    @property
    def datas(self) -> list[mujoco.MjData]:
        """The ``MjData`` this cache refreshes, one per row (a new list each
        time: changing it does not change what is refreshed)."""
        return list(self._datas)


def bind_mjdata_list(
    refresher: Refresher, datas: Sequence[mujoco.MjData], *, write_poses: bool = False
) -> MjDataListCache:
    """A :class:`MjDataListCache` over one ``MjData`` per environment (see there)."""
    return MjDataListCache(refresher, datas, write_poses=write_poses)
