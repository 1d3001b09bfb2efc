"""Backends as the binding tests drive them: a toy array backend stepped by
real mj_step, and `BoundBackend`, one interface over every backend a
`mjrefresh` binding supports (plain arrays, mjbatch-uni, mujoco.batch, a list
of MjData), each bound to a StateCache."""

from __future__ import annotations

import re
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import mujoco
import numpy as np
import pytest

import mjrefresh
from support.states import random_state

STATE_NAMES = ("qpos", "qvel", "mocap_pos", "mocap_quat", "time")
BACKENDS = ("arrays", "mjbatch-uni", "mujoco.batch", "mjdata-list")


class ArrayBackend:
    """A toy batched backend: state in (N, ...) arrays, physics by real mj_step.

    Each env has a persistent MjData (so warmstarts and contacts carry over,
    like a real backend). After a step the backend's arrays hold the new state
    and the step's sensordata: acceleration-stage sensors from that physics
    solve, position/velocity ones one substep stale, as with mj_step.
    """

    def __init__(self, model: mujoco.MjModel, n: int, seed: int = 0) -> None:
        self.model = model
        self.n = n
        self.rng = np.random.default_rng(seed)
        self.datas = [mujoco.MjData(model) for _ in range(n)]
        self.qpos = np.zeros((n, model.nq))
        self.qvel = np.zeros((n, model.nv))
        self.mocap_pos = np.zeros((n, model.nmocap, 3))
        self.mocap_quat = np.zeros((n, model.nmocap, 4))
        self.time = np.zeros(n)
        self.sensordata = np.zeros((n, model.nsensordata))
        for i, d in enumerate(self.datas):
            random_state(model, self.rng, d)
            mujoco.mj_forward(model, d)
            self._save(i)

    def _save(self, i: int) -> None:
        d = self.datas[i]
        self.qpos[i] = d.qpos
        self.qvel[i] = d.qvel
        self.mocap_pos[i] = d.mocap_pos
        self.mocap_quat[i] = d.mocap_quat
        self.time[i] = d.time
        self.sensordata[i] = d.sensordata

    def states(self) -> dict[str, np.ndarray]:
        """The current state arrays (views), keyed like `random_states`."""
        return {name: getattr(self, name) for name in STATE_NAMES}

    def step(self, rows: Sequence[int] | None = None, nsub: int = 2) -> None:
        """Random controls, then `nsub` mj_step on `rows` (default all)."""
        rows = range(self.n) if rows is None else rows
        for i in rows:
            d = self.datas[i]
            d.ctrl[:] = self.rng.uniform(-1, 1, size=self.model.nu)
            for _ in range(nsub):
                mujoco.mj_step(self.model, d)
            self._save(i)

    def reset(self, rows: Sequence[int]) -> None:
        """Reset rows to a new random state and run mj_forward (backend-side)."""
        for i in rows:
            d = self.datas[i]
            random_state(self.model, self.rng, d)
            mujoco.mj_forward(self.model, d)
            self._save(i)

    def write_state(self, rows: Sequence[int]) -> None:
        """Write new qpos/qvel into the arrays without any forward."""
        for i in rows:
            self.qpos[i] += self.rng.normal(scale=0.05, size=self.model.nq)
            self.qvel[i] += self.rng.normal(scale=0.5, size=self.model.nv)
            self.datas[i].qpos[:] = self.qpos[i]
            self.datas[i].qvel[:] = self.qvel[i]

    def inputs(self) -> dict[str, np.ndarray]:
        """The state arrays a binding reads, as bind_arrays keywords."""
        return {name: getattr(self, name) for name in STATE_NAMES[:4]}

    def bind(self, refresher: mjrefresh.Refresher, **kw) -> mjrefresh.StateCache:
        """bind_arrays on these arrays, the sensordata owned by the backend."""
        return mjrefresh.bind_arrays(
            refresher,
            **self.inputs(),
            sensordata=self.sensordata,
            backend_outputs=("sensordata",),
            **kw,
        )


