"""Per-environment model fields (domain randomisation): every output equals
mj_forward on a copy of the model holding that environment's values.

The exact engine matches bit for bit; the fast engine within 1e-12 for poses
and 1e-10 for velocities (the tolerances of test_fast_engine.py), and rows
holding the template's values give the template refresh bit for bit on both.
"""

from __future__ import annotations

import copy
import warnings

import mujoco
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.models import RICH_BODIES
from support.oracle import forward_with_model_fields
from support.random_trees import build_tree, kinematic_trees
from support.runs import refresh_all
from support.sensors import pos_vel_sensor_names, stage_columns
from support.states import random_fields, random_states, state_inputs

import mjrefresh
from mjrefresh.models import quadruped, tracking_layout
from mjrefresh.plan import MODEL_FIELDS, fast_uncovered

# Parity with mj_forward: CI runs these on every supported MuJoCo release.
pytestmark = pytest.mark.parity

N = 24
ENGINES = ("exact", "fast")
# (poses, velocities): exact runs MuJoCo's own functions on the row's values.
TOL = {"exact": (0.0, 0.0), "fast": (1e-12, 1e-10)}
BODIES = list(RICH_BODIES)
SITES = ["imu", "arm2_tip", "world_site", "ball_site"]


def sensor_names(model, engine):
    """The position/velocity sensors `engine` computes (fast: those it covers)."""
    names = pos_vel_sensor_names(model)
    if engine == "fast":
        names = [n for n in names if fast_uncovered(model, [model.sensor(n).id]) is None]
    return names


def check_rows(model, states, fields, out, rows, engine="exact"):
    pos_tol, vel_tol = TOL[engine]
    ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, b) for b in BODIES]
    sids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, s) for s in SITES]
    names = sensor_names(model, engine)
    pos_cols = stage_columns(model, names, mujoco.mjtStage.mjSTAGE_POS)
    vel_cols = stage_columns(model, names, mujoco.mjtStage.mjSTAGE_VEL)
    for row in rows:
        m, d, vel = forward_with_model_fields(model, states, fields, row)
        for cols, tol in ((pos_cols, pos_tol), (vel_cols, vel_tol)):
            np.testing.assert_allclose(
                out.sensordata[row, cols], d.sensordata[cols], rtol=0, atol=tol
            )
        np.testing.assert_allclose(out.body_pos[row], d.xpos[ids], rtol=0, atol=pos_tol)
        np.testing.assert_allclose(out.body_quat[row], d.xquat[ids], rtol=0, atol=pos_tol)
        np.testing.assert_allclose(out.body_angvel[row], vel[ids, :3], rtol=0, atol=vel_tol)
        np.testing.assert_allclose(out.body_linvel[row], vel[ids, 3:], rtol=0, atol=vel_tol)
        np.testing.assert_allclose(out.site_pos[row], d.site_xpos[sids], rtol=0, atol=pos_tol)
        np.testing.assert_allclose(out.site_mat[row], d.site_xmat[sids], rtol=0, atol=pos_tol)


def make(model, fields, num_threads=2, engine="exact", sensors=True):
    r = mjrefresh.Refresher(
        model,
        bodies=BODIES,
        relative_to="base",
        sites=SITES,
        sensors=sensor_names(model, engine) if sensors else None,
        num_threads=num_threads,
        engine=engine,
        model_fields=tuple(fields),
    )
    assert r.plan.engine == engine
    return r


def refresh_every_row_and_check(model, states, given, engine, expected=None):
    """Refresh all N rows with the field arrays `given` and check them against
    mj_forward on the values of `expected` (default: `given`)."""
    r = make(model, given, engine=engine)
    out = r.outputs(N)
    r.refresh(
        np.arange(N),
        states["qpos"],
        states["qvel"],
        out,
        model_fields=given,
        **state_inputs(states),
    )
    check_rows(model, states, given if expected is None else expected, out, range(N), engine)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("field", list(MODEL_FIELDS))
def test_each_field_matches_mj_forward(rich_model, field, engine):
    states = random_states(rich_model, N, seed=21)
    fields = random_fields(rich_model, [field], N, seed=MODEL_FIELDS_SEEDS[field])
    refresh_every_row_and_check(rich_model, states, fields, engine)


