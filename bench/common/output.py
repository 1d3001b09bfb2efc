"""What the benchmarks write: the JSON record, grouped table lines and the
generated sections of a README."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Hashable, Iterable
from pathlib import Path
from typing import Any


def _clean(obj: Any) -> Any:
    """``obj`` with non-finite floats replaced (JSON has no inf/nan)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def write_json(path: Path, schema: str, payload: dict[str, Any]) -> None:
    """Write ``{"schema": schema, **payload}`` (environment, config, results, skips)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(_clean({"schema": schema, **payload}), indent=1) + "\n", encoding="utf-8"
    )


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


def update_readme(path: Path, section: str, text: str) -> None:
    """Replace the text between ``<!-- results:SECTION begin/end -->`` markers.

    Raises ValueError naming the missing markers if the section is not there.
    """
    begin, end = f"<!-- results:{section} begin -->", f"<!-- results:{section} end -->"
    content = path.read_text(encoding="utf-8")
    i, j = content.find(begin), content.find(end)
    if i < 0 or j < i:
        raise ValueError(f"{path}: no section marked {begin} ... {end}")
    path.write_text(content[: i + len(begin)] + "\n" + text + content[j:], encoding="utf-8")


def update_readme_block(path: Path, prefix: str, command: str, text: str) -> None:
    """Write `text` as a code block, headed by the command and the machine,
    into the README section ``<prefix>-mujoco-<version>``."""
    from bench.common import envinfo

    env = envinfo.collect()
    head = measured_with(command, env, libraries=False)
    update_readme(path, f"{prefix}-mujoco-{env['mujoco']}", f"{head}\n\n```\n{text}\n```\n")


def print_table(lines: list[str], readme: Path | None, prefix: str, command: str) -> None:
    """Print a table and, with ``readme``, write it into that README's section
    ``<prefix>-mujoco-<version>`` (see :func:`update_readme_block`)."""
    text = "\n".join(lines)
    print(text)
    if readme is not None:
        update_readme_block(readme, prefix, command, text)
