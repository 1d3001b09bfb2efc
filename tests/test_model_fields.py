"""Per-environment model fields (domain randomisation): every output equals
mj_forward on a copy of the model holding that environment's values."""

from __future__ import annotations

import copy

import mujoco
import numpy as np
import pytest
from conftest import pos_vel_sensor_names, random_states

import mjrefresh
from mjrefresh.plan import MODEL_FIELDS

N = 24
BODIES = ["base", "arm1", "arm2", "ball_link", "fixed_child", "target"]
SITES = ["imu", "arm2_tip", "world_site", "ball_site"]


def random_fields(model: mujoco.MjModel, names, n: int, seed: int) -> dict[str, np.ndarray]:
    """Template values with random per-row perturbations (unit quaternions and
    axes stay unit; masses and inertias stay positive)."""
    rng = np.random.default_rng(seed)
    out = {}
    for name in names:
        base = np.array(getattr(model, name), dtype=np.float64)
        vals = np.repeat(base[None], n, axis=0)
        if name.endswith("quat"):
            vals = vals + rng.normal(scale=0.2, size=vals.shape)
            vals /= np.linalg.norm(vals, axis=-1, keepdims=True)
        elif name == "jnt_axis":
            vals = vals + rng.normal(scale=0.3, size=vals.shape)
            vals /= np.linalg.norm(vals, axis=-1, keepdims=True)
        elif name in ("body_mass", "body_inertia"):
            vals = vals * rng.uniform(0.5, 1.5, size=vals.shape)
        elif name == "sensor_cutoff":
            vals = rng.uniform(0.05, 2.0, size=vals.shape) * (rng.random(vals.shape) < 0.7)
        else:  # positions
            vals = vals + rng.normal(scale=0.05, size=vals.shape)
        out[name] = vals
    return out


def reference(model, states, fields, row):
    m = copy.deepcopy(model)
    for name, vals in fields.items():
        getattr(m, name)[...] = vals[row]
    d = mujoco.MjData(m)
    if "body_mass" in fields:
        # body_subtreemass follows body_mass, accumulated as mj_setConst does
        # (mj_setConst itself refuses "simple" bodies whose inertial frame moved).
        m.body_subtreemass[:] = m.body_mass
        for b in range(m.nbody - 1, 0, -1):
            m.body_subtreemass[m.body_parentid[b]] += m.body_subtreemass[b]
    d.qpos[:] = states["qpos"][row]
    d.qvel[:] = states["qvel"][row]
    d.mocap_pos[:] = states["mocap_pos"][row]
    d.mocap_quat[:] = states["mocap_quat"][row]
    d.time = states["time"][row]
    mujoco.mj_forward(m, d)
    vel = np.empty((m.nbody, 6))
    for b in range(m.nbody):
        mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_XBODY, b, vel[b], 0)
    return m, d, vel


def check_rows(model, states, fields, out, rows, tol=0.0):
    ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, b) for b in BODIES]
    sids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, s) for s in SITES]
    names = pos_vel_sensor_names(model)
    cols = np.concatenate([np.arange(model.sensor(n).adr[0], model.sensor(n).adr[0] + model.sensor(n).dim[0]) for n in names])
    for row in rows:
        m, d, vel = reference(model, states, fields, row)
        np.testing.assert_allclose(out.sensordata[row, cols], d.sensordata[cols], rtol=0, atol=tol)
        np.testing.assert_allclose(out.body_pos[row], d.xpos[ids], rtol=0, atol=tol)
        np.testing.assert_allclose(out.body_quat[row], d.xquat[ids], rtol=0, atol=tol)
        np.testing.assert_allclose(out.body_angvel[row], vel[ids, :3], rtol=0, atol=tol)
        np.testing.assert_allclose(out.body_linvel[row], vel[ids, 3:], rtol=0, atol=tol)
        np.testing.assert_allclose(out.site_pos[row], d.site_xpos[sids], rtol=0, atol=tol)
        np.testing.assert_allclose(out.site_mat[row], d.site_xmat[sids], rtol=0, atol=tol)


def make(model, fields, num_threads=2, engine="exact", sensors=True):
    return mjrefresh.Refresher(
        model,
        bodies=BODIES,
        relative_to="base",
        sites=SITES,
        sensors=pos_vel_sensor_names(model) if sensors else None,
        num_threads=num_threads,
        engine=engine,
        model_fields=tuple(fields),
    )


@pytest.mark.parametrize("field", list(MODEL_FIELDS))
def test_each_field_matches_mj_forward(rich_model, field):
    states = random_states(rich_model, N, seed=21)
    fields = random_fields(rich_model, [field], N, seed=hash(field) % 1000)
    r = make(rich_model, fields)
    out = r.outputs(N)
    r.refresh(np.arange(N), states["qpos"], states["qvel"], out, mocap_pos=states["mocap_pos"],
              mocap_quat=states["mocap_quat"], time=states["time"], model_fields=fields)
    check_rows(rich_model, states, fields, out, range(N))


