"""Loads the native core that matches the MuJoCo in this process.

A core is compiled against the headers of one MuJoCo release and shares raw
``mjModel``/``mjData`` pointers with the ``mujoco`` bindings, so both must be
the very same libmujoco. A source build has one core (``mjrefresh/_core``);
the prebuilt wheel has one per supported release
(``mjrefresh/_cores/mj<release>/_core``) and picks the one of the installed
MuJoCo. Whichever core loads is registered as ``mjrefresh._core``. A MuJoCo
without a core is an ImportError that names the versions and the fix, never
a crash later.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import mujoco

from . import _build_info
from ._releases import supported_releases

_FIX = (
    "Fix: install the MuJoCo it was built for (pip install mujoco=={built}), or rebuild "
    "mjrefresh against the installed one from its source directory "
    "(pip install --no-build-isolation --force-reinstall --no-deps .)."
)
SOURCE_BUILD = (
    "pip install nanobind scikit-build-core && pip install --no-build-isolation "
    "--force-reinstall --no-deps <mjrefresh source directory or sdist>"
)


def check_versions(built: str, runtime: str) -> None:
    """Raise ImportError unless the build-time and run-time MuJoCo agree."""
    if built != runtime:
        raise ImportError(
            f"mjrefresh's native core was built for MuJoCo {built}, but this process "
            f"runs MuJoCo {runtime}. " + _FIX.format(built=built)
        )


def unsupported_message(runtime: str, available: tuple[str, ...]) -> str:
    """The ImportError text of the prebuilt wheel for a MuJoCo it has no core for.

    The first line names the installed release, the supported ones and the
    source-build command; the next lines say how to install each release.
    """
    installs = {r.version: r.install for r in supported_releases()}
    lines = [
        f"mjrefresh's prebuilt wheel has no native core for the installed MuJoCo {runtime}; "
        f"it supports MuJoCo {', '.join(available)}. Install one of those, or build "
        f"mjrefresh from source against MuJoCo {runtime}: {SOURCE_BUILD}",
        "Install a supported MuJoCo with:",
    ]
    lines += [f"  {v}: pip install {installs.get(v, f'mujoco=={v}')}" for v in available]
    return "\n".join(lines)


def _load_as_core(path: Path) -> ModuleType:
    """Load the extension at ``path`` (module ``_core``) as ``mjrefresh._core``."""
    name = f"{__package__}._core"
    loader = importlib.machinery.ExtensionFileLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    sys.modules[name] = module
    return module


def prebuilt_core_path(release: str) -> Path | None:
    """File of the prebuilt wheel's core for ``release``, None if it has none."""
    folder = Path(__file__).parent / "_cores" / ("mj" + release.replace(".", "_"))
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        if (folder / f"_core{suffix}").is_file():
            return folder / f"_core{suffix}"
    return None


def _load_prebuilt(runtime: str) -> ModuleType:
    available = _build_info.MUJOCO_VERSIONS
    path = prebuilt_core_path(runtime) if runtime in available else None
    if path is None:
        raise ImportError(unsupported_message(runtime, available))
    try:
        return _load_as_core(path)
    except ImportError as exc:  # e.g. a libmujoco.so.<runtime> that is not MuJoCo's
        raise ImportError(
            f"mjrefresh's native core for MuJoCo {runtime} failed to load: {exc}. "
            f"Reinstall MuJoCo (pip install --force-reinstall mujoco=={runtime}) or build "
            f"mjrefresh from source: {SOURCE_BUILD}"
        ) from exc


def _load_source_build(runtime: str) -> ModuleType:
    (built,) = _build_info.MUJOCO_VERSIONS
    check_versions(built, runtime)
    try:
        from . import _core
    except ImportError as exc:  # e.g. libmujoco.so.<built> not found
        raise ImportError(
            f"mjrefresh's native core (built for MuJoCo {built}) failed to load with "
            f"mujoco {runtime} installed: {exc}. " + _FIX.format(built=built)
        ) from exc
    return _core


def load_core():  # noqa: ANN201 - returns the extension module
    """Import the core of the installed MuJoCo as ``mjrefresh._core``."""
    runtime = mujoco.__version__
    core = _load_prebuilt(runtime) if _build_info.PREBUILT else _load_source_build(runtime)
    # The bindings' version string and the loaded libmujoco must agree too.
    check_versions(core.MUJOCO_BUILD_VERSION, core.mujoco_runtime_version())
    return core


core = load_core()
