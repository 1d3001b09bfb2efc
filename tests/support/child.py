"""Run a snippet in a fresh interpreter: for behaviour that, broken, would
end the process (a crash, an abort, an exit from inside MuJoCo) or that
changes process-wide state (resource limits, callbacks)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

#: The tests/ folder: on the child's path, so its code can import support.*.
TESTS = Path(__file__).resolve().parent.parent


def child_env(**extra: str) -> dict[str, str]:
    """This process's environment with tests/ on PYTHONPATH, plus `extra`."""
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(TESTS), env.get("PYTHONPATH")) if p)
    return env


def run_child(
    code: str, timeout: float = 120, env: dict[str, str] | None = None, **kwargs: object
) -> subprocess.CompletedProcess[str]:
    """`code` (dedented) run by this interpreter in a child process (with
    `env`, default child_env(); other keyword arguments go to subprocess.run)."""
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=child_env() if env is None else env,
        **kwargs,
    )