@pytest.mark.parametrize("num_threads", [1, 2, 7])
def test_all_fields_together_and_unselected_rows_untouched(rich_model, num_threads):
    states = random_states(rich_model, N, seed=22)
    fields = random_fields(rich_model, list(MODEL_FIELDS), N, seed=5)
    r = make(rich_model, fields, num_threads=num_threads)
    out = r.outputs(N)
    for a in out.arrays().values():
        a.fill(-3.0)
    rows = np.arange(1, N, 2)
    r.refresh(rows, states["qpos"], states["qvel"], out, mocap_pos=states["mocap_pos"],
              mocap_quat=states["mocap_quat"], time=states["time"], model_fields=fields)
    check_rows(rich_model, states, fields, out, rows)
    for a in out.arrays().values():
        assert (a[::2] == -3.0).all()
    # Template values give exactly the template refresh.
    template = {k: np.repeat(np.asarray(getattr(rich_model, k))[None], N, 0) for k in fields}
    plain = make(rich_model, ())
    out_t, out_p = r.outputs(N), plain.outputs(N)
    kw = dict(mocap_pos=states["mocap_pos"], mocap_quat=states["mocap_quat"], time=states["time"])
    r.refresh(np.arange(N), states["qpos"], states["qvel"], out_t, model_fields=template, **kw)
    plain.refresh(np.arange(N), states["qpos"], states["qvel"], out_p, **kw)
    for name, a in out_p.arrays().items():
        np.testing.assert_array_equal(getattr(out_t, name), a)


def test_row_strided_field_arrays(rich_model):
    # mjbatch-uni / mujoco.batch expanded fields: (N, ...) arrays, any row stride.
    states = random_states(rich_model, N, seed=23)
    fields = random_fields(rich_model, ["body_pos", "jnt_axis"], N, seed=6)
    wide = np.zeros((N, rich_model.nbody * 3 + 5))
    wide[:, : rich_model.nbody * 3] = fields["body_pos"].reshape(N, -1)
    strided = {"body_pos": wide[:, : rich_model.nbody * 3].reshape(N, rich_model.nbody, 3),
               "jnt_axis": fields["jnt_axis"]}
    assert not strided["body_pos"].flags.c_contiguous
    r = make(rich_model, strided)
    out = r.outputs(N)
    r.refresh(np.arange(N), states["qpos"], states["qvel"], out, mocap_pos=states["mocap_pos"],
              mocap_quat=states["mocap_quat"], time=states["time"], model_fields=strided)
    check_rows(rich_model, states, fields, out, range(N))


def test_auto_uses_exact_with_model_fields(rich_model):
    r = mjrefresh.Refresher(rich_model, bodies=["arm2"], model_fields=("body_pos",))
    assert r.plan.model_fields == ("body_pos",)
    assert r.plan.engine in ("exact", "fast")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(model_fields=("geom_size",)), r"model_fields: 'geom_size' is not supported per environment"),
        (dict(model_fields=("nope",)), r"model_fields: 'nope' is not an mjModel field; supported: body_pos"),
        (dict(model_fields=("body_pos", "body_pos")), r"model_fields: 'body_pos' is listed twice"),
    ],
)
def test_bad_declarations(rich_model, kwargs, match):
    with pytest.raises(ValueError, match=match):
        mjrefresh.Refresher(rich_model, bodies=["arm2"], **kwargs)


def test_bad_call_values(rich_model):
    states = random_states(rich_model, N, seed=24)
    r = mjrefresh.Refresher(rich_model, bodies=["arm2"], model_fields=("body_pos", "body_mass"),
                            engine="exact")
    out = r.outputs(N)
    out.body_pos.fill(-1.0)
    kw = dict(mocap_pos=states["mocap_pos"], mocap_quat=states["mocap_quat"])
    good = random_fields(rich_model, ["body_pos", "body_mass"], N, seed=1)
    args = (np.arange(N), states["qpos"], states["qvel"], out)
    with pytest.raises(ValueError, match=r"model_fields: expected arrays for 'body_pos', 'body_mass' "
                       r"\(declared at construction\), missing 'body_mass'"):
        r.refresh(*args, model_fields={"body_pos": good["body_pos"]}, **kw)
    with pytest.raises(ValueError, match=r"model_fields: 'jnt_axis' not declared at construction"):
        r.refresh(*args, model_fields={**good, "jnt_axis": np.zeros((N, rich_model.njnt, 3))}, **kw)
    with pytest.raises(ValueError, match=rf"model_fields\['body_pos'\]: expected shape \({N}, "
                       rf"{rich_model.nbody}, 3\) \(N, like model.body_pos\), got \({N}, 3\)"):
        r.refresh(*args, model_fields={**good, "body_pos": np.zeros((N, 3))}, **kw)
    with pytest.raises(TypeError, match=r"model_fields\['body_mass'\]: expected dtype float64, got float32"):
        r.refresh(*args, model_fields={**good, "body_mass": good["body_mass"].astype(np.float32)}, **kw)
    with pytest.raises(ValueError, match=r"model_fields: expected arrays for 'body_pos', 'body_mass'"):
        r.refresh(*args, **kw)
    plain = mjrefresh.Refresher(rich_model, bodies=["arm2"])
    with pytest.raises(ValueError, match=r"model_fields: this Refresher was built without per-environment"):
        plain.refresh(np.arange(N), states["qpos"], states["qvel"], plain.outputs(N),
                      model_fields=good, **kw)
    assert (out.body_pos == -1.0).all()
