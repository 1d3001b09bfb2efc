"""No process exits and scratch sized to need: sleep-enabled models with
partial selections (both engines, bit-exact with mj_forward), construction
under an address-space limit (RLIMIT_AS, in a child process) raising
MemoryError, and Refresher.memory_bytes reporting the measured need."""

from __future__ import annotations

import os

import mujoco
import numpy as np
import pytest
from support.child import run_child
from support.edge_models import BIG_ARENA_XML, SLEEP_XML
from support.oracle import forward_rows
from support.sensors import sensor_cols

import mjrefresh

N = 32


def _states(m: mujoco.MjModel, seed: int = 0) -> dict[str, np.ndarray | None]:
    rng = np.random.default_rng(seed)
    qpos = np.tile(m.qpos0, (N, 1)) + rng.normal(scale=0.3, size=(N, m.nq))
    return {
        "qpos": qpos,
        "qvel": rng.normal(size=(N, m.nv)),
        "mocap_pos": None,
        "mocap_quat": None,
        "time": None,
    }


@pytest.mark.parametrize(
    "engine, names",
    [
        ("exact", ["pb"]),
        ("exact", ["pa", "vb"]),
        ("exact", ["lp", "ek", "jp"]),
        ("fast", ["pb", "vb"]),
        ("auto", ["pa"]),
    ],
)
def test_sleep_enabled_model_partial_selection_bit_exact(engine, names):
    # Unselected sensors include an acceleration-stage one and trees start
    # asleep (sleep="init"): building used to end the process in
    # mj_computeSensorAcc when mj_resetData ran mj_forward on the masked copy.
    m = mujoco.MjModel.from_xml_string(SLEEP_XML)
    states = _states(m)
    r = mjrefresh.Refresher(
        m, sensors=names, bodies=["a", "b"], sites=["sa"], engine=engine, num_threads=2
    )
    out = r.outputs(N)
    assert r.refresh(np.arange(N), states["qpos"], states["qvel"], out) == N
    ref = forward_rows(m, states)
    cols = sensor_cols(m, names)
    expected = ref.outputs(bodies=["a", "b"], sites=["sa"])
    if r.plan.engine == "exact":
        np.testing.assert_array_equal(out.sensordata[:, cols], ref.sensordata[:, cols])
        for key in ("body_pos", "body_quat", "body_linvel", "body_angvel", "site_pos"):
            np.testing.assert_array_equal(getattr(out, key), expected[key], err_msg=key)
    else:  # the fused kernels' documented rounding bounds
        np.testing.assert_allclose(out.sensordata[:, cols], ref.sensordata[:, cols], atol=1e-10)
        np.testing.assert_allclose(out.body_pos, expected["body_pos"], atol=1e-12)


def test_sleep_model_construction_survives_in_a_child_process():
    res = run_child(f"""
        import mujoco, mjrefresh
        m = mujoco.MjModel.from_xml_string({SLEEP_XML!r})
        for engine in ("exact", "fast"):
            mjrefresh.Refresher(m, sensors=["pb"], engine=engine).close()
        print("survived")
    """)
    assert res.returncode == 0 and "survived" in res.stdout, res.stderr


# A model whose copy needs ~32 MB (a 2000x2000 height field) and whose
# declared arena is 256 MB; the child caps its address space a little above
# what it already uses, so the refresher's allocations fail.
LIMITED = """
    import resource, sys
    import mujoco, mjrefresh
    xml = '''<mujoco><size memory="256M"/><asset>
      <hfield name="h" nrow="2000" ncol="2000" size="1 1 .1 .1"/></asset>
      <worldbody><geom type="hfield" hfield="h"/>
      <body name="a" pos="0 0 1"><joint name="j" range="-1 1" limited="true"/>
      <geom type="capsule" size=".05" fromto="0 0 0 .3 0 0"/><site name="s"/></body>
      </worldbody><sensor><framepos name="fp" objtype="site" objname="s"/>
      <jointlimitpos name="lp" joint="j"/></sensor></mujoco>'''
    m = mujoco.MjModel.from_xml_string(xml)
    vm = [int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmSize")][0]
    resource.setrlimit(resource.RLIMIT_AS, (vm + SLACK, vm + SLACK))
    try:
        r = mjrefresh.Refresher(m, sensors=SENSORS, engine=ENGINE, num_threads=THREADS)
    except MemoryError as exc:
        print("MemoryError:", exc)
        sys.exit(3)
    print("built", r.memory_bytes)
"""


@pytest.mark.skipif(
    bool(os.environ.get("MJREFRESH_UNDER_ASAN")),
    reason="AddressSanitizer's allocator aborts the process when an address-space limit "
    "refuses an allocation (by design); the plain build runs this test",
)
@pytest.mark.parametrize(
    "engine, sensors, threads, slack",
    [
        ("exact", ["lp"], 2, 48 << 20),  # model copy fits, a 256 MB arena does not
        ("exact", ["fp"], 1, 8 << 20),  # the model copy itself does not fit
        ("fast", ["fp"], 1, 8 << 20),
    ],
)
def test_allocation_failure_raises_memory_error_naming_bytes(engine, sensors, threads, slack):
    code = (
        LIMITED.replace("SLACK", str(slack))
        .replace("SENSORS", repr(sensors))
        .replace("ENGINE", repr(engine))
        .replace("THREADS", str(threads))
    )
    res = run_child(code)
    assert res.returncode == 3, (res.returncode, res.stdout, res.stderr)
    assert "MemoryError: could not allocate" in res.stdout and "bytes for" in res.stdout
    assert "free memory" in res.stdout
    assert "Could not allocate memory" not in res.stderr


