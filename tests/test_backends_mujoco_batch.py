"""bind_mujoco_batch against a real MuJoCo >= 4.0 mujoco.batch.Batch
(skipped with older MuJoCo, which has no mujoco.batch)."""

from __future__ import annotations

import copy

import mujoco
import numpy as np
import pytest
from support.backends import (
    MUJOCO_BATCH_MISSING,
    declared,
    make_mujoco_batch,
    other_model_message,
)

import mjrefresh

mujoco_batch = pytest.importorskip("mujoco.batch", reason=MUJOCO_BATCH_MISSING)

N = 5


@pytest.fixture()
def batch(legged_model):
    return make_mujoco_batch(legged_model, N, seed=2)


def test_reads_the_batch_state_in_place(legged_model, legged_refresher, batch):
    # (reads after steps and partial resets: test_backends_common.py)
    cache = mjrefresh.bind_mujoco_batch(batch, legged_refresher)
    assert np.shares_memory(cache._inputs["qpos"], batch.state)


def test_on_demand_reads(legged_model, legged_refresher, batch):
    cache = mjrefresh.bind_mujoco_batch(batch, legged_refresher, dtype=np.float32)
    cache.refresh_dirty_rows()
    batch.step(np.array([0, 3]), nstep=2)
    cache.mark_stepped([0, 3])
    cache.reset_stats()
    cache.body_linvel(["foot"], env_ids=[3])
    cache.body_linvel(["foot"], env_ids=[3])
    assert cache.stats.rows_refreshed == 1 and cache.stats.cached_reads == 1
    np.testing.assert_array_equal(cache.dirty, [True, False, False, False, False])


def test_errors(legged_model, legged_refresher, batch):
    with pytest.raises(TypeError, match="batch: expected mujoco.batch.Batch, got dict"):
        mjrefresh.bind_mujoco_batch({}, legged_refresher)
    b = mujoco_batch.Batch(legged_model, 2, nthread=1)
    b.set_models([legged_model, legged_model])
    with pytest.raises(ValueError, match=r"batch: it runs caller models \(set_models\)"):
        mjrefresh.bind_mujoco_batch(b, legged_refresher)
    b = mujoco_batch.Batch(legged_model, 2, nthread=1)
    b.expand("body_pos")[1, 2, 0] += 0.1
    with pytest.raises(
        ValueError, match="batch: model field body_pos is expanded with per-simulation values"
    ):
        mjrefresh.bind_mujoco_batch(b, legged_refresher)
    b = mujoco_batch.Batch(legged_model, 2, nthread=1)
    b.expand("geom_friction")[:] = 0.5  # does not change what a refresh computes
    b.expand("geom_contype")[1] = 0  # nor collision filters (integers no refresh reads)
    mjrefresh.bind_mujoco_batch(b, legged_refresher)
    b = mujoco_batch.Batch(legged_model, 2, nthread=1)
    b.expand("jnt_type")[1, 1] = int(mujoco.mjtJoint.mjJNT_SLIDE)  # the structure does
    with pytest.raises(
        ValueError,
        match=r"^batch: model field jnt_type is expanded with per-simulation values that the "
        r"refresher does not take; a refresh cannot take it per environment$",
    ):
        mjrefresh.bind_mujoco_batch(b, legged_refresher)


def test_inputs_it_reads_itself_are_refused(legged_refresher, batch):
    for name in ("qpos", "mocap_pos", "time", "model_fields"):
        with pytest.raises(
            TypeError,
            match=rf"^{name}: bind_mujoco_batch reads it from the batch; do not pass it as well$",
        ):
            mjrefresh.bind_mujoco_batch(batch, legged_refresher, **{name: np.zeros(3)})


def test_fields_the_selected_sensors_read(legged_model, legged_refresher):
    # actuator_gear changes the actuatorpos/actuatorvel sensors (pull_pos,
    # pull_vel) the refresher selects; a refresher of body poses alone does
    # not read it.
    b = mujoco_batch.Batch(legged_model, 2, nthread=1)
    b.expand("actuator_gear")[1] *= 3
    with pytest.raises(
        ValueError,
        match=r"^batch: model field actuator_gear is expanded with per-simulation values that "
        r"the refresher does not take; a refresh cannot take it per environment$",
    ):
        mjrefresh.bind_mujoco_batch(b, legged_refresher)
    with mjrefresh.Refresher(legged_model, bodies=["foot"], num_threads=1) as poses:
        cache = mjrefresh.bind_mujoco_batch(b, poses)
        assert cache.refresh_dirty_rows() == 2


CONTACT = """<mujoco><worldbody><geom name="floor" type="plane" size="5 5 .1"/>
 <body name="ball" pos="0 0 .05"><freejoint/><geom name="g" size=".1"/></body></worldbody>
 <sensor><contact name="c" geom1="g" data="found dist" num="1"/></sensor></mujoco>"""


