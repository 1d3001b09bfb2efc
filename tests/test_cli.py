"""The command line: ``mjrefresh info`` and ``mjrefresh plan``, run as a user
runs them (a subprocess of ``python -m mjrefresh``) on embedded models and
on an MJCF file written here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import mujoco
import pytest

import mjrefresh

XML = """
<mujoco>
  <worldbody>
    <body name="torso" pos="0 0 1">
      <freejoint/>
      <geom size="0.1"/>
      <site name="imu"/>
      <body name="arm" pos="0.2 0 0">
        <joint name="shoulder" axis="0 1 0" range="-1 1"/>
        <geom type="capsule" size="0.05" fromto="0 0 0 0.3 0 0"/>
        <site name="hand" pos="0.3 0 0"/>
      </body>
    </body>
  </worldbody>
  <tendon><fixed name="t"><joint joint="shoulder" coef="1"/></fixed></tendon>
  <sensor>
    <framepos name="hand_pos" objtype="site" objname="hand"/>
    <gyro name="gyro" site="imu"/>
    <tendonpos name="t_len" tendon="t"/>
    <accelerometer name="acc" site="imu"/>
    <user name="limit" dim="1" needstage="pos"/>
  </sensor>
</mujoco>
"""


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mjrefresh", *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module")
def robot_xml(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "robot.xml"
    path.write_text(XML)
    return path


def test_info_names_versions_cpus_and_backends():
    res = run("info")
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert f"mjrefresh {' ' * 0}".strip() in out and mjrefresh.__version__ in out
    assert "MuJoCo installed" in out and mujoco.__version__ in out
    assert "CPUs" in out and "usable" in out
    assert "native core" in out and "optimized" in out
    assert "backend: mjbatch-uni (bind_mjbatch)" in out
    assert "backend: mujoco.batch (bind_mujoco_batch)" in out
    # every backend binding the package exports has its line
    bindings = [n for n in mjrefresh.__all__ if n.startswith(("bind_", "attach_"))]
    backend_lines = [line for line in out.splitlines() if line.startswith("backend:")]
    for name in bindings:
        assert any(f"{name})" in line for line in backend_lines), (name, backend_lines)


def test_plan_compact_on_an_unseen_model(robot_xml: Path):
    res = run("plan", str(robot_xml), "--bodies", "torso", "arm", "--sensors", "hand_pos", "gyro")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == "engine: fast (auto: the fused kernels cover every selected output)"
    assert "  kinematics: body poses and 3 more (4 outputs)" in lines
    assert "bodies: torso, arm" in lines


def test_plan_takes_ids_where_no_object_has_that_name(robot_xml: Path):
    # --bodies/--sites/--sensors/--relative-to take names or ids (their help).
    by_name = run("plan", str(robot_xml), "--bodies", "arm", "--relative-to", "torso",
                  "--sites", "hand", "--sensors", "gyro")  # fmt: skip
    by_id = run("plan", str(robot_xml), "--bodies", "2", "--relative-to", "1",
                "--sites", "1", "--sensors", "1")  # fmt: skip
    assert by_name.returncode == 0 and by_id.returncode == 0, by_id.stderr
    assert by_id.stdout == by_name.stdout
    assert "bodies: arm" in by_id.stdout
    # only ASCII digits are ids: "２" (fullwidth) selected body 2 as well
    for item in ("\uff12", "\u0662", "\U0001d7d0"):
        res = run("plan", str(robot_xml), "--bodies", item)
        assert res.returncode == 1, res.stdout
        assert f"bodies: unknown body name '{item}'" in res.stderr


def test_plan_all_posvel_on_a_model_without_such_sensors_says_so(tmp_path: Path):
    bare = tmp_path / "bare.xml"
    bare.write_text(
        "<mujoco><worldbody><body><freejoint/><geom size='.1'/></body></worldbody></mujoco>"
    )
    res = run("plan", str(bare), "--all-posvel")
    assert res.returncode != 0 and "Traceback" not in res.stderr
    assert (
        "mjrefresh plan: --all-posvel: the model has no position/velocity-stage sensor a refresh "
        "computes (0 refused); select --bodies or --sites" in res.stderr
    ), res.stderr


def test_plan_all_posvel_lists_refused_sensors(robot_xml: Path):
    res = run("plan", str(robot_xml), "--all-posvel")
    assert res.returncode == 0, res.stderr
    out = res.stdout
    # The fixed tendon's sensor is covered by the fast engine.
    assert out.startswith("engine: fast (auto: the fused kernels cover every selected output)")
    assert "  tendon: sensor 't_len' (tendonpos)" in out
    assert "refused (1 position/velocity-stage sensors not selected):" in out
    assert "  sensor 'limit' (user)\n" in out
    verbose = run("plan", str(robot_xml), "--all-posvel", "--verbose").stdout
    assert "sensor 'limit' (user) cannot be refreshed: user sensors are computed" in verbose


def test_plan_verbose_lists_every_output():
    compact = run("plan", "quadruped", "--all-posvel").stdout
    verbose = run("plan", "quadruped", "--all-posvel", "--verbose").stdout
    assert "and 32 more" in compact and "and 32 more" not in verbose
    assert "sensor 'com_linvel' (subtreelinvel)" in verbose
    assert len(verbose) > 3 * len(compact)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("plan", "no_such.xml", "--bodies", "a"),
            "MODEL: no file 'no_such.xml' (embedded models: quadruped, humanoid)",
        ),
        (
            ("plan", "quadruped", "--bodies", "bse"),
            "bodies: unknown body name 'bse'; did you mean 'base'?",
        ),
        (("plan", "quadruped"), "select something: --bodies, --sites, --sensors or --all-posvel"),
        (
            ("plan", "quadruped", "--sensors", "imu_acc"),
            "sensor 'imu_acc' (accelerometer) is an acceleration-stage sensor",
        ),
    ],
)
def test_plan_errors_are_one_line_without_traceback(args: tuple[str, ...], message: str):
    res = run(*args)
    assert res.returncode != 0
    assert message in res.stderr
    assert "Traceback" not in res.stderr


def test_bad_xml_names_the_compiler_error(tmp_path: Path):
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody><body><geom type='nope'/></body></worldbody></mujoco>")
    res = run("plan", str(bad), "--bodies", "world")
    assert res.returncode != 0 and "did not compile" in res.stderr and "Traceback" not in res.stderr
