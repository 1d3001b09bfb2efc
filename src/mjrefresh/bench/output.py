"""What the benchmarks write: progress lines, the JSON record and grouped
table lines."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Hashable, Iterable
from pathlib import Path
from typing import Any


def progress(msg: str) -> None:
    """One progress line on stderr (stdout holds only the results)."""
    print(msg, file=sys.stderr, flush=True)


def _clean(obj: Any) -> Any:
    """``obj`` with non-finite floats replaced (JSON has no inf/nan)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def unwritable(path: Path) -> str | None:
    """None if a file can be written at ``path`` (its missing directories
    are created, as :func:`write_json` would), else why not; checked before a
    run so that it does not end in a traceback. Leaves no new file behind."""
    if path.is_dir():
        return f"{str(path)!r} is a directory"
    if path.exists() and not path.is_file():  # a FIFO would block the check, a device fail late
        return f"{str(path)!r} is not a regular file (a device or a FIFO)"
    existed = path.exists()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8"):
            pass
    except OSError as e:
        return f"cannot write {str(path)!r}: {e.strerror or e}"
    if not existed:
        path.unlink()
    return None


def write_json(path: Path, schema: str, payload: dict[str, Any]) -> None:
    """Write ``{"schema": schema, **payload}`` (environment, config, results, skips)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(_clean({"schema": schema, **payload}), indent=1) + "\n", encoding="utf-8"
    )


def write_record(
    args: argparse.Namespace,
    schema: str,
    env: dict[str, Any],
    rest: dict[str, Any],
    internal: Iterable[str] = (),
) -> None:
    """Write ``--json``: schema, environment, the options (without the
    ``internal`` ones) and ``rest``."""
    config = {
        k: (str(v) if isinstance(v, Path) else v)
        for k, v in vars(args).items()
        if k not in set(internal) and not callable(v)
    }
    try:
        write_json(args.json, schema, {"env": env, "config": config, **rest})
    except OSError as e:  # the disk filled up, or the path went away, during the run
        raise SystemExit(
            f"mjrefresh bench: error: --json: cannot write {str(args.json)!r}: {e.strerror or e}"
        ) from None
    progress(f"wrote {args.json}")


def grouped_lines(
    rows: Iterable[Any], key: Callable[[Any], Hashable], line: Callable[[Any], str]
) -> list[str]:
    """``line(row)`` for every row, with an empty line wherever ``key`` changes."""
    lines: list[str] = []
    previous = None
    for r in rows:
        k = key(r)
        if previous is not None and k != previous:
            lines.append("")
        previous = k
        lines.append(line(r))
    return lines


def measured_with(command: str, env: dict[str, Any], libraries: bool = True) -> str:
    """The sentence heading a README section: the command and the machine, and
    with ``libraries`` the Python, NumPy, mjbatch-uni and mjrefresh versions."""
    where = f"Measured with `{command}` on {env['cpu_model']} ({env['usable_cpus']} usable CPUs)"
    if not libraries:
        return f"{where}, MuJoCo {env['mujoco']}."
    return (
        f"{where}, Python {env['python']}, NumPy {env['numpy']}, MuJoCo {env['mujoco']}, "
        f"mjbatch-uni {env['mjbatch_uni'] or 'not installed'}, "
        f"mjrefresh {env['mjrefresh'] or 'not installed'}."
    )
