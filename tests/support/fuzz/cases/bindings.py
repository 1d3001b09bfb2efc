"""Families of bound calls: Refresher.bind (bound) and StateCache /
bind_arrays (cache)."""

from __future__ import annotations

import random

from support.fuzz.cases.draws import OBJ, _name, call_line, model_line, random_selection, setup
from support.fuzz.cases.suite import family


@family(0.6)
def gen_bound(rng: random.Random) -> str:
    """Refresher.bind once, then many BoundRefresh calls (valid and invalid
    rows, dirty masks) with the bound state changed in place between them."""
    code, info = setup(rng, n=rng.choice((1, 5, 12)))
    n = info["n"]
    code += (
        "bound = r.bind(args['qpos'], args['qvel'], args['out'], "
        "**{k: v for k, v in args.items() if k not in ('rows', 'qpos', 'qvel', 'out')})\n"
        "args['qpos'] = args['qpos'].copy(); args['qvel'] = args['qvel'].copy()\n"
        "bound = r.bind(args['qpos'], args['qvel'], args['out'], "
        "**{k: v for k, v in args.items() if k not in ('rows', 'qpos', 'qvel', 'out')})\n"
        "args['bound'] = bound\n"
    )
    for k in range(rng.randint(2, 5)):
        if rng.random() < 0.6:
            code += (
                f"new = c.make_states(model, n, seed={rng.randrange(10**6)})\n"
                "args['qpos'][...] = new['qpos']\nargs['qvel'][...] = new['qvel']\n"
            )
        code += "args['out'] = bound.out\n"
        roll = rng.random()
        if roll < 0.6:
            sel_code, method = call_line(rng, n, rng.choice(("bound", "bound_call", "bound_dirty")))
            code += sel_code
        else:
            method = rng.choice(("bound", "bound_dirty"))
            bad = rng.choice(
                (
                    "np.array([n])",
                    "np.array([1, 0])",
                    "np.ones(n + 1, bool)",
                    "np.array([0.0])",
                    "None",
                    "np.zeros((1, 1), np.int64)",
                )
            )
            key = "dirty" if method == "bound_dirty" else "rows"
            code += f"args[{key!r}] = {bad}\n"
        code += f"c.check(r, {method!r}, args, note='bound call {k}')\n"
    return code


