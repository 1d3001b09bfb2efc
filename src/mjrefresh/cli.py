"""The ``mjrefresh`` command line (also ``python -m mjrefresh``).

Sub-commands:

* ``info``: versions, CPUs, build and which backends are importable.
* ``plan MODEL``: what a refresh of a selection on MODEL (an MJCF/MJB file
  or an embedded model name) would run: engine and why, stages, refused
  sensors with their reasons.
* ``bench [MODEL]``: time every installed way of refreshing that selection
  here, checked against ``mj_forward`` (:mod:`mjrefresh.bench.cli`).
"""

from __future__ import annotations

import argparse
import errno
import importlib.metadata
import importlib.util
import os
import platform
import sys
from collections.abc import Sequence

import mujoco

from . import _build_info, models
from ._native import core as _core
from .model_args import add_selection_args, load_model, name_or_id, posvel_sensors
from .plan import PlanError, sensor_label
from .refresher import Refresher


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _backends() -> list[tuple[str, str]]:
    """(backend, status) for every backend binding mjrefresh has."""
    mjbatch = _version("mjbatch-uni")
    has_batch = importlib.util.find_spec("mujoco.batch") is not None
    torch = _version("torch")
    uni_runtime = _version("mujoco-uni-runtime")
    unisim = _version("unisim-core")
    return [
        ("arrays (bind_arrays)", "yes (numpy)"),
        ("list of MjData (bind_mjdata_list)", "yes"),
        (
            "mjbatch-uni (bind_mjbatch)",
            f"yes ({mjbatch})" if mjbatch else "no: pip install mjbatch-uni",
        ),
        (
            "mujoco.batch (bind_mujoco_batch)",
            "yes" if has_batch else f"no: needs MuJoCo >= 4.0 (installed {mujoco.__version__})",
        ),
        (
            "state vectors (bind_state)",
            "yes (mujoco.rollout; "
            + (
                f"mujoco-uni-runtime {uni_runtime})"
                if uni_runtime
                else "mujoco-uni-runtime: pip install mujoco-uni-runtime)"
            ),
        ),
        (
            "unisim-core (attach_unisim)",
            f"yes ({unisim})" if unisim else "no: pip install unisim-core",
        ),
        ("torch CPU tensors as outputs", f"yes ({torch})" if torch else "no: pip install torch"),
    ]


def _cores_note() -> str:
    """Where the core comes from: the prebuilt wheel (one per release) or a source build."""
    if _build_info.PREBUILT:
        return f" (prebuilt wheel, cores for {', '.join(_build_info.MUJOCO_VERSIONS)})"
    return " (source build)"


def _build_text() -> str:
    """One line on how the native core was compiled (``_core.BUILD_INFO``)."""
    b = _core.BUILD_INFO
    flags = [
        "optimized" if b["optimized"] else "not optimized",
        f"SIMD {b['simd']}",
        "assertions on" if b["assertions"] else "assertions off",
    ]
    if b["sanitizers"]:
        flags.append(f"sanitizers {b['sanitizers']}")
    return f"{b['compiler']}, " + ", ".join(flags)


def _kernel_isa_text() -> str:
    """The instruction set of the fast engine's row passes, or why none can be used."""
    try:
        isa = _core.fast_kernel_isa()
    except ValueError as e:
        return str(e)
    lanes = "rows in quads" if isa == "avx2" else "rows in pairs"
    return f"{isa}, {lanes} (MJREFRESH_FAST_ISA=sse2 or avx2 chooses; the same values either way)"


def info_lines() -> list[str]:
    """The report of ``mjrefresh info``, one line per fact."""
    from . import __version__

    affinity = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    rows = [
        ("mjrefresh", __version__),
        (
            "MuJoCo installed",
            f"{mujoco.__version__} (loaded library {_core.mujoco_runtime_version()})",
        ),
        ("MuJoCo the core was built for", _core.MUJOCO_BUILD_VERSION + _cores_note()),
        ("Python", f"{platform.python_version()} ({sys.executable})"),
        ("native core", _build_text()),
        ("fast engine kernels", _kernel_isa_text()),
        ("platform", f"{platform.system()} {platform.machine()}"),
        (
            "CPUs",
            f"{_core.available_cpus()} usable of {os.cpu_count()} logical"
            + (f" (affinity {_ranges(affinity)})" if affinity else ""),
        ),
    ]
    rows += [(f"backend: {name}", status) for name, status in _backends()]
    width = max(len(k) for k, _ in rows)
    return [f"{k:<{width}}  {v}" for k, v in rows]


