"""Parity (bit-exact) of the sensors the exact engine computes by running the
mass-matrix, collision and constraint-row stages: energies, joint/tendon
limit positions and velocities, adhesion actuators and (MuJoCo >= 3.16)
position/velocity-stage contact sensors, alone and mixed with others, on
random non-zero states of models with contacts, limits and tendons."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from support.edge_models import (
    CONSTRAINT_XML,
    CONTACT_SENSORS_XML,
    TACTILE_XML,
    version_at_least,
)
from support.oracle import forward_rows
from support.sensors import sensor_cols

import mjrefresh

# What these sensors compute differs between MuJoCo releases (contact and
# tactile stages from 3.16, plastic springs in 4.0): CI runs them on every
# supported release.
pytestmark = pytest.mark.parity

N = 48


def _states(m: mujoco.MjModel, seed: int) -> dict[str, np.ndarray]:
    """Random states around qpos0 that hit limits, limit margins and contacts."""
    rng = np.random.default_rng(seed)
    qpos = np.tile(m.qpos0, (N, 1))
    for j in range(m.njnt):
        adr, t = m.jnt_qposadr[j], m.jnt_type[j]
        if t == mujoco.mjtJoint.mjJNT_FREE:
            qpos[:, adr : adr + 3] += rng.normal(scale=0.03, size=(N, 3))
            quat = rng.normal(size=(N, 4)) * [1, 0.1, 0.1, 0.1] + [3, 0, 0, 0]
            qpos[:, adr + 3 : adr + 7] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
        elif t == mujoco.mjtJoint.mjJNT_BALL:
            quat = rng.normal(size=(N, 4)) * [1, 0.3, 0.3, 0.3] + [2, 0, 0, 0]
            qpos[:, adr : adr + 4] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
        else:
            lo, hi = m.jnt_range[j]
            qpos[:, adr] = rng.uniform(lo - 0.3, hi + 0.3, size=N)
    qvel = rng.normal(size=(N, m.nv))
    return {"qpos": qpos, "qvel": qvel, "mocap_pos": None, "mocap_quat": None, "time": None}


def _check(m: mujoco.MjModel, names: list[str], seed: int = 0, num_threads: int = 2) -> None:
    states = _states(m, seed)
    r = mjrefresh.Refresher(m, sensors=names, engine="exact", num_threads=num_threads)
    out = r.outputs(N)
    assert r.refresh(np.arange(N), states["qpos"], states["qvel"], out) == N
    ref = forward_rows(m, states)
    cols = sensor_cols(m, names)
    for name in names:
        c = sensor_cols(m, [name])
        np.testing.assert_array_equal(out.sensordata[:, c], ref.sensordata[:, c], err_msg=name)
    assert np.array_equal(out.sensordata[:, cols], ref.sensordata[:, cols])


CONSTRAINT_SENSORS = [
    "jlp1",
    "jlv1",
    "jlp2",
    "jlv2",
    "jlpb",
    "jlvb",
    "jlps",
    "jlvs",
    "tlps",
    "tlvs",
    "tlpf",
    "tlvf",
    "adp",
    "adv",
    "epot",
    "ekin",
]


@pytest.mark.parametrize("name", CONSTRAINT_SENSORS)
def test_each_new_sensor_alone_bit_exact(name):
    m = mujoco.MjModel.from_xml_string(CONSTRAINT_XML)
    _check(m, [name], num_threads=1)


@pytest.mark.parametrize("num_threads", [1, 3])
def test_new_sensors_mixed_with_others_bit_exact(num_threads):
    m = mujoco.MjModel.from_xml_string(CONSTRAINT_XML)
    _check(m, [*CONSTRAINT_SENSORS, "m1v", "fp", "gy", "tp"], seed=1, num_threads=num_threads)


def test_the_states_reach_limits_and_contacts():
    # The parity above means something only if rows hold limit and contact rows.
    m = mujoco.MjModel.from_xml_string(CONSTRAINT_XML)
    states = _states(m, 0)
    d = mujoco.MjData(m)
    limits = contacts = 0
    for q, v in zip(states["qpos"], states["qvel"], strict=True):
        d.qpos[:], d.qvel[:] = q, v
        mujoco.mj_forward(m, d)
        limits += int(d.nl > 0)
        contacts += int(d.ncon > 0)
    assert limits > N // 2 and contacts > N // 4
    nonzero = forward_rows(m, states).sensordata[:, sensor_cols(m, ["adv", "jlv1", "tlvs"])]
    assert np.count_nonzero(nonzero) > N // 2


def test_kinetic_energy_is_the_rows_own_with_energy_enabled():
    # mj_forward on a reused mjData lags by one call (flg_energyvel is cleared
    # after mj_sensorPos); a refresh gives each row its own value, as on a
    # fresh mjData (the oracle resets per row).
    m = mujoco.MjModel.from_xml_string(CONSTRAINT_XML)
    _check(m, ["ekin", "epot"], seed=3, num_threads=1)


def test_adhesion_velocity_plan_keeps_the_declared_arena():
    m = mujoco.MjModel.from_xml_string(CONSTRAINT_XML)
    r = mjrefresh.Refresher(m, sensors=["adv"], engine="exact", num_threads=1)
    assert "collision" in r.plan.stages and "makeConstraint" in r.plan.stages
    assert r.participant_bytes > m.narena


@pytest.mark.skipif(not version_at_least(3, 16), reason="contact sensors are ACC before 3.16")
@pytest.mark.parametrize("names", [["cf"], ["cb"], ["cv"], ["cf", "cb", "cv", "fp"]])
def test_contact_sensors_bit_exact(names):
    m = mujoco.MjModel.from_xml_string(CONTACT_SENSORS_XML)
    r = mjrefresh.Refresher(m, sensors=names, engine="exact", num_threads=1)
    assert "collision" in r.plan.stages
    _check(m, names)


@pytest.mark.skipif(not version_at_least(3, 16), reason="tactile sensors are ACC before 3.16")
@pytest.mark.parametrize("names", [["tac"], ["tac", "fp"]])
def test_tactile_sensor_bit_exact(names):
    m = mujoco.MjModel.from_xml_string(TACTILE_XML)
    r = mjrefresh.Refresher(m, sensors=names, engine="exact", num_threads=1)
    assert {"collision", "comVel"} <= set(r.plan.stages)
    _check(m, names)
    # The rows press the ball into the pad: some taxels report depth.
    assert np.count_nonzero(forward_rows(m, _states(m, 0)).sensordata[:, :64]) > 0


@pytest.mark.skipif(version_at_least(3, 16), reason="contact sensors are POS/VEL since 3.16")
def test_contact_sensors_before_316_are_acceleration_stage():
    m = mujoco.MjModel.from_xml_string(
        """<mujoco><worldbody><geom name="floor" type="plane" size="1 1 .1"/>
        <body><freejoint/><geom name="g" size=".1"/></body></worldbody>
        <sensor><contact name="c" geom1="g" data="found"/></sensor></mujoco>"""
    )
    with pytest.raises(mjrefresh.PlanError, match=r"sensor 'c' \(contact\) is an acceleration"):
        mjrefresh.Refresher(m, sensors=["c"])


# A rod of box section (MuJoCo >= 4.0): mjData.plastic holds its material
# frames, which collision reads; physics steps advance them.
ROD_XML = """<mujoco><option timestep="0.001"/><worldbody>
  <geom name="floor" type="plane" size="5 5 .1"/>
  <body name="holder" pos="0 0 0.5"><joint type="hinge" axis="0 0 1" damping="0.1"/>
    <geom type="sphere" size="0.02" contype="0" conaffinity="0"/>
    <flexcomp name="rod" type="grid" count="8 1 1" spacing="0.08 1 1" dim="1" radius="0.006">
      <elasticity young="1e5" section="box" sectionsize="0.02 0.006"/><pin id="0 1"/>
    </flexcomp></body></worldbody>
  <sensor><contact name="c" geom1="floor" data="found dist" num="3"/>
    <framepos name="tip" objtype="body" objname="rod_7"/></sensor></mujoco>"""


@pytest.mark.skipif(not version_at_least(4, 0), reason="box-section rods are new in MuJoCo 4.0")
def test_contacts_of_a_model_with_plastic_rod_frames_are_refused():
    # Stepped 1500 times, a refresh collided with the rod's initial frames:
    # found 2 contacts where mj_forward on the same MjData finds 8.
    m = mujoco.MjModel.from_xml_string(ROD_XML)
    assert m.nplastic > 0
    why = (
        r"^sensor 'c' \(contact\) cannot be refreshed: MuJoCo's collision reads the material "
        r"frames of flex 'rod' \(mjData.plastic, MuJoCo >= 4.0 box-section rods\), which only "
        r"physics steps advance and a refresh does not receive$"
    )
    assert list(mjrefresh.plan.refresh_refusals(m)) == [0]
    with pytest.raises(mjrefresh.PlanError, match=why):
        mjrefresh.Refresher(m, sensors=["c"], engine="exact")
    # What does not collide is refreshed, equal to mj_forward after the steps.
    d = mujoco.MjData(m)
    d.qvel[:] = np.random.default_rng(0).normal(0, 2, m.nv)
    for _ in range(300):
        mujoco.mj_step(m, d)
    r = mjrefresh.Refresher(m, sensors=["tip"], bodies=["rod_7"], engine="exact", num_threads=1)
    out = r.outputs(1)
    r.refresh(0, d.qpos[None], d.qvel[None], out)
    mujoco.mj_forward(m, d)
    np.testing.assert_array_equal(out.sensordata[0, 6:9], d.sensordata[6:9])
    np.testing.assert_array_equal(out.body_pos[0, 0], d.xpos[m.body("rod_7").id])


def test_limit_sensors_where_mj_forward_runs_out_of_constraint_memory(tmp_path, monkeypatch):
    # The README's one difference: 40 contacts overflow the declared 30 KB,
    # mj_forward drops every constraint row (mjWARN_CNSTRFULL) and its limit
    # sensors read 0; the refresh makes only the limit row, which fits.
    monkeypatch.chdir(tmp_path)  # MuJoCo logs the warning to ./MUJOCO_LOG.TXT
    balls = "".join(
        f'<body pos="{0.3 * i} 0 .05"><freejoint/><geom size=".1"/></body>' for i in range(40)
    )
    m = mujoco.MjModel.from_xml_string(
        f"""<mujoco><size memory="30K"/><worldbody><geom type="plane" size="20 20 .1"/>
        <body pos="0 2 1"><joint name="h" range="-10 10" margin="100"/>
        <geom size=".1" contype="0" conaffinity="0"/></body>{balls}</worldbody>
        <sensor><jointlimitpos name="lp" joint="h"/><jointlimitvel name="lv" joint="h"/>
        </sensor></mujoco>"""
    )
    d = mujoco.MjData(m)
    d.qpos[:] = m.qpos0
    d.qpos[0], d.qvel[0] = 3.0, 0.5
    mujoco.mj_forward(m, d)
    assert d.warning[mujoco.mjtWarning.mjWARN_CNSTRFULL].number == 1 and d.nefc == 0
    np.testing.assert_array_equal(d.sensordata, [0.0, 0.0])
    r = mjrefresh.Refresher(m, sensors=["lp", "lv"], engine="exact", num_threads=1)
    out = r.outputs(1)
    r.refresh(0, d.qpos[None], d.qvel[None], out)
    lower = np.deg2rad(-10.0)  # the limit row: distance to the lower limit, minus the margin
    np.testing.assert_allclose(out.sensordata[0], [3.0 - lower - 100.0, 0.5], rtol=1e-12)
