"""Models with plugins: only the sensors whose plugin code a refresh would
have to run are refused; the model's other sensors refresh bit-exactly."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from support.edge_models import TOUCH_GRID_XML
from support.oracle import forward_rows
from support.sensors import sensor_cols

import mjrefresh

N = 24

# An actuator plugin: it runs only in mj_fwdActuation, never in a refresh;
# actuator length/velocity still come from mj_transmission / mj_fwdVelocity.
PID_XML = """<mujoco>
 <extension><plugin plugin="mujoco.pid"><instance name="pid">
   <config key="kp" value="40"/><config key="kd" value="4"/></instance></plugin></extension>
 <worldbody><body name="arm"><joint name="h" type="hinge" axis="0 1 0"/>
   <geom type="capsule" size=".05" fromto="0 0 0 .3 0 0"/><site name="tip" pos=".3 0 0"/></body>
 </worldbody>
 <actuator><plugin name="pidact" joint="h" plugin="mujoco.pid" instance="pid"/></actuator>
 <sensor><framepos name="fp" objtype="site" objname="tip"/><actuatorpos name="ap" actuator="pidact"/>
  <actuatorvel name="av" actuator="pidact"/></sensor>
</mujoco>"""


def _refresh_matches(m: mujoco.MjModel, names: list[str], engine: str = "exact") -> None:
    rng = np.random.default_rng(5)
    states = {
        "qpos": np.tile(m.qpos0, (N, 1)) + rng.normal(scale=0.2, size=(N, m.nq)),
        "qvel": rng.normal(size=(N, m.nv)),
        "mocap_pos": None,
        "mocap_quat": None,
        "time": None,
    }
    r = mjrefresh.Refresher(m, sensors=names, engine=engine, num_threads=2)
    out = r.outputs(N)
    assert r.refresh(np.arange(N), states["qpos"], states["qvel"], out) == N
    cols = sensor_cols(m, names)
    ref = forward_rows(m, states).sensordata[:, cols]
    if engine == "exact":
        np.testing.assert_array_equal(out.sensordata[:, cols], ref)
    else:
        np.testing.assert_allclose(out.sensordata[:, cols], ref, atol=1e-10)


@pytest.mark.parametrize("engine", ["exact", "auto"])
def test_sensor_plugin_model_refreshes_its_other_sensors(engine):
    m = mujoco.MjModel.from_xml_string(TOUCH_GRID_XML)
    assert m.nplugin == 1
    _refresh_matches(m, ["fp", "vel"], engine)


def test_the_plugin_sensor_itself_is_refused_with_its_reason():
    m = mujoco.MjModel.from_xml_string(TOUCH_GRID_XML)
    with pytest.raises(
        mjrefresh.PlanError,
        match=r"sensor 'tg' \(plugin\) cannot be refreshed: "
        r"plugin sensors are computed by plugin code",
    ):
        mjrefresh.Refresher(m, sensors=["tg"])
    refused = mjrefresh.plan.refresh_refusals(m)
    assert list(refused) == [0]


def test_actuator_plugin_model_refreshes_every_sensor():
    _refresh_matches(mujoco.MjModel.from_xml_string(PID_XML), ["fp", "ap", "av"])


def test_position_stage_plugin_blocks_only_the_pass_that_runs_it():
    # A plugin sensor whose (compiled) stage is POS would run inside
    # mj_sensorPos; the planner refuses the position pass and names it, and
    # still plans velocity-stage sensors of the same model.
    m = mujoco.MjModel.from_xml_string(TOUCH_GRID_XML)
    m.sensor_needstage[0] = mujoco.mjtStage.mjSTAGE_POS
    with pytest.raises(
        mjrefresh.PlanError,
        match=r"plugin sensor 'tg' \(plugin\), whose plugin "
        r"mj_sensorPos runs on every call",
    ):
        mjrefresh.Refresher(m, sensors=["fp"])
    assert mjrefresh.Refresher(m, sensors=["vel"], engine="exact").plan.stages[-1] == "sensorVel"


# An SDF geom: mj_collision and MuJoCo's ray and distance queries compute
# with the plugin's distance function. A plan that runs mj_collision or
# selects a rangefinder is refused; others refresh the model's other sensors
# bit-exactly.
SDF_XML = """<mujoco>
 <extension><plugin plugin="mujoco.sdf.torus"><instance name="torus">
   <config key="radius1" value="0.35"/><config key="radius2" value="0.15"/></instance></plugin>
 </extension>
 <asset><mesh name="torus"><plugin instance="torus"/></mesh></asset>
 <worldbody><geom type="sdf" name="ring" mesh="torus"><plugin instance="torus"/></geom>
  <body name="a" pos="0 0 .3"><freejoint/><geom size=".1"/>
   <site name="down" zaxis="0 0 -1"/></body></worldbody>
 <actuator><adhesion name="ad" body="a" ctrlrange="0 1"/></actuator>
 <sensor><actuatorvel name="adv" actuator="ad"/><framepos name="fp" objtype="body" objname="a"/>
  <framelinvel name="lv" objtype="body" objname="a"/>
  <rangefinder name="rf" site="down"/></sensor></mujoco>"""


def test_sdf_plugin_geoms_refuse_only_plans_that_run_their_plugin():
    m = mujoco.MjModel.from_xml_string(SDF_XML)
    with pytest.raises(
        mjrefresh.PlanError,
        match=r"model has SDF geom 'ring', whose plugin computes its distances in MuJoCo's "
        r"mj_collision: a refresh does not run plugin code on worker threads",
    ):
        mjrefresh.Refresher(m, sensors=["adv"])
    with pytest.raises(
        mjrefresh.PlanError,
        match=r"SDF geom 'ring', whose plugin computes its distances in MuJoCo's ray and "
        r"distance queries, which sensor 'rf' \(rangefinder\) runs: .* select no rangefinder",
    ):
        mjrefresh.Refresher(m, sensors=["rf"])
    _refresh_matches(m, ["fp", "lv"])
    _refresh_matches(m, ["fp", "lv"], engine="fast")