def _ranges(ids: Sequence[int]) -> str:
    """``0-3,6`` for [0, 1, 2, 3, 6]."""
    spans: list[list[int]] = []
    for i in ids:
        if spans and spans[-1][1] == i - 1:
            spans[-1][1] = i
        else:
            spans.append([i, i])
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in spans)


def plan_text(args: argparse.Namespace) -> str:
    """The report of ``mjrefresh plan``."""
    model = load_model(args.model)
    obj = mujoco.mjtObj

    def given(items: list[str] | None, kind: mujoco.mjtObj) -> list[str | int]:
        return [name_or_id(model, kind, item) for item in items or ()]

    refused: dict[int, str] = {}
    sensors: list[str | int] | None = given(args.sensors, obj.mjOBJ_SENSOR) or None
    if args.all_posvel:
        ok, refused = posvel_sensors(model)
        sensors = [*ok, *(sensors or [])]
    bodies = given(args.bodies, obj.mjOBJ_BODY)
    sites = given(args.sites, obj.mjOBJ_SITE)
    relative_to = (
        None if args.relative_to is None else name_or_id(model, obj.mjOBJ_BODY, args.relative_to)
    )
    if not (bodies or sites or sensors):
        if args.all_posvel:
            raise SystemExit(
                f"mjrefresh plan: --all-posvel: the model has no position/velocity-stage sensor "
                f"a refresh computes ({len(refused)} refused); select --bodies or --sites"
            )
        raise SystemExit(
            "mjrefresh plan: select something: --bodies, --sites, --sensors or --all-posvel"
        )
    try:
        with Refresher(
            model,
            bodies=bodies,
            relative_to=relative_to,
            sites=sites,
            sensors=sensors,
            engine=args.engine,
            num_threads=1,
        ) as refresher:
            # The plan, and the memory one thread's refresher holds.
            lines = [refresher.describe(verbose=args.verbose)]
    except (PlanError, ValueError, TypeError) as exc:
        raise SystemExit(f"mjrefresh plan: {exc}") from None
    if refused:
        lines.append(f"refused ({len(refused)} position/velocity-stage sensors not selected):")
        for i, why in refused.items():
            lines.append(f"  {why}" if args.verbose else f"  {sensor_label(model, i)}")
        if not args.verbose:
            lines.append("  (--verbose gives each reason)")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mjrefresh",
        description="Batched, threaded refresh of MuJoCo position/velocity-derived state.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="versions, CPUs, build and importable backends")
    pl = sub.add_parser("plan", help="what a refresh of a selection would run, and why")
    pl.add_argument(
        "model", help="MJCF (.xml) or MJB file, or an embedded model: " + ", ".join(models.MODELS)
    )
    add_selection_args(pl)
    pl.add_argument("--relative-to", metavar="BODY", help="frame of the *_rel body outputs")
    pl.add_argument("--engine", choices=("auto", "exact", "fast"), default="auto")
    pl.add_argument("--verbose", "-v", action="store_true", help="full listing")
    from .bench.cli import add_parser as add_bench_parser

    bench = add_bench_parser(sub)
    bench.set_defaults(parser=bench)
    return p


#: Errors of a write to stdout: the reader went away, the device is full or
#: failing, a quota or size limit.
_OUTPUT_ERRNOS = frozenset((errno.EPIPE, errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mjrefresh`` console script."""
    try:
        status = _run(argv)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
    except OSError as e:
        # The reader went away (``mjrefresh info | head -1``: nothing more to
        # say) or the output cannot be written (``> /dev/full``: say so).
        # Python's recipe: point stdout at devnull so that the final flush
        # at exit does not raise again. Other OSErrors are not about stdout.
        if e.filename is not None or e.errno not in _OUTPUT_ERRNOS:
            raise
        if not isinstance(e, BrokenPipeError):
            print(f"mjrefresh: cannot write the output: {e.strerror or e}", file=sys.stderr)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return status


def _run(argv: Sequence[str] | None) -> int:
    """Parse ``argv`` and run the sub-command; its exit status."""
    args = _parser().parse_args(argv)
    if args.command == "info":
        print("\n".join(info_lines()))
    elif args.command == "plan":
        print(plan_text(args))
    elif args.command == "bench":
        from .bench.cli import main as bench_main

        return bench_main(args, args.parser)
    return 0
