"""Arguments of the public API that looked plausible and went wrong: byte
strings taken as lists of ids, 0-d arrays, another MuJoCo object taken as a
model, a cache's outputs holder shared with the caller, advice that failed
when followed."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

import mjrefresh
from mjrefresh.plan import fast_uncovered
from mjrefresh.sensor_rules import refresh_refusals, sensor_label

REFUSED = """<mujoco><worldbody><body name="a"><joint name="j"/><geom size=".1"/>
<site name="s"/></body></worldbody><sensor><jointpos name="p" joint="j"/>
<jointpos name="pd" joint="j" delay="0.01" nsample="3"/>
<user name="u" dim="2" needstage="pos" datatype="real"/>
<accelerometer name="acc" site="s"/></sensor></mujoco>"""


@pytest.fixture(scope="module")
def model():
    return mjrefresh.models.quadruped()


def test_byte_strings_are_not_lists_of_ids(model):
    # b"imu" iterated as the ids 105, 109, 117: three other sensors, no error.
    with pytest.raises(TypeError, match=r"^sensors: expected sensor names .* got bytes b'imu' "):
        mjrefresh.Refresher(model, sensors=b"imu")
    with pytest.raises(TypeError, match=r"^bodies: expected body names .*got bytes"):
        mjrefresh.Refresher(model, bodies=b"base")
    with mjrefresh.Refresher(model, bodies=["base"], num_threads=1) as r:
        cache = mjrefresh.bind_arrays(r, np.tile(model.qpos0, (2, 1)), np.zeros((2, model.nv)))
        with pytest.raises(TypeError, match=r"^bodies: expected a body name.*got bytes"):
            cache.body_pos(b"base")


def test_zero_dimensional_arrays_are_their_one_value(model):
    with mjrefresh.Refresher(model, bodies=np.array(1), sensors=np.array("imu_gyro")) as r:
        assert r.plan.body_ids == (1,) and r.plan.sensor_names == ("imu_gyro",)


def test_only_a_model_is_read_as_a_model(model):
    # The core read an MjSpec's memory as the model's sizes.
    spec = mujoco.MjSpec()
    with pytest.raises(TypeError, match=r"^model: expected mujoco.MjModel, got MjSpec \(compile"):
        fast_uncovered(spec, [0])
    with pytest.raises(
        TypeError, match=r"^model: expected mujoco.MjModel, got MjData \(pass mjdata.model\)$"
    ):
        refresh_refusals(mujoco.MjData(model))
    with pytest.raises(TypeError, match=r"^sensor_ids: expected sensor ids \(int\), got float"):
        fast_uncovered(model, [1.5])
    with pytest.raises(ValueError, match=r"^i: expected a sensor id in \[0, 119\), got -1$"):
        sensor_label(model, -1)


def test_one_range_of_numpy_ints(model):
    adr, dim = model.sensor_adr[0], model.sensor_dim[0]  # numpy int32
    with mjrefresh.Refresher(model, sensor_ranges=(adr, adr + dim)) as r:
        assert r.plan.column_ranges == ((int(adr), int(adr + dim)),)


def test_outputs_none_is_allocated_and_empty_state_names_qpos(model):
    with mjrefresh.Refresher(model, sensors=["imu_gyro"], num_threads=1) as r:
        assert r.outputs(3, sensordata=None).sensordata.shape == (3, model.nsensordata)
        with pytest.raises(ValueError, match=r"^qpos: expected at least one row .*got shape \(0, "):
            mjrefresh.bind_arrays(r, np.zeros((0, model.nq)), np.zeros((0, model.nv)))


def test_outputs_compare_by_identity(model):
    with mjrefresh.Refresher(model, sensors=["imu_gyro"], num_threads=1) as r:
        a, b = r.outputs(2), r.outputs(2)
        assert a != b and a == a and len({a, b}) == 2
        outs = [a, b]
        outs.remove(b)  # "truth value of an array is ambiguous" before
        assert outs == [a]


def test_the_outputs_holder_of_a_cache_is_the_callers_own(model):
    # Assigning to cache.outputs()'s or cache.storage's fields replaced the
    # cache's own holder: those reads were stale from then on.
    n = 2
    qpos = np.tile(model.qpos0, (n, 1))
    with mjrefresh.Refresher(model, bodies=["base"], num_threads=1) as r:
        cache = mjrefresh.bind_arrays(r, qpos, np.zeros((n, model.nv)))
        o = cache.outputs()
        o.body_pos = o.body_pos.copy()
        s = cache.storage
        s.body_pos = s.body_pos.copy()
        qpos[0, 2] += 1.0
        cache.mark_dirty(0)
        d = mujoco.MjData(model)
        d.qpos[:] = qpos[0]
        mujoco.mj_forward(model, d)
        assert cache.outputs().body_pos[0, 0, 2] == d.xpos[1, 2]
        assert cache.storage.body_pos[0, 0, 2] == d.xpos[1, 2]


def test_sensors_no_refresh_computes_are_read_from_the_backend_or_refused_with_why():
    m = mujoco.MjModel.from_xml_string(REFUSED)
    n = 3
    q, v = np.zeros((n, m.nq)), np.zeros((n, m.nv))
    sd = np.arange(n * m.nsensordata, dtype=float).reshape(n, m.nsensordata)
    with mjrefresh.Refresher(m, sensors=["p"], num_threads=1) as r:
        backend = mjrefresh.bind_arrays(r, q, v, sensordata=sd, backend_outputs="sensordata")
        for name in ("pd", "u", "acc"):  # the backend's own values, as acceleration-stage ones
            adr, dim = m.sensor(name).adr[0], m.sensor(name).dim[0]
            np.testing.assert_array_equal(backend.sensor(name), sd[:, adr : adr + dim])
        own = mjrefresh.bind_arrays(r, q, v)
        with pytest.raises(
            ValueError,
            match=r"^name: sensor 'u' \(user\) cannot be refreshed: .*; this cache's sensordata "
            r"is its own array, which holds no physics results \(pass the backend's",
        ):
            own.sensor("u")
    with mjrefresh.Refresher(m, bodies=["a"], num_threads=1) as r:
        with pytest.raises(
            ValueError,
            match=r"^name: sensor 'acc' \(accelerometer\) is an acceleration-stage sensor: .*; "
            r"this cache has no sensordata: its refresher selects no sensors \(read it from the "
            r"backend's own sensordata\)$",
        ):
            mjrefresh.bind_arrays(r, q, v).sensor("acc")
