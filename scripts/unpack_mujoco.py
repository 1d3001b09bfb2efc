"""Unpack the headers and libmujoco of one MuJoCo wheel for the wheel build.

    python unpack_mujoco.py WHEEL VERSION DEST

writes DEST/mujoco/include/... and DEST/mujoco/libmujoco.so.VERSION, the
layout cmake/MuJoCoCores.cmake expects per release. Nothing else of the
wheel is needed: the cores only compile and link against it.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path


def unpack(wheel: Path, version: str, dest: Path) -> None:
    """Extract ``mujoco/include/`` and ``mujoco/libmujoco.so.<version>`` from ``wheel``."""
    library = f"mujoco/libmujoco.so.{version}"
    with zipfile.ZipFile(wheel) as zf:
        names = [n for n in zf.namelist() if n.startswith("mujoco/include/") or n == library]
        if library not in names or "mujoco/include/mujoco/mujoco.h" not in names:
            raise SystemExit(f"{wheel}: no {library} or mujoco/include/mujoco/mujoco.h in it")
        zf.extractall(dest, names)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    unpack(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]))
