"""Bind a :class:`~mjrefresh.StateCache` to where a backend keeps its state.

Every binding reads the backend's state in place (no copy of ``qpos``/
``qvel``), except :func:`bind_mjdata_list`, whose separate ``MjData`` have no
common row stride (see there). One module per backend:

* :func:`bind_arrays` (:mod:`.arrays`): plain ``(N, nq)``, ``(N, nv)``, ...
  arrays.
* :func:`bind_mjbatch` (:mod:`.mjbatch`): an mjbatch-uni ``mjbatch.Batch``
  (its bound, row-strided state views; results go into its bound
  ``sensordata``), and :class:`MjbatchSensorRefresher`, a drop-in for its
  ``refresh_sensor_ranges(ids, sensor_ranges)``.
* :func:`bind_mujoco_batch` (:mod:`.mujoco_batch`): a MuJoCo >= 4.0
  ``mujoco.batch.Batch``.
* :func:`bind_mjdata_list` (:mod:`.mjdata_list`): a list of ``mujoco.MjData``
  (one per environment).

Optional dependencies are imported only when a binding needs them; a missing
one raises ImportError saying what to install (:mod:`._optional`).
"""

from __future__ import annotations

from .arrays import bind_arrays
from .mjbatch import MjbatchSensorRefresher, bind_mjbatch
from .mjdata_list import MjDataListCache, bind_mjdata_list
from .mujoco_batch import bind_mujoco_batch

__all__ = [
    "MjDataListCache",
    "MjbatchSensorRefresher",
    "bind_arrays",
    "bind_mjbatch",
    "bind_mjdata_list",
    "bind_mujoco_batch",
]
