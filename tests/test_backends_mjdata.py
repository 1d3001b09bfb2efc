"""bind_mjdata_list (one MjData per env, refreshed in place) and the
optional-dependency errors of the other bindings."""

from __future__ import annotations

import copy
import sys

import mujoco
import numpy as np
import pytest
from support.backends import mjdata_list, other_model_message, step_mjdata
from support.checks import ATOL
from support.models import FREE_BODY_XML
from support.models import LEGGED_ACC_SENSORS as ACC_SENSORS
from support.oracle import expected_outputs
from support.sensors import sensor_cols, tracked_sensors
from support.states import states_of_datas

import mjrefresh

N = 5
SELECTED = ("shin", "foot")


@pytest.fixture(scope="module")
def refresher(legged_model):
    r = mjrefresh.Refresher(
        legged_model,
        bodies=SELECTED,
        relative_to="base",
        sites=("imu", "foot"),
        sensors=tracked_sensors(legged_model),
        num_threads=2,
    )
    yield r
    r.close()


@pytest.fixture()
def datas(legged_model):
    return mjdata_list(legged_model, N, seed=4)


@pytest.mark.parametrize("write_poses", [False, True])
def test_in_place_refresh_equals_mj_forward(legged_model, refresher, datas, write_poses):
    cache = mjrefresh.bind_mjdata_list(refresher, datas, write_poses=write_poses)
    rng = np.random.default_rng(0)
    body_ids = [legged_model.body(b).id for b in SELECTED]
    site_ids = [legged_model.site(s).id for s in ("imu", "foot")]
    others = [b for b in range(legged_model.nbody) if b not in body_ids]
    tracked = sensor_cols(legged_model, tracked_sensors(legged_model))
    acc = sensor_cols(legged_model, ACC_SENSORS)
    for _ in range(3):
        step_mjdata(legged_model, datas, rng)
        snap = [
            dict(sd=d.sensordata.copy(), xpos=d.xpos.copy(), qacc=d.qacc.copy(), cvel=d.cvel.copy())
            for d in datas
        ]
        cache.mark_stepped()
        assert cache.refresh_dirty_rows() == N
        expected = expected_outputs(
            legged_model, states_of_datas(datas), SELECTED, "base", ("imu", "foot")
        )
        for i, d in enumerate(datas):
            exp = {k: v[i] for k, v in expected.items()}
            np.testing.assert_allclose(
                d.sensordata[tracked], exp["sensordata"][tracked], rtol=0, atol=ATOL
            )
            if write_poses:
                np.testing.assert_allclose(d.xpos[body_ids], exp["body_pos"], rtol=0, atol=ATOL)
                np.testing.assert_allclose(d.xquat[body_ids], exp["body_quat"], rtol=0, atol=ATOL)
                np.testing.assert_allclose(
                    d.site_xpos[site_ids], exp["site_pos"], rtol=0, atol=ATOL
                )
                np.testing.assert_allclose(
                    d.site_xmat[site_ids], exp["site_mat"], rtol=0, atol=ATOL
                )
            else:  # the poses stay the step's; the cache holds the refreshed ones
                np.testing.assert_array_equal(d.xpos, snap[i]["xpos"])
                np.testing.assert_allclose(
                    cache.body_pos(env_ids=i), exp["body_pos"], rtol=0, atol=ATOL
                )
            # acceleration-stage sensors and unselected fields are unchanged
            np.testing.assert_array_equal(d.sensordata[acc], snap[i]["sd"][acc])
            np.testing.assert_array_equal(d.xpos[others], snap[i]["xpos"][others])
            np.testing.assert_array_equal(d.qacc, snap[i]["qacc"])
            np.testing.assert_array_equal(d.cvel, snap[i]["cvel"])
            # reads come from the same refresh
            np.testing.assert_allclose(
                cache.body_linvel(env_ids=i), exp["body_linvel"], rtol=0, atol=ATOL
            )
            np.testing.assert_allclose(
                cache.body_pos_rel(env_ids=i), exp["body_pos_rel"], rtol=0, atol=ATOL
            )
    assert np.abs(np.array([d.sensordata[acc] for d in datas])).max() > 0