def randomize_batch(
    batch: Any, model: mujoco.MjModel, seed: int, rows: Sequence[int] | None = None
) -> None:
    """Random states written through a batch's bound state views (mjbatch-uni
    or mujoco.batch: both have `bind(name)`), without a forward."""
    rng = np.random.default_rng(seed)
    d = mujoco.MjData(model)
    views = [batch.bind(n) for n in STATE_NAMES[:4]]
    rows = range(len(views[0])) if rows is None else rows
    for i in rows:
        random_state(model, rng, d)
        for view, value in zip(views, (d.qpos, d.qvel, d.mocap_pos, d.mocap_quat), strict=True):
            view[i] = value


def batch_states(batch: Any) -> dict[str, np.ndarray]:
    """Copies of a batch's bound state views."""
    return {n: batch.bind(n).copy() for n in STATE_NAMES}


def other_model_message(
    field: str, what: str = "batch", fix: str = "", source: str | None = None
) -> str:
    """The pinned ValueError of a binding given a batch (`what`: "batch") or
    an MjData ("datas[i]") whose model has other values than the
    refresher's in `field` (same sizes); `source`: how the fix names that
    model (default ``<what>.model``)."""
    return (
        rf"^{re.escape(what)}: its model has other values in {field} than the refresher's "
        r"model, and a refresh reads them from the refresher's model; build the Refresher from "
        rf"that model \({re.escape(source or what + '.model')}\){fix}$"
    )


def declared(field: str) -> str:
    """The pinned fix, in other_model_message, of a field a refresh can take
    per row: declare it in model_fields."""
    return (
        rf", or declare it \(Refresher\(\.\.\., model_fields=\('{field}', \.\.\.\)\)\) "
        "and bind again"
    )


MJBATCH_MISSING = "mjbatch-uni is not installed (pip install mjbatch-uni; needs mujoco 3.11)"
MUJOCO_BATCH_MISSING = f"mujoco.batch needs MuJoCo >= 4.0 (installed: {mujoco.__version__})"


def import_mjbatch() -> ModuleType:
    """mjbatch-uni's module, or skip the test."""
    return pytest.importorskip("mjbatch", reason=MJBATCH_MISSING)


def import_mujoco_batch() -> ModuleType:
    """mujoco.batch, or skip the test (MuJoCo < 4.0 has none)."""
    return pytest.importorskip("mujoco.batch", reason=MUJOCO_BATCH_MISSING)


def make_mjbatch(model: mujoco.MjModel, n: int, seed: int = 7) -> Any:
    """An mjbatch-uni Batch of random states, forwarded, sensordata bound."""
    b = import_mjbatch().Batch(model, n, num_threads=2)
    b.bind("sensordata")
    randomize_batch(b, model, seed)
    b.forward()
    return b


def make_mujoco_batch(model: mujoco.MjModel, n: int, seed: int = 2) -> Any:
    """A mujoco.batch Batch of random states, forwarded."""
    b = import_mujoco_batch().Batch(model, n, nthread=2)
    randomize_batch(b, model, seed)
    b.forward()
    return b


def mjdata_list(model: mujoco.MjModel, n: int, seed: int = 4) -> list[mujoco.MjData]:
    """`n` MjData of random states, forwarded."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        d = mujoco.MjData(model)
        random_state(model, rng, d)
        mujoco.mj_forward(model, d)
        out.append(d)
    return out


def step_mjdata(
    model: mujoco.MjModel,
    datas: Sequence[mujoco.MjData],
    rng: np.random.Generator,
    rows: Sequence[int] | None = None,
    nsub: int = 3,
) -> None:
    """Random controls, then `nsub` mj_step on `rows` (default all) of `datas`."""
    for i in range(len(datas)) if rows is None else rows:
        datas[i].ctrl[:] = rng.uniform(-1, 1, size=model.nu)
        for _ in range(nsub):
            mujoco.mj_step(model, datas[i])
