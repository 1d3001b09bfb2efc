"""Errors that teach: unknown names get "did you mean" suggestions, or the
kind of object the name really is, or what names exist."""

from __future__ import annotations

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
