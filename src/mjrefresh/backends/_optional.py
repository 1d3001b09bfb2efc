"""Optional backend packages, imported only when a binding needs them.

A missing one is an ImportError that says what to install, raised by the
binding that needs it rather than at ``import mjrefresh``.
"""

from __future__ import annotations

from typing import Any

import mujoco


def require_mjbatch() -> Any:
    """The ``mjbatch`` module of mjbatch-uni, or ImportError with the install hint."""
    try:
        import mjbatch
    except ImportError as exc:
        raise ImportError(
            "mjrefresh.bind_mjbatch / MjbatchSensorRefresher need mjbatch-uni, which is not "
            "installed: pip install mjbatch-uni (it pins the MuJoCo release it was built for)"
        ) from exc
    return mjbatch


def require_mujoco_batch() -> Any:
    """``mujoco.batch`` (MuJoCo >= 4.0), or ImportError with the upgrade hint."""
    try:
        from mujoco import batch as mujoco_batch
    except ImportError as exc:
        raise ImportError(
            "mjrefresh.bind_mujoco_batch needs mujoco.batch, which MuJoCo "
            f"{mujoco.__version__} does not have: pip install 'mujoco>=4.0' (and rebuild "
            "mjrefresh against it)"
        ) from exc
    return mujoco_batch