MODEL_FIELDS_SEEDS = {name: 100 + i for i, name in enumerate(MODEL_FIELDS)}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("num_threads", [1, 2, 7])
def test_all_fields_together_and_unselected_rows_untouched(rich_model, num_threads, engine):
    states = random_states(rich_model, N, seed=22)
    fields = random_fields(rich_model, list(MODEL_FIELDS), N, seed=5)
    r = make(rich_model, fields, num_threads=num_threads, engine=engine)
    out = r.outputs(N)
    for a in out.arrays().values():
        a.fill(-3.0)
    rows = np.arange(1, N, 2)
    r.refresh(
        rows, states["qpos"], states["qvel"], out, model_fields=fields, **state_inputs(states)
    )
    check_rows(rich_model, states, fields, out, rows, engine)
    for a in out.arrays().values():
        assert (a[::2] == -3.0).all()
    # Template values give exactly the template refresh.
    template = {k: np.repeat(np.asarray(getattr(rich_model, k))[None], N, 0) for k in fields}
    plain = make(rich_model, (), num_threads=num_threads, engine=engine)
    out_t, out_p = r.outputs(N), plain.outputs(N)
    kw = state_inputs(states)
    r.refresh(np.arange(N), states["qpos"], states["qvel"], out_t, model_fields=template, **kw)
    plain.refresh(np.arange(N), states["qpos"], states["qvel"], out_p, **kw)
    for name, a in out_p.arrays().items():
        np.testing.assert_array_equal(getattr(out_t, name), a)


@pytest.mark.parametrize("engine", ENGINES)
def test_row_strided_field_arrays(rich_model, engine):
    # mjbatch-uni / mujoco.batch expanded fields: (N, ...) arrays, any row stride.
    states = random_states(rich_model, N, seed=23)
    fields = random_fields(rich_model, ["body_pos", "jnt_axis"], N, seed=6)
    wide = np.zeros((N, rich_model.nbody * 3 + 5))
    wide[:, : rich_model.nbody * 3] = fields["body_pos"].reshape(N, -1)
    strided = {
        "body_pos": wide[:, : rich_model.nbody * 3].reshape(N, rich_model.nbody, 3),
        "jnt_axis": fields["jnt_axis"],
    }
    assert not strided["body_pos"].flags.c_contiguous
    refresh_every_row_and_check(rich_model, states, strided, engine, expected=fields)


@pytest.mark.parametrize("engine", ENGINES)
def test_rows_sharing_one_block_of_values(rich_model, engine):
    # Row stride 0 (np.broadcast_to): every row reads row 0's values, as the
    # one-block row of bench.research.model_fields relies on.
    states = random_states(rich_model, N, seed=29)
    fields = random_fields(rich_model, ["body_pos", "body_quat", "jnt_axis"], N, seed=8)
    shared = {k: np.broadcast_to(v[:1], v.shape) for k, v in fields.items()}
    assert shared["body_quat"].strides[0] == 0
    refresh_every_row_and_check(rich_model, states, shared, engine)


def test_model_fields_do_not_decide_the_engine(rich_model):
    r = mjrefresh.Refresher(rich_model, bodies=["arm2"], model_fields=("body_pos",))
    assert r.plan.model_fields == ("body_pos",)
    assert r.plan.engine == "fast"


def test_auto_picks_fast_for_quadruped_tracking_with_fields():
    m = quadruped()
    r = mjrefresh.Refresher(
        m,
        sensor_ranges=[tracking_layout(m).columns],
        model_fields=("body_pos", "body_quat", "jnt_axis"),
    )
    assert r.plan.engine == "fast"
    assert r.plan.model_fields == ("body_pos", "body_quat", "jnt_axis")


# --------------------------------------------------------------------------
# fast against exact: a Go1-like model, every field randomised at once
# --------------------------------------------------------------------------


def _fast_vs_exact(m, states, fields, *, bodies, rel, sites, sensors, threads=2):
    """(fast outputs, exact outputs, fast sensor ids): the same selection and
    the same per-row values on both engines."""
    outs = {}
    kw = {"bodies": bodies, "rel": rel, "sites": sites, "sensors": sensors, "threads": threads}
    for engine in ENGINES:
        plan, outs[engine] = refresh_all(m, states, engine, model_fields=fields, **kw)
        assert plan.engine == engine
    return outs["fast"], outs["exact"]


