"""The mj_forward oracle: what MuJoCo's own mj_forward gives at each row's
state. Every test that needs expected values takes them from here.

`forward_rows` runs mj_forward once per row (on a reset MjData, so rows do not
depend on each other) and keeps the fields the refresh outputs read;
`Forward.outputs` lays them out like `mjrefresh.RefreshOutputs` for a given
selection. `forward_with_model_fields` is a different computation (the model
itself changes per row) and is kept separate.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import mujoco
import numpy as np

Selector = int | str


@dataclass(frozen=True)
class Forward:
    """mj_forward's fields at each row (leading axis: row)."""

    model: mujoco.MjModel
    sensordata: np.ndarray  # (n, nsensordata)
    xpos: np.ndarray  # (n, nbody, 3)
    xquat: np.ndarray  # (n, nbody, 4)
    xmat: np.ndarray  # (n, nbody, 9)
    vel: np.ndarray  # (n, nbody, 6): mj_objectVelocity(XBODY, world frame): [ang, lin]
    site_xpos: np.ndarray  # (n, nsite, 3)
    site_xmat: np.ndarray  # (n, nsite, 9)

    def outputs(
        self,
        bodies: Sequence[Selector] = (),
        relative_to: Selector | None = None,
        sites: Sequence[Selector] = (),
    ) -> dict[str, np.ndarray]:
        """The expected refresh outputs for this selection (bodies and sites
        by name or id), keyed like `mjrefresh.RefreshOutputs`."""
        m = self.model
        b = np.array([m.body(x).id for x in bodies], dtype=int)
        s = np.array([m.site(x).id for x in sites], dtype=int)
        out = {
            "sensordata": self.sensordata,
            "body_pos": self.xpos[:, b],
            "body_quat": self.xquat[:, b],
            "body_linvel": self.vel[:, b, 3:],
            "body_angvel": self.vel[:, b, :3],
            "site_pos": self.site_xpos[:, s],
            "site_mat": self.site_xmat[:, s],
        }
        if relative_to is not None:
            r = m.body(relative_to).id
            rmat = self.xmat[:, r].reshape(-1, 3, 3)
            diff = self.xpos[:, b] - self.xpos[:, r, None]
            out["body_pos_rel"] = np.einsum("nji,nbj->nbi", rmat, diff)
            out["body_quat_rel"] = _quat_in_frame(self.xquat[:, b], self.xquat[:, r])
        return out


def _quat_in_frame(quats: np.ndarray, frame: np.ndarray) -> np.ndarray:
    """neg(frame) * quats with MuJoCo's own mju_negQuat/mju_mulQuat (a
    framequat sensor with reftype xbody; MuJoCo 4.0 rounds the product
    differently from 3.x): `quats` (n, b, 4), `frame` (n, 4)."""
    out = np.empty_like(quats)
    neg = np.empty(4)
    for i in range(quats.shape[0]):
        mujoco.mju_negQuat(neg, frame[i])
        for k in range(quats.shape[1]):
            mujoco.mju_mulQuat(out[i, k], neg, quats[i, k])
    return out


def _set_state(m: mujoco.MjModel, d: mujoco.MjData, states: Mapping, r: int) -> None:
    """Row `r` of `states` into `d` (mocap and time only where given)."""
    d.qpos[:] = states["qpos"][r]
    d.qvel[:] = states["qvel"][r]
    if m.nmocap and states.get("mocap_pos") is not None:
        d.mocap_pos[:] = states["mocap_pos"][r]
        d.mocap_quat[:] = states["mocap_quat"][r]
    if states.get("time") is not None:
        d.time = float(states["time"][r])


def _forward(m: mujoco.MjModel, d: mujoco.MjData) -> None:
    with warnings.catch_warnings():
        # MuJoCo >= 4 warns about a singular mass matrix (a random tree may
        # repeat a joint axis); dynamics play no part in the refresh outputs.
        warnings.simplefilter("ignore", UserWarning)
        mujoco.mj_forward(m, d)


def forward_rows(
    model: mujoco.MjModel, states: Mapping[str, np.ndarray], rows: Sequence[int] | None = None
) -> Forward:
    """mj_forward at `rows` (default: all) of `states`, a mapping with qpos,
    qvel and optionally mocap_pos, mocap_quat, time (each (N, ...))."""
    rows = range(len(states["qpos"])) if rows is None else list(rows)
    n, m = len(rows), model
    d = mujoco.MjData(m)
    f = Forward(
        m,
        np.empty((n, m.nsensordata)),
        np.empty((n, m.nbody, 3)),
        np.empty((n, m.nbody, 4)),
        np.empty((n, m.nbody, 9)),
        np.empty((n, m.nbody, 6)),
        np.empty((n, m.nsite, 3)),
        np.empty((n, m.nsite, 9)),
    )
    for k, r in enumerate(rows):
        mujoco.mj_resetData(m, d)
        _set_state(m, d, states, r)
        _forward(m, d)
        f.sensordata[k] = d.sensordata
        f.xpos[k] = d.xpos
        f.xquat[k] = d.xquat
        f.xmat[k] = d.xmat
        f.site_xpos[k] = d.site_xpos
        f.site_xmat[k] = d.site_xmat
        for b in range(m.nbody):
            mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_XBODY, b, f.vel[k, b], 0)
    return f


def expected_outputs(
    model: mujoco.MjModel,
    states: Mapping[str, np.ndarray],
    bodies: Sequence[Selector] = (),
    relative_to: Selector | None = None,
    sites: Sequence[Selector] = (),
    rows: Sequence[int] | None = None,
) -> dict[str, np.ndarray]:
    """`forward_rows(model, states, rows).outputs(bodies, relative_to, sites)`."""
    return forward_rows(model, states, rows).outputs(bodies, relative_to, sites)


def forward_with_model_fields(
    model: mujoco.MjModel,
    states: Mapping[str, np.ndarray],
    fields: Mapping[str, np.ndarray],
    row: int,
) -> tuple[mujoco.MjModel, mujoco.MjData, np.ndarray]:
    """mj_forward at `row` on a copy of `model` holding that row's values of
    the per-environment model `fields`: (model copy, data, (nbody, 6) body
    velocities as in `Forward.vel`)."""
    m = copy.deepcopy(model)
    for name, vals in fields.items():
        getattr(m, name)[...] = vals[row]
    d = mujoco.MjData(m)
    if "body_mass" in fields:
        # body_subtreemass follows body_mass, accumulated as mj_setConst does
        # (mj_setConst itself refuses "simple" bodies whose inertial frame moved).
        m.body_subtreemass[:] = m.body_mass
        for b in range(m.nbody - 1, 0, -1):
            m.body_subtreemass[m.body_parentid[b]] += m.body_subtreemass[b]
    _set_state(m, d, states, row)
    mujoco.mj_forward(m, d)
    vel = np.empty((m.nbody, 6))
    for b in range(m.nbody):
        mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_XBODY, b, vel[b], 0)
    return m, d, vel
