"""A refresh never calls MuJoCo's global callbacks (mjcb_passive,
mjcb_control, mjcb_sensor, mjcb_act_*, mjcb_time, mjcb_contactfilter): they
belong to dynamics, are process-wide, and a Python one cannot run on a
worker thread. Stage functions that would reach one (mj_makeM, mj_factorM
and mj_fwdVelocity through their timers and mj_passive) run as the
functions they are made of, bit-exact with mj_forward; a plan that runs
mj_collision refuses to run while a contact filter or a Python timer is set.

Every slot holds a counting C callback (support/callbacks.py) or a Python
function set through the bindings while plans of every stage run on both
engines and several thread counts; the counters stay at zero."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from support.callbacks import python_callbacks
from support.failing_rows import OVERFLOW_XML, overflow_states
from support.models import plan_model
from support.oracle import forward_rows
from support.states import random_states

import mjrefresh

N = 24

# Every stage but collision: tendon and actuator velocities (fwdVelocity),
# limits (makeConstraint, makeM, factorM), energies, subtree momenta, a
# camera frame (camlight); user sensors of both stages are in the model,
# unselected.
SENSORS_XML = """<tendonvel name="tv" tendon="t"/><actuatorvel name="av" actuator="m"/>
<actuatorpos name="atp" actuator="mt"/><jointlimitpos name="jlp" joint="j"/>
<jointlimitvel name="jlv" joint="j"/><tendonlimitvel name="tlv" tendon="t"/>
<e_kinetic name="ek"/><e_potential name="ep"/><subtreeangmom name="sam" body="a"/>
<framepos name="fc" objtype="camera" objname="cam"/>
<user name="u" dim="1" needstage="pos" datatype="real"/>
<user name="uv" dim="1" needstage="vel" datatype="real"/>"""
MODEL = plan_model(SENSORS_XML)
SELECTED = [MODEL.sensor(i).name for i in range(MODEL.nsensor)][:-2]  # not the user sensors
STATES = random_states(MODEL, N, seed=8)
REF = forward_rows(MODEL, STATES)  # before any callback is set
ALL_STAGES = {
    "kinematics",
    "comPos",
    "camlight",
    "tendon",
    "makeM",
    "factorM",
    "makeConstraint",
    "transmission",
    "sensorPos",
    "fwdVelocity",
    "sensorVel",
}


def _refresh_and_check(engine: str, threads: int, sensors: list[str]) -> None:
    r = mjrefresh.Refresher(MODEL, sensors=sensors, engine=engine, num_threads=threads)
    out = r.outputs(N)
    r.refresh(np.arange(N), STATES["qpos"], STATES["qvel"], out)
    for a, b in r.plan.column_ranges:
        if engine == "exact":
            np.testing.assert_array_equal(out.sensordata[:, a:b], REF.sensordata[:, a:b])
        else:
            np.testing.assert_allclose(out.sensordata[:, a:b], REF.sensordata[:, a:b], atol=1e-10)
    r.close()


def test_the_plan_runs_every_stage_but_collision():
    r = mjrefresh.Refresher(MODEL, sensors=SELECTED)
    assert set(r.plan.stages) == ALL_STAGES
    fast = [s for s in SELECTED if s in ("tv", "av", "atp", "sam", "fc")]
    assert mjrefresh.Refresher(MODEL, sensors=fast, engine="fast").plan.engine == "fast"


@pytest.mark.parametrize("threads", [1, 2, 7])
def test_counting_callbacks_in_every_slot_are_never_called(counting_callbacks, threads):
    before = counting_callbacks.calls()
    with counting_callbacks.installed():
        _refresh_and_check("exact", threads, SELECTED)
        _refresh_and_check("fast", threads, ["tv", "atp", "sam", "fc"])
    assert counting_callbacks.calls() == before
    # The callbacks were live: mj_forward calls them.
    with counting_callbacks.installed():
        mujoco.mj_forward(MODEL, mujoco.MjData(MODEL))
    after = counting_callbacks.calls()
    for slot in ("mjcb_passive", "mjcb_control", "mjcb_time", "mjcb_sensor"):
        assert after[slot] > before[slot], slot


def test_python_callbacks_that_do_nothing_break_nothing():
    # A Python callback reached from a worker thread used to leave a Python
    # error behind ("SystemError: ... returned a result with an exception set").
    def none(*args: object) -> None:
        return None

    with python_callbacks(
        passive=none,
        control=none,
        sensor=none,
        time=lambda: 0.0,
        act_gain=lambda m, d, i: 0.0,
        act_bias=lambda m, d, i: 0.0,
        act_dyn=lambda m, d, i: 0.0,
    ):
        for threads in (1, 2):
            _refresh_and_check("exact", threads, SELECTED)
            _refresh_and_check("exact", threads, ["tv"])


def test_python_callbacks_that_raise_are_never_reached():
    def boom(*args: object) -> float:
        raise AssertionError("a refresh called a global callback")

    with python_callbacks(passive=boom, control=boom, sensor=boom, time=boom, act_gain=boom):
        _refresh_and_check("exact", 2, SELECTED)


# ------------------------------------------------------------ mj_collision
CONTACT_MODEL = mujoco.MjModel.from_xml_string(OVERFLOW_XML)
CONTACT_STATES = overflow_states(N, [], seed=2)


def _refresh_contacts() -> np.ndarray:
    """The refreshed tv and adv columns."""
    r = mjrefresh.Refresher(CONTACT_MODEL, sensors=["tv", "adv"], num_threads=2)
    assert "collision" in r.plan.stages
    out = r.outputs(N)
    r.refresh(np.arange(N), CONTACT_STATES["qpos"], CONTACT_STATES["qvel"], out)
    return np.concatenate([out.sensordata[:, a:b] for a, b in r.plan.column_ranges], axis=1)


def test_collision_plans_run_with_the_bindings_default_timer():
    # The mujoco bindings install their own C clock in mjcb_time with the
    # first MjData; mj_collision's timer calling it is allowed.
    mujoco.MjData(CONTACT_MODEL)
    want = forward_rows(CONTACT_MODEL, CONTACT_STATES).sensordata
    np.testing.assert_array_equal(_refresh_contacts(), want[:, [0, 4]])  # tv, adv


@pytest.mark.parametrize(
    "slot, callback",
    [("contactfilter", lambda m, d, g1, g2: 0), ("time", lambda: 0.0)],
)
def test_collision_plans_refuse_a_python_contact_filter_or_timer(slot, callback):
    with python_callbacks(**{slot: callback}):
        with pytest.raises(
            RuntimeError,
            match=rf"MuJoCo's global mjcb_{slot} callback is set \(mujoco.set_mjcb_{slot}\), and "
            r"this refresher's plan runs mj_collision .* Unset it around refreshes "
            rf"\(mujoco.set_mjcb_{slot}\(None\)\)",
        ):
            _refresh_contacts()
    _refresh_contacts()  # unset: runs again


def test_collision_plans_refuse_a_c_contact_filter(counting_callbacks):
    with counting_callbacks.installed(("mjcb_contactfilter",)):
        with pytest.raises(RuntimeError, match=r"MuJoCo's global mjcb_contactfilter callback"):
            _refresh_contacts()
    assert counting_callbacks.calls()["mjcb_contactfilter"] == 0
