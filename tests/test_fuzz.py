"""Seeded, bounded fuzzing of the public API against README "Guarantees".

Cases come from tests/support/fuzz/cases/, one test per family: parity,
dtypes, shapes, strides, alignment, readonly, aliasing, rows, dirty masks,
non-finite states, construction, lifecycle (close), threads, fork, SIGINT,
MuJoCo global callbacks, outputs(), thread-creation failure, multi-dimensional
actuators, sleep, model options, plugins, non-finite model values,
per-environment model fields, bound calls, StateCache and interpreter exit.
Every case is a standalone script run in a child forked from one server
process that imported numpy, mujoco and mjrefresh once, so a crash or a hang
is reported as that case's failure, with the script to reproduce it, instead
of ending the test run. Failures are grouped by kind; each kind prints its
shortest script, and every failing script is saved to a directory.

Knobs (environment variables):

* ``MJREFRESH_FUZZ_SEED``: the seed (default: a fixed one, so CI is reproducible);
* ``MJREFRESH_FUZZ_CASES``: the total number of cases, shared out by family
  weight (default 600, about 80 s on 2 cores; 300 when MJREFRESH_UNDER_ASAN
  is set, as .ci/sanitize does; raise it, or change the seed, to widen);
* ``MJREFRESH_FUZZ_TIMEOUT``: seconds a case may take before it is killed as
  hung (default 30; long cases get twice that);
* ``MJREFRESH_FUZZ_FAMILIES``: a comma-separated subset of families;
* ``MJREFRESH_FUZZ_SAVE``: a directory to write every failing case's script
  to (default: a pytest temporary directory, named in the failure).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from support.fuzz import contract as c
from support.fuzz.cases import DEFAULT_SEED, UNAVAILABLE, Case, generate
from support.fuzz.runner import ForkServer, failure_message

import mjrefresh

# CI runs the fuzz suite with the parity tests on every supported MuJoCo release.
pytestmark = pytest.mark.fuzz

SEED = int(os.environ.get("MJREFRESH_FUZZ_SEED", DEFAULT_SEED))
# .ci/sanitize sets MJREFRESH_UNDER_ASAN: the sanitized build is 2-3x slower
_DEFAULT_CASES = "300" if os.environ.get("MJREFRESH_UNDER_ASAN") else "600"
CASES = int(os.environ.get("MJREFRESH_FUZZ_CASES", _DEFAULT_CASES))
TIMEOUT = float(os.environ.get("MJREFRESH_FUZZ_TIMEOUT", "30"))
_ONLY = {f.strip() for f in os.environ.get("MJREFRESH_FUZZ_FAMILIES", "").split(",") if f.strip()}
SUITE = generate(SEED, CASES, _ONLY or None)


@pytest.fixture(scope="module")
def server():
    s = ForkServer()
    yield s
    s.close()


def _save_dir(tmp_path_factory: pytest.TempPathFactory, family: str) -> Path:
    root = os.environ.get("MJREFRESH_FUZZ_SAVE")
    if root:
        d = Path(root) / family
        d.mkdir(parents=True, exist_ok=True)
        return d
    return tmp_path_factory.mktemp(f"fuzz-{family}")


@pytest.mark.parametrize("family", list(SUITE))
def test_fuzz(family, server, tmp_path_factory):
    if family == "thread_limits" and os.environ.get("MJREFRESH_UNDER_ASAN"):
        pytest.skip("AddressSanitizer aborts on an allocation an address-space limit refuses")
    if family in UNAVAILABLE:
        pytest.skip(UNAVAILABLE[family])
    cases = SUITE[family]
    failed = []
    for case in cases:
        report = server.run(case.name, case.source, TIMEOUT * case.timeout_factor)
        if not report.passed:
            failed.append((report, case.source))
    if failed:
        saved = _save_dir(tmp_path_factory, family)
        for report, source in failed:
            (saved / f"{report.name}.py").write_text(source)
        pytest.fail(failure_message(family, failed, len(cases), saved), pytrace=False)


HARNESS_CASES = {
    "passes": ("x = 1\n", "pass"),
    "fails": ("raise c.violation('deliberate')\n", "fail"),
    "segfaults": ("import ctypes\nctypes.string_at(0)\n", "crash"),
    "aborts": ("import os\nos.abort()\n", "crash"),
    "hangs": ("import time\ntime.sleep(60)\n", "timeout"),
    "forks_and_hangs": (
        "import os, time\nif os.fork() == 0:\n    time.sleep(60)\n    os._exit(0)\ntime.sleep(60)\n",
        "timeout",
    ),
    "exits_nonzero": ("import os\nos._exit(3)\n", "crash"),
}


@pytest.mark.parametrize("name", list(HARNESS_CASES))
def test_the_fork_server_reports_what_happened(server, name):
    body, status = HARNESS_CASES[name]
    report = server.run(name, Case("harness", 0, SEED, body).source, timeout=1.5)
    assert report.status == status, report
    if name == "segfaults":  # AddressSanitizer reports a SEGV, then aborts
        assert report.signal == ("SIGABRT" if os.environ.get("MJREFRESH_UNDER_ASAN") else "SIGSEGV")
    if name == "aborts":
        assert report.signal == "SIGABRT"
    if status == "fail":
        assert "deliberate" in report.detail


# The checker itself: it must catch what it is there to catch.
def _hostile():
    m = c.load_model("hostile")
    r = mjrefresh.Refresher(
        m, bodies=["b"], sensor_ranges=[(0, m.nsensordata)], num_threads=2, engine="exact"
    )
    return m, r, c.make_states(m, 5, seed=1)


def test_the_checker_catches_values_that_differ_from_mj_forward():
    m, r, st = _hostile()
    args = c.valid_args(r, st, 5)
    other = c.make_states(m, 5, seed=2)
    with pytest.raises(c.ContractViolation, match="differs from mj_forward"):
        c.check_call(r, "refresh", args, states=other)
    assert c.check(r, "refresh", c.valid_args(r, st, 5)) == "ok"
    r.close()


def test_the_checker_sees_writes_outside_the_allowed_bytes():
    buf = np.zeros((4, 6))
    view = buf[1::2, 1:4]
    mem = c.Memory([view])
    view[0, 0] = 1.0
    mem.allow(view, (0,))
    assert mem.changed(allowed=True) == []
    buf[0, 5] = 2.0  # outside the view, same buffer
    assert len(mem.changed(allowed=True)) == 1
    assert len(mem.changed(allowed=False)) == 1


def test_the_checker_predicts_valid_and_broken_arguments():
    m, r, st = _hostile()
    args = c.valid_args(r, st, 5)
    assert c.expectation(r, "refresh", args) == (set(), set())
    args["qpos"] = args["qpos"].astype(np.float32)
    args["out"].sensordata = c.relayout(args["out"].sensordata, "readonly")
    args["rows"] = np.array([2, 1])
    broken, maybe = c.expectation(r, "refresh", args)
    assert broken == {"qpos", "out.sensordata", "rows"} and not maybe
    assert c.names_argument("out.sensordata: expected a writable array", {"out.sensordata"})
    assert c.names_argument("sensordata: expected dtype float64", {"out.sensordata"})
    assert c.names_argument("mocap_pos/mocap_quat: the model has 1", {"mocap_quat"})
    assert not c.names_argument("run(): incompatible function arguments", {"qpos"})
    r.close()
