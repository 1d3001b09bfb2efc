"""StateCache lifecycle: correctness against mj_forward after real mj_step,
on-demand/repeated reads, partial resets, frozen windows, acceleration-stage
sensors, and argument errors. Backend: plain (N, ...) arrays."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from support.backends import ArrayBackend
from support.checks import ATOL, assert_reads_equal_forward
from support.models import LEGGED_ACC_SENSORS as ACC_SENSORS
from support.models import LEGGED_BODIES as BODIES
from support.oracle import expected_outputs
from support.sensors import sensor_cols, tracked_sensors

import mjrefresh
from mjrefresh import model_mocap

N = 6


@pytest.fixture()
def backend(legged_model) -> ArrayBackend:
    return ArrayBackend(legged_model, N, seed=1)


# ------------------------------------------------------------- correctness
def test_whole_state_getter_matches_individual_reads(legged_model, legged_refresher, backend):
    cache = backend.bind(legged_refresher)
    backend.step()
    cache.mark_stepped()
    exp = expected_outputs(legged_model, backend.states(), BODIES, "base", rows=[1, 4])
    out = cache.outputs(env_ids=[1, 4])
    assert isinstance(out, mjrefresh.RefreshOutputs)
    for name in (
        "body_pos",
        "body_quat",
        "body_linvel",
        "body_angvel",
        "body_pos_rel",
        "body_quat_rel",
    ):
        np.testing.assert_allclose(getattr(out, name), exp[name], rtol=0, atol=ATOL)
    whole, storage = cache.outputs().arrays(), cache.storage.arrays()
    assert whole.keys() == storage.keys()
    assert all(whole[k] is storage[k] for k in whole)  # the same arrays, new holders


def test_design_signature_with_sensordata_none(legged_model, legged_refresher, backend):
    cache = mjrefresh.StateCache(
        legged_refresher,
        N,
        qpos=backend.qpos,
        qvel=backend.qvel,
        sensordata=None,
        mocap_pos=backend.mocap_pos,
        mocap_quat=backend.mocap_quat,
    )
    assert cache.num_envs == N and cache.refresher is legged_refresher
    assert not np.shares_memory(cache.storage.sensordata, backend.sensordata)
    assert cache.refresh_dirty_rows() == N
    assert_reads_equal_forward(cache, legged_model, backend.states())
    assert "StateCache N=6, 0 dirty" in repr(cache)


def test_body_subset_by_name_and_id(legged_model, legged_refresher, backend):
    cache = backend.bind(legged_refresher)
    all_pos = cache.body_pos().copy()
    foot = legged_model.body("foot").id
    np.testing.assert_array_equal(cache.body_pos("foot"), all_pos[:, 3])
    np.testing.assert_array_equal(cache.body_pos(foot), all_pos[:, 3])
    np.testing.assert_array_equal(cache.body_pos(["tail", "base"]), all_pos[:, [4, 0]])
    np.testing.assert_array_equal(cache.body_pos(("foot",), env_ids=2), all_pos[2, [3]])
    np.testing.assert_array_equal(cache.body_pos("foot", env_ids=[5, 0]), all_pos[[5, 0], 3])


# ------------------------------------------------ on-demand and repeated reads
def test_first_read_refreshes_exactly_the_dirty_rows_second_none(legged_refresher, backend):
    cache = backend.bind(legged_refresher)
    cache.refresh_dirty_rows()
    backend.step(rows=[0, 2, 3])
    cache.mark_stepped([0, 2, 3])
    cache.reset_stats()
    cache.body_pos()
    assert cache.stats.native_calls == 1
    assert cache.stats.rows_refreshed == 3
    assert cache.stats.cached_reads == 0
    cache.body_pos()
    cache.body_linvel(["foot"])
    cache.sensor("foot_pos_w")
    assert cache.stats.native_calls == 1
    assert cache.stats.rows_refreshed == 3
    assert cache.stats.reads == 4
    assert cache.stats.cached_reads == 3
    assert cache.stats.native_seconds > 0
    cache.reset_stats()
    assert cache.stats.as_dict() == {
        "native_calls": 0,
        "rows_refreshed": 0,
        "reads": 0,
        "cached_reads": 0,
        "native_seconds": 0.0,
    }


def test_env_ids_read_refreshes_only_those_and_leaves_others_dirty(
    legged_model, legged_refresher, backend
):
    cache = backend.bind(legged_refresher)
    cache.refresh_dirty_rows()
    backend.step()
    cache.mark_stepped()
    cache.reset_stats()
    got = cache.body_pos(env_ids=[4, 1, 4])
    assert cache.stats.native_calls == 1 and cache.stats.rows_refreshed == 2
    exp = expected_outputs(legged_model, backend.states(), BODIES, "base", rows=[4, 1, 4])
    np.testing.assert_allclose(got, exp["body_pos"], rtol=0, atol=ATOL)
    np.testing.assert_array_equal(cache.dirty, [True, False, True, True, False, True])
    # bool mask and slice forms select rows the same way
    cache.body_quat(env_ids=np.array([False, True, False, False, True, False]))
    assert cache.stats.native_calls == 1
    cache.body_quat(env_ids=slice(0, 3))
    assert cache.stats.rows_refreshed == 4
    np.testing.assert_array_equal(cache.dirty, [False, False, False, True, False, True])
    assert cache.refresh_dirty_rows([3]) == 1
    assert cache.refresh_dirty_rows() == 1
    assert cache.refresh_dirty_rows() == 0
    assert cache.num_dirty == 0
    assert_reads_equal_forward(cache, legged_model, backend.states())


def test_mark_dirty_after_state_write(legged_model, legged_refresher, backend):
    cache = backend.bind(legged_refresher)
    cache.refresh_dirty_rows()
    backend.write_state([2])
    cache.mark_dirty([2])
    cache.reset_stats()
    assert_reads_equal_forward(cache, legged_model, backend.states())
    assert cache.stats.rows_refreshed == 1


def test_mark_fresh_costs_nothing_when_the_backend_owns_every_output(legged_model, backend):
    sensors = tracked_sensors(legged_model)
    with mjrefresh.Refresher(legged_model, sensors=sensors, num_threads=2) as r:
        cache = backend.bind(r)
        cache.refresh_dirty_rows()
        other = backend.sensordata[[0, 2, 3, 5]].copy()
        backend.reset([1, 4])  # writes its forward's sensordata for those rows
        cache.mark_fresh([1, 4])
        cache.reset_stats()
        exp = expected_outputs(legged_model, backend.states(), rows=[1, 4])
        for name in sensors:
            s = legged_model.sensor(name)
            cols = slice(int(s.adr[0]), int(s.adr[0] + s.dim[0]))
            np.testing.assert_allclose(
                cache.sensor(name, env_ids=[1, 4]), exp["sensordata"][:, cols], rtol=0, atol=ATOL
            )
        assert cache.stats.native_calls == 0
        np.testing.assert_array_equal(backend.sensordata[[0, 2, 3, 5]], other)


# ------------------------------------------------------ freshness boundaries
def test_frozen_window(legged_model, legged_refresher, backend):
    cache = backend.bind(legged_refresher)
    cached = cache.body_pos().copy()
    cache.reset_stats()
    with cache.frozen():
        assert cache.is_frozen
        backend.step(rows=[0, 1])
        cache.mark_stepped([0, 1])  # mark inside the window
        np.testing.assert_array_equal(cache.body_pos(), cached)
        cache.sensor("foot_pos_w")
        assert cache.stats.native_calls == 0 and cache.stats.cached_reads == 2
        with cache.frozen():  # nests
            cache.body_quat()
        assert cache.is_frozen
    assert not cache.is_frozen
    # the mark made inside survives the window
    np.testing.assert_array_equal(cache.dirty, [True, True, False, False, False, False])
    backend.step()  # the step that ends the window
    cache.mark_stepped()
    assert cache.num_dirty == N
    assert_reads_equal_forward(cache, legged_model, backend.states())
    assert cache.stats.native_calls == 1 and cache.stats.rows_refreshed == N


def test_frozen_survives_exceptions_and_explicit_refresh_runs(legged_refresher, backend):
    cache = backend.bind(legged_refresher)
    with pytest.raises(RuntimeError, match="boom"):
        with cache.frozen():
            raise RuntimeError("boom")
    assert not cache.is_frozen
    with cache.frozen():
        assert cache.refresh_dirty_rows() == N


# ------------------------------------------------ acceleration-stage sensors
def test_acceleration_sensors_survive_any_number_of_refreshes(
    legged_model, legged_refresher, backend
):
    cache = backend.bind(legged_refresher)
    acc = sensor_cols(legged_model, ACC_SENSORS)
    backend.step(nsub=4)
    solved = backend.sensordata[:, acc].copy()
    assert np.abs(solved).max() > 0
    for _ in range(5):
        cache.mark_stepped()
        cache.refresh_dirty_rows()
        cache.mark_dirty([0, 3])
        cache.sensor("foot_linvel_w", env_ids=[0, 3])
    np.testing.assert_array_equal(backend.sensordata[:, acc], solved)
    for name in ACC_SENSORS:
        s = legged_model.sensor(name)
        np.testing.assert_array_equal(
            cache.sensor(name), backend.sensordata[:, s.adr[0] : s.adr[0] + s.dim[0]]
        )


def test_acceleration_sensor_from_cache_owned_sensordata_is_rejected(
    legged_model, legged_refresher, backend
):
    cache = mjrefresh.bind_arrays(
        legged_refresher,
        **backend.inputs(),
    )
    with pytest.raises(ValueError, match=r"'foot_touch' \(touch\) is an acceleration-stage sensor"):
        cache.sensor("foot_touch")


# ---------------------------------------------------------- output storage
def test_float32_outputs(legged_model, legged_refresher, backend):
    cache = backend.bind(legged_refresher, dtype=np.float32)
    assert cache.body_pos().dtype == np.float32
    exp = expected_outputs(legged_model, backend.states(), BODIES, "base")
    np.testing.assert_allclose(cache.body_linvel(), exp["body_linvel"], rtol=1e-6, atol=1e-5)


def test_torch_cpu_tensor_outputs(legged_model, legged_refresher, backend):
    torch = pytest.importorskip("torch", reason="torch is not installed (optional: DLPack outputs)")
    b = len(BODIES)
    pos = torch.zeros((N, b, 3), dtype=torch.float32)
    sens = torch.zeros((N, legged_model.nsensordata), dtype=torch.float64)
    cache = mjrefresh.bind_arrays(
        legged_refresher,
        **backend.inputs(),
        body_pos=pos,
        sensordata=sens,
    )
    backend.step()
    cache.mark_stepped()
    exp = expected_outputs(legged_model, backend.states(), BODIES, "base")
    cache.refresh_dirty_rows()
    np.testing.assert_allclose(pos.numpy(), exp["body_pos"], rtol=1e-6, atol=1e-6)
    cols = sensor_cols(legged_model, tracked_sensors(legged_model))
    np.testing.assert_allclose(sens.numpy()[:, cols], exp["sensordata"][:, cols], rtol=0, atol=ATOL)
    # a read returns a view of the tensor's memory
    got = cache.body_pos()
    assert np.shares_memory(got, pos.numpy())


def test_torch_tensors_that_move_their_memory_are_refused(legged_model, legged_refresher):
    # torch's resize_/set_ free the memory a bound view points at (numpy's
    # own DLPack views crash the same way): checked before every run, as
    # inputs, as cache outputs and as outputs given to Refresher.outputs.
    torch = pytest.importorskip("torch", reason="torch is not installed (optional: DLPack outputs)")
    m = legged_model

    def message(name: str) -> str:
        return (
            rf"^{name}: its memory moved since it was bound \(the Tensor was reallocated, e.g. by "
            r"torch's resize_ or set_\), and the refresh would use the memory it had; bind it "
            r"again as it is now \(Refresher.bind, a new cache\)$"
        )

    state = torch.zeros((N, 64), dtype=torch.float64)
    state[:, : m.nq] = torch.from_numpy(np.tile(m.qpos0, (N, 1)))
    cache = mjrefresh.bind_arrays(
        legged_refresher, state[:, : m.nq], state[:, m.nq : m.nq + m.nv], **model_mocap(m, N)
    )
    cache.refresh_dirty_rows()
    state.resize_(N, 4096)  # a new block; the views follow it, the bound memory is freed
    cache.mark_stepped()
    with pytest.raises(ValueError, match=message("qpos")):
        cache.refresh_dirty_rows()
    assert cache.dirty.all()

    qpos, qvel = np.tile(m.qpos0, (N, 1)), np.zeros((N, m.nv))
    pos = torch.zeros((N, len(BODIES), 3), dtype=torch.float64)
    cache = mjrefresh.bind_arrays(legged_refresher, qpos, qvel, body_pos=pos, **model_mocap(m, N))
    pos.set_(torch.zeros((N, len(BODIES), 3), dtype=torch.float64))
    with pytest.raises(ValueError, match=message("body_pos")):
        cache.refresh_dirty_rows()

    sens = torch.zeros((N, m.nsensordata), dtype=torch.float64)
    out = legged_refresher.outputs(N, sensordata=sens)
    bound = legged_refresher.bind(qpos, qvel, out, **model_mocap(m, N))
    bound.refresh(np.arange(N))
    sens.resize_(N, 4 * m.nsensordata)
    with pytest.raises(ValueError, match=message("sensordata")):
        bound.refresh(np.arange(N))


def test_buffer_protocol_outputs(legged_model, legged_refresher, backend):
    b = len(BODIES)
    raw = bytearray(N * b * 3 * 4)
    buf = memoryview(raw).cast("B").cast("f", (N, b, 3))
    cache = mjrefresh.bind_arrays(
        legged_refresher,
        **backend.inputs(),
        body_angvel=buf,
    )
    cache.refresh_dirty_rows()
    exp = expected_outputs(legged_model, backend.states(), BODIES, "base")
    written = np.frombuffer(raw, dtype=np.float32).reshape(N, b, 3)
    np.testing.assert_allclose(written, exp["body_angvel"], rtol=1e-6, atol=1e-5)
    with pytest.raises(
        ValueError, match="body_pos: expected a writable buffer, got a read-only bytes"
    ):
        mjrefresh.bind_arrays(
            legged_refresher,
            **backend.inputs(),
            body_pos=bytes(N * b * 3 * 8),
        )


# --------------------------------------------------------------- errors
def test_errors_name_the_argument(legged_model, legged_refresher, backend):
    be = backend
    kw = dict(mocap_pos=be.mocap_pos, mocap_quat=be.mocap_quat)
    with pytest.raises(TypeError, match="refresher: expected mjrefresh.Refresher, got str"):
        mjrefresh.StateCache("r", N, qpos=be.qpos, qvel=be.qvel)
    with pytest.raises(ValueError, match="num_envs: expected an int >= 1, got 0"):
        mjrefresh.StateCache(legged_refresher, 0, qpos=be.qpos, qvel=be.qvel, **kw)
    with pytest.raises(ValueError, match=r"qpos: expected shape \(7, 13\), got \(6, 13\)"):
        mjrefresh.StateCache(legged_refresher, 7, qpos=be.qpos, qvel=be.qvel, **kw)
    with pytest.raises(ValueError, match=r"qvel: expected shape \(6, 11\), got \(6, 10\)"):
        mjrefresh.bind_arrays(legged_refresher, be.qpos, be.qvel[:, :10], **kw)
    with pytest.raises(TypeError, match="qpos: expected a numpy array"):
        mjrefresh.bind_arrays(legged_refresher, [[0.0]], be.qvel, **kw)
    with pytest.raises(
        ValueError,
        match=r"mocap_pos: the model has 1 mocap bodies; expected an array of shape \(6, 1, 3\), got None",  # noqa: E501
    ):
        mjrefresh.bind_arrays(legged_refresher, be.qpos, be.qvel)
    with pytest.raises(TypeError, match="qpos: expected dtype float64, got float32"):
        mjrefresh.bind_arrays(legged_refresher, be.qpos.astype(np.float32), be.qvel, **kw)
    with pytest.raises(ValueError, match="sensordata: expected shape"):
        mjrefresh.bind_arrays(legged_refresher, be.qpos, be.qvel, sensordata=np.zeros((N, 3)), **kw)
    buf = np.zeros((N, 40))
    with pytest.raises(ValueError, match="out.body_pos: overlaps the input qpos in memory"):
        mjrefresh.bind_arrays(
            legged_refresher, buf[:, :13], be.qvel, body_pos=buf[:, 10:25].reshape(N, 5, 3), **kw
        )
    with pytest.raises(TypeError, match="^body_foo: unexpected keyword argument; the inputs "):
        mjrefresh.bind_arrays(legged_refresher, be.qpos, be.qvel, body_foo=np.zeros(3), **kw)
    with pytest.raises(
        ValueError,
        match=r"backend_outputs: 'sensordata' is not one of the supplied output arrays \(\)",
    ):
        mjrefresh.bind_arrays(
            legged_refresher, be.qpos, be.qvel, backend_outputs=("sensordata",), **kw
        )
    with pytest.raises(
        TypeError, match=r"^backend_outputs: expected output names \(str\), or a sequence of"
    ):
        mjrefresh.bind_arrays(legged_refresher, be.qpos, be.qvel, backend_outputs=3, **kw)
    with pytest.raises(TypeError, match=r"^num_envs: expected an int >= 1, got float$"):
        mjrefresh.StateCache(legged_refresher, 6.0, qpos=be.qpos, qvel=be.qvel, **kw)
    # One name is a name (not its letters); None is none.
    sd = np.zeros((N, legged_refresher.model.nsensordata))
    for names in ("sensordata", None):
        cache = mjrefresh.bind_arrays(
            legged_refresher, be.qpos, be.qvel, sensordata=sd, backend_outputs=names, **kw
        )
        assert isinstance(cache, mjrefresh.StateCache)

    cache = be.bind(legged_refresher)
    with pytest.raises(ValueError, match=r"env_ids: expected row ids in \[0, 6\), got 6"):
        cache.body_pos(env_ids=[0, 6])
    with pytest.raises(ValueError, match=r"env_ids: expected a row id in \[0, 6\), got -1"):
        cache.body_pos(env_ids=-1)
    with pytest.raises(ValueError, match="env_ids: expected a bool mask of length 6"):
        cache.body_pos(env_ids=np.ones(5, dtype=bool))
    with pytest.raises(
        TypeError, match="env_ids: expected int row ids or a bool mask, got dtype float64"
    ):
        cache.body_pos(env_ids=np.array([0.0, 1.0]))
    with pytest.raises(TypeError, match="env_ids: expected None, an int, a slice"):
        cache.body_pos(env_ids=True)
    with pytest.raises(
        TypeError,
        match=r"^env_ids: expected None, an int, a slice, int row ids \(a list or an int array\) "
        r"or a bool mask, got set$",
    ):
        cache.body_pos(env_ids={0, 1})
    with pytest.raises(ValueError, match=r"rows: expected row ids in \[0, 6\), got 9"):
        cache.mark_stepped([9])
    with pytest.raises(
        ValueError, match=r"bodies: 'floor' is not one of the refresher's bodies \('base'"
    ):
        cache.body_pos("floor")
    with pytest.raises(TypeError, match="bodies: expected body names"):
        cache.body_pos([1.5])
    with pytest.raises(ValueError, match="name: unknown sensor 'nope'"):
        cache.sensor("nope")
    with pytest.raises(TypeError, match="name: expected a sensor name"):
        cache.sensor(1.0)
    # nothing was refreshed or marked by the failed calls
    assert cache.num_dirty == N and cache.stats.native_calls == 0


def test_reads_of_unselected_outputs_say_what_to_select(legged_model, backend):
    with mjrefresh.Refresher(legged_model, sensors=["knee_pos"], num_threads=1) as r:
        cache = mjrefresh.bind_arrays(
            r,
            **backend.inputs(),
        )
        with pytest.raises(
            ValueError, match=r"body_pos: the refresher selects no bodies \(pass bodies="
        ):
            cache.body_pos()
        with pytest.raises(
            ValueError, match="body_quat_rel: the refresher selects no relative_to body"
        ):
            cache.body_quat_rel()
        with pytest.raises(
            ValueError, match="name: sensor 'knee_vel' is not refreshed by this cache's refresher"
        ):
            cache.sensor("knee_vel")
    # A sensor whose columns a sensor_ranges entry covers only in part.
    quat = next(i for i in range(legged_model.nsensor) if int(legged_model.sensor_dim[i]) > 1)
    a, d = int(legged_model.sensor_adr[quat]), int(legged_model.sensor_dim[quat])
    name = legged_model.sensor(quat).name
    with mjrefresh.Refresher(legged_model, sensor_ranges=[(a, a + 1)], num_threads=1) as r:
        cache = mjrefresh.bind_arrays(r, **backend.inputs())
        with pytest.raises(
            ValueError,
            match=rf"^name: sensor '{name}' is only partly refreshed \(1 of its {d} columns "
            rf"{a}-{a + d - 1} are in the refresher's column ranges \[\({a}, {a + 1}\)\]\); "
            r"select it whole with Refresher\(sensors=\.\.\.\) or a sensor_ranges entry",
        ):
            cache.sensor(name)


def test_clock_sensor_needs_time():
    spec = mujoco.MjSpec.from_string(
        '<mujoco><worldbody><body><joint type="slide"/><geom size=".1"/></body></worldbody>'
        '<sensor><clock name="t"/></sensor></mujoco>'
    )
    m = spec.compile()
    with mjrefresh.Refresher(m, sensors=["t"], num_threads=1) as r:
        q, v = np.zeros((3, 1)), np.zeros((3, 1))
        with pytest.raises(
            ValueError, match="time: clock sensor 't' is selected; expected a scalar"
        ):
            mjrefresh.bind_arrays(r, q, v)
        t = np.array([0.5, 1.0, 1.5])
        cache = mjrefresh.bind_arrays(r, q, v, time=t)
        np.testing.assert_array_equal(cache.sensor("t")[:, 0], t)
        t += 1
        cache.mark_stepped()
        np.testing.assert_array_equal(cache.sensor("t")[:, 0], t)
        fixed = mjrefresh.bind_arrays(r, q, v, time=np.float64(2.5))
        np.testing.assert_array_equal(fixed.sensor("t")[:, 0], 2.5)
        with pytest.raises(
            ValueError, match=r"time: expected a scalar or shape \(3,\), got \(2,\)"
        ):
            mjrefresh.bind_arrays(r, q, v, time=t[:2])


def test_row_views_with_strides_are_read_in_place(legged_model, legged_refresher):
    """State rows interleaved in one buffer (like a backend's state rows)."""
    be = ArrayBackend(legged_model, N, seed=3)
    state = np.zeros((N, 64))
    qpos = state[:, 0 : legged_model.nq]
    qvel = state[:, 20 : 20 + legged_model.nv]
    qpos[:] = be.qpos
    qvel[:] = be.qvel
    cache = mjrefresh.bind_arrays(
        legged_refresher, qpos, qvel, mocap_pos=be.mocap_pos, mocap_quat=be.mocap_quat
    )
    be.step()
    qpos[:] = be.qpos
    qvel[:] = be.qvel
    cache.mark_stepped()
    exp = expected_outputs(legged_model, be.states(), BODIES, "base")
    np.testing.assert_allclose(cache.body_angvel(), exp["body_angvel"], rtol=0, atol=ATOL)


def test_a_misspelled_keyword_is_named_with_the_inputs_and_outputs(legged_refresher, backend):
    with pytest.raises(
        TypeError,
        match=r"^mocap_pose: unexpected keyword argument; the inputs besides qpos and qvel are "
        r"mocap_pos, mocap_quat, time, the outputs body_pos, .*, sensordata; did you mean "
        r"'mocap_pos' or 'mocap_quat'\?$",
    ):
        mjrefresh.bind_arrays(legged_refresher, **backend.inputs(), mocap_pose=np.zeros(3))
