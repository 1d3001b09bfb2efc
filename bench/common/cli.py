"""Command-line pieces the benchmarks share: the parser, the ``--readme``
options, progress on stderr, the environment banner and the steps that end a
run (JSON record, README section)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from bench.common import output


def progress(msg: str) -> None:
    """One progress line on stderr (stdout holds only the results)."""
    print(msg, file=sys.stderr, flush=True)


def new_parser(module: str, doc: str, quick: str | None = None) -> argparse.ArgumentParser:
    """A parser for ``python -m module``, described by the first paragraph of
    ``doc`` (its line breaks kept); with ``quick``, a ``--quick`` flag that
    ``quick`` describes."""
    p = argparse.ArgumentParser(
        prog=f"python -m {module}",
        description=doc.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    if quick is not None:
        p.add_argument("--quick", action="store_true", help=quick)
    return p


def add_readme_args(p: argparse.ArgumentParser, what: str, section_help: str) -> None:
    """``--readme PATH`` (rewrite the ``what`` section of that README) and
    ``--readme-section NAME`` (described by ``section_help``)."""
    p.add_argument(
        "--readme",
        type=Path,
        default=None,
        help=f"rewrite the {what} section of this README (e.g. bench/README.md) with the table",
    )
    p.add_argument("--readme-section", default=None, help=section_help)


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
        f"mjbatch-uni {env['mjbatch_uni']}"
    )
    return line + (f", mjrefresh {env['mjrefresh']}" if mjrefresh else "")


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
        if k not in set(internal)
    }
    output.write_json(args.json, schema, {"env": env, "config": config, **rest})
    progress(f"wrote {args.json}")


def write_readme_section(
    args: argparse.Namespace,
    section: str,
    module: str,
    argv: Sequence[str] | None,
    text: Callable[[str], str],
) -> None:
    """Rewrite ``--readme``'s section ``--readme-section`` (default ``section``)
    with ``text(command)``, ``command`` being this run's command line."""
    section = args.readme_section or section
    command = f"python -m {module} " + " ".join(argv if argv is not None else sys.argv[1:])
    output.update_readme(args.readme, section, text(command.strip()))
    progress(f"updated section {section!r} of {args.readme}")