def test_only_the_rows_read_are_touched(legged_model, refresher, datas):
    cache = mjrefresh.bind_mjdata_list(refresher, datas)
    cache.refresh_dirty_rows()
    rng = np.random.default_rng(1)
    step_mjdata(legged_model, datas, rng)
    cache.mark_stepped()
    snap = [d.sensordata.copy() for d in datas]
    cache.reset_stats()
    cache.sensor("foot_pos_w", env_ids=[3])
    assert cache.stats.rows_refreshed == 1
    for i, d in enumerate(datas):
        changed = not np.array_equal(d.sensordata, snap[i])
        assert changed == (i == 3)
    np.testing.assert_array_equal(cache.dirty, [True, True, True, False, True])


def test_mjdata_list_errors(legged_model, refresher, datas):
    with pytest.raises(TypeError, match="datas: expected a sequence of mujoco.MjData, got MjData"):
        mjrefresh.bind_mjdata_list(refresher, datas[0])
    with pytest.raises(ValueError, match="datas: expected at least one mujoco.MjData"):
        mjrefresh.bind_mjdata_list(refresher, [])
    with pytest.raises(TypeError, match=r"datas\[1\]: expected mujoco.MjData, got int"):
        mjrefresh.bind_mjdata_list(refresher, [datas[0], 3])
    other = mujoco.MjModel.from_xml_string(FREE_BODY_XML)
    with pytest.raises(
        ValueError,
        match=r"datas\[1\]: expected an MjData of the refresher's model \(nq=13, nv=11\), got nq=7, nv=6",  # noqa: E501
    ):
        mjrefresh.bind_mjdata_list(refresher, [datas[0], mujoco.MjData(other)])
    with pytest.raises(TypeError, match=r"^write_poses: expected True or False, got str 'no'$"):
        mjrefresh.bind_mjdata_list(refresher, datas, write_poses="no")
    n = len(datas)
    with pytest.raises(
        ValueError,
        match=rf"^body_pos: expected shape \({n - 1}, 2, 3\), got \({n}, 2, 3\); N = {n - 1} "
        r"rows is the number of MjData \(len\(datas\)\)$",
    ):
        mjrefresh.refresh_mjdata(refresher, datas[:-1], out=refresher.outputs(n))


def test_missing_optional_dependencies_say_what_to_install(monkeypatch, refresher):
    monkeypatch.setitem(sys.modules, "mjbatch", None)
    with pytest.raises(ImportError, match="pip install mjbatch-uni"):
        mjrefresh.bind_mjbatch(object(), refresher)
    with pytest.raises(ImportError, match="pip install mjbatch-uni"):
        mjrefresh.MjbatchSensorRefresher(object())
    monkeypatch.setitem(sys.modules, "mujoco.batch", None)
    monkeypatch.delattr(mujoco, "batch", raising=False)
    with pytest.raises(ImportError, match=r"pip install 'mujoco>=4.0'"):
        mjrefresh.bind_mujoco_batch(object(), refresher)


def test_mjdata_of_another_model_and_model_fields_are_refused(legged_model, refresher, datas):
    other = copy.copy(legged_model)
    other.body_pos[2, 0] += 0.05  # same sizes, another leg
    with pytest.raises(ValueError, match=other_model_message("body_pos", "datas[1]")):
        mjrefresh.bind_mjdata_list(refresher, [datas[0], mujoco.MjData(other)])
    # An MjData holds no model values: per-row fields cannot be read from it
    # (the engines used to read tables nothing filled: a segfault).
    for engine in ("fast", "exact"):
        with mjrefresh.Refresher(
            legged_model, bodies=["foot"], model_fields=("body_pos",), engine=engine
        ) as r:
            message = (
                r"^model_fields: the refresher takes 'body_pos' per row, which a binding of "
                r"MjData rows cannot supply \(an MjData holds no model values\); use a Refresher "
                r"without model_fields, or pass the state as arrays \(bind_arrays, bind_state\) "
                r"with model_fields=$"
            )
            with pytest.raises(ValueError, match=message):
                mjrefresh.bind_mjdata_list(r, datas)
            with pytest.raises(ValueError, match=message):
                mjrefresh.refresh_mjdata(r, datas, out=r.outputs(len(datas)))
