"""Bind a :class:`~mjrefresh.StateCache` to where a backend keeps its state.

Every binding reads the backend's state in place (no copy of ``qpos``/
``qvel``). One module per backend:

* :func:`bind_arrays` (:mod:`.arrays`): plain ``(N, nq)``, ``(N, nv)``, ...
  arrays.
* :func:`bind_mjbatch` (:mod:`.mjbatch`): an mjbatch-uni ``mjbatch.Batch``
  (its bound, row-strided state views; results go into its bound
  ``sensordata``), and :class:`MjbatchSensorRefresher`, a drop-in for its
  ``refresh_sensor_ranges(ids, sensor_ranges)``.
* :func:`bind_mujoco_batch` (:mod:`.mujoco_batch`): a MuJoCo >= 4.0
  ``mujoco.batch.Batch``.
* :func:`attach_unisim` (:mod:`.unisim`): unisim-core's MuJoCo backend
  refreshes its tracked bodies with mjrefresh (through its mjbatch-uni batch).
* :func:`bind_state`, :func:`state_views` and :func:`model_mocap` (:mod:`.state_vectors`): rows
  kept as MuJoCo state vectors (``mj_getState`` layout: ``mujoco.rollout``
  trajectories, batch runtimes' returned states).
* :func:`bind_mjdata_list` (:mod:`.mjdata_list`): a list of ``mujoco.MjData``
  (one per environment), read and written in place by the native core
  through per-row pointers; :func:`refresh_mjdata` (:mod:`.mjdata_rows`) is
  the one-call form.

Optional dependencies are imported only when a binding needs them; a missing
one raises ImportError saying what to install (:mod:`._optional`).
"""

from __future__ import annotations

from .arrays import bind_arrays
from .mjbatch import MjbatchSensorRefresher, bind_mjbatch
from .mjdata_list import MjDataListCache, bind_mjdata_list
from .mjdata_rows import refresh_mjdata
from .mujoco_batch import bind_mujoco_batch
from .state_vectors import bind_state, model_mocap, state_views
from .unisim import attach_unisim

__all__ = [
    "attach_unisim",
    "MjDataListCache",
    "MjbatchSensorRefresher",
    "bind_arrays",
    "bind_mjbatch",
    "bind_mjdata_list",
    "bind_mujoco_batch",
    "bind_state",
    "refresh_mjdata",
    "model_mocap",
    "state_views",
]
