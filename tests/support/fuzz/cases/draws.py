"""What the family generators share: the models a call case draws from,
random valid selections, the code that builds a model, states, a refresher
and valid arguments (`setup`; `_long_setup` for a call that lasts), a
`rows` argument and an entry point, and the arrays a case can change."""

from __future__ import annotations

import random

import mujoco

from support.fuzz import contract as c

CALL_MODELS = (
    "hostile",
    "legged",
    "three_link",
    "rich",
    "zoo",
    "quadruped",
    "humanoid",
    "soak",
    "tendon_vel",
    "go1like",
    "chain",
    "tree",
)
OBJ = mujoco.mjtObj


def _allowed_sensors(m: mujoco.MjModel) -> list[int]:
    try:
        return c.pos_vel_sensors(m)
    except Exception:  # noqa: BLE001 - the planner's own bug; fall back to the stage rule
        return [
            i
            for i in range(m.nsensor)
            if int(m.sensor_needstage[i]) != mujoco.mjtStage.mjSTAGE_ACC
            and int(m.sensor_type[i])
            not in (mujoco.mjtSensor.mjSENS_USER, mujoco.mjtSensor.mjSENS_PLUGIN)
        ]


def _name(m: mujoco.MjModel, obj: mujoco.mjtObj, i: int) -> str | int:
    nm = mujoco.mj_id2name(m, obj, i)
    return nm if nm else i


def random_selection(
    rng: random.Random, m: mujoco.MjModel, *, bodies: bool = True, sensors: bool = True
) -> dict:
    """Valid Refresher keyword arguments: bodies (maybe relative), sites,
    sensors and/or sensor_ranges of computable sensors."""
    sel: dict = {}
    if bodies and m.nbody > 1 and rng.random() < 0.8:
        ids = rng.sample(
            range(0 if rng.random() < 0.1 else 1, m.nbody), k=min(m.nbody - 1, rng.randint(1, 4))
        )
        sel["bodies"] = [_name(m, OBJ.mjOBJ_BODY, i) if rng.random() < 0.8 else i for i in ids]
        if rng.random() < 0.5:
            sel["relative_to"] = _name(m, OBJ.mjOBJ_BODY, rng.randrange(m.nbody))
    if m.nsite and rng.random() < 0.5:
        ids = rng.sample(range(m.nsite), k=min(m.nsite, rng.randint(1, 3)))
        sel["sites"] = [_name(m, OBJ.mjOBJ_SITE, i) for i in ids]
    allowed = _allowed_sensors(m)
    if sensors and allowed and rng.random() < 0.85:
        ids = sorted(rng.sample(allowed, k=min(len(allowed), rng.randint(1, 6))))
        if rng.random() < 0.7:
            sel["sensors"] = [_name(m, OBJ.mjOBJ_SENSOR, i) for i in ids]
        if rng.random() < 0.4 or "sensors" not in sel:
            ranges = []
            for i in ids[:3]:
                adr, dim = int(m.sensor_adr[i]), int(m.sensor_dim[i])
                a = adr + rng.randrange(dim)
                ranges.append((a, rng.randint(a + 1, adr + dim)))
            sel["sensor_ranges"] = ranges
    return sel


def model_line(rng: random.Random, name: str | None = None) -> tuple[str, mujoco.MjModel]:
    """Code that binds `model`, and that model (for drawing a selection)."""
    name = name or rng.choice(CALL_MODELS)
    if name == "tree":
        desc = c.random_tree_desc(rng)
        return f"model = c.tree_model({desc!r})\n", c.tree_model(desc)
    return f"model = c.load_model({name!r})\n", c.load_model(name)


