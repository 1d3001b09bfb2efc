"""Per-environment model fields through StateCache and the backend bindings:
plain arrays, mjbatch-uni ``Batch.expand`` and mujoco.batch expanded fields.
After real physics steps, reads equal mj_forward on a model copy holding
each environment's values."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from support.oracle import forward_with_model_fields

import mjrefresh
from mjrefresh import models

N = 6
FIELDS = ("body_pos", "body_quat", "jnt_axis")


@pytest.fixture(scope="module")
def model():
    return models.quadruped()


def tracked(model):
    return list(models.tracking_layout(model).bodies)


def perturb(model, arrays: dict, seed: int) -> None:
    """Write random per-env values into the (N, ...) field arrays in place."""
    rng = np.random.default_rng(seed)
    for name, a in arrays.items():
        base = np.asarray(getattr(model, name))
        vals = base[None] + rng.normal(scale=0.03, size=(a.shape[0], *base.shape))
        if name.endswith("quat") or name == "jnt_axis":
            vals /= np.linalg.norm(vals, axis=-1, keepdims=True)
        a[...] = vals


def expected(model, fields: dict, qpos, qvel, bodies):
    """mj_forward with each row's field values: (body_pos, body_linvel) of `bodies`."""
    ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, b) for b in bodies]
    states = {"qpos": qpos, "qvel": qvel}
    rows = [forward_with_model_fields(model, states, fields, r) for r in range(len(qpos))]
    pos = np.array([d.xpos[ids] for _, d, _ in rows])
    linvel = np.array([vel[ids, 3:] for _, _, vel in rows])
    return pos, linvel


def step_and_check(model, batch, cache, fields_now, seed: int) -> None:
    """One physics step of `batch` (random controls), then the cache's reads
    equal mj_forward with each env's field values (`fields_now()`)."""
    rng = np.random.default_rng(seed)
    batch.bind("ctrl")[:] = rng.normal(scale=0.3, size=(N, model.nu))
    batch.step()
    cache.mark_stepped()
    qpos, qvel = batch.bind("qpos").copy(), batch.bind("qvel").copy()
    pos, linvel = expected(model, fields_now(), qpos, qvel, tracked(model))
    np.testing.assert_allclose(cache.body_pos(), pos, rtol=0, atol=1e-12)
    np.testing.assert_allclose(cache.body_linvel(), linvel, rtol=0, atol=1e-10)


def test_bind_arrays_with_model_fields(model):
    rng = np.random.default_rng(0)
    qpos = np.tile(model.qpos0, (N, 1)) + rng.normal(scale=0.1, size=(N, model.nq))
    qvel = rng.normal(size=(N, model.nv))
    fields = {f: np.zeros((N, *np.shape(getattr(model, f)))) for f in FIELDS}
    perturb(model, fields, seed=1)
    r = mjrefresh.Refresher(model, bodies=tracked(model), model_fields=FIELDS, num_threads=2)
    cache = mjrefresh.bind_arrays(r, qpos, qvel, model_fields=fields)
    pos, linvel = expected(model, fields, qpos, qvel, tracked(model))
    np.testing.assert_allclose(cache.body_pos(), pos, rtol=0, atol=1e-12)
    np.testing.assert_allclose(cache.body_linvel(), linvel, rtol=0, atol=1e-10)
    # Values are read in place: a new randomisation is seen after a mark.
    perturb(model, fields, seed=2)
    cache.mark_dirty(None)
    pos, _ = expected(model, fields, qpos, qvel, tracked(model))
    np.testing.assert_allclose(cache.body_pos(), pos, rtol=0, atol=1e-12)


def test_mjbatch_expanded_fields(model):
    mjbatch = pytest.importorskip("mjbatch", reason="mjbatch-uni not installed")
    batch = mjbatch.Batch(model, N, num_threads=2)
    perturb(model, {f: batch.expand(f) for f in FIELDS}, seed=3)
    r = mjrefresh.Refresher(model, bodies=tracked(model), model_fields=FIELDS, num_threads=2)
    cache = mjrefresh.bind_mjbatch(batch, r)
    step_and_check(model, batch, cache, lambda: {f: batch.expand(f).copy() for f in FIELDS}, seed=4)


def test_mujoco_batch_expanded_fields(model):
    mujoco_batch = pytest.importorskip("mujoco.batch", reason="mujoco.batch needs MuJoCo >= 4.0")
    batch = mujoco_batch.Batch(model, N, nthread=2)
    perturb(model, {f: batch.expand(f) for f in FIELDS}, seed=5)
    undeclared = mjrefresh.Refresher(model, bodies=tracked(model), num_threads=2)
    with pytest.raises(
        ValueError,
        match=r"batch: model field body_pos is expanded with "
        r"per-simulation values that the refresher does not take; declare it "
        r"\(Refresher\(\.\.\., model_fields=\('body_pos', \.\.\.\)\)\) and bind again$",
    ):
        mjrefresh.bind_mujoco_batch(batch, undeclared)
    r = mjrefresh.Refresher(model, bodies=tracked(model), model_fields=FIELDS, num_threads=2)
    cache = mjrefresh.bind_mujoco_batch(batch, r)
    step_and_check(
        model, batch, cache, lambda: {f: batch.expanded(f).copy() for f in FIELDS}, seed=6
    )


def test_mujoco_batch_mass_randomised_with_set_const(model):
    # set_const expands what it derives from body_mass (body_subtreemass,
    # camera and light offsets, ...) per simulation: a declared body_mass
    # takes body_subtreemass with it, and nothing else it derives is read.
    mujoco_batch = pytest.importorskip("mujoco.batch", reason="mujoco.batch needs MuJoCo >= 4.0")
    batch = mujoco_batch.Batch(model, N, nthread=2)
    rng = np.random.default_rng(8)
    batch.expand("body_mass")[:, 1:] *= rng.uniform(0.5, 2.0, size=(N, model.nbody - 1))
    batch.set_const()
    assert batch.expanded("body_subtreemass") is not None
    r = mjrefresh.Refresher(
        model, bodies=tracked(model), model_fields=("body_mass",), num_threads=2
    )
    cache = mjrefresh.bind_mujoco_batch(batch, r)
    step_and_check(model, batch, cache, lambda: {"body_mass": batch.expanded("body_mass")}, seed=9)
