"""``mjrefresh bench`` on a user's robot: a small MJCF written at test time.

Runs the installed command line (``python -m mjrefresh bench robot.xml
--bodies ...``) and checks the table, its legend and headline, that every
contender installed here ran and matched mj_forward, the JSON record and the
PNG signature. No timing assertions.
"""

import json
import re
import subprocess
import sys

import pytest

from mjrefresh.bench import report

ROBOT = """
<mujoco model="robot">
  <worldbody>
    <body name="base" pos="0 0 1">
      <freejoint/>
      <geom type="box" size="0.2 0.1 0.05" mass="5"/>
      <site name="imu"/>
      <body name="a" pos="0.2 0 0">
        <joint name="ja" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.03" mass="1"/>
        <body name="b" pos="0.2 0 0">
          <joint name="jb" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.03" mass="1"/>
          <site name="tip" pos="0.2 0 0"/>
        </body>
      </body>
      <body name="c" pos="-0.2 0 0">
        <joint name="jc" axis="1 0 0"/>
        <geom type="capsule" fromto="0 0 0 -0.2 0 0" size="0.03" mass="1"/>
      </body>
    </body>
  </worldbody>
  <sensor>
    <framepos name="tip_pos" objtype="site" objname="tip"/>
    <gyro name="gyro" site="imu"/>
    <jointpos name="ja_pos" joint="ja"/>
    <jointvel name="jb_vel" joint="jb"/>
    <accelerometer name="acc" site="imu"/>
  </sensor>
</mujoco>
"""
SMALL = ["--n", "64", "--threads", "1", "--repeats", "2", "--warmup", "1", "--min-sample", "0"]
INTERNAL = {"stage_loop_cpp"}  # shown only with --verbose
TOL = 1e-9


def bench(*args: str, cwd=None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "mjrefresh", "bench", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=cwd)


@pytest.fixture(scope="module")
def robot_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("robot")
    (tmp / "robot.xml").write_text(ROBOT)
    args = ["robot.xml", "--bodies", "a", "b", "--sites", "tip", "--sensors", "tip_pos", "gyro"]
    args += ["ja_pos", "--quick", *SMALL, "--json", "out.json", "--plot", "out.png"]
    proc = bench(*args, cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    return proc, json.loads((tmp / "out.json").read_text()), tmp / "out.png"


def test_table_legend_and_headline(robot_run):
    proc, data, _ = robot_run
    out = proc.stdout
    assert re.search(
        r"^model +work +N +T +contender +µs/row +\(min-max\) +x py +max\|err\| +ok$", out, re.M
    )
    for column in ("work", "µs/row", "(min-max)", "x py", "max|err|", "ok"):
        assert re.search(rf"^{re.escape(column)} +\S", out, re.M), column
    assert "exact engine overhead over the MuJoCo stage functions it runs" in out
    last = out.strip().splitlines()[-1]
    assert re.fullmatch(
        r"robot, step, N=64: fast engine [\d.]+ µs/row at 1 thread \([\d.]+x the per-env Python loop\); "
        r"exact engine [\d.]+ µs/row at 1 thread \([\d.]+x\); all outputs match mj_forward",
        last,
    ), last
    assert data["headline"] == [last]
    for name in INTERNAL:
        assert name not in out


def test_every_installed_contender_ran_and_is_correct(robot_run):
    proc, data, _ = robot_run
    ran = {r["contender"] for r in data["results"]}
    installed = {name for name, why in data["available"].items() if why is None} - INTERNAL
    assert installed == ran, (installed, ran, data["skipped"])
    assert {"python_loop", "mjrefresh_exact", "mjrefresh_fast"} <= ran
    for r in data["results"]:
        assert r["correct"], r
        assert r["max_abs_error"] <= TOL, r
        assert r["untouched_ok"] in (True, None), r
        assert f" {r['contender']} " in proc.stdout


def test_json_record(robot_run):
    _, data, _ = robot_run
    assert data["schema"] == "mjrefresh-bench/1"
    assert {"cpu_model", "usable_cpus", "mujoco", "loadavg_at_start", "busy_warning"} <= set(
        data["env"]
    )
    config = data["config"]
    assert config["model"] == "robot.xml" and config["bodies"] == ["a", "b"]
    assert config["sites"] == ["tip"] and config["sensors"] == ["tip_pos", "gyro", "ja_pos"]
    assert config["n"] == [64] and config["threads"] == [1] and config["quick"] is True
    assert data["selection"] == {
        "robot": "2 bodies (world pose and velocity), 1 site (world pose), 7 sensordata columns"
    }
    # the user's 7 columns, then 13 per body and 12 per site appended after its 11
    expected_ranges = [[0, 7], [11, 11 + 2 * 13 + 12]]
    for r in data["results"]:
        assert r["model"] == "robot" and r["n"] == 64 and r["threads"] == 1
        assert r["ranges"] == expected_ranges
        assert r["rows_per_call"] == (64 if r["workload"] == "step" else 2)
        assert len(r["samples_s"]) == 2 and r["min_s"] <= r["median_s"] <= r["max_s"]
        assert r["checked_rows"] > 0 and isinstance(r["us_per_row"], float)


def test_plot_is_png(robot_run):
    pytest.importorskip("matplotlib")
    _, _, png = robot_run
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_embedded_model_verbose():
    """An embedded model by name with --verbose: every column and the internal C++ loop."""
    proc = bench(
        "quadruped",
        "--workloads",
        "step",
        "--verbose",
        *SMALL[:4],
        "--repeats",
        "1",
        "--min-sample",
        "0",
    )
    assert proc.returncode == 0, proc.stderr
    assert "ms/call" in proc.stdout and "x best other" in proc.stdout
    assert "stage_loop_cpp" in proc.stdout
    assert proc.stdout.strip().splitlines()[-1].startswith("quadruped, step, N=64: fast engine ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bodies", "nosuch"], "--bodies: no body 'nosuch' in the model"),
        (["--sensors", "acc"], "--sensors: sensor 'acc' (accelerometer)"),
        (["--sites", "99"], "--sites: no site '99' in the model (it has 2"),
    ],
)
def test_bad_selection_is_named(tmp_path, args, message):
    (tmp_path / "robot.xml").write_text(ROBOT)
    proc = bench("robot.xml", *args, cwd=tmp_path)
    assert proc.returncode != 0
    assert message in proc.stderr, proc.stderr


