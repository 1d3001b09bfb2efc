"""Errors that teach: unknown names get "did you mean" suggestions, or the
kind of object the name really is, or what names exist."""

from __future__ import annotations

import numpy as np
import pytest

import mjrefresh


@pytest.fixture(scope="module")
def model():
    return mjrefresh.models.quadruped()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(bodies=["bse"]), r"^bodies: unknown body name 'bse'; did you mean 'base'\?$"),
        (dict(bodies=["Base"]), r"^bodies: unknown body name 'Base'; did you mean 'base'\?$"),
        (
            dict(bodies=["FL_foot"]),
            r"^bodies: unknown body name 'FL_foot'; 'FL_foot' is a site, not a body$",
        ),
        (dict(sites=["FL_fot"]), r"^sites: unknown site name 'FL_fot'; did you mean 'FL_foot' or "),
        (
            dict(sensors=["imu_gyr"]),
            r"^sensors: unknown sensor name 'imu_gyr'; did you mean 'imu_gyro'\?$",
        ),
        (
            dict(sensors=["FL_calf"]),
            r"^sensors: unknown sensor name 'FL_calf'; 'FL_calf' is a body, not a sensor$",
        ),
        (
            dict(bodies=["base"], relative_to="bas"),
            r"^relative_to: unknown body name 'bas'; did you mean 'base'\?$",
        ),
        (
            dict(bodies=["zzzz"]),
            r"^bodies: unknown body name 'zzzz'; known body names: world, base, FL_hip, FL_thigh, "
            r"FL_calf, FR_hip, FR_thigh, FR_calf, \.\.\. \(14 in all\)$",
        ),
        (
            dict(bodies=["base"], model_fields=("body_pso",)),
            r"^model_fields: 'body_pso' is not an mjModel field; supported: .*; did you mean 'body_pos'",
        ),
    ],
)
def test_unknown_names_suggest(model, kwargs, message):
    with pytest.raises(ValueError, match=message):
        mjrefresh.Refresher(model, num_threads=1, **kwargs)


def test_model_without_names_says_so():
    import mujoco

    m = mujoco.MjModel.from_xml_string(
        "<mujoco><worldbody><body><geom size='1'/></body></worldbody></mujoco>"
    )
    with pytest.raises(
        ValueError, match=r"^sites: unknown site name 'a'; the model has no named site$"
    ):
        mjrefresh.Refresher(m, sites=["a"], num_threads=1)


# ------------------------------------------------------------ array errors
@pytest.fixture(scope="module")
def refresher(model):
    r = mjrefresh.Refresher(model, bodies=["base"], num_threads=1)
    yield r
    r.close()


def _state(model, n=4):
    return np.tile(model.qpos0, (n, 1)), np.zeros((n, model.nv))


def test_shape_errors_name_the_array_that_set_n(model, refresher):
    qpos, qvel = _state(model)
    with pytest.raises(
        ValueError,
        match=r"^qvel: expected shape \(4, 18\), got \(3, 18\); N = 4 rows is set by qpos "
        r"\(its first axis\)$",
    ):
        refresher.refresh(np.arange(3), qpos, qvel[:3], refresher.outputs(4))
    with pytest.raises(
        ValueError,
        match=r"^body_pos: expected shape \(4, 1, 3\), got \(5, 1, 3\); N = 4 rows is set by qpos",
    ):
        refresher.refresh(np.arange(3), qpos, qvel, refresher.outputs(5))


def test_dtype_stride_and_list_errors_say_the_fix(model, refresher):
    qpos, qvel = _state(model)
    out = refresher.outputs(4)
    with pytest.raises(
        TypeError, match=r"qvel: expected dtype float64, got float32 .*qvel\.astype\(np\.float64\)"
    ):
        refresher.refresh(np.arange(4), qpos, qvel.astype(np.float32), out)
    wide = np.zeros((4, 2 * model.nv))
    with pytest.raises(
        ValueError, match=r"qvel: the last axis must be contiguous .*np\.ascontiguousarray\(qvel\)"
    ):
        refresher.refresh(np.arange(4), qpos, wide[:, ::2], out)
    with pytest.raises(
        TypeError,
        match=r"qvel: expected a numpy array .*got list; convert it once with np\.asarray\(qvel, dtype=np\.float64\)",
    ):
        refresher.refresh(np.arange(4), qpos, qvel.tolist(), out)
    with pytest.raises(
        TypeError, match=r"out\.body_pos: expected a numpy array .*got list; keep a numpy array"
    ):
        refresher.refresh(
            np.arange(4), qpos, qvel, mjrefresh.RefreshOutputs(body_pos=[[[0.0] * 3]] * 4)
        )
    bad = mjrefresh.RefreshOutputs(body_pos=np.zeros((4, 1, 3), dtype=np.int64))
    with pytest.raises(
        TypeError,
        match=r"body_pos: expected dtype float64 or float32, got int64 \(allocate outputs with Refresher\.outputs",
    ):
        refresher.refresh(np.arange(4), qpos, qvel, bad)


def test_cache_reads_suggest_names(model, refresher):
    qpos, qvel = _state(model)
    cache = mjrefresh.bind_arrays(refresher, qpos, qvel)
    with pytest.raises(
        ValueError, match=r"^name: unknown sensor 'imu_gyr'; did you mean 'imu_gyro'\?$"
    ):
        cache.sensor("imu_gyr")
    with pytest.raises(
        ValueError,
        match=r"^bodies: 'bse' is not one of the refresher's bodies \('base',\); did you mean 'base'\?$",
    ):
        cache.body_pos("bse")
