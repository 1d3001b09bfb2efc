"""Models whose actuators take several controls or give several force
outputs (MuJoCo >= 3.11: nu != nactuator, nout != nactuator) refresh like
any other: both engines, 1, 2 and more threads than rows, equal to
mj_forward (bit-exact with the exact engine); actuatorpos/actuatorvel of
such an actuator hold all its outputs. Building a Refresher for such a
model used to raise IndexError, whatever was selected."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from support.actuator_models import FORMS, SENSORS, available, model
from support.oracle import forward_rows
from support.sensors import sensor_cols
from support.states import random_states

import mjrefresh

pytestmark = pytest.mark.parity

N = 5


def _form(name: str) -> mujoco.MjModel:
    if not available(name):
        pytest.skip(f"{name}: needs MuJoCo >= {'.'.join(map(str, FORMS[name][0]))}")
    return model(name)


@pytest.mark.parametrize("name", list(FORMS))
def test_controls_and_outputs_are_not_actuators(name):
    m = _form(name)
    assert m.nactuator == 3
    assert (m.nu, m.nout) != (3, 3)
    multi = m.actuator("multi").id
    assert m.sensor_dim[m.sensor("multi_pos").id] == m.actuator_outnum[multi]


@pytest.mark.parametrize("threads", [1, 2, 7])
@pytest.mark.parametrize("engine", ["exact", "auto"])
@pytest.mark.parametrize("name", list(FORMS))
def test_multi_control_actuator_models_refresh_like_mj_forward(name, engine, threads):
    m = _form(name)
    states = random_states(m, N, seed=len(name))
    ref = forward_rows(m, states)
    for sensors in (SENSORS, ["first_pos", "last_vel", "tip_pos"]):
        r = mjrefresh.Refresher(
            m, bodies=["c"], sensors=sensors, engine=engine, num_threads=threads
        )
        out = r.outputs(N)
        r.refresh(np.arange(N), states["qpos"], states["qvel"], out)
        cols = sensor_cols(m, sensors)
        if r.plan.engine == "exact":
            np.testing.assert_array_equal(out.sensordata[:, cols], ref.sensordata[:, cols])
        else:
            np.testing.assert_allclose(
                out.sensordata[:, cols], ref.sensordata[:, cols], rtol=0, atol=1e-10
            )
        np.testing.assert_allclose(out.body_pos[:, 0], ref.xpos[:, m.body("c").id], atol=1e-12)


@pytest.mark.parametrize("name", list(FORMS))
def test_the_fast_engine_takes_single_output_transmissions_only(name):
    m = _form(name)
    multi = m.actuator("multi").id
    single = bool(m.actuator_outnum[multi] == 1)
    plan = mjrefresh.Refresher(m, sensors=["multi_pos", "multi_vel"]).plan
    assert plan.engine == ("fast" if single else "exact"), plan.engine_reason
    # the plain motors around it are the fast engine's in every model
    assert mjrefresh.Refresher(m, sensors=["first_vel", "last_pos"]).plan.engine == "fast"


def test_disabled_actuation_is_left_to_the_exact_engine():
    # mj_forward zeroes actuator velocities when the model disables actuation;
    # the fast engine computes the moment times qvel, so auto picks exact.
    xml = """<mujoco><option><flag actuation="disable"/></option><worldbody><body>
      <joint name="h"/><geom size=".1" pos=".2 0 0"/></body></worldbody>
      <actuator><motor name="mh" joint="h" gear="2"/></actuator>
      <sensor><actuatorpos name="ap" actuator="mh"/><actuatorvel name="av" actuator="mh"/>
      </sensor></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    r = mjrefresh.Refresher(m, sensors=["ap", "av"])
    assert r.plan.engine == "exact"
    assert "disables actuation (mjDSBL_ACTUATION)" in r.plan.engine_reason
    states = random_states(m, N, seed=3)
    out = r.outputs(N)
    r.refresh(np.arange(N), states["qpos"], states["qvel"], out)
    np.testing.assert_array_equal(out.sensordata, forward_rows(m, states).sensordata)
    assert (out.sensordata[:, 1] == 0).all()
