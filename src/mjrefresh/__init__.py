"""mjrefresh: bring the position/velocity-derived state of many MuJoCo
simulations up to date with their current qpos/qvel, in one native call over
worker threads.

Public API: :class:`Refresher` (plan once per model, refresh rows),
:class:`BoundRefresh` (a refresh bound to arrays validated once),
:class:`RefreshOutputs`, :class:`RefreshPlan`, :class:`RefreshError`;
:class:`StateCache` (when to refresh which rows) and the backend bindings
``bind_arrays``, ``bind_mjbatch``/:class:`MjbatchSensorRefresher`,
``bind_mujoco_batch``, ``bind_mjdata_list`` and ``bind_state`` (state
vectors, with :func:`state_views`); ``refresh_mjdata`` (one
native refresh of a list of ``mujoco.MjData``, in place).
"""

from __future__ import annotations

from . import models
from ._native import core as _core  # checks the MuJoCo version first
from .backends import (
    MjbatchSensorRefresher,
    MjDataListCache,
    attach_unisim,
    bind_arrays,
    bind_mjbatch,
    bind_mjdata_list,
    bind_mujoco_batch,
    bind_state,
    model_mocap,
    refresh_mjdata,
    state_views,
)
from .bound_refresh import BoundRefresh
from .cache import CacheStats, StateCache
from .outputs import RefreshOutputs
from .plan import PlanError, RefreshPlan
from .refresher import Refresher, RefreshError

__version__ = "0.1.0"
MUJOCO_BUILD_VERSION: str = _core.MUJOCO_BUILD_VERSION

__all__ = [
    "MUJOCO_BUILD_VERSION",
    "BoundRefresh",
    "PlanError",
    "RefreshError",
    "RefreshOutputs",
    "RefreshPlan",
    "Refresher",
    "__version__",
    "models",
    # lifecycle adapter and backend bindings
    "CacheStats",
    "MjDataListCache",
    "MjbatchSensorRefresher",
    "StateCache",
    "attach_unisim",
    "bind_arrays",
    "bind_mjbatch",
    "bind_mjdata_list",
    "bind_mujoco_batch",
    "bind_state",
    "refresh_mjdata",
    "model_mocap",
    "state_views",
]
