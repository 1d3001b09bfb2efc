"""README output of the research tools: the generated sections between
result markers (the JSON record and table helpers live in
:mod:`mjrefresh.bench.output`)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mjrefresh.bench import envinfo
from mjrefresh.bench.output import measured_with
from mjrefresh.bench.report import table


def median_range(values: Sequence[float], digits: int = 3) -> str:
    """``median (min-max)`` of repeated measurements, ``digits`` decimals."""
    med, lo, hi = statistics.median(values), min(values), max(values)
    return f"{med:.{digits}f} ({lo:.{digits}f}-{hi:.{digits}f})"


def _markers(section: str) -> tuple[str, str]:
    """The begin and end markers of a README section."""
    return f"<!-- results:{section} begin -->", f"<!-- results:{section} end -->"


def readme_problem(path: Path, section: str) -> str | None:
    """None if ``path`` is a README whose ``section`` :func:`update_readme`
    can rewrite, else why not (checked before a run, not after it)."""
    begin, end = _markers(section)
    try:
        content = path.read_text(encoding="utf-8")
        with path.open("a", encoding="utf-8"):  # writable, content untouched
            pass
    except (OSError, UnicodeDecodeError) as e:
        return f"cannot rewrite {str(path)!r}: {getattr(e, 'strerror', None) or e}"
    i, j = content.find(begin), content.find(end)
    if i < 0 or j < i:
        return f"{str(path)!r} has no section marked {begin} ... {end}"
    return None


def update_readme(path: Path, section: str, text: str) -> None:
    """Replace the text between ``<!-- results:SECTION begin/end -->`` markers.

    Raises ValueError naming the missing markers if the section is not there.
    """
    begin, end = _markers(section)
    content = path.read_text(encoding="utf-8")
    i, j = content.find(begin), content.find(end)
    if i < 0 or j < i:
        raise ValueError(f"{path}: no section marked {begin} ... {end}")
    path.write_text(content[: i + len(begin)] + "\n" + text + content[j:], encoding="utf-8")


def update_readme_block(path: Path, prefix: str, command: str, text: str) -> None:
    """Write `text` as a code block, headed by the command and the machine,
    into the README section ``<prefix>-mujoco-<version>``."""
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


def markdown_section(results: list[dict[str, Any]], env: dict[str, Any], command: str) -> str:
    """The microbenchmark's text between a README's result markers: the
    environment and the table."""
    return f"{measured_with(command, env)}\n\n```\n{table(results)}\n```\n"
