"""A StateCache finds bodies and sensors by model id and by model name; an
unnamed object's plan label ``#<id>`` finds it too, unless another object is
really named so (then the name means that object, as mj_name2id says)."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from support.oracle import forward_rows
from support.states import random_states

import mjrefresh

# Body "#2" is body 1; body 2 is unnamed (labelled "#2" by the plan). Sensor
# "#1" is sensor 0; sensor 1 is unnamed (labelled "#1").
XML = """<mujoco><worldbody>
  <body name="#2" pos="1 0 0"><joint/><geom size=".1"/>
    <body pos="0 1 0"><joint/><geom size=".1"/></body></body></worldbody>
  <sensor><framepos name="#1" objtype="xbody" objname="#2"/>
    <frameangvel objtype="body" objname="#2"/></sensor></mujoco>"""
N = 3


@pytest.fixture(scope="module")
def model():
    return mujoco.MjModel.from_xml_string(XML)


@pytest.fixture(scope="module")
def states(model):
    return random_states(model, N, seed=2)


def test_a_name_that_is_another_objects_label_reads_the_named_object(model, states):
    ref = forward_rows(model, states)
    with mjrefresh.Refresher(model, bodies=[1, 2], sensors=[0, 1], num_threads=2) as r:
        assert r.plan.body_names == ("#2", "#2")
        cache = mjrefresh.bind_arrays(r, states["qpos"], states["qvel"])
        np.testing.assert_allclose(cache.body_pos("#2"), ref.xpos[:, 1], atol=1e-12)
        np.testing.assert_allclose(cache.body_pos(2), ref.xpos[:, 2], atol=1e-12)
        np.testing.assert_allclose(cache.sensor("#1"), ref.sensordata[:, 0:3], atol=1e-12)
        np.testing.assert_allclose(cache.sensor(1), ref.sensordata[:, 3:6], atol=1e-10)


def test_an_unnamed_objects_label_taken_by_a_name_is_refused_with_the_id_to_use(model, states):
    with mjrefresh.Refresher(model, bodies=[2], sensors=[1], num_threads=1) as r:
        cache = mjrefresh.bind_arrays(r, states["qpos"], states["qvel"])
        with pytest.raises(
            ValueError, match=r"'#2' is not one of .* is unnamed body 2: read it by id$"
        ):
            cache.body_pos("#2")
        with pytest.raises(ValueError, match=r"name: sensor '#1' .*add it to Refresher\(sensors"):
            cache.sensor("#1")
        np.testing.assert_array_equal(cache.body_pos(2), cache.storage.body_pos[:, 0])


def test_a_name_with_a_nul_character_names_nothing():
    # MuJoCo's C lookup stops at the NUL: "base\0junk" selected base.
    m = mjrefresh.models.quadruped()
    for kwargs, argument, name in [
        (dict(bodies=["base\0junk"]), "bodies", "body"),
        (dict(sensors=["imu_gyro\0x"]), "sensors", "sensor"),
        (dict(sites=["imu\0zzz"]), "sites", "site"),
        (dict(bodies=["base"], relative_to="FL_calf\0zz"), "relative_to", "body"),
    ]:
        with pytest.raises(ValueError, match=rf"^{argument}: unknown {name} name '.*\\x00"):
            mjrefresh.Refresher(m, **kwargs)
    with mjrefresh.Refresher(m, sensors=["imu_gyro"], num_threads=1) as r:
        cache = mjrefresh.bind_arrays(r, np.tile(m.qpos0, (2, 1)), np.zeros((2, m.nv)))
        with pytest.raises(ValueError, match=r"^name: unknown sensor 'imu_gyro\\x00y'"):
            cache.sensor("imu_gyro\0y")
