"""Benchmark: refresh of tracked sensor columns for N simulations.

The harness is :mod:`mjrefresh.bench` (what ``mjrefresh bench`` runs); this
module adds the repository's ``--readme`` output and prints the full table
(every column and the internal C++ stage loop, as with ``--verbose``).

  python -m bench.micro                      # full run
  python -m bench.micro --quick              # < 2 min on 2 cores
  python -m bench.micro --json out.json --plot out.png
  python -m bench.micro --readme bench/README.md
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import mujoco

from bench.common.cli import add_readme_args, check_readme, new_parser, write_readme_section
from bench.common.output import markdown_section
from mjrefresh.bench import cli


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The options of ``python -m bench.micro``, with the defaults filled in."""
    p = new_parser("bench.micro", __doc__, quick=cli.QUICK_HELP)
    cli.add_options(p, quick=False)
    p.set_defaults(verbose=True)
    add_readme_args(p, "results", "section marker name (default: mujoco-<version>)")
    args = cli.finish_options(p.parse_args(argv), p)
    check_readme(p, args, f"mujoco-{mujoco.__version__}")  # the section main() writes
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the microbenchmark; print the table, write the requested files."""
    args = parse_args(argv)
    results, env, skipped = cli.run(args)
    if args.readme:
        write_readme_section(
            args,
            f"mujoco-{env['mujoco']}",
            "bench.micro",
            argv,
            lambda command: markdown_section(results, env, command),
        )
    return cli.exit_status(results, skipped)