def _assert_close(m, sensors, fast, exact):
    """Fast within the fast tolerances of exact; returns the max errors."""
    pos_tol, vel_tol = TOL["fast"]
    errs = {}
    for key in (
        "body_pos",
        "body_quat",
        "body_pos_rel",
        "body_quat_rel",
        "site_pos",
        "site_mat",
        "body_linvel",
        "body_angvel",
    ):
        a, b = getattr(fast, key), getattr(exact, key)
        errs[key] = float(np.max(np.abs(a - b))) if a.size else 0.0
        assert errs[key] <= (vel_tol if key.startswith("body_") and "vel" in key else pos_tol), key
    for stage, tol in (
        (mujoco.mjtStage.mjSTAGE_POS, pos_tol),
        (mujoco.mjtStage.mjSTAGE_VEL, vel_tol),
    ):
        cols = stage_columns(m, sensors, stage)
        err = (
            float(np.max(np.abs(fast.sensordata[:, cols] - exact.sensordata[:, cols])))
            if cols.size
            else 0.0
        )
        errs[f"sensordata/{int(stage)}"] = err
        assert err <= tol, stage
    return errs


def _fast_sensors(m):
    return [
        i
        for i in range(m.nsensor)
        if fast_uncovered(m, [i]) is None and m.sensor_needstage[i] != mujoco.mjtStage.mjSTAGE_ACC
    ]


def _go1_states(m, n, seed):
    rng = np.random.default_rng(seed)
    qpos = np.tile(m.qpos0, (n, 1)) + rng.normal(0, 0.7, (n, m.nq))
    q = rng.normal(0, 1, (n, 4))
    qpos[:, 3:7] = q * rng.uniform(0.5, 2.0, (n, 1)) / np.linalg.norm(q, axis=1, keepdims=True)
    return {"qpos": qpos, "qvel": rng.normal(0, 1.5, (n, m.nv))}


def test_fast_matches_exact_on_quadruped_with_every_field():
    m = quadruped()
    n = 10_000
    sensors = _fast_sensors(m)
    assert len(sensors) >= 100
    states = _go1_states(m, n, seed=7)
    fields = random_fields(m, list(MODEL_FIELDS), n, seed=8)
    sel = dict(
        bodies=list(range(1, m.nbody)), rel="base", sites=list(range(m.nsite)), sensors=sensors
    )
    fast, exact = _fast_vs_exact(m, states, fields, **sel)
    errs = _assert_close(m, sensors, fast, exact)
    print("max |fast - exact|:", errs)
    # Rows holding the template's values give the fast template refresh bit
    # for bit (pairs, where the two lanes read their own rows' values).
    template = {k: np.repeat(np.asarray(getattr(m, k))[None], n, 0) for k in fields}
    with_fields = mjrefresh.Refresher(
        m,
        **{k if k != "rel" else "relative_to": v for k, v in sel.items()},
        engine="fast",
        model_fields=tuple(fields),
    )
    plain = mjrefresh.Refresher(
        m, **{k if k != "rel" else "relative_to": v for k, v in sel.items()}, engine="fast"
    )
    out_t, out_p = with_fields.outputs(n), plain.outputs(n)
    with_fields.refresh(np.arange(n), **states, out=out_t, model_fields=template)
    plain.refresh(np.arange(n), **states, out=out_p)
    for name, a in out_p.arrays().items():
        np.testing.assert_array_equal(getattr(out_t, name), a)


