"""``mjrefresh bench`` and ``python -m bench.micro``: bad options are one-line
errors found before the run, repeated values are measured once, and the
small command-line cases (MJB in upper case, a directory as MODEL, a closed
stdout pipe). Run in process where nothing is measured, to stay fast."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import mujoco
import pytest

from bench.micro import cli as micro
from mjrefresh import cli
from mjrefresh.bench.cli import finish_options
from mjrefresh.model_args import load_model

XML = """
<mujoco>
  <worldbody>
    <body name="torso" pos="0 0 1"><freejoint/><geom size=".1"/><site name="imu"/>
      <body name="leg" pos="0 0 -.2"><joint name="hip" axis="0 1 0"/><geom size=".05"/>
        <site name="foot"/></body>
    </body>
  </worldbody>
  <sensor><gyro name="gyro" site="imu"/><jointpos name="hip_pos" joint="hip"/></sensor>
</mujoco>
"""
USER_SENSOR = """
<mujoco><worldbody><body name="b"><freejoint/><geom size=".1"/></body></worldbody>
<sensor><user name="u" dim="2" needstage="pos" datatype="real"/></sensor></mujoco>
"""
SMALL = ["--n", "16", "--threads", "1", "--repeats", "1", "--warmup", "0", "--min-sample", "0"]


@pytest.fixture
def robot(tmp_path: Path) -> str:
    path = tmp_path / "robot.xml"
    path.write_text(XML)
    return str(path)


def exits(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int | str | None, str]:
    """The SystemExit code of ``mjrefresh argv`` and its stderr."""
    with pytest.raises(SystemExit) as exc:
        cli.main(list(argv))
    return exc.value.code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--min-sample", "nan"], "--min-sample must be finite seconds >= 0 (0: one call per "),
        (["--min-sample", "inf"], "--min-sample must be finite seconds >= 0 (0: one call"),
        (["--min-sample", "-1"], "--min-sample must be finite seconds >= 0 (0: one call"),
        (["--warmup", "-1"], "--warmup must be >= 0 untimed calls, got -1"),
        (["--seed", "-1"], "--seed must be >= 0, got -1"),
        (["--json", ""], "--json: '.' is a directory; give a writable file path such as out.json"),
        (["--json", "/proc/x.json"], "--json: cannot write '/proc/x.json': "),
        (["--plot", "."], "--plot: '.' is a directory; give a writable file path such as out.png"),
        (["--models", "quadruped"], "--models runs embedded models without MODEL, got MODEL"),
        (
            ["--models", "quadruped", "humanoid"],  # = the default list: was silently ignored
            "give either MODEL or --models, not both",
        ),
        (["--columns", "posvel"], "--columns posvel applies to an embedded model without a"),
    ],
)
def test_bad_options_are_option_errors(capsys, robot, args, message):
    code, err = exits(capsys, "bench", robot, *args)
    assert code == 2 and message in err, err


def test_json_into_a_directory_is_refused_before_the_run(capsys, tmp_path):
    code, err = exits(capsys, "bench", "quadruped", "--json", str(tmp_path))
    assert code == 2 and f"--json: '{tmp_path}' is a directory" in err, err


def test_columns_with_a_selection_on_an_embedded_model_is_refused(capsys):
    code, err = exits(capsys, "bench", "quadruped", "--bodies", "base", "--columns", "posvel")
    assert code == 2 and "got MODEL 'quadruped' with a selection" in err, err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bodies", "torso", "torso"], "--bodies: body 'torso' is listed twice; list each once"),
        (["--bodies", "torso", "1"], "--bodies: body '1' is listed twice (as 'torso' and '1')"),
        (["--sites", "foot", "foot"], "--sites: site 'foot' is listed twice; list each once"),
    ],
)
def test_a_repeated_body_or_site_is_an_error_before_the_run(capsys, robot, args, message):
    code, _ = exits(capsys, "bench", robot, *args, *SMALL)
    assert isinstance(code, str) and code.startswith(f"mjrefresh bench: {message}"), code


def test_repeated_values_are_measured_once():
    parser = cli._parser()
    argv = ["bench", "--n", "16", "16", "32", "--workloads", "step", "step"]
    argv += ["--models", "quadruped", "quadruped", "--contenders", "python_loop", "python_loop"]
    args = parser.parse_args(argv)
    args = finish_options(args, args.parser)
    assert args.n == [16, 32] and args.workloads == ["step"]
    assert args.models == ["quadruped"] and args.contenders == ["python_loop"]


@pytest.mark.skipif(
    bool(os.environ.get("MJREFRESH_UNDER_ASAN")),
    reason="AddressSanitizer's allocator aborts the process on a 1.4 TiB request (by design); "
    "the plain build runs this test",
)
def test_an_n_too_large_for_memory_names_n(capsys):
    code, _ = exits(capsys, "bench", "quadruped", "--n", "10000000000", "--threads", "1")
    assert isinstance(code, str) and code.startswith(
        "mjrefresh bench: --n 10000000000: the quadruped states do not fit in memory ("
    ), code
    assert code.endswith("); give a smaller --n"), code


def test_only_refused_sensors_are_named_with_the_reason(capsys, tmp_path):
    (tmp_path / "u.xml").write_text(USER_SENSOR)
    code, _ = exits(capsys, "bench", str(tmp_path / "u.xml"))
    assert isinstance(code, str), code
    assert "a refresh refuses its 1 position/velocity-stage sensor (sensor 'u' (user) cannot " in (
        code
    )
    assert code.endswith("; select --bodies or --sites"), code


def test_nothing_measured_is_said_and_fails(capsys, robot):
    # stage_loop_cpp takes one column range; the robot's selection has two
    status = cli.main(["bench", robot, "--bodies", "leg", "--sensors", "gyro", *SMALL,
                       "--workloads", "step", "--contenders", "stage_loop_cpp"])  # fmt: skip
    out = capsys.readouterr().out
    assert status == 1
    assert out.strip().splitlines()[-1] == (
        "nothing was measured: every chosen contender was skipped (reasons above)"
    )
    assert "contender" not in out.splitlines()[0]  # no empty table


def test_upper_case_mjb_and_a_directory_as_model(tmp_path):
    model = mujoco.MjModel.from_xml_string(XML)
    mujoco.mj_saveModel(model, str(tmp_path / "ROBOT.MJB"), None)
    assert load_model(str(tmp_path / "ROBOT.MJB")).nbody == model.nbody
    with pytest.raises(SystemExit, match=r"MODEL: '.*' is a directory; give an MJCF \(\.xml\)"):
        load_model(str(tmp_path))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seed", "-1"], "--seed must be >= 0, got -1"),
        (["--min-sample", "nan"], "--min-sample must be finite seconds >= 0"),
    ],
)
def test_micro_bad_numbers_are_option_errors(capsys, args, message):
    with pytest.raises(SystemExit) as exc:
        micro.parse_args(args)
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_micro_readme_without_markers_is_refused_before_the_run(capsys, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# no markers\n")
    for path, message in (
        (readme, f"--readme: '{readme}' has no section marked <!-- results:mujoco-"),
        (tmp_path / "missing.md", f"--readme: cannot rewrite '{tmp_path / 'missing.md'}'"),
    ):
        with pytest.raises(SystemExit) as exc:
            micro.parse_args(["--readme", str(path)])
        err = capsys.readouterr().err
        assert exc.value.code == 2 and message in err, err
    assert readme.read_text() == "# no markers\n"


def run_to(stdout: Any, argv: list[str]) -> subprocess.CompletedProcess[str]:
    """``python -m mjrefresh argv`` with its stdout on `stdout` (a file or fd)."""
    return subprocess.run(
        [sys.executable, "-m", "mjrefresh", *argv],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("argv", [["info"], ["plan", "quadruped", "--all-posvel", "-v"]])
def test_a_closed_stdout_pipe_ends_quietly(argv):
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written
    try:
        proc = run_to(write, argv)
    finally:
        os.close(write)
    assert proc.returncode == 1 and proc.stderr == "", proc.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("argv", [["info"], ["plan", "quadruped", "--all-posvel", "-v"]])
def test_an_unwritable_stdout_is_one_line_not_a_traceback(argv):
    with open("/dev/full", "w") as full:
        proc = run_to(full, argv)
    assert proc.returncode == 1
    assert proc.stderr == "mjrefresh: cannot write the output: No space left on device\n"


def test_a_fifo_or_device_is_refused_as_model_and_json_without_blocking(capsys, tmp_path):
    # open() of a FIFO without a reader blocked forever; /dev/full ran the
    # whole benchmark and then ended in a traceback at the write.
    fifo = tmp_path / "model.xml"
    os.mkfifo(fifo)
    with pytest.raises(SystemExit, match=r"MODEL: '.*model\.xml' is not a regular file"):
        load_model(str(fifo))
    for path in (str(fifo), "/dev/full"):
        code, err = exits(capsys, "bench", "quadruped", "--json", path)
        assert code == 2 and f"--json: '{path}' is not a regular file (a device or a FIFO)" in err
