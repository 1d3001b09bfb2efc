"""Environment description recorded next to every benchmark result."""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata
from typing import Any

from mjrefresh.bench.availability import mujoco_batch_unavailable

THREAD_ENV_VARS = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "MUJOCO_GL",
)


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo (Linux), else platform.processor()."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def usable_cores() -> int:
    """Logical CPUs this process may run on (affinity mask where available)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def package_version(name: str) -> str | None:
    """Installed distribution version, or None if it is not installed."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def collect() -> dict[str, Any]:
    """CPU, core counts, interpreter, library versions and thread settings."""
    import mujoco
    import numpy

    load = loadavg()
    return {
        "cpu_model": cpu_model(),
        "logical_cpus": os.cpu_count(),
        "usable_cpus": usable_cores(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "python_executable": sys.executable,
        "numpy": numpy.__version__,
        "mujoco": mujoco.__version__,
        "mujoco_has_batch": mujoco_batch_unavailable() is None,
        "mjbatch_uni": package_version("mjbatch-uni"),
        "mjrefresh": package_version("mjrefresh"),
        "matplotlib": package_version("matplotlib"),
        "thread_env": {k: os.environ.get(k) for k in THREAD_ENV_VARS},
        "loadavg_at_start": load,
    }


def loadavg() -> list[float] | None:
    """The 1, 5 and 15-minute load averages, or None where the OS has none."""
    try:
        return list(os.getloadavg())
    except OSError:
        return None


def env_banner(env: dict[str, Any], mjrefresh: bool = False) -> str:
    """The first progress line: CPU, usable CPUs and library versions."""
    line = (
        f"{env['cpu_model']}, {env['usable_cpus']} usable CPUs; mujoco {env['mujoco']}, "
        f"mjbatch-uni {env['mjbatch_uni'] or 'not installed'}"
    )
    return line + (f", mjrefresh {env['mjrefresh']}" if mjrefresh else "")
