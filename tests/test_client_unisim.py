"""unisim-core 2.2.0's MuJoCo backend with mjrefresh as its tracked-body
refresh (:func:`mjrefresh.attach_unisim`), against the real package.

Two backends from unisim's public factory (tracked bodies on, so unisim
injects its own tracking sensors) run in lockstep on the same controls,
partial resets and state writes, all through unisim's public API: the stock
one (mjbatch-uni's refresh_sensor_ranges) and one attached to mjrefresh.
After each, the public packed reads of both agree, and the tracked columns
equal MuJoCo's own mj_forward on each row's native float64 state (float64
backends to 1e-12, float32 ones to float32 rounding)."""

from __future__ import annotations

import warnings

import mujoco
import numpy as np
import pytest
from support.clients import (
    INTEGRATION,
    TRACKED,
    UNISIM_MISSING,
    authored_quadruped_file,
    forward_sensordata,
    unisim_backend,
)

import mjrefresh

pytest.importorskip("unisim", reason=UNISIM_MISSING)
torch = pytest.importorskip("torch", reason=UNISIM_MISSING)
from unisim.backend.base import TensorIOSpec  # noqa: E402

N = 24
# The float32 rounding of a value up to 4 in size (body positions, unit
# quaternions, velocities of a few m/s), plus one ulp of slack.
F32_TOL = 2 * np.finfo(np.float32).eps * 4


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    return authored_quadruped_file(tmp_path_factory.mktemp("unisim"))


def track_names(model: mujoco.MjModel) -> tuple[str, ...]:
    names = (mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_SENSOR, i) for i in range(model.nsensor))
    return tuple(n for n in names if n.startswith("track_"))


class Lockstep:
    """A stock and an mjrefresh-attached unisim backend driven alike."""

    def __init__(self, model_file, np_dtype):
        self.f32 = np.dtype(np_dtype) == np.float32
        self.stock = unisim_backend(model_file, N, np_dtype)
        self.ours = unisim_backend(model_file, N, np_dtype)
        self.drop_in = mjrefresh.attach_unisim(self.ours, num_threads=2)
        m = self.model = self.stock.model
        self.tracked = track_names(m)
        # Every tracking sensor unisim injected, plus an authored one mjrefresh
        # must leave as the physics step left it (read but never refreshed).
        io = TensorIOSpec(
            state_fields=("qpos", "qvel"),
            sensor_names=(*self.tracked, "imu_gyro"),
            body_names=TRACKED,
            body_fields=("pos_w", "quat_w"),
        )
        self.plans = [b.bind_host_bridge_io(io) for b in (self.stock, self.ours)]
        self.rng = np.random.default_rng(5)
        self.q0 = self.stock.get_default_qpos()

    def each(self, fn):
        for b, plan in zip((self.stock, self.ours), self.plans, strict=True):
            fn(b, plan)

    def step(self):
        ctrl = torch.as_tensor(self.rng.uniform(-1, 1, (N, self.model.nu)), dtype=torch.float32)
        self.each(lambda b, _p: b.step_tensor(ctrl, nsteps=4))

    def state_rows(self, ids, scale):
        n = len(ids)
        q = np.tile(self.q0, (n, 1))
        q[:, 7:] += self.rng.uniform(-scale, scale, (n, self.model.nq - 7))
        v = self.rng.normal(0, scale, (n, self.model.nv))
        return (
            torch.tensor(np.asarray(ids), dtype=torch.int64),
            torch.as_tensor(q, dtype=torch.float32),
            torch.as_tensor(v, dtype=torch.float32),
        )

    def check(self):
        """Public reads of both backends; tracked values vs mj_forward."""
        packets = [plan.read_state_sensors() for plan in self.plans]
        poses = [plan.get_body_pose_views() for plan in self.plans]
        # Deterministic physics: both backends hold bit-identical native states.
        native = self.ours._pool.bind("state")
        assert np.array_equal(native, self.stock._pool.bind("state"))
        ref = forward_sensordata(self.model, native, INTEGRATION)
        tol = F32_TOL if self.f32 else 1e-12
        for name in self.tracked:
            i = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_SENSOR, name)
            adr, dim = self.model.sensor_adr[i], self.model.sensor_dim[i]
            want = ref[:, adr : adr + dim]
            # The public view unisim gives of the sensor (its own dtype) ...
            got = self.ours.get_sensor_view(name)
            got = np.asarray(got.cpu() if hasattr(got, "cpu") else got, dtype=np.float64)
            np.testing.assert_allclose(got, want, rtol=0, atol=tol, err_msg=name)
            # ... and the float32 packet, equal to the stock backend's.
            mine, theirs = (p[name].double().numpy() for p in packets)
            np.testing.assert_allclose(mine, want, rtol=0, atol=F32_TOL, err_msg=name)
            np.testing.assert_allclose(mine, theirs, rtol=0, atol=F32_TOL, err_msg=name)
        assert torch.equal(packets[1]["imu_gyro"], packets[0]["imu_gyro"])
        for field in ("pos_w", "quat_w"):
            mine, theirs = (getattr(p, field).double().numpy() for p in poses)
            np.testing.assert_allclose(mine, theirs, rtol=0, atol=F32_TOL, err_msg=field)
        for field in ("qpos", "qvel"):
            assert torch.equal(packets[1][field], packets[0][field])

    def close(self):
        for plan in self.plans:
            plan.close()
        self.stock.close()
        self.ours.close()
        self.drop_in.close()


