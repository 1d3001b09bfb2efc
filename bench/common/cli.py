"""Command-line pieces the research tools share: the parser, the ``--readme``
options and the README section that ends a run (progress lines, the
environment banner and the JSON record are in :mod:`mjrefresh.bench`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from bench.common import output
from mjrefresh.bench.output import progress


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


def check_readme(p: argparse.ArgumentParser, args: argparse.Namespace, section: str) -> None:
    """Before the run: ``p.error`` unless ``--readme`` (if given) has the
    section ``--readme-section`` (default ``section``) to rewrite, so that a
    long run does not end in a traceback."""
    if args.readme is None:
        return
    name = args.readme_section or section
    problem = output.readme_problem(args.readme, name)
    if problem is not None:
        p.error(
            f"--readme: {problem}; add the markers to the README or choose a section with "
            "--readme-section"
        )


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
