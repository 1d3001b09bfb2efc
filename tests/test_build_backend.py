"""The in-tree build backend (build_support/mjrefresh_build.py): a source
build that cannot work stops at once, and the first line of its output says
what to do (not a CMake trace)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location(
    "mjrefresh_build", ROOT / "build_support" / "mjrefresh_build.py"
)
backend = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(backend)

NO_MUJOCO = (
    "mjrefresh: a source build compiles against the installed MuJoCo, but this build "
    "environment has none (pip's build isolation?); run: pip install mujoco==<the version "
    "you run> nanobind scikit-build-core && pip install --no-build-isolation ."
)


def _missing(*names):
    """find_spec of an environment that has every build input except `names`
    (the test environment itself may lack the build tools: a wheel install)."""

    def find_spec(name, *args):
        return None if name in names else importlib.machinery.ModuleSpec(name, None)

    return find_spec


def test_without_mujoco_the_fix_is_the_first_line(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", _missing("mujoco"))
    with pytest.raises(SystemExit) as info:
        backend.get_requires_for_build_wheel({})
    assert str(info.value.code).startswith(NO_MUJOCO)
    assert str(info.value.code).endswith(
        "or install the prebuilt wheel: bash scripts/build-wheel.sh dist && "
        "pip install dist/mjrefresh-*.whl"
    )
    # The prebuilt wheel's build needs no installed mujoco.
    backend.check_build_environment({"cmake.define.MJREFRESH_MUJOCO_ROOTS": "/x"})


@pytest.mark.parametrize(
    ("missing", "named"),
    [
        (("nanobind",), "nanobind"),
        (("nanobind", "scikit_build_core"), "scikit_build_core and nanobind"),
    ],
)
def test_without_build_tools_the_fix_is_the_first_line(monkeypatch, missing, named):
    monkeypatch.setattr(importlib.util, "find_spec", _missing(*missing))
    for hook in (backend.get_requires_for_build_wheel, backend.get_requires_for_build_editable):
        with pytest.raises(SystemExit) as info:
            hook({})
        assert info.value.code == (
            f"mjrefresh: {named} missing in the build environment; run: pip install "
            "mujoco==<the version you run> nanobind scikit-build-core && pip install "
            "--no-build-isolation ."
        )


@pytest.mark.slow
@pytest.mark.skipif(bool(os.environ.get("MJREFRESH_UNDER_ASAN")), reason="pip under ASan preload")
def test_isolated_pip_install_fails_fast_with_the_fix(tmp_path):
    """What a user sees: `pip install .` (build isolation, so no mujoco)."""
    start = time.monotonic()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--target",
            str(tmp_path / "t"),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    elapsed = time.monotonic() - start
    assert proc.returncode != 0
    lines = [ln.strip() for ln in (proc.stdout + proc.stderr).splitlines()]
    block = lines.index("╰─> [1 lines of output]")
    assert lines[block + 1].startswith(NO_MUJOCO), lines
    assert not any("CMake" in ln for ln in lines), lines
    assert elapsed < 120, elapsed  # build dependencies come from the pip cache


@pytest.mark.parametrize(
    ("version", "says"),
    [
        ("3.9.0", "MuJoCo 3.9.0 is not supported: releases before 3.10.0 have no unified log"),
        ("4.9.0", "This MuJoCo release renamed or removed them: update mujoco_error_trap.cc"),
    ],
)
def test_cmake_refuses_a_libmujoco_without_the_log_handler_saying_why(tmp_path, version, says):
    # A library that exports neither function (libm) stands for such a libmujoco.
    libm = next(
        (p for p in ("/lib/x86_64-linux-gnu/libm.so.6", "/lib64/libm.so.6") if Path(p).exists()),
        None,
    )
    cmake = shutil.which("cmake")
    if libm is None or cmake is None:
        pytest.skip("needs cmake and libm.so.6 at a known path")
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\nproject(probe CXX)\n"
        f'include("{ROOT / "cmake" / "MuJoCoCores.cmake"}")\n'
        f'mjrefresh_check_log_handler_exports("{libm}" "{version}")\n'
    )
    proc = subprocess.run(
        [cmake, "-S", str(tmp_path), "-B", str(tmp_path / "build")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0
    assert says in " ".join(proc.stderr.split()), proc.stderr