def test_selection_needs_a_model():
    proc = bench("--bodies", "a")
    assert proc.returncode != 0 and "need a MODEL" in proc.stderr


def _result(contender: str, median: float, spread: float = 1.0, correct: bool = True) -> dict:
    return {
        "model": "robot",
        "workload": "step",
        "n": 64,
        "threads": 1,
        "threads_used": 1,
        "contender": contender,
        "multithreaded": contender != "python_loop",
        "rows_per_call": 64,
        "median_s": median,
        "min_s": median,
        "max_s": median * spread,
        "correct": correct,
    }


def test_busy_warning():
    quiet = {"usable_cpus": 2, "loadavg_at_start": [0.5, 0, 0], "loadavg_at_end": [1.0, 0, 0]}
    busy = {**quiet, "loadavg_at_end": [3.5, 0, 0]}
    steady = [_result("python_loop", 1e-3), _result("mjrefresh_fast", 1e-4, spread=1.2)]
    noisy = [_result("python_loop", 1e-3), _result("mjrefresh_fast", 1e-4, spread=2.0)]
    assert report.busy_warning(steady, quiet) is None
    assert "load average 3.5 above the 2 usable CPUs" in report.busy_warning(steady, busy)
    assert "spread up to 2.0x max/min (mjrefresh_fast" in report.busy_warning(noisy, quiet)


def test_headline_names_wrong_contenders():
    results = [_result("python_loop", 1e-3), _result("mjbatch_uni", 5e-4, correct=False)]
    report.derive(results)
    (line,) = report.headline(results)
    assert line.endswith("WRONG (differ from mj_forward): mjbatch_uni")
    assert line.startswith("robot, step, N=64: fastest mjbatch_uni 7.81 µs/row")


MOCAP_CLOCK = """
<mujoco>
  <worldbody>
    <body name="a"><freejoint/><geom size=".1"/><site name="s"/></body>
    <body name="target" mocap="true" pos="0.3 0.2 0.1" quat="0.8 0.6 0 0">
      <geom size=".1" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
  <sensor><gyro site="s"/><clock/><framepos objtype="body" objname="target"/></sensor>
</mujoco>
"""


def test_models_with_mocap_bodies_and_a_clock_are_measured(tmp_path):
    # The engines get the state every other contender has: the model's mocap
    # poses and time 0 (they used to fail for want of them, exit status 0).
    (tmp_path / "m.xml").write_text(MOCAP_CLOCK)
    engines = ["mjrefresh_fast", "mjrefresh_exact", "python_loop"]
    proc = bench(
        "m.xml", "--all-posvel", "--bodies", "a", "target", *SMALL, "--contenders", *engines,
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "FAILED" not in proc.stdout and "WRONG" not in proc.stdout
    head = proc.stdout.strip().splitlines()[-1]
    assert head.startswith("m, step, N=64: fast engine ") and "exact engine" in head, head
    assert head.endswith("all outputs match mj_forward"), head


def test_an_engine_that_raises_fails_the_run():
    proc = bench("quadruped", *SMALL[:2], "--threads", "5000", "--contenders", "mjrefresh_fast")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert (
        "FAILED mjrefresh_fast (quadruped N=64 T=5000 step): ValueError: num_threads: expected "
        "at most 4096, got 5000" in proc.stdout
    ), proc.stdout
    assert proc.stdout.strip().splitlines()[-1] == (
        "quadruped: FAILED: mjrefresh_fast (nothing was measured)"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--check-rows", "1"], "--check-rows must be at least 2 (the first and last"),
        (["--tol", "-1"], "--tol must be a max abs error >= 0, got -1.0"),
        (["--tol", "nan"], "--tol must be a max abs error >= 0, got nan"),
        (["--repeats", "0"], "--n, --threads and --repeats must be positive"),
    ],
)
def test_bad_numbers_are_option_errors(args, message):
    proc = bench("quadruped", *args)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr


def test_headline_names_failed_contenders():
    results = [_result("python_loop", 1e-3), _result("mjrefresh_fast", 1e-4)]
    report.derive(results)
    failed = [{"contender": "mjrefresh_exact", "model": "robot", "failed": True}]
    (line,) = report.headline(results, failed)
    assert line.endswith("all outputs match mj_forward; FAILED: mjrefresh_exact"), line
