"""Binding over one ``mujoco.MjData`` per environment: :class:`MjDataListCache`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mujoco
import numpy as np

from ..cache import StateCache
from ..refresher import Refresher
from ._checks import check_refresher


def _as_index(ids: Sequence[int]) -> slice | np.ndarray:
    """A slice for a contiguous increasing id range, else an int64 array."""
    a = np.asarray(ids, dtype=np.int64)
    if a.size and np.array_equal(a, np.arange(a[0], a[0] + a.size)):
        return slice(int(a[0]), int(a[0]) + a.size)
    return a


def _scatter_entry(
    src: np.ndarray, datas: list[mujoco.MjData], field: str, items: slice | np.ndarray
) -> tuple[np.ndarray, list[np.ndarray], Any]:
    if isinstance(items, slice):
        return src, [getattr(d, field)[items] for d in datas], None
    return src, [getattr(d, field) for d in datas], items


class MjDataListCache(StateCache):
    """A :class:`StateCache` over a list of ``mujoco.MjData``, refreshed in place.

    Separate ``MjData`` share no row stride, so the native core cannot read
    them as one ``(N, nq)`` array. Before a refresh, the state (``qpos``,
    ``qvel``, mocap, ``time``) of the rows about to be refreshed is gathered
    into the cache's staging arrays; the refresh runs on the worker threads
    into the cache's outputs; then, for those rows, the selected fields are
    written back into each ``MjData``: the refreshed ``sensordata`` columns,
    ``xpos``/``xquat`` of the selected bodies and ``site_xpos``/``site_xmat`` of
    the selected sites. Afterwards those fields equal what ``mj_forward``
    gives; every other field, including acceleration-stage sensors, is
    unchanged. Velocities and relative poses are read from the cache
    (``body_linvel``, ``body_pos_rel``, ...).

    Gather and scatter are Python loops over the refreshed rows only (a few
    microseconds per row); a per-row pointer path in the native core would
    remove them.

    Usage: after ``mj_step`` on env i, ``cache.mark_stepped(i)``; reads (or
    :meth:`refresh_dirty_rows`) then update the ``MjData`` in place.

    The cache's own arrays are float64, like the ``MjData`` fields they are
    copied into.

    Args:
        refresher: the refresher (its model must match every ``MjData``).
        datas: one ``MjData`` per environment (kept, not copied).
    """

    def __init__(self, refresher: Refresher, datas: Sequence[mujoco.MjData]) -> None:
        check_refresher(refresher)
        if isinstance(datas, mujoco.MjData) or not isinstance(datas, Sequence):
            raise TypeError(
                f"datas: expected a sequence of mujoco.MjData, got {type(datas).__name__}"
            )
        datas = list(datas)
        if not datas:
            raise ValueError("datas: expected at least one mujoco.MjData, got an empty sequence")
        m = refresher.model
        for i, d in enumerate(datas):
            if not isinstance(d, mujoco.MjData):
                raise TypeError(f"datas[{i}]: expected mujoco.MjData, got {type(d).__name__}")
            if (
                d.qpos.shape[0] != m.nq
                or d.qvel.shape[0] != m.nv
                or d.sensordata.shape[0] != m.nsensordata
            ):
                raise ValueError(
                    f"datas[{i}]: expected an MjData of the refresher's model (nq={m.nq}, "
                    f"nv={m.nv}), got nq={d.qpos.shape[0]}, nv={d.qvel.shape[0]}"
                )
        n = len(datas)
        self._datas = datas
        self._qpos_views = [d.qpos for d in datas]
        self._qvel_views = [d.qvel for d in datas]
        qpos = np.zeros((n, m.nq))
        qvel = np.zeros((n, m.nv))
        kw: dict[str, Any] = {}
        if m.nmocap:
            self._mpos_views = [d.mocap_pos for d in datas]
            self._mquat_views = [d.mocap_quat for d in datas]
            kw["mocap_pos"] = np.zeros((n, m.nmocap, 3))
            kw["mocap_quat"] = np.zeros((n, m.nmocap, 4))
        if refresher.plan.needs_time:
            kw["time"] = np.zeros(n)
        super().__init__(refresher, n, qpos=qpos, qvel=qvel, **kw)
        plan = refresher.plan
        body_ids = _as_index(plan.body_ids)
        site_ids = _as_index(plan.site_ids)
        # (source output, per-env destination getter) pairs scattered after a refresh.
        self._scatter: list[tuple[np.ndarray, list[np.ndarray], Any]] = []
        out = self._outputs
        for start, stop in plan.column_ranges:
            self._scatter.append(
                (out["sensordata"][:, start:stop], [d.sensordata[start:stop] for d in datas], None)
            )
        # Destinations are views made once (a contiguous id range is a slice,
        # so each row is one plain copy).
        if plan.body_ids:
            for name, field in (("body_pos", "xpos"), ("body_quat", "xquat")):
                self._scatter.append(_scatter_entry(out[name], datas, field, body_ids))
        if plan.site_ids:
            for name, field in (("site_pos", "site_xpos"), ("site_mat", "site_xmat")):
                self._scatter.append(_scatter_entry(out[name], datas, field, site_ids))

    @property
    def datas(self) -> list[mujoco.MjData]:
        """The ``MjData`` this cache refreshes, one per row."""
        return self._datas

    def _before_refresh(self, ids: np.ndarray) -> None:
        idx = ids.tolist()
        inputs = self._inputs
        inputs["qpos"][ids] = np.stack([self._qpos_views[i] for i in idx])
        inputs["qvel"][ids] = np.stack([self._qvel_views[i] for i in idx])
        if "mocap_pos" in inputs:
            inputs["mocap_pos"][ids] = np.stack([self._mpos_views[i] for i in idx])
            inputs["mocap_quat"][ids] = np.stack([self._mquat_views[i] for i in idx])
        if "time" in inputs:
            inputs["time"][ids] = [self._datas[i].time for i in idx]

    def _after_refresh(self, ids: np.ndarray) -> None:
        idx = ids.tolist()
        copyto = np.copyto
        for src, dsts, items in self._scatter:
            if items is None:
                for i in idx:
                    copyto(dsts[i], src[i])
            else:
                for i in idx:
                    dsts[i][items] = src[i]


def bind_mjdata_list(refresher: Refresher, datas: Sequence[mujoco.MjData]) -> MjDataListCache:
    """A :class:`MjDataListCache` over one ``MjData`` per environment (see there)."""
    return MjDataListCache(refresher, datas)
