"""Smoke test of the benchmark harness (mjrefresh.bench) through its repository
wrapper: python -m bench.micro --quick at its smallest setting.

Checks the JSON schema, that every contender that ran produced values equal
to mj_forward's (except mjbatch-uni, which is known to be wrong for some
sensors, so only its recorded verdict is checked for type), and that the
plot is a PNG. No timing assertions.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RUN = [sys.executable, "-m", "bench.micro"]
KNOWN_WRONG = {"mjbatch_uni"}  # wrong for some sensors; not asserted on
TOL = 1e-9
REPEATS = 2

RESULT_KEYS = {
    "model",
    "workload",
    "n",
    "threads",
    "threads_used",
    "contender",
    "multithreaded",
    "rows_per_call",
    "ranges",
    "wrong_sensors",
    "calls_per_sample",
    "samples_s",
    "median_s",
    "min_s",
    "max_s",
    "max_abs_error",
    "untouched_ok",
    "checked_rows",
    "correct",
    "us_per_row",
    "us_per_row_per_thread",
    "rows_per_s",
    "speedup_vs_python",
    "best_other",
    "speedup_vs_best_other",
    "parallel_efficiency",
}
ENV_KEYS = {
    "cpu_model",
    "logical_cpus",
    "usable_cpus",
    "python",
    "numpy",
    "mujoco",
    "mjbatch_uni",
    "thread_env",
}


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bench")
    json_path, png_path = tmp / "out.json", tmp / "out.png"
    cmd = [
        *RUN,
        "--quick",
        "--models",
        "quadruped",
        "--n",
        "64",
        "--threads",
        "1",
        "--repeats",
        str(REPEATS),
        "--warmup",
        "1",
        "--min-sample",
        "0",
        "--check-rows",
        "16",
        "--json",
        str(json_path),
        "--plot",
        str(png_path),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    return proc, json.loads(json_path.read_text()), png_path


def test_json_schema(bench_run):
    proc, data, _ = bench_run
    assert data["schema"] == "mjrefresh-bench/1"
    assert ENV_KEYS <= set(data["env"])
    assert data["config"]["n"] == [64] and data["config"]["threads"] == [1]
    assert set(data["workloads"]) == {"step", "reset"}
    assert isinstance(data["skipped"], list)
    results = data["results"]
    assert results, "no contender ran"
    ran = {r["contender"] for r in results}
    assert "python_loop" in ran
    for r in results:
        assert RESULT_KEYS <= set(r), RESULT_KEYS - set(r)
        assert r["model"] == "quadruped" and r["n"] == 64 and r["threads"] == 1
        assert len(r["samples_s"]) == REPEATS and all(s > 0 for s in r["samples_s"])
        assert r["min_s"] <= r["median_s"] <= r["max_s"]
        assert r["ranges"] == [[68, 328]]
        assert isinstance(r["correct"], bool)
        assert r["checked_rows"] > 0
        expected_rows = 64 if r["workload"] == "step" else 2
        assert r["rows_per_call"] == expected_rows
    for name in ran:  # the table lists every contender that ran
        assert name in proc.stdout


def test_contenders_correct(bench_run):
    _, data, _ = bench_run
    for r in data["results"]:
        if r["contender"] in KNOWN_WRONG:
            continue
        assert r["correct"], r
        assert r["max_abs_error"] <= TOL, r
        assert r["untouched_ok"] in (True, None), r


def test_plot_is_png(bench_run):
    pytest.importorskip("matplotlib")
    _, _, png = bench_run
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_wrong_contender_is_flagged():
    """A contender that skips a stage must show a large error, not pass."""
    import mujoco

    from mjrefresh.bench import contenders, measure
    from mjrefresh.bench.workloads import dirty_mask, make_problem, reference, sample_rows

    class NoComVel(contenders.PythonLoop):
        def prepare(self, mask):
            original = mujoco.mj_comVel
            mujoco.mj_comVel = lambda m, d: None
            try:
                return super().prepare(mask)
            finally:
                mujoco.mj_comVel = original

    problem = make_problem("quadruped", 16)
    mask = dirty_mask(16, "step")
    rows = sample_rows(mask, 8)
    c = NoComVel(problem, 1)
    c.poison()
    c.prepare(mask)()
    result = measure.check(c, mask, rows, reference(problem, rows))
    assert result["max_abs_error"] > 1e-3
    assert result["untouched_ok"] is True


def test_posvel_columns(tmp_path):
    """Every pos/vel-stage column: the correct contenders stay correct, and a
    contender's wrong sensors are named (the per-row Python loop and mjbatch-uni
    read stale subtree velocities, so they are not asserted on)."""
    json_path = tmp_path / "posvel.json"
    cmd = [
        *RUN,
        "--quick",
        "--models",
        "quadruped",
        "--n",
        "16",
        "--threads",
        "1",
        "--repeats",
        "1",
        "--warmup",
        "0",
        "--min-sample",
        "0",
        "--columns",
        "posvel",
        "--json",
        str(json_path),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(json_path.read_text())
    assert data["config"]["columns"] == "posvel"
    for r in data["results"]:
        assert len(r["ranges"]) > 1 and r["ranges"][-1][0] <= 68 and r["ranges"][-1][1] == 328
        if not r["correct"]:
            assert r["wrong_sensors"] and f"WRONG: {r['contender']}" in proc.stdout
        if r["contender"] not in KNOWN_WRONG | {"python_loop"}:
            assert r["correct"], r


def test_model_fields_tool_prints_its_memory_floor():
    """bench.research.model_fields at its smallest setting: every engine row,
    the two memory-traffic rows and, per engine, the lines putting per-env /
    template next to its memory floor and its arithmetic floor (no timing
    assertions)."""
    cmd = [sys.executable, "-m", "bench.research.model_fields", "--n", "32", "--threads", "1"]
    cmd += ["--repeats", "1", "--min-sample", "0"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    rows = {tuple(line.split()[:3]) for line in proc.stdout.splitlines()}
    for engine in ("exact", "fast"):
        for config in ("template", "perturbed", "per-env", "one-block", "packed", "floor"):
            assert (engine, "1", config) in rows, proc.stdout
        assert f"{engine} T=1: per-env / template" in proc.stdout
    assert ("memory", "1", "template") in rows and ("memory", "1", "per-env") in rows
    assert "(memory per-env / memory template)" in proc.stdout
    # the ratios per interleaved round: median (min-max)
    assert re.search(
        r"fast T=1: per-env / template [\d.]+, per round [\d.]+ \([\d.]+-[\d.]+\)", proc.stdout
    )
    # and the ratio's arithmetic floor: the perturbed model against the template
    assert re.search(
        r"fast T=1: arithmetic floor perturbed / template [\d.]+, per round [\d.]+ \([\d.]+-[\d.]+\)",
        proc.stdout,
    )


@pytest.mark.parametrize("config", ["template", "perturbed", "per-env", "one-block"])
def test_instructions_tool_runs_each_model_fields_config(config):
    """The program bench.research.instructions --fields counts under callgrind
    refreshes every configuration (callgrind itself is not run here)."""
    from bench.research.instructions import run_calls

    run_calls(config, "fast", 8, 2)
