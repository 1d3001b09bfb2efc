"""Every Python code block of README.md and docs/*.md runs as a test.

Sybil (https://sybil.readthedocs.io) collects the blocks; the blocks of one
document share a namespace and run in order, as a reader would paste them.
Blocks with ``>>>`` prompts are doctests (their printed output is checked).
A block that needs an optional backend is preceded by
``<!-- skip: next if(not HAVE["name"], reason="...") -->`` and is skipped,
with the reason, where that backend is missing.
"""

from __future__ import annotations

import doctest
import importlib.util
from typing import Any

from sybil import Sybil
from sybil.parsers.markdown import PythonCodeBlockParser, SkipParser


def _have_mujoco_batch() -> bool:
    import mujoco

    return int(mujoco.__version__.split(".")[0]) >= 4


def _setup(namespace: dict[str, Any]) -> None:
    namespace["HAVE"] = {
        "mjbatch": importlib.util.find_spec("mjbatch") is not None,
        "torch": importlib.util.find_spec("torch") is not None,
        "unisim": importlib.util.find_spec("unisim") is not None
        and importlib.util.find_spec("torch") is not None,
        "mujoco_uni": importlib.util.find_spec("mujoco_uni") is not None,
        "mujoco.batch": _have_mujoco_batch(),
    }


def _teardown(namespace: dict[str, Any]) -> None:
    # A document's namespace outlives its blocks (pytest keeps the items);
    # drop what the blocks made, so native objects are freed here and not
    # reported as leaks at interpreter exit.
    namespace.clear()


pytest_collect_file = Sybil(
    parsers=[
        PythonCodeBlockParser(doctest_optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE),
        SkipParser(),
    ],
    patterns=["README.md", "docs/*.md"],
    excludes=["bench/*"],
    setup=_setup,
    teardown=_teardown,
).pytest()
