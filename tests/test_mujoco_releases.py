"""Supported MuJoCo releases: the one list (src/mjrefresh/mujoco_releases.txt),
the import-time core selector, and the behaviour that differs between
releases (CI runs this module on every supported release).

The differences a refresh must follow are listed in docs/mujoco-releases.md;
each has a test here that passes on every release only if the core decides
it for the release it was compiled against.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import mujoco
import numpy as np
import pytest
from support.oracle import forward_with_model_fields
from support.states import random_fields, random_states

import mjrefresh
from mjrefresh import _build_info, _native
from mjrefresh._releases import Release, supported_releases

# Cheap, and what differs between releases: CI runs it on every release.
pytestmark = pytest.mark.parity

ROOT = Path(__file__).resolve().parent.parent
RELEASES = supported_releases()
VERSIONS = tuple(r.version for r in RELEASES)


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def test_release_list_is_sorted_unique_and_consistent():
    assert VERSIONS[0] == "3.10.0"
    assert list(VERSIONS) == sorted(set(VERSIONS), key=_key)
    for r in RELEASES:
        assert r.install.endswith("==" + r.version), r
        assert r.headers_from.endswith("==" + r.version), r
        # 3.x wheels hold libmujoco; from 4.0 it lives in mujoco-core.
        dist = "mujoco" if _key(r.version) < (4,) else "mujoco-core"
        assert r.headers_from == f"{dist}=={r.version}", r


def test_release_file_rejects_malformed_lines(tmp_path):
    path = tmp_path / "releases.txt"
    path.write_text(
        "# comment\n3.11.0 mujoco==3.11.0 mujoco==3.11.0  # ok\n\n3.12.0 mujoco==3.12.0\n"
    )
    with pytest.raises(
        ValueError,
        match=r"releases.txt:4: expected 'version install-requirement wheel', got '3.12.0 mujoco==3.12.0'",
    ):
        supported_releases(path)
    path.write_text("3.11.0 mujoco==3.11.0 mujoco==3.11.0  # ok\n")
    assert supported_releases(path) == (Release("3.11.0", "mujoco==3.11.0", "mujoco==3.11.0"),)


def test_docs_list_exactly_the_supported_releases():
    text = (ROOT / "docs" / "mujoco-releases.md").read_text()
    # The table of releases: "| <release> | `pip install ...` | ..."
    listed = tuple(re.findall(r"^\| (\d+\.\d+\.\d+) \| `pip install (\S+)`", text, re.M))
    assert listed == tuple((r.version, r.install) for r in RELEASES)


def test_the_installed_mujoco_runs_its_own_core():
    assert mujoco.__version__ in _build_info.MUJOCO_VERSIONS
    assert mjrefresh.MUJOCO_BUILD_VERSION == mujoco.__version__ == mujoco.mj_versionString()
    core = sys.modules["mjrefresh._core"]
    assert core.mujoco_runtime_version() == mujoco.__version__
    if _build_info.PREBUILT:  # the wheel: one core per listed release
        assert _build_info.MUJOCO_VERSIONS == VERSIONS
        for version in VERSIONS:
            assert _native.prebuilt_core_path(version) is not None, version
        tag = "mj" + mujoco.__version__.replace(".", "_")
        assert Path(core.__file__).parent.name == tag
    else:  # a source build: one core, for the MuJoCo it was built against
        assert len(_build_info.MUJOCO_VERSIONS) == 1


def test_unsupported_release_message_names_installed_supported_and_source_build():
    message = _native.unsupported_message("4.9.0", VERSIONS)
    first = message.splitlines()[0]
    assert first.startswith(
        "mjrefresh's prebuilt wheel has no native core for the installed MuJoCo 4.9.0; "
        "it supports MuJoCo 3.10.0, 3.11.0, 3.12.0, "
    )
    assert ", ".join(VERSIONS) in first
    assert first.endswith(
        "build mjrefresh from source against MuJoCo 4.9.0: pip install nanobind "
        "scikit-build-core && pip install --no-build-isolation --force-reinstall --no-deps "
        "<mjrefresh source directory or sdist>"
    )
    for r in RELEASES:
        assert f"  {r.version}: pip install {r.install}" in message


@pytest.mark.parametrize("old", ["3.9.0", "3.5.0", "2.3.7"])
def test_a_release_before_the_oldest_is_not_told_to_build_from_source(old):
    # CMake refuses its libmujoco (no log handler): a source build cannot work.
    first = _native.unsupported_message(old, VERSIONS).splitlines()[0]
    assert "source" not in first.replace("a source build refuses them too", "")
    assert first.endswith(
        f"Install one of those (releases before {VERSIONS[0]} lack the log handler that "
        "mjrefresh needs to turn MuJoCo errors in worker threads into exceptions, so a source "
        "build refuses them too)"
    )
    with pytest.raises(
        ImportError,
        match=rf"runs MuJoCo {old}\. Fix: install the MuJoCo it was built for \(pip install mujoco==3\.11\.0\); releases before",
    ):
        _native.check_versions("3.11.0", old)


def test_prebuilt_selector_refuses_a_release_without_core():
    with pytest.raises(
        ImportError,
        match=r"^mjrefresh's prebuilt wheel has no native core for the installed MuJoCo 3\.9\.0; it supports MuJoCo ",
    ):
        _native._load_prebuilt("3.9.0")


# --- behaviour that differs between releases ----------------------------------

# Frame quaternions (framequat, frame axes) of frames compiled as "same frame
# as the body / the inertia": MuJoCo 3.x multiplies the body's xquat by the
# frame's own quaternion; 4.0 fills geom_xquat/site_xquat/xiquat in
# mj_kinematics following *_sameframe. The two differ when a row's
# geom_quat/site_quat/body_iquat differ from the compiled ones.
SAMEFRAME_XML = """
<mujoco>
  <worldbody>
    <body name="a" pos="0 0 1">
      <freejoint/>
      <geom name="g_inertia" type="box" size="0.1 0.2 0.3" pos="0.1 0.05 0" euler="10 20 30"/>
      <site name="s_inertia" pos="0.1 0.05 0" euler="10 20 30"/>
      <site name="s_body"/>
      <site name="s_free" pos="0.2 0 0.1" euler="0 40 0"/>
      <body name="b" pos="0.3 0 0">
        <joint type="ball"/>
        <geom name="g_body" type="sphere" size="0.05"/>
      </body>
      <body name="c" pos="0 0.3 0" euler="0 0 20">
        <joint type="hinge" axis="1 0 0"/>
        <geom name="g_free" type="capsule" size="0.02" fromto="0 0 0 0.1 0.1 0"/>
        <geom type="sphere" size="0.03" pos="0 0 0.1"/>
      </body>
    </body>
  </worldbody>
  <sensor>
    <framequat name="q_g_inertia" objtype="geom" objname="g_inertia"/>
    <framequat name="q_s_inertia" objtype="site" objname="s_inertia"/>
    <framequat name="q_s_body" objtype="site" objname="s_body"/>
    <framequat name="q_s_free" objtype="site" objname="s_free"/>
    <framequat name="q_g_body" objtype="geom" objname="g_body"/>
    <framequat name="q_g_free" objtype="geom" objname="g_free" reftype="geom" refname="g_inertia"/>
    <framequat name="q_b_inertial" objtype="body" objname="b"/>
    <framequat name="q_c_inertial" objtype="body" objname="c" reftype="site" refname="s_body"/>
    <framexaxis name="x_g_inertia" objtype="geom" objname="g_inertia"/>
    <frameyaxis name="y_s_body" objtype="site" objname="s_body" reftype="body" refname="b"/>
    <framezaxis name="z_b_inertial" objtype="body" objname="b"/>
  </sensor>
