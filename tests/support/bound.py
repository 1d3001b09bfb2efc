"""`BoundBackend`: every backend a mjrefresh binding supports, bound to a
StateCache and driven through one interface, so that behaviours common to
all bindings are tested once across backends (tests/test_backends_common.py).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import mujoco
import numpy as np

import mjrefresh
from support import backends as be
from support.states import random_state, states_of_datas


class BoundBackend(ABC):
    """A backend of `num_envs` envs bound to `cache` by its mjrefresh binding."""

    name = ""
    #: whether a refresh writes the backend's own sensordata (in place)
    writes_backend_sensordata = True
    #: whether the cache reads the backend's sensordata, physics results included
    #: (else reading an acceleration-stage sensor through it is an error)
    reads_backend_sensordata = True

    def __init__(self, model: mujoco.MjModel, cache: mjrefresh.StateCache, seed: int) -> None:
        self.model = model
        self.cache = cache
        self.num_envs = cache.num_envs
        self.rng = np.random.default_rng(seed)

    @abstractmethod
    def step(self, nsub: int = 3) -> None:
        """Random controls and `nsub` physics substeps on every env."""

    @abstractmethod
    def reset(self, rows: Sequence[int]) -> None:
        """Backend-side reset of `rows`: a new state and the backend's own forward."""

    @abstractmethod
    def states(self) -> dict[str, np.ndarray]:
        """A copy of the current state of every env."""

    @abstractmethod
    def sensordata(self) -> np.ndarray:
        """A copy of the backend's own sensordata, (num_envs, nsensordata)."""


class _Arrays(BoundBackend):
    name = "arrays"

    def __init__(self, model, refresher, n):
        self.backend = be.ArrayBackend(model, n, seed=1)
        super().__init__(model, self.backend.bind(refresher), seed=0)

    def step(self, nsub=3):
        self.backend.step(nsub=nsub)

    def reset(self, rows):
        self.backend.reset(rows)

    def states(self):
        return {k: v.copy() for k, v in self.backend.states().items()}

    def sensordata(self):
        return self.backend.sensordata.copy()


class _Batch(BoundBackend):
    """mjbatch-uni and mujoco.batch: both expose `bind(name)` and `step(nstep=)`."""

    def step(self, nsub=3):
        ctrl = self.batch.bind("ctrl")
        ctrl[:] = self.rng.uniform(-1, 1, size=ctrl.shape)
        self.batch.step(nstep=nsub)

    def states(self):
        return be.batch_states(self.batch)

    def sensordata(self):
        return self.batch.bind("sensordata").copy()


class _Mjbatch(_Batch):
    name = "mjbatch-uni"

    def __init__(self, model, refresher, n):
        self.batch = be.make_mjbatch(model, n)
        super().__init__(model, mjrefresh.bind_mjbatch(self.batch, refresher), seed=0)

    def reset(self, rows):
        self.batch.reset(np.asarray(rows))  # mj_resetData + mj_forward


class _MujocoBatch(_Batch):
    name = "mujoco.batch"
    writes_backend_sensordata = False  # the batch's outputs are read-only
    reads_backend_sensordata = False

    def __init__(self, model, refresher, n):
        self.batch = be.make_mujoco_batch(model, n)
        super().__init__(model, mjrefresh.bind_mujoco_batch(self.batch, refresher), seed=0)

    def reset(self, rows):
        rows = np.asarray(rows)
        self.batch.reset(rows)
        be.randomize_batch(self.batch, self.model, seed=9, rows=rows)
        self.batch.forward(rows)


class _MjdataList(BoundBackend):
    name = "mjdata-list"
    reads_backend_sensordata = False  # its own array, copied into each MjData

    def __init__(self, model, refresher, n):
        self.datas = be.mjdata_list(model, n)
        super().__init__(model, mjrefresh.bind_mjdata_list(refresher, self.datas), seed=0)

    def step(self, nsub=3):
        be.step_mjdata(self.model, self.datas, self.rng, nsub=nsub)

    def reset(self, rows):
        for i in rows:
            random_state(self.model, self.rng, self.datas[i])
            mujoco.mj_forward(self.model, self.datas[i])

    def states(self):
        return states_of_datas(self.datas)

    def sensordata(self):
        return np.array([d.sensordata for d in self.datas])


_KINDS = {k.name: k for k in (_Arrays, _Mjbatch, _MujocoBatch, _MjdataList)}
assert tuple(_KINDS) == be.BACKENDS


def open_backend(
    name: str, model: mujoco.MjModel, refresher: mjrefresh.Refresher, n: int
) -> BoundBackend:
    """Backend `name` (one of `backends.BACKENDS`) of `n` random envs, bound to
    `refresher`; skips the test when the backend is not installed."""
    return _KINDS[name](model, refresher, n)
