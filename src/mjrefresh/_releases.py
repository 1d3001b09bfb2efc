"""The MuJoCo releases the prebuilt wheel supports (``mujoco_releases.txt``).

That file is the one list of supported releases: CMake builds a core per
line for the wheel, ``scripts/build-wheel.sh`` fetches each release's wheel,
CI installs each release, and the import-time selector names them in its
error message.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

RELEASES_FILE = Path(__file__).with_name("mujoco_releases.txt")


@dataclass(frozen=True)
class Release:
    """One supported MuJoCo release.

    ``install`` is the requirement that installs it (``mujoco==3.11.0``;
    ``mujoco-core==4.0.1`` for a release published only as mujoco-core) and
    ``headers_from`` the wheel holding its headers and libmujoco.
    """

    version: str
    install: str
    headers_from: str


def supported_releases(path: Path = RELEASES_FILE) -> tuple[Release, ...]:
    """Parse the releases file: one ``version install headers_from`` per line."""
    releases = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) != 3:
            raise ValueError(
                f"{path}:{number}: expected 'version install-requirement wheel', got {line!r}"
            )
        releases.append(Release(*fields))
    return tuple(releases)
