"""The native MjData-list path (bind_mjdata_list, refresh_mjdata): same results
as the array path, only the mirrored MjData fields change (sensordata columns;
body and site poses only with write_poses=True), bad lists refused."""

from __future__ import annotations

import gc

import mujoco
import numpy as np
import pytest
from support.backends import mjdata_list
from support.models import LEGGED_BODIES, LEGGED_XML, RICH_BODIES
from support.sensors import pos_vel_sensor_names
from support.states import state_inputs, states_of_datas

import mjrefresh

#: Outputs copied into each MjData with write_poses=True -> the MjData field,
#: and the ids indexing it.
POSES = {
    "body_pos": ("xpos", "body_ids"),
    "body_quat": ("xquat", "body_ids"),
    "site_pos": ("site_xpos", "site_ids"),
    "site_mat": ("site_xmat", "site_ids"),
}
N = 7  # the fast engine runs a quad, a pair and one row alone (pairs and one alone w/o AVX2)


#: Views into the MjData arena (constraint and island data of the last step):
#: MuJoCo leaves parts of them uninitialised, so they read as noise; a refresh
#: touches none of them.
ARENA = ("island", "efc", "efm_", "map_", "contact", "iefc", "ifrc", "iacc", "iLD", "iM")


def _snapshot(d: mujoco.MjData) -> dict[str, np.ndarray]:
    """Copies of the MjData's array fields outside the arena."""
    return {
        f: np.array(getattr(d, f), copy=True)
        for f in _array_fields(d)
        if not any(part in f for part in ARENA)
    }


def _array_fields(d: mujoco.MjData) -> list[str]:
    names = []
    for f in dir(d):
        if f.startswith("_"):
            continue
        try:
            v = getattr(d, f)
        except Exception:  # noqa: BLE001 - properties that need arguments
            continue
        if isinstance(v, np.ndarray) and v.size:
            names.append(f)
    return names


#: (model, engine): the rich model (mocap body, clock sensor, sensors of every
#: kind) and the legged one on the exact engine; the quadruped's tracking
#: selection on the fast engine (rows run in SIMD pairs).
CASES = [("rich", "exact"), ("legged", "exact"), ("quadruped", "fast")]


def _refresher(name: str, model: mujoco.MjModel, engine: str) -> mjrefresh.Refresher:
    if name == "quadruped":
        return mjrefresh.Refresher(
            model,
            bodies=list(mjrefresh.models.tracking_layout(model).bodies),
            relative_to="base",
            sites=("imu", "FL_foot"),
            sensor_ranges=[(68, 328)],
            num_threads=2,
            engine=engine,
        )
    return mjrefresh.Refresher(
        model,
        bodies=RICH_BODIES if name == "rich" else LEGGED_BODIES,
        relative_to="base",
        sites=("arm2_tip", "ball_site") if name == "rich" else ("imu", "foot"),
        sensors=pos_vel_sensor_names(model),
        num_threads=2,
        engine=engine,
    )


@pytest.fixture(scope="module", params=CASES, ids=["-".join(c) for c in CASES])
def case(request, rich_model, legged_model):
    """(model, refresher): bodies, relative_to, sites and sensors."""
    name, engine = request.param
    model = {"rich": rich_model, "legged": legged_model}.get(name) or mjrefresh.models.quadruped()
    r = _refresher(name, model, engine)
    yield model, r
    r.close()


def _array_path(refresher: mjrefresh.Refresher, datas, rows) -> mjrefresh.RefreshOutputs:
    s = states_of_datas(datas)
    out = refresher.outputs(len(datas))
    refresher.refresh(rows, s["qpos"], s["qvel"], out, **state_inputs(s))
    return out


@pytest.mark.parametrize("write_poses", [False, True])
@pytest.mark.parametrize("rows", [None, [0, 2, 3, 6]])
def test_results_and_untouched_fields_as_the_array_path(case, rows, write_poses):
    model, refresher = case
    datas = mjdata_list(model, N, seed=11)
    for i, d in enumerate(datas):
        d.time = 0.25 * i
    before = [_snapshot(d) for d in datas]
    expected = _array_path(refresher, datas, np.arange(N) if rows is None else rows)
    got = mjrefresh.refresh_mjdata(refresher, datas, rows, write_poses=write_poses)
    for name, arr in expected.arrays().items():
        np.testing.assert_array_equal(got.arrays()[name], arr, err_msg=name)
    plan = refresher.plan
    cols = np.concatenate([np.arange(a, b) for a, b in plan.column_ranges])
    refreshed = set(range(N) if rows is None else rows)
    for i, d in enumerate(datas):
        if i not in refreshed:
            for f, v in before[i].items():
                np.testing.assert_array_equal(getattr(d, f), v, err_msg=f"row {i} {f}")
            continue
        want = {f: v.copy() for f, v in before[i].items()}
        want["sensordata"][cols] = expected.sensordata[i, cols]
        for out_name, (field, ids) in POSES.items() if write_poses else ():
            want[field][list(getattr(plan, ids))] = getattr(expected, out_name)[i]
        for f, v in want.items():
            np.testing.assert_array_equal(getattr(d, f), v, err_msg=f"row {i} {f}")


