"""Smoke test of the collector benchmark: python -m bench.collector --quick at its smallest setting.

Runs one process per cell on every installed physics backend, checks the JSON
schema, that the correct variants agree with each other and with mj_forward
(on sampled rows, after steps and after resets), and that the stale variant's
deviation is reported. A backend that is not installed is skipped with the
reason. No timing assertions.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
COLLECTOR = [sys.executable, "-m", "bench.collector"]
TOL = 1e-9
N = 32
STEPS = 3
TASKS = {"quadruped-walk", "humanoid-walk", "humanoid-track"}
PHASES = {"physics", "update_state", "reset", "replay", "other", "total"}

RESULT_KEYS = {
    "backend",
    "task",
    "n",
    "variant",
    "correct_by_design",
    "processes",
    "transitions_per_s_samples",
    "transitions_per_s",
    "vs_loop",
    "of_stale",
    "update_removed",
    "in_situ_over_warm",
    "phase_ms",
    "refresh_ms",
    "reset_rows_per_window",
    "steps",
    "max_dev_vs_forward",
    "max_dev_update",
    "max_dev_reset",
    "term_mismatch",
    "checked_rows",
    "checked_reset_rows",
    "max_dev_vs_peers",
}
CHECK_KEYS = {
    "backend",
    "task",
    "n",
    "correct_variants",
    "max_dev_vs_forward",
    "max_dev_between_correct",
    "term_mismatch",
    "reset_rows_agree",
    "agree",
    "stale_dev_vs_forward",
    "stale_dev_update",
    "stale_term_mismatch",
    "stale_dev_vs_peers",
}
PROCESS_KEYS = {
    "backend",
    "task",
    "n",
    "threads_used",
    "order",
    "obs_dim",
    "tracked_columns",
    "preroll_reset_rows",
    "variants",
    "skipped",
    "process",
}


def _backend_available(name: str) -> str | None:
    from bench.collector import backends

    return backends.BY_NAME[name].unavailable()


def _run(backend: str, tmp: Path) -> tuple[subprocess.CompletedProcess, dict]:
    json_path = tmp / f"{backend}.json"
    cmd = [
        *COLLECTOR,
        "--quick",
        "--backends",
        backend,
        "--n",
        str(N),
        "--procs",
        "1",
        "--preroll",
        "40",
        "--warmup",
        "1",
        "--steps",
        str(STEPS),
        "--check-steps",
        "2",
        "--check-rows",
        "8",
        "--threads",
        "1",
        "--json",
        str(json_path),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc, json.loads(json_path.read_text())


@pytest.fixture(scope="module", params=["mjbatch-uni", "mujoco.batch"])
def collector_run(request, tmp_path_factory):
    reason = _backend_available(request.param)
    if reason is not None:
        pytest.skip(f"{request.param}: {reason}")
    proc, data = _run(request.param, tmp_path_factory.mktemp("collector"))
    return request.param, proc, data


def test_json_schema(collector_run):
    backend, proc, data = collector_run
    assert data["schema"] == "mjrefresh-collector/1"
    assert {"cpu_model", "usable_cpus", "mujoco", "mjbatch_uni", "mjrefresh"} <= set(data["env"])
    assert data["config"]["n"] == [N] and data["config"]["procs"] == 1
    assert set(data["tasks"]) == TASKS
    assert {
        "stale",
        "traffic-floor",
        "loop",
        "native-ranges",
        "mjrefresh-exact",
        "mjrefresh-fast",
    } == set(data["variants"])
    assert isinstance(data["skipped"], list)
    assert len(data["processes"]) == len(TASKS)
    for p in data["processes"]:
        assert PROCESS_KEYS <= set(p), PROCESS_KEYS - set(p)
        assert p["backend"] == backend and p["n"] == N
    results = data["results"]
    ran = {r["variant"] for r in results}
    assert {"stale", "loop", "native-ranges", "mjrefresh-exact"} <= ran
    for r in results:
        assert RESULT_KEYS <= set(r), RESULT_KEYS - set(r)
        assert r["backend"] == backend and r["n"] == N and r["task"] in TASKS
        assert r["steps"] == STEPS and r["processes"] == 1
        t = r["transitions_per_s"]
        assert t["min"] <= t["median"] <= t["max"] and t["median"] > 0
        assert PHASES <= set(r["phase_ms"]) and all(
            r["phase_ms"][k] >= 0 for k in PHASES - {"other"}
        )
        assert r["refresh_ms"]["update"] >= 0 and r["refresh_ms"]["reset"] >= 0
        assert r["checked_rows"] > 0
        assert r["reset_rows_per_window"]["median"] >= 0
        if r["variant"] != "loop" and r["variant"] != "stale":
            assert r["vs_loop"] is not None and r["of_stale"] is not None
    # the table lists every variant that ran, and the skipped ones are named with a reason
    for name in ran:
        assert name in proc.stdout
    for s in data["skipped"]:
        assert s["reason"]
    if "mjrefresh-fast" not in ran:
        assert any(s.get("variant") == "mjrefresh-fast" for s in data["skipped"])
        assert "skipped mjrefresh-fast" in proc.stdout


def test_correct_variants_agree(collector_run):
    _, proc, data = collector_run
    assert len(data["checks"]) == len(TASKS)
    for c in data["checks"]:
        assert CHECK_KEYS <= set(c), CHECK_KEYS - set(c)
        assert c["agree"], c
        assert c["max_dev_vs_forward"] <= TOL
        assert c["max_dev_between_correct"] <= TOL
        assert c["term_mismatch"] == 0 and c["reset_rows_agree"]
        assert {"loop", "native-ranges", "mjrefresh-exact"} <= set(c["correct_variants"])
        assert f"AGREE: {c['backend']} {c['task']}" in proc.stdout
    for r in data["results"]:
        if r["correct_by_design"]:
            assert r["max_dev_vs_forward"] <= TOL, r
            assert r["max_dev_vs_peers"] is not None and r["max_dev_vs_peers"] <= TOL, r
    # the reset path (rows written, brought current, observations recomputed) was checked
    resetting = [r for r in data["results"] if r["task"] != "quadruped-walk"]
    assert any(r["checked_reset_rows"] > 0 for r in resetting)
    assert all(
        r["reset_rows_per_window"]["median"] == 0
        for r in data["results"]
        if r["task"] == "quadruped-walk"
    )


def test_stale_deviation_reported(collector_run):
    _, proc, data = collector_run
    for c in data["checks"]:
        # one substep behind: visibly wrong, and the deviation is printed
        assert c["stale_dev_vs_forward"] is not None and c["stale_dev_vs_forward"] > 1e-3
        assert f"STALE: {c['backend']} {c['task']} N={N}: stale deviates" in proc.stdout
    stale = [r for r in data["results"] if r["variant"] == "stale"]
    assert stale and all(not r["correct_by_design"] for r in stale)


def test_warm_repeat_reported(collector_run):
    # every variant that refreshes after a step times the same refresh again at
    # once (warm) and reports in situ / warm; stale refreshes nothing after a step
    _, proc, data = collector_run
    for r in data["results"]:
        ratio = r["in_situ_over_warm"]
        if r["variant"] == "stale":
            assert r["refresh_ms"]["warm"] == 0 and ratio is None, r
            continue
        assert r["refresh_ms"]["warm"] > 0, r
        assert 0 < ratio["min"] <= ratio["median"] <= ratio["max"], r
    assert "situ/warm" in proc.stdout
