"""State the supported MuJoCo range in the prebuilt wheel's metadata.

    python pin_mujoco_range.py WHEEL RELEASES_FILE

A source build depends on ``mujoco>=3.10.0`` (it compiles against whatever
MuJoCo is installed); the prebuilt wheel runs only with the releases it has
a core for, so its ``Requires-Dist: mujoco`` gets the newest listed release
published as ``mujoco`` as upper bound. Rewrites METADATA and its RECORD
line in place.
"""

from __future__ import annotations

import base64
import hashlib
import re
import sys
import zipfile
from pathlib import Path


def mujoco_range(releases_file: Path) -> str:
    """``mujoco>=<oldest>,<=<newest>`` over the ``mujoco==`` install requirements."""
    versions = re.findall(r"^\S+\s+mujoco==(\S+)", releases_file.read_text(), re.M)
    key = [tuple(int(p) for p in v.split(".")) for v in versions]
    return f"mujoco>={versions[key.index(min(key))]},<={versions[key.index(max(key))]}"


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def pin(wheel: Path, requirement: str) -> None:
    """Replace the wheel's ``Requires-Dist: mujoco...`` line with ``requirement``."""
    with zipfile.ZipFile(wheel) as zf:
        items = [(info, zf.read(info)) for info in zf.infolist()]
    meta_name = next(i.filename for i, _ in items if i.filename.endswith(".dist-info/METADATA"))
    record_name = meta_name.replace("METADATA", "RECORD")
    files = {i.filename: data for i, data in items}
    meta, count = re.subn(
        r"^Requires-Dist: mujoco(?=[\s<>=!~;(]|$)[^;\n]*",
        f"Requires-Dist: {requirement}",
        files[meta_name].decode(),
        flags=re.M,
    )
    if count != 1:
        raise SystemExit(f"{wheel}: expected one 'Requires-Dist: mujoco' line, found {count}")
    files[meta_name] = meta.encode()
    record = [
        _record_line(meta_name, files[meta_name]) if line.startswith(meta_name + ",") else line
        for line in files[record_name].decode().splitlines()
    ]
    files[record_name] = ("\n".join(record) + "\n").encode()
    tmp = wheel.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for info, _ in items:
            zf.writestr(info, files[info.filename])
    tmp.replace(wheel)
    print(f"--- {wheel.name}: Requires-Dist: {requirement}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    pin(Path(sys.argv[1]), mujoco_range(Path(sys.argv[2])))