def setup(
    rng: random.Random,
    *,
    model: str | None = None,
    n: int | None = None,
    engine: str | None = None,
    dtype: str | None = None,
    threads: int | None = None,
    selection: dict | None = None,
    fields: tuple[str, ...] = (),
) -> tuple[str, dict]:
    """Code for a model, states, a Refresher and valid args; and what it drew."""
    code, m = model_line(rng, model)
    n = n if n is not None else rng.choice((0, 1, 2, 3, 4, 5, 6, 8, 9, 13, 17, 33))
    engine = engine or rng.choice(("auto", "auto", "exact", "fast"))
    threads = threads if threads is not None else rng.choice((1, 2, 2, 3, 4, 7))
    sel = dict(selection if selection is not None else random_selection(rng, m))
    if fields:
        sel["model_fields"] = fields
    sel.update(num_threads=threads, engine=engine)
    dtype = dtype or rng.choice(("float64", "float64", "float32"))
    seed = rng.randrange(10**6)
    code += f"n = {n}\nstates = c.make_states(model, n, seed={seed})\n"
    maybe = "{'engine'}" if engine == "fast" else "()"
    code += (
        f"r = c.check_build(model, {sel!r}, maybe={maybe})\n"
        "if r is None:  # engine='fast' rightly refused an uncovered selection\n"
        "    raise SystemExit(0)\n"
        f"args = c.valid_args(r, states, n, np.{dtype})\n"
    )
    return code, dict(m=m, n=n, engine=engine, sel=sel, dtype=dtype, seed=seed)


def rows_literal(rng: random.Random, n: int) -> str:
    """A valid `rows` argument for N = n, as code."""
    kind = rng.random()
    ids = sorted(rng.sample(range(n), k=rng.randint(0, n))) if n else []
    if kind < 0.25:
        return "np.arange(n)"
    if kind < 0.45:
        mask = [i in ids for i in range(n)]
        return f"np.array({mask!r})"
    if kind < 0.55:
        return f"{ids!r}"
    dt = rng.choice(("int64", "int32", "int16", "uint8", "uint32", "uint64", "int8"))
    return f"np.array({ids!r}, dtype=np.{dt})"


def call_line(rng: random.Random, n: int, method: str | None = None) -> tuple[str, str]:
    """(code that sets the selection argument, method) for a random entry point."""
    method = method or rng.choice(
        ("refresh", "refresh", "refresh_dirty_rows", "bound", "bound_call", "bound_dirty")
    )
    if "dirty" in method:
        ids = sorted(rng.sample(range(n), k=rng.randint(min(n, 1), n))) if n else []
        return f"args['dirty'] = np.isin(np.arange(n), {ids!r})\n", method
    return f"args['rows'] = {rows_literal(rng, n)}\n", method


def _out_names(info: dict) -> list[str]:
    sel = info["sel"]
    names = []
    if sel.get("bodies"):
        names += ["body_pos", "body_quat", "body_linvel", "body_angvel"]
        if "relative_to" in sel:
            names += ["body_pos_rel", "body_quat_rel"]
    if sel.get("sites"):
        names += ["site_pos", "site_mat"]
    if sel.get("sensors") or sel.get("sensor_ranges"):
        names.append("sensordata")
    return names


def _targets(info: dict, outputs: bool = True) -> list[str]:
    t = ["qpos", "qvel"]
    if info["m"].nmocap:
        t += ["mocap_pos", "mocap_quat"]
    if outputs:
        t += [f"out.{k}" for k in _out_names(info)]
    return t


def _get(target: str) -> str:
    return f"args['out'].{target[4:]}" if target.startswith("out.") else f"args[{target!r}]"


LONG_MODELS = ("three_link", "legged", "soak")


def _long_setup(rng: random.Random, rows: int) -> str:
    """A refresher and states for a call that lasts a good fraction of a second."""
    model = rng.choice(LONG_MODELS)
    return (
        f"model = c.load_model({model!r})\n"
        "base = c.make_states(model, 500, seed=%d)\n"
        % rng.randrange(10**6)
        + f"states = c.tiled_states(base, {rows // 500})\n"
        "n = len(states['qpos'])\n"
        "r = c.check_build(model, {'sensors': c.pos_vel_sensors(model), "
        f"'bodies': [1], 'num_threads': {rng.choice((1, 2, 3))}, 'engine': 'exact'}})\n"
        "kw = c.state_kwargs(model, states)\n"
        "out = c.sentinel_outputs(r, n)\n"
        "sample = np.unique(np.r_[0, n - 1, np.random.default_rng(0).integers(0, n, 20)])\n"
    )