def test_body_inertia_feeds_only_subtree_angular_momentum(rich_model):
    """body_inertia per row changes the fast engine's subtreeangmom (as
    mj_forward on the row's model gives it) and no other output."""
    m = rich_model
    n = 64
    states = random_states(m, n, seed=9)
    fields = random_fields(m, ["body_inertia"], n, seed=10)
    sensors = _fast_sensors(m)
    angmom = [i for i in sensors if m.sensor_type[i] == mujoco.mjtSensor.mjSENS_SUBTREEANGMOM]
    assert angmom
    sel = dict(bodies=BODIES, relative_to="base", sites=SITES, sensors=sensors, engine="fast")
    r = mjrefresh.Refresher(m, **sel, model_fields=("body_inertia",))
    plain = mjrefresh.Refresher(m, **sel)
    out_f, out_p = r.outputs(n), plain.outputs(n)
    kw = state_inputs(states)
    r.refresh(np.arange(n), states["qpos"], states["qvel"], out_f, model_fields=fields, **kw)
    plain.refresh(np.arange(n), states["qpos"], states["qvel"], out_p, **kw)
    cols = stage_columns(m, angmom, mujoco.mjtStage.mjSTAGE_VEL)
    other = np.setdiff1d(
        stage_columns(m, sensors, mujoco.mjtStage.mjSTAGE_POS).tolist()
        + stage_columns(m, sensors, mujoco.mjtStage.mjSTAGE_VEL).tolist(),
        cols,
    )
    np.testing.assert_array_equal(out_f.sensordata[:, other], out_p.sensordata[:, other])
    for name, a in out_p.arrays().items():
        if name != "sensordata":
            np.testing.assert_array_equal(getattr(out_f, name), a)
    assert np.any(out_f.sensordata[:, cols] != out_p.sensordata[:, cols])
    for row in range(n):
        _, d, _ = forward_with_model_fields(m, states, fields, row)
        np.testing.assert_allclose(
            out_f.sensordata[row, cols], d.sensordata[cols], rtol=0, atol=TOL["fast"][1]
        )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=kinematic_trees(), seed=st.integers(0, 2**31 - 1))
def test_random_trees_with_random_fields_fast_matches_exact(tree, seed):
    m = build_tree(tree)
    n = 16
    rng = np.random.default_rng(seed)
    qpos = np.tile(m.qpos0, (n, 1)) + rng.normal(0, 0.7, (n, m.nq))
    states = {"qpos": qpos, "qvel": rng.normal(0, 1.5, (n, m.nv))}
    fields = random_fields(m, list(MODEL_FIELDS), n, seed=seed + 1)
    sensors = list(range(m.nsensor))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        fast, exact = _fast_vs_exact(
            m,
            states,
            fields,
            bodies=list(range(1, m.nbody)),
            rel=1,
            sites=list(range(m.nsite)),
            sensors=sensors,
            threads=1,
        )
    _assert_close(m, sensors, fast, exact)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (
            dict(model_fields=("geom_size",)),
            r"model_fields: 'geom_size' is not supported per environment",
        ),
        (
            dict(model_fields=("nope",)),
            r"model_fields: 'nope' is not an mjModel field; supported: body_pos",
        ),
        (dict(model_fields=("body_pos", "body_pos")), r"model_fields: 'body_pos' is listed twice"),
    ],
)
def test_bad_declarations(rich_model, kwargs, match):
    with pytest.raises(ValueError, match=match):
        mjrefresh.Refresher(rich_model, bodies=["arm2"], **kwargs)


def test_bad_call_values(rich_model):
    states = random_states(rich_model, N, seed=24)
    r = mjrefresh.Refresher(
        rich_model, bodies=["arm2"], model_fields=("body_pos", "body_mass"), engine="exact"
    )
    out = r.outputs(N)
    out.body_pos.fill(-1.0)
    kw = dict(mocap_pos=states["mocap_pos"], mocap_quat=states["mocap_quat"])
    good = random_fields(rich_model, ["body_pos", "body_mass"], N, seed=1)
    args = (np.arange(N), states["qpos"], states["qvel"], out)
    with pytest.raises(
        ValueError,
        match=r"model_fields: expected arrays for 'body_pos', 'body_mass' "
        r"\(declared at construction\), missing 'body_mass'",
    ):
        r.refresh(*args, model_fields={"body_pos": good["body_pos"]}, **kw)
    with pytest.raises(ValueError, match=r"model_fields: 'jnt_axis' not declared at construction"):
        r.refresh(*args, model_fields={**good, "jnt_axis": np.zeros((N, rich_model.njnt, 3))}, **kw)
    with pytest.raises(
        ValueError,
        match=rf"model_fields\['body_pos'\]: expected shape \({N}, "
        rf"{rich_model.nbody}, 3\) \(N, like model.body_pos\), got \({N}, 3\)",
    ):
        r.refresh(*args, model_fields={**good, "body_pos": np.zeros((N, 3))}, **kw)
    with pytest.raises(
        TypeError, match=r"model_fields\['body_mass'\]: expected dtype float64, got float32"
    ):
        r.refresh(
            *args, model_fields={**good, "body_mass": good["body_mass"].astype(np.float32)}, **kw
        )
    with pytest.raises(
        ValueError, match=r"model_fields: expected arrays for 'body_pos', 'body_mass'"
    ):
        r.refresh(*args, **kw)
    plain = mjrefresh.Refresher(rich_model, bodies=["arm2"])
    with pytest.raises(
        ValueError, match=r"model_fields: this Refresher was built without per-environment"
    ):
        plain.refresh(
            np.arange(N), states["qpos"], states["qvel"], plain.outputs(N), model_fields=good, **kw
        )
    assert (out.body_pos == -1.0).all()


