"""README's list of what a refresh refuses, and why, matches the planner's
rules (src/mjrefresh/sensor_rules.py)."""

from __future__ import annotations

from pathlib import Path

import mujoco

from mjrefresh import sensor_rules

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def _section() -> str:
    start = README.index("* Sensors a refresh cannot compute correctly are rejected")
    return README[start : README.index("* Building a refresher never ends the process")]


def test_every_refused_type_and_reason_is_listed():
    text = _section()
    for stype in sensor_rules.REJECTED:
        name = mujoco.mjtSensor(stype).name.removeprefix("mjSENS_").lower()
        assert f"`{name}` sensors" in text, name
    for phrase in (
        "acceleration-stage sensors",
        "delayed/interval (history) sensors",
        "`mjcb_sensor`",
        "plastic",
        "`e_potential`",
        "box-section flex rods",
    ):
        assert phrase in text, phrase


def test_every_newly_computed_type_is_named_as_refreshed():
    text = README[README.index("* Every sensor `mj_forward` derives") :]
    for name in (
        "e_potential",
        "e_kinetic",
        "jointlimitpos/vel",
        "tendonlimitpos/vel",
        "actuatorpos/vel",
        "tactile",
    ):
        assert name in text, name
    # ... and the planner supports each of them.
    supported = {mujoco.mjtSensor(s).name for s in sensor_rules.SUPPORTED}
    for s in (
        "E_POTENTIAL",
        "E_KINETIC",
        "JOINTLIMITPOS",
        "JOINTLIMITVEL",
        "TENDONLIMITPOS",
        "TENDONLIMITVEL",
        "CONTACT",
        "TACTILE",
    ):
        assert f"mjSENS_{s}" in supported