@family(0.9)
def gen_cache(rng: random.Random) -> str:
    """StateCache / bind_arrays: bad binding arguments; reads with env_ids and
    bodies of every form (and invalid ones); marks (valid and invalid rows),
    frozen blocks and in-place state writes between reads."""
    m_name = rng.choice(("legged", "hostile", "three_link", "zoo", "quadruped", "tree"))
    code, m = model_line(rng, m_name)
    sel = random_selection(rng, m)
    if not sel.get("bodies") and m.nbody > 1:
        sel["bodies"] = [_name(m, OBJ.mjOBJ_BODY, 1)]
    if rng.random() < 0.3:
        sel.pop("relative_to", None)
    sel.update(num_threads=rng.choice((1, 2)), engine=rng.choice(("auto", "exact")))
    n = rng.choice((1, 4, 9))
    dtype = rng.choice(("float64", "float32"))
    code += (
        f"n = {n}\nstates = c.make_states(model, n, seed={rng.randrange(10**6)})\n"
        f"r = c.check_build(model, {sel!r})\n"
        "kw = c.state_kwargs(model, states, time=r.plan.needs_time)\n"
    )
    if rng.random() < 0.35:  # a bad binding first
        bad, names = rng.choice(
            (
                ("qpos=states['qpos'][:, :-1]", ["qpos"]),
                ("qpos=states['qpos'].astype(np.float32)", ["qpos"]),
                ("qvel=states['qvel'][:-1]", ["qvel"]),
                ("qpos=states['qpos'].tolist()", ["qpos"]),
                ("dtype=np.int32", ["dtype"]),
                ("sensordata=np.zeros((n, model.nsensordata + 1))", ["sensordata"]),
                ("body_pos=np.zeros((n, 99, 3))", ["body_pos"]),
                ("backend_outputs=('sensordata',)", ["backend_outputs"]),
                ("sensordata=states['qpos']", ["sensordata", "qpos"]),
            )
        )
        key = bad.split("=")[0]
        code += (
            f"bad = dict(qpos=states['qpos'], qvel=states['qvel'], **kw)\n"
            f"bad[{key!r}] = {bad.split('=', 1)[1]}\n"
            "if 'sensordata' in bad and not r.plan.column_ranges or 'body_pos' in bad "
            "and not r.plan.body_ids:\n"
            "    pass  # an output the plan does not write: rejected all the same\n"
            f"c.check_bind_arrays(r, broken={names!r}, **bad)\n"
        )
    code += (
        "cache = c.check_bind_arrays(r, qpos=states['qpos'], qvel=states['qvel'], "
        f"dtype=np.{dtype}, **kw)\n"
    )
    bodies = list(sel.get("bodies", []))
    for _ in range(rng.randint(3, 9)):
        roll = rng.random()
        if roll < 0.2:
            ids = sorted(rng.sample(range(n), k=rng.randint(1, n)))
            mark = rng.choice(("mark_dirty", "mark_stepped", "mark_fresh"))
            code += (
                f"new = c.make_states(model, n, seed={rng.randrange(10**6)})\n"
                f"for k in ('qpos', 'qvel'):\n    states[k][{ids!r}] = new[k][{ids!r}]\n"
                f"c.check_mark(cache, {mark!r}, {ids!r}, broken=False)\n"
            )
            continue
        if roll < 0.3:
            bad_rows = rng.choice(
                (f"[{n}]", "[-1]", "'0'", "1.5", f"np.ones({n + 1}, bool)", "[[0]]")
            )
            mark = rng.choice(("mark_dirty", "mark_stepped", "mark_fresh"))
            code += f"c.check_mark(cache, {mark!r}, {bad_rows}, broken=True)\n"
            continue
        if roll < 0.37:
            code += (
                "# inside frozen() reads return the stored values and refresh nothing\n"
                "stored = {k: v.copy() for k, v in cache.storage.arrays().items()}\n"
                "dirty = cache.dirty.copy()\n"
                "cache.mark_stepped()\n"
                "with cache.frozen():\n"
                "    got = cache.outputs()\n"
                "assert all(np.array_equal(got.arrays()[k], v, equal_nan=True) "
                "for k, v in stored.items()), 'a read inside frozen() refreshed'\n"
                "assert cache.dirty.all(), 'frozen() cleared dirty rows'\n"
            )
            continue
        env = rng.choice(
            (
                "None",
                "0",
                f"{n - 1}",
                f"slice(0, {n}, 2)",
                f"slice({n}, None, -1)",
                f"{sorted(rng.sample(range(n), k=rng.randint(1, n)))!r}",
                f"np.array({[rng.randrange(n) for _ in range(3)]!r})",
                f"np.array({[rng.randrange(n) for _ in range(3)]!r}, dtype=np.uint8)",
                f"np.ones({n}, bool)",
                f"[{n}]",
                "-1",
                "1.5",
                "'0'",
                f"np.ones({n + 1}, bool)",
                "np.array([[0]])",
                "True",
                f"np.array([{n}], dtype=np.uint64)",
            )
        )
        bad_env = env in (
            f"[{n}]",
            "-1",
            "1.5",
            "'0'",
            f"np.ones({n + 1}, bool)",
            "np.array([[0]])",
            "True",
            f"np.array([{n}], dtype=np.uint64)",
        )
        read = rng.choice(
            (
                "body_pos",
                "body_quat",
                "body_linvel",
                "body_angvel",
                "body_pos_rel",
                "body_quat_rel",
                "site_pos",
                "site_mat",
                "sensor",
                "outputs",
            )
        )
        broken = {"env_ids"} if bad_env else set()
        arg = "None"
        if read.startswith("body"):
            if not bodies or (read.endswith("_rel") and "relative_to" not in sel):
                broken |= {read}
            else:
                choice = rng.random()
                if choice < 0.3:
                    arg = repr(rng.choice(bodies))
                elif choice < 0.6:
                    arg = repr(rng.sample(bodies, k=rng.randint(1, len(bodies))))
                elif choice < 0.7:
                    arg = "'no_such_body'"
                    broken |= {"bodies"}
        elif read.startswith("site") and not sel.get("sites"):
            broken |= {read}
        elif read == "sensor":
            sensors = list(sel.get("sensors", []))
            if sensors and rng.random() < 0.8:
                arg = repr(rng.choice(sensors))
            else:
                arg = "'no_such_sensor'"
                broken |= {"name"}
        code += (
            f"c.check_cache_read(cache, {read!r}, {arg}, {env}, dict(states, **kw), "
            f"broken={sorted(broken)!r})\n"
        )
    return code