@pytest.mark.parametrize(
    ("field", "value"), [("geom_contype", 0), ("geom_size", 0.3), ("geom_margin", 0.2)]
)
def test_fields_collision_reads_for_contact_sensors(field, value):
    # One simulation whose ball collides with nothing, or is bigger: the
    # refresh (the refresher's geoms) reported the other contact, no error.
    m = mujoco.MjModel.from_xml_string(CONTACT)
    b = mujoco_batch.Batch(m, 2, nthread=1)
    b.expand(field)[1, 1, ...] = value
    with mjrefresh.Refresher(m, sensors=["c"], engine="exact", num_threads=1) as r:
        with pytest.raises(
            ValueError,
            match=rf"^batch: model field {field} is expanded with per-simulation values that "
            r"the refresher does not take; a refresh cannot take it per environment$",
        ):
            mjrefresh.bind_mujoco_batch(b, r)
    b = mujoco_batch.Batch(m, 2, nthread=1)
    b.expand("geom_friction")[1, 1, 0] = 0.2  # not read by a contact sensor
    with mjrefresh.Refresher(m, sensors=["c"], engine="exact", num_threads=1) as r:
        cache = mjrefresh.bind_mujoco_batch(b, r)
        np.testing.assert_array_equal(cache.sensor("c")[:, 0], [1, 1])


TRACKING_CAMERA = """<mujoco><worldbody><body name="arm" pos="0 0 1">
 <joint name="h" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
 <camera name="cam" pos=".3 0 .1" mode="track"/><site name="s"/></body></worldbody>
 <sensor><framexaxis objtype="camera" objname="cam"/></sensor></mujoco>"""


@pytest.mark.parametrize(
    ("field", "value", "select", "derived"),
    [
        ("body_quat", [0.955, 0, 0, 0.296], {"sensors": [0]}, "cam_pos0"),
        ("site_pos", [0.2, 0, 0], {"sites": ["s"]}, "site_sameframe"),
    ],
)
def test_set_const_after_binding_is_refused_at_the_next_refresh(field, value, select, derived):
    # set_const() expands the constants it derives natively (a tracking
    # camera's reference pose, a site's frame flag), unseen by the batch's
    # record of expand(): the refresh used the refresher's, 0.78 off.
    m = mujoco.MjModel.from_xml_string(TRACKING_CAMERA)
    b = mujoco_batch.Batch(m, 2, nthread=1)
    b.expand(field)[1, -1] = value  # the arm, the site
    with mjrefresh.Refresher(m, **select, model_fields=(field,), num_threads=1) as r:
        cache = mjrefresh.bind_mujoco_batch(b, r)
        assert cache.refresh_dirty_rows() == 2
        b.set_const()
        cache.mark_stepped()
        with pytest.raises(
            ValueError,
            match=rf"^batch: model field {derived} is expanded with per-simulation values "
            r"\(batch.set_const\(\) derives it per simulation\) that the refresher does not "
            r"take; a refresh cannot take it per environment$",
        ):
            cache.refresh_dirty_rows()
        assert cache.dirty.all()


def test_a_batch_of_another_model_is_refused(legged_model, legged_refresher):
    other = copy.copy(legged_model)
    other.body_pos[2, 0] += 0.05  # same sizes, another leg
    with pytest.raises(
        ValueError,
        match=other_model_message(
            "body_pos", fix=declared("body_pos"), source="batch.get_model(0)"
        ),
    ):
        mjrefresh.bind_mujoco_batch(mujoco_batch.Batch(other, 2, nthread=1), legged_refresher)


def test_changes_after_binding_are_refused_at_the_next_refresh(legged_model, legged_refresher):
    def bound():
        b = mujoco_batch.Batch(legged_model, 2, nthread=1)
        b.expand("actuator_gear")  # expanded with the model's values: accepted, and watched
        return b, mjrefresh.bind_mujoco_batch(b, legged_refresher)

    b, cache = bound()
    assert cache.refresh_dirty_rows() == 2
    b.expand("body_pos")[1, 2, 0] += 0.1
    cache.mark_stepped()
    with pytest.raises(ValueError, match="^batch: model field body_pos is expanded with per-sim"):
        cache.body_pos()
    assert cache.dirty.all()  # nothing was refreshed

    b, cache = bound()
    b.expand("actuator_gear")[0] *= 2
    cache.mark_stepped()
    with pytest.raises(
        ValueError,
        match=r"^batch: model field actuator_gear was given per-simulation values after "
        r"bind_mujoco_batch, and the refresh reads it from the refresher's model; a refresh "
        r"cannot take it per environment$",
    ):
        cache.refresh_dirty_rows()

    b = mujoco_batch.Batch(legged_model, 2, nthread=1)
    cache = mjrefresh.bind_mujoco_batch(b, legged_refresher)
    b.set_models(legged_model)
    cache.mark_stepped()
    with pytest.raises(ValueError, match=r"^batch: it runs caller models \(set_models\)"):
        cache.refresh_dirty_rows()


def test_the_batch_is_compared_as_it_runs_not_as_its_model_object_is_now(legged_model):
    # mujoco.batch runs a copy of the model taken when the batch was built;
    # batch.model is the caller's object. Edited after that, it made a batch
    # of the refresher's values refused, and one of other values accepted.
    m = copy.copy(legged_model)
    r = mjrefresh.Refresher(m, bodies=["base"], num_threads=1)
    b = mujoco_batch.Batch(m, 2, nthread=1)
    m.body_pos[2, 0] += 0.05  # after both were built: neither sees it
    assert mjrefresh.bind_mujoco_batch(b, r).refresh_dirty_rows() == 2
    edited = mjrefresh.Refresher(m, bodies=["base"], num_threads=1)
    with pytest.raises(
        ValueError,
        match=other_model_message(
            "body_pos", fix=declared("body_pos"), source="batch.get_model(0)"
        ),
    ):
        mjrefresh.bind_mujoco_batch(b, edited)