def test_pose_plan_under_the_limit_builds_with_a_measured_arena():
    # The same limit that refuses a 256 MB arena admits a pose-only plan:
    # its arena is the measured need, not the declared size.
    code = (
        LIMITED.replace("SLACK", str(48 << 20))
        .replace("SENSORS", repr(["fp"]))
        .replace("ENGINE", repr("exact"))
        .replace("THREADS", "2")
    )
    res = run_child(code)
    assert res.returncode == 0 and "built" in res.stdout, (res.stdout, res.stderr)


def test_memory_bytes_is_the_measured_need():
    m = mujoco.MjModel.from_xml_string(BIG_ARENA_XML)
    assert m.narena == 64 << 20
    r = mjrefresh.Refresher(m, sensors=["fp", "jv"], engine="exact", num_threads=3)
    assert isinstance(r.memory_bytes, int) and isinstance(r.participant_bytes, int)
    assert r.participant_bytes < 1 << 20  # not the declared 64 MB
    assert r.memory_bytes >= 3 * r.participant_bytes
    assert f"{r.participant_bytes} per thread x 3 threads" in r.describe()
    states = _states(m)
    out = r.outputs(N)
    assert r.refresh(np.arange(N), states["qpos"], states["qvel"], out) == N
    ref = forward_rows(m, states)
    np.testing.assert_array_equal(out.sensordata, ref.sensordata)
    r.close()
    assert r.memory_bytes == 0


def test_collision_plans_keep_the_declared_arena():
    m = mujoco.MjModel.from_xml_string(
        BIG_ARENA_XML.replace('<jointvel name="jv" joint="h"/>', "")
        .replace('<joint name="h" axis="0 1 0"/>', '<joint name="h" axis="0 1 0" range="-1 1"/>')
        .replace("</sensor>", '<jointlimitpos name="lp" joint="h"/></sensor>')
    )
    r = mjrefresh.Refresher(m, sensors=["lp"], engine="exact", num_threads=1)
    assert r.participant_bytes > m.narena


def test_a_row_that_overflows_the_stack_is_that_rows_refresh_error():
    # Compilation never runs mj_collision, so a small declared arena passes it
    # while the broadphase of 300 bodies needs ~180 KB of stack per row: the
    # mju_error is trapped per row and becomes RefreshError (child process:
    # the process must survive).
    res = run_child("""
        import mujoco, numpy as np, mjrefresh
        bodies = "".join('<body pos="%d 0 0"><geom size=".1"/></body>' % i for i in range(300))
        xml = ('<mujoco><size memory="40K"/><worldbody><body name="r"><freejoint/>'
               '<geom size=".1"/>' + bodies + '</body></worldbody><actuator>'
               '<adhesion name="ad" body="r" ctrlrange="0 1"/></actuator>'
               '<sensor><actuatorvel name="adv" actuator="ad"/></sensor></mujoco>')
        m = mujoco.MjModel.from_xml_string(xml)
        r = mjrefresh.Refresher(m, sensors=["adv"], engine="exact", num_threads=1)
        out = r.outputs(3)
        try:
            r.refresh(np.arange(3), np.tile(m.qpos0, (3, 1)), np.ones((3, m.nv)), out)
        except mjrefresh.RefreshError as exc:
            print("RefreshError:", exc)
    """)
    assert res.returncode == 0, res.stderr
    assert "RefreshError:" in res.stdout and "stack overflow at mj_collision" in res.stdout


@pytest.mark.skipif(
    bool(os.environ.get("MJREFRESH_UNDER_ASAN")),
    reason="AddressSanitizer's allocator aborts the process when an address-space limit "
    "refuses an allocation (by design); the plain build runs this test",
)
def test_a_call_whose_row_copy_does_not_fit_raises_memory_error_naming_bytes():
    # A call copies its row ids (its own copy: no later write can change
    # them); 2^28 ids need 2 GiB, refused by the address-space limit.
    res = run_child("""
        import resource, sys
        import numpy as np, mjrefresh
        m = mjrefresh.models.quadruped()
        r = mjrefresh.Refresher(m, bodies=["base"], num_threads=1)
        qpos, qvel, out = np.tile(m.qpos0, (4, 1)), np.zeros((4, m.nv)), r.outputs(4)
        rows = np.zeros(1 << 28, dtype=np.int64)  # address space only: pages never touched
        vm = [int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmSize")][0]
        resource.setrlimit(resource.RLIMIT_AS, (vm + (512 << 20), resource.RLIM_INFINITY))
        try:
            r.refresh(rows, qpos, qvel, out)
        except MemoryError as exc:
            print("MemoryError:", exc)
            sys.exit(3)
    """)
    assert res.returncode == 3, (res.returncode, res.stdout, res.stderr)
    assert res.stdout.strip() == (
        "MemoryError: rows: cannot allocate 2147483648 bytes for the call's copy of 268435456 "
        "row ids; refresh fewer rows per call"
    )
