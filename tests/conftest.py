"""Fixtures only: thin wrappers over tests/support (models, states, the
mj_forward oracle, bound backends, counting MuJoCo callbacks). Helpers are
imported from `support.*`, never from this file."""

from __future__ import annotations

from collections.abc import Iterator

import mujoco
import numpy as np
import pytest
from support import callbacks, models
from support.backends import BACKENDS
from support.bound import BoundBackend, open_backend
from support.oracle import Forward, forward_rows
from support.sensors import tracked_sensors
from support.states import random_states

import mjrefresh


@pytest.fixture(scope="session")
def rich_model() -> mujoco.MjModel:
    """models.RICH_XML: every joint type and every pos/vel sensor type."""
    return models.rich_model()


@pytest.fixture(scope="session")
def rich_states(rich_model: mujoco.MjModel) -> dict[str, np.ndarray]:
    """64 random states of the rich model."""
    return random_states(rich_model, 64, seed=1)


@pytest.fixture(scope="session")
def rich_reference(rich_model: mujoco.MjModel, rich_states: dict[str, np.ndarray]) -> Forward:
    """mj_forward at each of `rich_states`."""
    return forward_rows(rich_model, rich_states)


@pytest.fixture(scope="session")
def legged_model() -> mujoco.MjModel:
    """models.LEGGED_XML: a floating base with a leg touching the floor."""
    return models.legged_model()


@pytest.fixture(scope="session")
def legged_refresher(legged_model: mujoco.MjModel) -> Iterator[mjrefresh.Refresher]:
    """Every body (relative to the base) and every non-acceleration sensor."""
    r = mjrefresh.Refresher(
        legged_model,
        bodies=models.LEGGED_BODIES,
        relative_to="base",
        sensors=tracked_sensors(legged_model),
        num_threads=2,
    )
    yield r
    r.close()


@pytest.fixture(params=BACKENDS)
def bound_backend(
    request: pytest.FixtureRequest,
    legged_model: mujoco.MjModel,
    legged_refresher: mjrefresh.Refresher,
) -> BoundBackend:
    """Each backend of 6 random legged envs, bound to `legged_refresher`
    (skipped where the backend is not installed)."""
    return open_backend(request.param, legged_model, legged_refresher, 6)


@pytest.fixture(scope="session")
def counting_callbacks(tmp_path_factory: pytest.TempPathFactory) -> callbacks.CountingCallbacks:
    """Counting C callbacks for every mjcb_* slot (skips without a C compiler)."""
    cc = callbacks.c_compiler()
    if cc is None:
        pytest.skip("no C compiler to build the counting callbacks")
    return callbacks.CountingCallbacks(cc, tmp_path_factory.mktemp("cb"))
