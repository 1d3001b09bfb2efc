"""Loads the native core and checks it matches the MuJoCo in this process.

The core is compiled against the headers of one MuJoCo release and shares
raw ``mjModel``/``mjData`` pointers with the ``mujoco`` bindings, so both
must be the very same libmujoco. A mismatch is an ImportError that names
both versions and the fix, never a crash later.
"""

from __future__ import annotations

import mujoco

from . import _build_info

_FIX = (
    "Fix: install the MuJoCo it was built for (pip install mujoco=={built}), or rebuild "
    "mjrefresh against the installed one from its source directory "
    "(pip install --no-build-isolation --force-reinstall --no-deps .)."
)


def check_versions(built: str, runtime: str) -> None:
    """Raise ImportError unless the build-time and run-time MuJoCo agree."""
    if built != runtime:
        raise ImportError(
            f"mjrefresh's native core was built for MuJoCo {built}, but this process "
            f"runs MuJoCo {runtime}. " + _FIX.format(built=built)
        )


def load_core():  # noqa: ANN201 - returns the extension module
    """Import ``mjrefresh._core`` after checking the MuJoCo version."""
    built = _build_info.MUJOCO_VERSION
    check_versions(built, mujoco.__version__)
    try:
        from . import _core
    except ImportError as exc:  # e.g. libmujoco.so.<built> not found
        raise ImportError(
            f"mjrefresh's native core (built for MuJoCo {built}) failed to load with "
            f"mujoco {mujoco.__version__} installed: {exc}. " + _FIX.format(built=built)
        ) from exc
    check_versions(_core.MUJOCO_BUILD_VERSION, _core.mujoco_runtime_version())
    return _core


core = load_core()
