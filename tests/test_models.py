"""Tests of the embedded example models in mjrefresh.models."""

import mujoco
import numpy as np
import pytest
from support.oracle import expected_outputs

from mjrefresh.models import MODELS, TRACKING_KINDS, humanoid, quadruped, tracking_layout

# Parity with mj_forward: CI runs these on every supported MuJoCo release.
pytestmark = pytest.mark.parity

EXPECTED = {
    # name: (nbody, hinges, nsensor, nsensordata, tracking start, base)
    "quadruped": (14, 12, 119, 328, 68, "base"),
    "humanoid": (31, 29, 246, 679, 79, "pelvis"),
}


@pytest.fixture(scope="module", params=sorted(MODELS))
def named_model(request):
    return request.param, MODELS[request.param]()


def _random_state(model, rng) -> dict[str, np.ndarray]:
    """One random state: qpos around qpos0 (unit free-joint quaternion), random qvel."""
    qpos = model.qpos0 + 0.3 * rng.standard_normal(model.nq)
    qpos[3:7] /= np.linalg.norm(qpos[3:7])
    qvel = rng.standard_normal(model.nv)
    return {"qpos": qpos[None], "qvel": qvel[None]}


def test_counts(named_model):
    name, m = named_model
    nbody, nhinge, nsensor, nsensordata, start, base = EXPECTED[name]
    assert m.nbody == nbody
    assert m.njnt == nhinge + 1
    assert m.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE
    assert (m.jnt_type[1:] == mujoco.mjtJoint.mjJNT_HINGE).all()
    assert m.nu == nhinge
    assert (m.actuator_trntype == mujoco.mjtTrn.mjTRN_JOINT).all()
    assert (m.actuator_biasprm[:, 1] == -m.actuator_gainprm[:, 0]).all()  # position servos
    assert m.nsensor == nsensor
    assert m.nsensordata == nsensordata
    assert m.site("imu").id >= 0
    assert m.body(base).id == 1
    layout = tracking_layout(m)
    assert layout.base == base
    assert layout.columns == (start, nsensordata)
    assert layout.bodies == tuple(m.body(i).name for i in range(1, m.nbody))


def test_quadruped_matches_design_layout():
    m = quadruped()
    layout = tracking_layout(m)
    assert len(layout.bodies) == 13
    assert (layout.start, layout.stop) == (68, 328)
    assert 10_000 < 1000 * m.body_subtreemass[1] < 15_000
    for leg in ("FL", "FR", "RL", "RR"):
        for link in ("hip", "thigh", "calf"):
            assert m.joint(f"{leg}_{link}_joint").id > 0
        assert m.site(f"{leg}_foot").id >= 0
    visual = (m.geom_contype == 0) & (m.geom_conaffinity == 0)
    assert visual.any() and (m.geom_group[visual] == 2).all()


def test_humanoid_shape():
    m = humanoid()
    assert m.nbody - 1 == 30
    for side in ("left", "right"):
        assert m.site(f"{side}_foot").id >= 0
    assert m.site_bodyid[m.site("imu").id] == m.body("torso_link").id


def test_tracking_blocks_are_contiguous(named_model):
    _, m = named_model
    layout = tracking_layout(m)
    nb = len(layout.bodies)
    column = layout.start
    sid = layout.sensor_start
    for kind, stype, dim, relative in TRACKING_KINDS:
        assert layout.kinds[kind] == (column, column + nb * dim)
        for body in layout.bodies:
            s = m.sensor(f"{kind}/{body}")
            assert s.id == sid and s.adr[0] == column and s.dim[0] == dim
            assert s.type[0] == stype and s.objtype[0] == mujoco.mjtObj.mjOBJ_XBODY
            if relative:
                assert (
                    s.reftype[0] == mujoco.mjtObj.mjOBJ_XBODY
                    and s.refid[0] == m.body(layout.base).id
                )
            else:
                assert s.refid[0] == -1
            sid += 1
            column += dim
    assert (sid, column) == (layout.sensor_stop, layout.stop) == (m.nsensor, m.nsensordata)
    quat0 = layout.kinds["track_quat_w"][0]
    assert layout.column("track_quat_w", layout.bodies[1]) == (quat0 + 4, quat0 + 8)


def test_steps_stably(named_model):
    _, m = named_model
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, m.key("home").id)
    rng = np.random.default_rng(1)
    lo, hi = m.actuator_ctrlrange.T
    for _ in range(200):
        d.ctrl[:] = np.clip(m.key_ctrl[0] + 0.1 * rng.standard_normal(m.nu), lo, hi)
        mujoco.mj_step(m, d)
    assert np.isfinite(d.qpos).all() and np.isfinite(d.qvel).all()
    assert np.isfinite(d.sensordata).all()
    assert not any(w.number for w in d.warning)


def _quat_close(a, b):
    return np.minimum(np.abs(a - b).max(-1), np.abs(a + b).max(-1)).max()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tracking_sensors_match_body_state(named_model, seed):
    _, m = named_model
    layout = tracking_layout(m)
    exp = {
        k: v[0]
        for k, v in expected_outputs(
            m, _random_state(m, np.random.default_rng(seed)), layout.bodies, layout.base
        ).items()
    }
    nb = len(layout.bodies)

    def block(kind, dim):
        a, b = layout.kinds[kind]
        return exp["sensordata"][a:b].reshape(nb, dim)

    np.testing.assert_allclose(block("track_pos_w", 3), exp["body_pos"], atol=1e-12)
    assert _quat_close(block("track_quat_w", 4), exp["body_quat"]) < 1e-12
    np.testing.assert_allclose(block("track_angvel_w", 3), exp["body_angvel"], atol=1e-9)
    np.testing.assert_allclose(block("track_linvel_w", 3), exp["body_linvel"], atol=1e-9)
    np.testing.assert_allclose(block("track_pos_b", 3), exp["body_pos_rel"], atol=1e-12)
    rel = exp["body_quat_rel"]
    assert _quat_close(block("track_quat_b", 4), rel) < 1e-12