</mujoco>"""
FIELDS = ("geom_quat", "site_quat", "body_iquat")


def _sameframe_model() -> mujoco.MjModel:
    m = mujoco.MjModel.from_xml_string(SAMEFRAME_XML)
    sf = mujoco.mjtSameFrame
    # The model covers every sameframe kind the rule distinguishes.
    kinds = {sf.mjSAMEFRAME_NONE, sf.mjSAMEFRAME_BODY, sf.mjSAMEFRAME_INERTIA}
    assert set(m.geom_sameframe) >= kinds
    assert set(m.site_sameframe) >= kinds
    assert m.body_sameframe[m.body("b").id] == sf.mjSAMEFRAME_BODY
    assert m.body_sameframe[m.body("c").id] == sf.mjSAMEFRAME_NONE
    return m


def _mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    q = np.empty(4)
    mujoco.mju_mulQuat(q, a, b)
    return q


@pytest.mark.parametrize(("engine", "tol"), [("exact", 0.0), ("fast", 1e-12)])
def test_frame_quaternions_follow_this_releases_sameframe_rule(engine, tol):
    n = 16
    m = _sameframe_model()
    states = random_states(m, n, seed=3)
    fields = random_fields(m, FIELDS, n, seed=4)
    sensors = [m.sensor(i).name for i in range(m.nsensor)]
    r = mjrefresh.Refresher(m, sensors=sensors, engine=engine, model_fields=FIELDS, num_threads=2)
    assert r.plan.engine == engine
    out = r.outputs(n)
    r.refresh(np.arange(n), states["qpos"], states["qvel"], out, model_fields=fields)
    a, g = m.body("a").id, m.geom("g_inertia").id
    col = m.sensor("q_g_inertia").adr[0]
    follows_sameframe = _key(mujoco.__version__) >= (4,)
    for row in range(n):
        _, d, _ = forward_with_model_fields(m, states, fields, row)
        np.testing.assert_allclose(out.sensordata[row], d.sensordata, rtol=0, atol=tol)
        # This case tells the two rules apart, and MuJoCo follows the one of
        # its release: for a geom compiled in the inertial frame, 3.x uses
        # the row's geom_quat, 4.0 the row's body_iquat.
        own = _mul(d.xquat[a], fields["geom_quat"][row, g])
        inertia = _mul(d.xquat[a], fields["body_iquat"][row, a])
        assert np.abs(own - inertia).max() > 1e-3
        expected = inertia if follows_sameframe else own
        np.testing.assert_allclose(d.sensordata[col : col + 4], expected, rtol=0, atol=1e-15)
