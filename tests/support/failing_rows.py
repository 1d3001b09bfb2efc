"""A real mju_error source on worker threads, chosen per row by its state.

OVERFLOW_XML declares a small arena (``<size memory="48K"/>``); 30 spheres
sit on the world and 30 on body ``a``, which slides along x. A row with
``qpos[0]`` far from 0 has no contacts; a row with ``qpos[0] == 0`` has
every sphere on every other, and mj_collision's stack allocations for those
pairs overflow the arena: ``mj_stackAlloc: out of memory, stack overflow``
(mj_forward raises the same). The adhesion actuator's velocity sensor
``adv`` puts mj_collision in a refresh's plan; ``tv`` (a spatial tendon's
velocity) and ``fp`` (a body position) are values to check.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_K = 30
_SPHERES = "".join(f'<geom pos="{0.01 * i:.2f} 0 0" size=".1"/>' for i in range(_K))

OVERFLOW_XML = f"""<mujoco><size memory="48K"/><worldbody>{_SPHERES}
 <body name="a"><joint name="x" type="slide" axis="1 0 0"/>{_SPHERES}<site name="s0"/>
  <body name="b" pos="0 0 5"><joint name="j" axis="0 1 0"/>
   <geom size=".05" contype="0" conaffinity="0"/><site name="s1" pos=".1 0 0"/></body></body>
 </worldbody>
 <tendon><spatial name="t"><site site="s0"/><site site="s1"/></spatial></tendon>
 <actuator><adhesion name="ad" body="a" ctrlrange="0 1"/></actuator>
 <sensor><tendonvel name="tv" tendon="t"/><framepos name="fp" objtype="xbody" objname="b"/>
  <actuatorvel name="adv" actuator="ad"/></sensor></mujoco>"""

#: The start of MuJoCo's message for a failing row.
OVERFLOW_MESSAGE = "mj_stackAlloc: out of memory, stack overflow"


def overflow_states(n: int, bad: Sequence[int], seed: int = 0) -> dict[str, np.ndarray]:
    """States of OVERFLOW_XML's model: rows `bad` overflow, the others have no
    contacts (body ``a`` 100-110 m away); random hinge angle and velocities."""
    rng = np.random.default_rng(seed)
    qpos = np.stack([rng.uniform(100, 110, n), rng.normal(size=n)], axis=1)
    qpos[list(bad), 0] = 0.0
    return {"qpos": qpos, "qvel": rng.normal(size=(n, 2))}


def fix_rows(qpos: np.ndarray, rows: Sequence[int]) -> None:
    """Move `rows` of `qpos` back out of contact."""
    qpos[list(rows), 0] = 105.0
