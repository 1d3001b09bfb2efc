"""``mjrefresh bench`` on models an engine or the reference treat specially:
sensors the fast engine does not cover, models that disable sensors, and a
model whose reference ``mj_forward`` fails (a user's MJCF written at test
time, run as a user runs it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import mujoco
import numpy as np

from mjrefresh.bench import measure
from mjrefresh.bench.selection import _with_frame_sensors

SMALL = ["--n", "16", "--threads", "1", "--repeats", "1", "--warmup", "0", "--min-sample", "0"]
SMALL += ["--workloads", "step"]
ENGINES = ["--contenders", "mjrefresh_exact", "mjrefresh_fast", "python_loop"]

RANGEFINDER = """
<mujoco>
  <worldbody><geom type="plane" size="2 2 .1"/>
    <body name="b" pos="0 0 1"><joint name="j" axis="1 0 0"/><geom size=".05"/>
      <site name="s" zaxis="0 0 -1"/></body>
  </worldbody>
  <sensor><rangefinder name="rf" site="s"/><jointpos name="jp" joint="j"/></sensor>
</mujoco>
"""

NO_SENSORS = """
<mujoco><option><flag sensor="disable"/></option>
  <worldbody>
    <body name="torso" pos="0 0 1"><freejoint/><geom type="box" size=".1 .1 .1"/>
      <site name="imu" pos="0 0 .05"/>
      <body name="leg" pos="0 0 -.2"><joint name="hip" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -.3" size=".03"/><site name="foot" pos="0 0 -.3"/>
      </body>
    </body>
  </worldbody>
  <sensor><gyro name="gyro" site="imu"/><jointpos name="hip_pos" joint="hip"/></sensor>
</mujoco>
"""


def bench(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "mjrefresh", "bench", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=cwd)


def test_fast_engine_refusing_a_sensor_is_skipped_not_failed(tmp_path: Path):
    # Refresher(engine='fast') refuses a rangefinder by design: the bench
    # says so and measures the rest (it was "FAILED mjrefresh_fast", exit 1).
    (tmp_path / "rf.xml").write_text(RANGEFINDER)
    proc = bench(tmp_path, "rf.xml", *SMALL, *ENGINES)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "FAILED" not in proc.stdout and "WRONG" not in proc.stdout
    assert (
        "skipped mjrefresh_fast (rf N=16 T=1 step): the fast engine does not cover this "
        "selection: sensor 'rf' (rangefinder)" in proc.stdout
    ), proc.stdout
    head = proc.stdout.strip().splitlines()[-1]
    assert head.startswith("rf, step, N=16: exact engine ") and head.endswith(
        "all outputs match mj_forward"
    ), head


def test_bodies_of_a_model_that_disables_sensors_are_checked_right(tmp_path: Path):
    # mj_forward leaves the appended frame sensors 0 when the model disables
    # sensors; the engines' poses were flagged WRONG against those zeros.
    (tmp_path / "m.xml").write_text(NO_SENSORS)
    proc = bench(tmp_path, "m.xml", "--bodies", "torso", "--sites", "foot", *SMALL, *ENGINES)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WRONG" not in proc.stdout and "FAILED" not in proc.stdout, proc.stdout
    assert "skipped python_loop (m N=16 T=1 step): the model disables sensors" in proc.stdout, (
        proc.stdout
    )
    head = proc.stdout.strip().splitlines()[-1]
    assert "fast engine" in head and "exact engine" in head, head
    assert head.endswith("all outputs match mj_forward"), head


def test_user_sensors_of_a_model_that_disables_sensors_keep_their_reference(tmp_path: Path):
    (tmp_path / "m.xml").write_text(NO_SENSORS)
    proc = bench(tmp_path, "m.xml", "--bodies", "torso", "--sensors", "gyro", *SMALL, *ENGINES)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WRONG" not in proc.stdout and "FAILED" not in proc.stdout, proc.stdout


def test_wrong_appended_columns_are_named_by_their_body_or_site(tmp_path: Path):
    path = tmp_path / "m.xml"
    path.write_text(NO_SENSORS)
    model = _with_frame_sensors(str(path), ["torso"], ["foot"])
    first = 3 + 1  # gyro and hip_pos, then the appended block
    body_linvel, site_zaxis = first + 3 + 4, first + 13 + 3 + 6
    names = measure._sensor_names(model, np.array([body_linvel, site_zaxis]), np.ones(2))
    assert names == {"body torso framelinvel": 1.0, "site foot framezaxis": 1.0}
    assert mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, "gyro") == 0


def _crowded(memory: str) -> str:
    """Touching spheres on a plane in an arena too small for their contacts."""
    bodies = "".join(
        f'<body name="b{i}" pos="{0.05 * (i % 10)} {0.05 * (i // 10)} 0.02">'
        '<freejoint/><geom size=".04"/></body>'
        for i in range(60)
    )
    return (
        f'<mujoco><size memory="{memory}"/><worldbody><geom type="plane" size="5 5 .1"/>'
        f'{bodies}</worldbody><sensor><framepos name="p0" objtype="body" objname="b0"/>'
        "</sensor></mujoco>"
    )


def test_a_reference_mj_forward_that_fails_is_one_line(tmp_path: Path):
    (tmp_path / "tight.xml").write_text(_crowded("40K"))
    proc = bench(tmp_path, "tight.xml", *SMALL, *ENGINES)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "mjrefresh bench: tight N=16 step: the mj_forward reference failed at row 0 "
        "(a random state): mj_stackAlloc: out of memory"
    ), last
    assert last.endswith("; raise <size memory=...> in the MJCF"), last
