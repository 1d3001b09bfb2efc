"""``python -m bench.collector``: option errors and a crashing measurement
process (run in process, with the worker replaced by one that fails)."""

from __future__ import annotations

import sys

import pytest

from bench.collector import backends
from bench.collector import cli as collector

FAST = ["--tasks", "quadruped-walk", "--n", "16", "--procs", "1", "--steps", "1"]
FAST += ["--warmup", "0", "--preroll", "0", "--check-steps", "1", "--threads", "1"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--check-steps", "0"], "--check-steps must be at least 1 (the variants are compared"),
        (["--tol", "nan"], "--tol must be a max deviation >= 0, got nan"),
        (["--tol", "-1"], "--tol must be a max deviation >= 0, got -1.0"),
        (["--seed", "-1"], "--seed must be >= 0, got -1"),
        (["--check-rows", "0"], "--check-rows must be at least 1, got 0"),
    ],
)
def test_bad_numbers_are_option_errors(capsys, args, message):
    with pytest.raises(SystemExit) as exc:
        collector.parse_args([*FAST, *args])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_a_crashing_worker_fails_the_run(monkeypatch, capsys):
    # An installed backend whose measurement process dies used to be
    # "skipped ..." under an empty table, exit status 0.
    monkeypatch.setattr(backends, "availability", lambda: dict.fromkeys(backends.BY_NAME))
    monkeypatch.setattr(
        collector,
        "worker_command",
        lambda *a: [sys.executable, "-c", "raise SystemExit(1)"],
    )
    status = collector.main([*FAST, "--backends", "mjbatch-uni"])
    out = capsys.readouterr().out
    assert status == 1
    assert (
        "FAILED mjbatch-uni (quadruped-walk N=16 process 0): worker exited with status 1" in out
    ), out
    assert "skipped mjbatch-uni" not in out


def test_a_backend_not_installed_is_skipped(monkeypatch, capsys):
    monkeypatch.setattr(
        backends, "availability", lambda: dict.fromkeys(backends.BY_NAME, "not installed here")
    )
    status = collector.main([*FAST, "--backends", "mjbatch-uni"])
    out = capsys.readouterr().out
    assert status == 0
    assert "skipped mjbatch-uni: not installed here" in out and "FAILED" not in out


def test_readme_and_json_are_checked_before_the_run(capsys, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# no markers\n")
    for args, message in (
        (["--readme", str(readme)], "has no section marked <!-- results:collector-mujoco-"),
        (["--json", str(tmp_path)], f"--json: '{tmp_path}' is a directory; give a writable"),
    ):
        with pytest.raises(SystemExit) as exc:
            collector.parse_args([*FAST, *args])
        err = capsys.readouterr().err
        assert exc.value.code == 2 and message in err, err
