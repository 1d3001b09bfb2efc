"""Planning: stages follow what each selected output reads; sensors a refresh
cannot compute are rejected at construction, naming the sensor and why."""

from __future__ import annotations

import mujoco
import pytest
from support.models import plan_model

import mjrefresh


@pytest.mark.parametrize(
    "sensor, match",
    [
        (
            '<touch name="x" site="s"/>',
            r"sensor 'x' \(touch\) is an acceleration-stage sensor: "
            r"a refresh never recomputes it",
        ),
        (
            '<accelerometer name="x" site="s"/>',
            r"sensor 'x' \(accelerometer\) is an acceleration-stage",
        ),
        (
            '<user name="x" dim="1" needstage="pos"/>',
            r"sensor 'x' \(user\) cannot be refreshed: user "
            r"sensors are computed by the global mjcb_sensor callback",
        ),
        (
            '<framepos name="x" objtype="site" objname="tip" delay="0.01" nsample="3"/>',
            r"sensor 'x' \(framepos\) cannot be refreshed: delayed/interval sensors read MuJoCo's sensor history",
        ),
        (
            '<framepos name="x" objtype="site" objname="tip" interval="0.1"/>',
            r"sensor 'x' \(framepos\) cannot be refreshed: delayed/interval sensors",
        ),
    ],
)
def test_unsupported_sensors_are_rejected_by_name(sensor, match):
    m = plan_model(sensor)
    with pytest.raises(mjrefresh.PlanError, match=match):
        mjrefresh.Refresher(m, sensors=["x"])
    # Selecting its columns by range is rejected the same way.
    with pytest.raises(ValueError, match=match):
        mjrefresh.Refresher(m, sensor_ranges=[(0, m.nsensordata)])


def test_adhesion_actuator_sensors_plan_the_contact_stages():
    xml = """<mujoco><worldbody><body name="a"><freejoint/><geom size=".1"/></body></worldbody>
      <actuator><adhesion name="ad" body="a" ctrlrange="0 1"/></actuator>
      <sensor><actuatorpos name="x" actuator="ad"/><actuatorvel name="v" actuator="ad"/></sensor>
      </mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    # mj_transmission sets an adhesion length to 0: no contacts needed.
    pos = mjrefresh.Refresher(m, sensors=["x"], num_threads=1)
    assert pos.plan.stages == ("kinematics", "comPos", "tendon", "transmission", "sensorPos")
    # Its moment (hence velocity) is built from the contacts and their rows.
    vel = mjrefresh.Refresher(m, sensors=["v"], num_threads=1)
    assert vel.plan.stages == (
        "kinematics",
        "comPos",
        "tendon",
        "makeM",
        "factorM",
        "collision",
        "makeConstraint",
        "transmission",
        "fwdVelocity",
        "sensorVel",
    )
    assert "[cost: broadphase + narrowphase" in vel.plan.describe()


def test_plugin_sensors_are_refused_alone_not_the_model():
    from support.edge_models import TOUCH_GRID_XML

    m = mujoco.MjModel.from_xml_string(TOUCH_GRID_XML)
    with pytest.raises(mjrefresh.PlanError, match=r"sensor 'tg' \(plugin\) cannot be refreshed"):
        mjrefresh.Refresher(m, sensors=["tg"])
    r = mjrefresh.Refresher(m, sensors=["fp"], num_threads=1)
    assert r.plan.sensor_names == ("fp",)


@pytest.mark.parametrize(
    "sensor, stages",
    [
        ('<jointpos name="x" joint="j"/>', ("sensorPos",)),
        ('<jointvel name="x" joint="j"/>', ("sensorVel",)),
        ('<framepos name="x" objtype="site" objname="tip"/>', ("kinematics", "sensorPos")),
        (
            '<framepos name="x" objtype="camera" objname="cam"/>',
            ("kinematics", "comPos", "camlight", "sensorPos"),
        ),
        ('<subtreecom name="x" body="a"/>', ("kinematics", "comPos", "sensorPos")),
        ('<gyro name="x" site="s"/>', ("kinematics", "comPos", "comVel", "sensorVel")),
        ('<subtreelinvel name="x" body="a"/>', ("kinematics", "comPos", "comVel", "sensorVel")),
        ('<tendonpos name="x" tendon="t"/>', ("kinematics", "comPos", "tendon", "sensorPos")),
        (
            '<tendonvel name="x" tendon="t"/>',
            ("kinematics", "comPos", "tendon", "fwdVelocity", "sensorVel"),
        ),
        (
            '<actuatorpos name="x" actuator="mt"/>',
            ("kinematics", "comPos", "tendon", "transmission", "sensorPos"),
        ),
        (
            '<actuatorvel name="x" actuator="m"/>',
            ("kinematics", "comPos", "tendon", "transmission", "fwdVelocity", "sensorVel"),
        ),
        ('<clock name="x"/>', ("sensorPos",)),
        ('<e_potential name="x"/>', ("kinematics", "comPos", "tendon", "sensorPos")),
        ('<e_kinetic name="x"/>', ("kinematics", "comPos", "tendon", "makeM", "sensorPos")),
        (
            '<jointlimitpos name="x" joint="j"/>',
            ("kinematics", "comPos", "tendon", "makeM", "factorM", "makeConstraint", "sensorPos"),
        ),
        (
            '<tendonlimitvel name="x" tendon="t"/>',
            (
                "kinematics",
                "comPos",
                "tendon",
                "makeM",
                "factorM",
                "makeConstraint",
                "fwdVelocity",
                "sensorVel",
            ),
        ),
    ],
)
def test_stages_follow_what_the_sensor_reads(sensor, stages):
    r = mjrefresh.Refresher(plan_model(sensor), sensors=["x"], num_threads=1)
    assert r.plan.stages == stages
    for s in stages:
        assert any("'x'" in why for why in r.plan.stage_reasons[s])


def test_plan_for_bodies_and_sites():
    m = plan_model("")
    r = mjrefresh.Refresher(m, bodies=["b"], relative_to="a", sites=["tip"], num_threads=1)
    p = r.plan
    assert p.stages == ("kinematics", "comPos", "comVel")
    assert p.body_names == ("b",) and p.relative_to_name == "a" and p.site_names == ("tip",)
    assert p.engine == "fast"  # auto: the fused kernels cover bodies, sites, relative poses
    exact = mjrefresh.Refresher(m, bodies=["b"], relative_to="a", sites=["tip"], engine="exact")
    text = str(exact.plan)
    assert exact.plan.engine == "exact"
    assert "engine: exact" in text and "comVel: body velocities" in text
    r2 = mjrefresh.Refresher(m, sites=["tip"], num_threads=1)
    assert r2.plan.stages == ("kinematics",)


def test_unselected_unsupported_sensors_do_not_matter():
    # A model may carry touch/limit/user sensors; selecting others is fine
    # and never runs them (they are masked out of the engine's model copy).
    m = plan_model(
        '<touch name="t0" site="s"/><jointlimitpos name="l" joint="j"/>'
        '<user name="u" dim="1" needstage="pos"/><framepos name="x" objtype="site" objname="tip"/>'
    )
    r = mjrefresh.Refresher(m, sensors=["x"], num_threads=1)
    assert r.plan.sensor_names == ("x",)
    assert r.plan.column_ranges == ((3, 6),)