def test_fast_float32_outputs_with_fields_round_the_float64_values(rich_model):
    # Per-row cutoffs clip some gathered sensors after they are written: the
    # clipped value is rounded once, as everywhere else.
    n = 64
    states = random_states(rich_model, n, seed=25)
    fields = random_fields(rich_model, list(MODEL_FIELDS), n, seed=11)
    r = make(rich_model, fields, engine="fast")
    kw = dict(state_inputs(states), model_fields=fields)
    out64, out32 = r.outputs(n), r.outputs(n, dtype=np.float32)
    r.refresh(np.arange(n), states["qpos"], states["qvel"], out64, **kw)
    r.refresh(np.arange(n), states["qpos"], states["qvel"], out32, **kw)
    for name, a in out64.arrays().items():
        np.testing.assert_array_equal(getattr(out32, name), a.astype(np.float32))


# One thread takes up to 64 rows per chunk (refresher.cc) and refreshes
# them in quads (the fast engine's AVX2 build) or pairs, the rest of a chunk
# in a pair and a single row: 35 rows are 8 quads, a pair and a single row
# (17 pairs and a single row in the baseline build).
PAIRED_N = 35


def fast_rows_paired_and_alone(model, states, fields):
    """The fast engine's outputs of PAIRED_N rows refreshed in one call (rows
    in quads and pairs), after checking that each row refreshed alone (refresh_row)
    gets the same bits."""
    r = make(model, fields, num_threads=1, engine="fast")
    kw = dict(state_inputs(states), **({"model_fields": fields} if fields else {}))
    together, alone = r.outputs(PAIRED_N), r.outputs(PAIRED_N)
    r.refresh(np.arange(PAIRED_N), states["qpos"], states["qvel"], together, **kw)
    for i in range(PAIRED_N):
        r.refresh(np.array([i]), states["qpos"], states["qvel"], alone, **kw)
    for name, a in together.arrays().items():
        np.testing.assert_array_equal(getattr(alone, name), a, err_msg=name)
    return together


def test_fast_rows_in_pairs_equal_rows_alone_with_fields(rich_model):
    # Pairs read each lane's own values.
    states = random_states(rich_model, PAIRED_N, seed=26)
    fields = random_fields(rich_model, list(MODEL_FIELDS), PAIRED_N, seed=12)
    fast_rows_paired_and_alone(rich_model, states, fields)


# The fast engine takes the world axis of a hinge from its body's final
# rotation (a column of xmat, or xmat times the axis) when no later joint of
# the body rotates. That equals MuJoCo's axis (the axis rotated by the
# pre-joint quaternion) only while that quaternion is unit: the next two
# tests give it body quaternions that are not, per row and in the model
# itself; the velocities must still equal mj_forward's (which rotate by the
# non-unit quaternion), in pairs of rows that mix both kinds.
# 5% off unit: the normalised rotation's axis is ~0.05 away from MuJoCo's.
SCALE = 1.05


def test_non_unit_per_row_body_quat_keeps_mj_forwards_axes(rich_model):
    states = random_states(rich_model, PAIRED_N, seed=31)
    fields = random_fields(rich_model, ["body_quat"], PAIRED_N, seed=32)
    fields["body_quat"][1::2] *= SCALE  # each pair or quad: even lanes unit, odd lanes not
    fields["body_quat"][4:6] *= SCALE  # and two non-unit rows side by side
    out = fast_rows_paired_and_alone(rich_model, states, fields)
    check_rows(rich_model, states, fields, out, range(PAIRED_N), "fast")


def test_non_unit_template_body_quat_keeps_mj_forwards_axes(rich_model):
    # A model edited after compiling: its hinge bodies' quaternions not unit.
    model = copy.deepcopy(rich_model)
    for name in ("arm1", "arm2"):
        model.body(name).quat[:] *= SCALE
    states = random_states(model, PAIRED_N, seed=33)
    out = fast_rows_paired_and_alone(model, states, {})
    check_rows(model, states, {}, out, range(PAIRED_N), "fast")
