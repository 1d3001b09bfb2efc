"""Physics backends of the collector benchmark: real native batches.

* ``mjbatch-uni`` -- ``mjbatch.Batch`` (mjbatch-uni, built for MuJoCo 3.11);
* ``mujoco.batch`` -- ``mujoco.batch.Batch`` (MuJoCo >= 4.0).

Both keep each simulation as an ``mjSTATE_INTEGRATION`` row and expose
row-strided float64 views of ``qpos``/``qvel``/``ctrl`` into those rows; a
write to a row is the simulation's state at its next call. After ``step``
their derived outputs (``sensordata``, ...) are one substep behind the state.
A :class:`Backend` wraps one batch behind the few calls the collector makes.
"""

from __future__ import annotations

import mujoco
import numpy as np

from mjrefresh.bench.availability import mjbatch_unavailable, mujoco_batch_unavailable


class BackendUnavailable(Exception):
    """The backend's library is not installed here."""


class Backend:
    """One native batch of ``n`` simulations of ``model``.

    Attributes:
      state, qpos, qvel, ctrl: writable (N, ...) views of the state rows.
      sensordata: (N, nsensordata) derived output of the last call (read it,
        do not write it).
      writable_sensordata: the same array if the backend lets a caller write
        into it (results of a refresh can go there), else None.
    """

    name = ""
    description = ""

    @classmethod
    def unavailable(cls) -> str | None:
        return None

    def __init__(self, model: mujoco.MjModel, n: int, threads: int) -> None:
        self.model = model
        self.n = n

    @property
    def threads_used(self) -> int:
        raise NotImplementedError

    @property
    def version(self) -> str:
        raise NotImplementedError

    def step(self, nstep: int) -> None:
        """``nstep`` mj_step calls for every simulation (control decimation)."""
        raise NotImplementedError

    def forward(self, ids: np.ndarray | None = None) -> None:
        """mj_forward for ``ids`` (None: all): derived outputs current."""
        raise NotImplementedError

    def native_refresh(self, ids: np.ndarray | None, columns: tuple) -> None:
        """The backend's own refresh of the pos/vel-derived outputs of ``ids``."""
        raise NotImplementedError

    native_refresh_description = ""


class MjbatchUni(Backend):
    """mjbatch-uni ``Batch`` (MuJoCo 3.11)."""

    name = "mjbatch-uni"
    description = "mjbatch.Batch(model, N, num_threads=T): step(nstep=decimation)"
    native_refresh_description = "Batch.refresh_sensor_ranges(ids, [start, stop])"

    @classmethod
    def unavailable(cls) -> str | None:
        return mjbatch_unavailable()

    def __init__(self, model: mujoco.MjModel, n: int, threads: int) -> None:
        super().__init__(model, n, threads)
        import mjbatch

        self.batch = b = mjbatch.Batch(model, n, num_threads=threads)
        # bind every field before the first call, so each call copies it out
        self.state = b.bind("state")
        self.qpos = b.bind("qpos")
        self.qvel = b.bind("qvel")
        self.ctrl = b.bind("ctrl")
        self.sensordata = b.bind("sensordata")
        self.writable_sensordata = self.sensordata  # a copy-out buffer the caller may write
        if self.state.shape[1] != mujoco.mj_stateSize(model, mujoco.mjtState.mjSTATE_INTEGRATION):
            raise RuntimeError("mjbatch state rows are not mjSTATE_INTEGRATION")

    @property
    def threads_used(self) -> int:
        return int(self.batch.num_threads)

    @property
    def version(self) -> str:
        from importlib import metadata

        return f"mjbatch-uni {metadata.version('mjbatch-uni')}"

    def step(self, nstep: int) -> None:
        self.batch.step(None, nstep)

    def forward(self, ids: np.ndarray | None = None) -> None:
        self.batch.forward(ids)

    def native_refresh(self, ids: np.ndarray | None, columns: tuple) -> None:
        self.batch.refresh_sensor_ranges(ids, [int(columns[0]), int(columns[1])])


class MujocoBatch(Backend):
    """MuJoCo >= 4.0 ``mujoco.batch.Batch``."""

    name = "mujoco.batch"
    description = "mujoco.batch.Batch(model, N, nthread=T): step(nstep=decimation)"
    native_refresh_description = "Batch.forward(ids, stage=mjSTAGE_VEL)"

    @classmethod
    def unavailable(cls) -> str | None:
        return mujoco_batch_unavailable()

    def __init__(self, model: mujoco.MjModel, n: int, threads: int) -> None:
        super().__init__(model, n, threads)
        from mujoco import batch

        self.batch = b = batch.Batch(model, n, nthread=threads)
        self.state = b.state
        self.qpos = b.bind("qpos")
        self.qvel = b.bind("qvel")
        self.ctrl = b.bind("ctrl")
        self.sensordata = b.bind("sensordata")  # read-only output
        self.writable_sensordata = None
        self._vel = int(mujoco.mjtStage.mjSTAGE_VEL)
        if self.state.shape[1] != mujoco.mj_stateSize(model, mujoco.mjtState.mjSTATE_INTEGRATION):
            raise RuntimeError("mujoco.batch state rows are not mjSTATE_INTEGRATION")

    @property
    def threads_used(self) -> int:
        return int(self.batch.nthread)

    @property
    def version(self) -> str:
        return f"mujoco.batch {mujoco.__version__}"

    @staticmethod
    def _ids(ids: np.ndarray | None) -> np.ndarray | None:
        return None if ids is None else np.ascontiguousarray(ids, dtype=np.int32)

    def step(self, nstep: int) -> None:
        self.batch.step(None, nstep)

    def forward(self, ids: np.ndarray | None = None) -> None:
        self.batch.forward(self._ids(ids))

    def native_refresh(self, ids: np.ndarray | None, columns: tuple) -> None:
        self.batch.forward(self._ids(ids), stage=self._vel)


ALL: list[type[Backend]] = [MjbatchUni, MujocoBatch]
BY_NAME: dict[str, type[Backend]] = {b.name: b for b in ALL}


def availability() -> dict[str, str | None]:
    """Backend name -> None if it can run here, else why not."""
    return {b.name: b.unavailable() for b in ALL}