@pytest.fixture(params=[np.float64, np.float32], ids=["float64", "float32"])
def lockstep(request, model_file):
    pair = Lockstep(model_file, request.param)
    yield pair
    pair.close()


def test_unisim_reads_equal_mj_forward_and_stock_after_steps_resets_writes(lockstep):
    s = lockstep
    assert s.ours._sensor_data.dtype == (np.float32 if s.f32 else np.float64)
    s.check()
    for _ in range(3):
        s.step()
        s.check()
    # The refresh ran through mjrefresh, on the tracked columns only.
    flat = s.ours._tracked_sensor_ranges
    assert s.drop_in.planned_ranges == [tuple(zip(flat[::2], flat[1::2], strict=True))]
    # Partial reset to the default state (unisim's reset is set_state_tensor).
    ids, _q, _v = s.state_rows([1, 6, 7, 20], 0.0)
    q0 = torch.as_tensor(np.tile(s.q0, (4, 1)), dtype=torch.float32)
    s.each(lambda b, _p: b.set_state_tensor(ids, q0, torch.zeros(4, s.model.nv)))
    s.step()
    s.check()
    # State writes of random joint angles and velocities.
    ids, q, v = s.state_rows([0, 3, 23], 0.4)
    s.each(lambda b, _p: b.set_state_tensor(ids, q, v))
    s.check()
    # The packed reset of the tensor plan, then a selected-row read and a step.
    ids, q, v = s.state_rows([10, 11], 0.2)
    s.each(lambda _b, p: p.apply_reset(ids, q, v))
    with warnings.catch_warnings():
        # unisim 2.2 packs a float64 backend's rows with np.take(..., out=)
        # into its float32 packet, which numpy buffers through the packet's
        # uninitialized memory first (a warning on some garbage bits, in the
        # stock backend too; the values written are right).
        warnings.filterwarnings("ignore", "invalid value encountered in cast", RuntimeWarning)
        s.each(lambda _b, p: p.read_selected_state_sensors())
    s.step()
    s.check()


def test_attach_unisim_refuses_other_objects_and_unmaterialized_backends(model_file):
    import unisim
    from unisim.scene import SceneCfg

    with pytest.raises(TypeError, match=r"backend: expected a unisim MuJoCo backend .*got Batch"):
        mjbatch = pytest.importorskip("mjbatch")
        mjrefresh.attach_unisim(mjbatch.Batch(mjrefresh.models.quadruped(), 2))
    backend = unisim.create_backend(
        "mujoco",
        SceneCfg(model_file=str(model_file)),
        num_envs=2,
        sim_dt=0.002,
        body_state_required=True,
        tracked_body_names=list(TRACKED),
        base_name="base",
    )
    with pytest.raises(RuntimeError, match=r"call backend.materialize\(\) before attach_unisim"):
        mjrefresh.attach_unisim(backend)
    backend.materialize()
    with pytest.raises(ValueError, match=r"^num_threads: expected >= 0 \(0 = all logical CPUs\)"):
        mjrefresh.attach_unisim(backend, num_threads=-1)  # at once, not at the backend's next read
    with pytest.raises(ValueError, match=r"^model_fields: 'body_poz' is not an mjModel field; "):
        mjrefresh.attach_unisim(backend, model_fields=["body_poz"])  # passed to the drop-in
    mjrefresh.attach_unisim(backend, model_fields=["body_pos"]).close()
    backend.close()  # which empties _pool too
    with pytest.raises(
        RuntimeError, match="^backend: it is closed; attach_unisim needs a backend not closed yet$"
    ):
        mjrefresh.attach_unisim(backend)
