"""Model names to ids, exactly.

MuJoCo's ``mj_name2id`` is a C lookup: it reads a name up to its first NUL
character, so ``"base\\0junk"`` would find ``"base"``. Every name mjrefresh
resolves goes through :func:`name_to_id`, which finds no object for such a
name (no MuJoCo name can contain one).
"""

from __future__ import annotations

import mujoco


def name_to_id(model: mujoco.MjModel, objtype: mujoco.mjtObj, name: str) -> int:
    """The id of the object of `objtype` named exactly `name`, or -1."""
    return -1 if "\0" in name else mujoco.mj_name2id(model, objtype, name)
