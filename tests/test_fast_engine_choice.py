"""Engine choice: auto picks the fast engine where it covers the selection and
routes uncovered sensors to the exact engine, naming them; the Python and
native coverage rules agree."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from support.engine_models import (
    MANY_TYPES_XML,
    TENDON_XML,
    go1like_xml,
    model,
    tracking_sensors,
)

import mjrefresh
from mjrefresh import PlanError

# Parity with mj_forward: CI runs these on every supported MuJoCo release.
pytestmark = pytest.mark.parity

# --------------------------------------------------------------------------
# engine choice
# --------------------------------------------------------------------------


def test_auto_picks_fast_for_tracking_models():
    m = model("go1like")
    r = mjrefresh.Refresher(
        m,
        bodies=list(range(1, m.nbody)),
        relative_to="trunk",
        sensors=tracking_sensors(m),
        num_threads=1,
    )
    assert r.plan.engine == "fast"
    assert "auto" in r.plan.engine_reason
    assert "engine: fast" in r.plan.describe()
    r.close()


def test_auto_picks_fast_for_embedded_models():
    models = pytest.importorskip("mjrefresh.models")
    for build in (models.quadruped, models.humanoid):
        m = build()
        r = mjrefresh.Refresher(
            m,
            bodies=list(range(1, m.nbody)),
            relative_to=1,
            sensors=tracking_sensors(m),
            num_threads=1,
        )
        assert r.plan.engine == "fast", r.plan.engine_reason
        r.close()


def test_auto_picks_fast_for_embedded_models_full_pos_vel_selection():
    """Every position/velocity-stage sensor of the embedded models (what
    `mjrefresh plan MODEL --all-posvel` and `--columns posvel` select),
    subtree velocities and momenta included, runs on the fast engine."""
    models = pytest.importorskip("mjrefresh.models")
    from mjrefresh.model_args import posvel_sensors

    for build in (models.quadruped, models.humanoid):
        m = build()
        sensors, refused = posvel_sensors(m)
        assert sensors and not refused
        r = mjrefresh.Refresher(m, bodies=list(range(1, m.nbody)), sensors=sensors, num_threads=1)
        assert r.plan.engine == "fast", r.plan.engine_reason
        r.close()


def test_auto_routes_uncovered_sensors_to_exact():
    m = mujoco.MjModel.from_xml_string(TENDON_XML)
    r = mjrefresh.Refresher(m, bodies=["b"], sensors=["p", "tlen"], num_threads=1)
    assert r.plan.engine == "exact"
    assert "'tlen'" in r.plan.engine_reason and "tendonpos" in r.plan.engine_reason
    r.close()
    r = mjrefresh.Refresher(m, sensors=["trackrel"], num_threads=1)
    assert r.plan.engine == "exact" and "camera" in r.plan.engine_reason
    assert "not 'fixed'" in r.plan.engine_reason
    r.close()
    for covered in (["p"], ["camrel"], ["flen", "p"]):
        r = mjrefresh.Refresher(m, bodies=["b"], sensors=covered, num_threads=1)
        assert r.plan.engine == "fast", covered
        r.close()


def test_fast_rejects_uncovered_sensor_by_name():
    m = mujoco.MjModel.from_xml_string(TENDON_XML)
    with pytest.raises(PlanError, match=r"engine='fast'.*'tlen' \(tendonpos\)"):
        mjrefresh.Refresher(m, sensors=["p", "tlen"], engine="fast")
    with pytest.raises(PlanError, match="camera"):
        mjrefresh.Refresher(m, sensors=["trackrel"], engine="fast")


def test_python_and_native_coverage_rules_agree():
    """For each sensor alone: the planner's rule (plan.fast_uncovered) and the
    native engine's (fast_uncovered in cpp/fast/coverage.cc) accept the same ones."""
    from mjrefresh import _native
    from mjrefresh import plan as plan_mod

    m = mujoco.MjModel.from_xml_string(MANY_TYPES_XML)
    covered = 0
    for i in range(m.nsensor):
        why = plan_mod.fast_uncovered(m, [i])
        adr, dim = int(m.sensor_adr[i]), int(m.sensor_dim[i])
        config = _native.core.Config()
        config.columns = [(adr, adr + dim)]
        config.sensors = [i]
        config.engine = _native.core.EngineKind.fast
        args = (m._address, config)
        if why is None:
            covered += 1
            _native.core.Refresher(*args).close()
            r = mjrefresh.Refresher(m, sensors=[i], num_threads=1, engine="fast")
            assert r.plan.engine == "fast"
            r.close()
        else:
            with pytest.raises(ValueError, match="engine 'fast'"):
                _native.core.Refresher(*args)
            with pytest.raises(PlanError):
                mjrefresh.Refresher(m, sensors=[i], num_threads=1, engine="fast")
    assert covered == 26


def test_exact_when_requested_and_when_sensors_are_disabled():
    m = model("go1like")
    r = mjrefresh.Refresher(m, sensors=tracking_sensors(m), num_threads=1, engine="exact")
    assert r.plan.engine == "exact" and "requested" in r.plan.engine_reason
    r.close()
    m2 = mujoco.MjModel.from_xml_string(go1like_xml())
    m2.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_SENSOR
    r = mjrefresh.Refresher(m2, sensors=tracking_sensors(m2), num_threads=1)
    assert r.plan.engine == "exact" and "mjDSBL_SENSOR" in r.plan.engine_reason
    # mj_forward leaves sensordata as it was; so does the refresh (it wrote
    # the scratch data's zeros over a backend's last values)
    d = mujoco.MjData(m2)
    d.qpos[:] = m2.qpos0 + 0.05
    d.qvel[:] = 0.4
    d.sensordata[:] = np.arange(m2.nsensordata) + 0.5
    want = mujoco.MjData(m2)
    mujoco.mj_copyData(want, m2, d)
    mujoco.mj_forward(m2, want)
    mjrefresh.refresh_mjdata(r, [d])
    np.testing.assert_array_equal(d.sensordata, want.sensordata)
    np.testing.assert_array_equal(d.sensordata, np.arange(m2.nsensordata) + 0.5)
    r.close()
    # bodies only: sensors being disabled does not matter
    r = mjrefresh.Refresher(m2, bodies=["trunk"], num_threads=1)
    assert r.plan.engine == "fast"
    r.close()