@pytest.mark.parametrize("write_poses", [False, True])
def test_cache_reads_equal_the_array_cache(case, write_poses):
    model, refresher = case
    datas = mjdata_list(model, N, seed=12)
    s = states_of_datas(datas)
    arrays = mjrefresh.bind_arrays(refresher, s["qpos"], s["qvel"], **state_inputs(s))
    cache = mjrefresh.bind_mjdata_list(refresher, datas, write_poses=write_poses)
    for name, arr in arrays.outputs().arrays().items():
        np.testing.assert_array_equal(cache.outputs().arrays()[name], arr, err_msg=name)
    assert cache.stats.native_calls == 1 and cache.stats.rows_refreshed == N


def test_the_binding_keeps_its_own_mjdata(legged_model, legged_refresher):
    """Freed data, in Python terms: the cache holds references to the MjData it
    was given, so replacing or deleting elements of the caller's list frees
    nothing and changes nothing the cache refreshes."""
    datas = mjdata_list(legged_model, 4, seed=3)
    cache = mjrefresh.bind_mjdata_list(legged_refresher, datas)
    bound = list(datas)
    replacement = mujoco.MjData(legged_model)
    datas[1] = replacement
    del datas[2]
    ids = [id(d) for d in bound]
    del bound
    gc.collect()
    assert [id(d) for d in cache.datas] == ids
    cache.datas[0] = replacement  # a copy: the cache's own list is unchanged
    assert [id(d) for d in cache.datas] == ids
    mujoco.mj_resetData(legged_model, replacement)
    snap = _snapshot(replacement)
    for d in cache.datas:
        d.sensordata[:] = 0
    cache.mark_stepped()
    assert cache.refresh_dirty_rows() == 4
    cols = np.concatenate([np.arange(a, b) for a, b in legged_refresher.plan.column_ranges])
    for d in cache.datas:
        assert np.abs(d.sensordata[cols]).max() > 0
    for f, v in snap.items():
        np.testing.assert_array_equal(getattr(replacement, f), v, err_msg=f)


def test_bad_mjdata_lists_are_refused(legged_model, legged_refresher):
    datas = mjdata_list(legged_model, 3, seed=5)
    for bind in (mjrefresh.bind_mjdata_list, mjrefresh.refresh_mjdata):
        with pytest.raises(ValueError, match=r"datas\[2\]: the same MjData as datas\[0\]"):
            bind(legged_refresher, [datas[0], datas[1], datas[0]])
        with pytest.raises(TypeError, match=r"datas\[1\]: expected mujoco.MjData, got NoneType"):
            bind(legged_refresher, [datas[0], None])
    # Same nq/nv, another model: one sensor fewer.
    other = mujoco.MjModel.from_xml_string(
        LEGGED_XML.replace('<force name="imu_force" site="imu"/>', "")
    )
    assert (other.nq, other.nv) == (legged_model.nq, legged_model.nv)
    want = legged_model.nsensordata
    with pytest.raises(
        ValueError,
        match=rf"datas\[1\]: expected an MjData of the refresher's model \(nsensordata={want}\), "
        rf"got nsensordata={want - 3}",
    ):
        mjrefresh.bind_mjdata_list(legged_refresher, [datas[0], mujoco.MjData(other)])


def test_refresh_mjdata_checks_outputs_and_rows(legged_model, legged_refresher):
    datas = mjdata_list(legged_model, 3, seed=6)
    out32 = legged_refresher.outputs(3, np.float32)
    with pytest.raises(
        TypeError, match=r"out.sensordata: expected dtype float64 \(it is copied into each MjData"
    ):
        mjrefresh.refresh_mjdata(legged_refresher, datas, out=out32)
    # Poses are copied only with write_poses: float32 pose outputs are fine without.
    out = legged_refresher.outputs(3)
    out32_poses = mjrefresh.RefreshOutputs(
        **{**out.arrays(), "body_pos": out.body_pos.astype(np.float32)}
    )
    mjrefresh.refresh_mjdata(legged_refresher, datas, out=out32_poses)
    with pytest.raises(
        TypeError,
        match=r"out.body_pos: expected dtype float64 \(it is copied into each MjData.xpos",
    ):
        mjrefresh.refresh_mjdata(legged_refresher, datas, out=out32_poses, write_poses=True)
    with pytest.raises(ValueError, match="rows"):
        mjrefresh.refresh_mjdata(legged_refresher, datas, [0, 3])
    out = legged_refresher.outputs(4)
    with pytest.raises(ValueError, match="shape"):
        mjrefresh.refresh_mjdata(legged_refresher, datas, out=out)
