"""PEP 517 build backend: scikit-build-core, after checking the build can work.

A source build compiles the native core against the ``mujoco`` installed in
the build environment, so an isolated ``pip install .`` (a throw-away build
environment with no mujoco) or a ``--no-build-isolation`` build without
nanobind/scikit-build-core cannot succeed. Without this check the user sees
pip's and CMake's output first; with it, the first line of the error says
what to do, within seconds. The prebuilt wheel's build
(``-Ccmake.define.MJREFRESH_MUJOCO_ROOTS=...``, scripts/build-wheel.sh)
needs no installed mujoco. Building an sdist needs nothing.
"""

from __future__ import annotations

import importlib.util
from typing import Any

_SOURCE_BUILD = (
    "pip install mujoco==<the version you run> nanobind scikit-build-core && "
    "pip install --no-build-isolation ."
)
_WHEEL = "bash scripts/build-wheel.sh dist && pip install dist/mjrefresh-*.whl"


def _is_prebuilt(config_settings: dict[str, Any] | None) -> bool:
    return any(k.endswith("MJREFRESH_MUJOCO_ROOTS") for k in (config_settings or {}))


def check_build_environment(config_settings: dict[str, Any] | None) -> None:
    """Exit with a one-line fix if this environment cannot build the core."""
    missing = [m for m in ("scikit_build_core", "nanobind") if importlib.util.find_spec(m) is None]
    if missing:
        raise SystemExit(
            f"mjrefresh: {' and '.join(missing)} missing in the build environment; run: "
            f"{_SOURCE_BUILD}"
        )
    if not _is_prebuilt(config_settings) and importlib.util.find_spec("mujoco") is None:
        raise SystemExit(
            "mjrefresh: a source build compiles against the installed MuJoCo, but this build "
            f"environment has none (pip's build isolation?); run: {_SOURCE_BUILD}   "
            f"or install the prebuilt wheel: {_WHEEL}"
        )


def _backend():  # noqa: ANN202 - the scikit-build-core backend module
    from scikit_build_core import build

    return build


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    """PEP 517 hook: checked first, so a doomed build stops here."""
    check_build_environment(config_settings)
    return _backend().get_requires_for_build_wheel(config_settings)


def get_requires_for_build_editable(config_settings: dict[str, Any] | None = None) -> list[str]:
    """PEP 517 hook (editable installs)."""
    check_build_environment(config_settings)
    return _backend().get_requires_for_build_editable(config_settings)


def prepare_metadata_for_build_wheel(
    metadata_directory: str, config_settings: dict[str, Any] | None = None
) -> str:
    """PEP 517 hook."""
    check_build_environment(config_settings)
    return _backend().prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def prepare_metadata_for_build_editable(
    metadata_directory: str, config_settings: dict[str, Any] | None = None
) -> str:
    """PEP 660 hook."""
    check_build_environment(config_settings)
    return _backend().prepare_metadata_for_build_editable(metadata_directory, config_settings)


def build_wheel(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """PEP 517 hook."""
    check_build_environment(config_settings)
    return _backend().build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """PEP 660 hook."""
    check_build_environment(config_settings)
    return _backend().build_editable(wheel_directory, config_settings, metadata_directory)


def get_requires_for_build_sdist(config_settings: dict[str, Any] | None = None) -> list[str]:
    """PEP 517 hook: an sdist needs no compiler and no MuJoCo."""
    return _backend().get_requires_for_build_sdist(config_settings)


def build_sdist(sdist_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    """PEP 517 hook."""
    return _backend().build_sdist(sdist_directory, config_settings)
