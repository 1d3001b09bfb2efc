"""Smoke test of ``python -m bench.collector --client unisim`` at its smallest
setting, against the real unisim-core backend: every update-state variant
runs in each process (the order alternating between processes), the tracked
columns unisim's public read returns equal mj_forward's to float32 rounding,
and the JSON record and table hold what bench/README.md reports. No timing
assertions."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.clients import UNISIM_MISSING

from bench.collector import unisim

REPO = Path(__file__).resolve().parents[1]
N = 16

if unisim.unavailable() is not None:
    pytest.skip(UNISIM_MISSING, allow_module_level=True)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    json_path = tmp_path_factory.mktemp("unisim") / "unisim.json"
    cmd = [
        *(sys.executable, "-m", "bench.collector", "--client", "unisim"),
        *("--n", str(N), "--procs", "2", "--warmup", "1", "--steps", "2"),
        *("--check-steps", "1", "--check-rows", "4", "--threads", "2", "--json", str(json_path)),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc, json.loads(json_path.read_text())


def test_every_variant_runs_in_alternating_order(run):
    _, data = run
    assert data["schema"] == "mjrefresh-collector-unisim/1"
    orders = [p["order"] for p in data["processes"]]
    assert orders == [list(unisim.VARIANTS), list(unisim.VARIANTS)[::-1]]
    for p in data["processes"]:
        assert set(p["variants"]) == set(unisim.VARIANTS)
        for r in p["variants"].values():
            assert r["tracked_columns"] == 260  # 13 bodies, unisim's injected sensors
            assert r["dtype"] == "float32"  # unisim's default
            assert set(r["phase_ms"]) == {*unisim.PHASES, "total"}


def test_tracked_values_equal_mj_forward(run):
    _, data = run
    for r in data["results"]:
        if r["variant"] in unisim.NATIVE_STATE:  # to float32 rounding of the values
            assert r["max_dev"] <= unisim.F32_TOL, r
        else:  # the loop reads the float32-rounded state: a few more ulps
            assert r["max_dev"] <= 50 * unisim.F32_TOL, r


def test_table_reports_update_state_and_share(run):
    proc, data = run
    assert {r["variant"] for r in data["results"]} == set(unisim.VARIANTS)
    for r in data["results"]:
        assert 0 < r["update_share"]["median"] < 1
        assert r["update_ms"]["median"] >= r["refresh_ms"]["median"] > 0
    loop = next(r for r in data["results"] if r["variant"] == "unisim-loop")
    assert loop["refresh_vs_loop"]["median"] == 1.0
    for name in unisim.VARIANTS:
        assert f"{N:>5} {name}" in proc.stdout


def test_other_variants_are_refused():
    proc = subprocess.run(
        [sys.executable, "-m", "bench.collector", "--client", "unisim", "--variants", "loop"],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert proc.returncode == 2
    assert "--client unisim runs the variants unisim-loop, unisim-mjbatch" in proc.stderr
