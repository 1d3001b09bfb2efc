"""The construction family (Refresher arguments) and the outputs family
(Refresher.outputs arguments)."""

from __future__ import annotations

import random

import mujoco

from support.fuzz.cases.draws import (
    OBJ,
    _allowed_sensors,
    _name,
    model_line,
    random_selection,
    setup,
)
from support.fuzz.cases.suite import family


@family(1.2)
def gen_construction(rng: random.Random) -> str:
    """Selections at construction: unknown names, ids out of range or
    negative, overlapping/reversed/empty/out-of-bounds ranges, bad
    num_threads/cpu_ids/engine/model_fields values; then a refresh."""
    code, m = model_line(
        rng,
        rng.choice(
            (
                "hostile",
                "legged",
                "rich",
                "zoo",
                "three_link",
                "quadruped",
                "constraint",
                "bad_input",
            )
        ),
    )
    sel = random_selection(rng, m)
    sel["num_threads"] = rng.choice((1, 2, 3))
    broken: set[str] = set()
    maybe: set[str] = set()
    mentions: list[str] = []
    extra: list[str] = []
    key = rng.choice(
        (
            "bodies",
            "sites",
            "sensors",
            "relative_to",
            "sensor_ranges",
            "num_threads",
            "cpu_ids",
            "engine",
            "model_fields",
            "model",
            "combo",
        )
    )
    nd = m.nsensordata
    if key in ("bodies", "sites", "sensors"):
        count = {"bodies": m.nbody, "sites": m.nsite, "sensors": m.nsensor}[key]
        v = rng.choice(
            (
                "unknown",
                "id_high",
                "id_neg",
                "dup",
                "float",
                "bool",
                "none_item",
                "np_int",
                "str_single",
                "empty",
                "huge",
                "acc" if key == "sensors" else "unknown",
            )
        )
        good = list(sel.get(key, [])) or ([0] if count else [])
        val: object
        if v == "unknown":
            val, b = good + ["no_such_thing"], True
        elif v == "id_high":
            val, b = good + [count + rng.randint(0, 5)], True
        elif v == "id_neg":
            val, b = [-rng.randint(1, 3)] + good, True
        elif v == "dup":
            val, b = (good + good[:1]) if good else [], bool(good)
        elif v == "float":
            val, b = good + [1.0], True
        elif v == "bool":
            val, b = good + [True], True
        elif v == "none_item":
            val, b = good + [None], True
        elif v == "np_int":
            ints = [i for i in range(min(count, 2))]
            extra.append(f"kwargs[{key!r}] = [np.int64(i) for i in {ints!r}]  # numpy ints\n")
            val, b = ints, None
            if key == "sensors":  # an acceleration-stage one among them is refused by name
                mentions.extend(
                    str(_name(m, OBJ.mjOBJ_SENSOR, i))
                    for i in ints
                    if int(m.sensor_needstage[i]) == mujoco.mjtStage.mjSTAGE_ACC
                )
        elif v == "str_single":
            val, b = (good[0] if good and isinstance(good[0], str) else "no_such_thing"), None
        elif v == "empty":
            val, b = [], False
        elif v == "huge":
            val, b = good + [2**63], True
        else:  # acceleration-stage sensor
            acc = [
                i
                for i in range(m.nsensor)
                if int(m.sensor_needstage[i]) == mujoco.mjtStage.mjSTAGE_ACC
            ]
            if acc:
                i = rng.choice(acc)
                val, b = good + [_name(m, OBJ.mjOBJ_SENSOR, i)], True
                mentions.append(str(_name(m, OBJ.mjOBJ_SENSOR, i)))
            else:
                val, b = good, False
        if b is None:
            if v == "str_single":
                b = val == "no_such_thing"
            else:
                maybe.add(key)
                b = False
        if key == "bodies" and "relative_to" in sel and not val:
            broken.add("relative_to")
        sel[key] = val
        if b:
            broken.add(key)
    elif key == "relative_to":
        v = rng.choice(("unknown", "no_bodies", "id_high", "id_neg", "list", "valid_id"))
        if v == "unknown":
            sel["relative_to"] = "no_such_body"
        elif v == "no_bodies":
            sel["relative_to"] = _name(m, OBJ.mjOBJ_BODY, 1)
            sel.pop("bodies", None)
        elif v == "id_high":
            sel["relative_to"] = m.nbody
        elif v == "id_neg":
            sel["relative_to"] = -1
        elif v == "list":
            sel["relative_to"] = [1]
        else:
            sel["relative_to"] = rng.randrange(m.nbody)
        if v != "valid_id":
            broken.add("relative_to")
        elif not sel.get("bodies"):
            broken.add("relative_to")
    elif key == "sensor_ranges":
        v = rng.choice(
            (
                "overlap",
                "reversed",
                "empty",
                "oob",
                "negative",
                "pair",
                "floats",
                "np_ints",
                "not_pairs",
                "triple",
                "acc_cover",
                "whole",
                "none_item",
            )
        )
        a = rng.randrange(nd) if nd else 0
        b = rng.randint(a + 1, nd) if nd else 1
        vals: object = {
            "overlap": [(a, b), (max(0, a - 1), min(nd, b + 1)), (a, b)],
            "reversed": [(b, a)],
            "empty": [(a, a)],
            "oob": [(a, nd + rng.randint(1, 5))],
            "negative": [(-1, b)],
            "pair": (a, b),
            "floats": [(a + 0.5, b)],
            "np_ints": [(a, b)],
            "not_pairs": [a, b],
            "triple": [(a, b, b)],
            "acc_cover": [(0, nd)],
            "whole": [(0, nd)],
            "none_item": [(a, None)],
        }[v]
        sel.pop("sensors", None)
        sel["sensor_ranges"] = vals
        if v == "np_ints":
            extra.append(f"kwargs['sensor_ranges'] = [tuple(np.array({[a, b]!r}))]\n")
        if v in ("reversed", "empty", "oob", "negative", "not_pairs", "triple", "none_item"):
            broken.add("sensor_ranges")
        if v == "floats":
            maybe.add("sensor_ranges")
        if nd == 0:
            broken.add("sensor_ranges")
        if v in ("acc_cover", "whole", "overlap", "pair", "floats", "np_ints") and nd:
            lo, hi = (
                (0, nd)
                if v in ("acc_cover", "whole")
                else ((max(0, a - 1), min(nd, b + 1)) if v == "overlap" else (a, b))
            )
            for i in range(m.nsensor):
                s0, s1 = int(m.sensor_adr[i]), int(m.sensor_adr[i] + m.sensor_dim[i])
                if s0 < hi and lo < s1 and i not in _allowed_sensors(m):
                    broken.add("sensor_ranges")
                    mentions.append(str(_name(m, OBJ.mjOBJ_SENSOR, i)))
    elif key == "num_threads":
        v, verdict = rng.choice(
            (
                (0, "ok"),
                (1, "ok"),
                (64, "ok"),
                (-1, "bad"),
                (1.5, "bad"),
                (True, "bad"),
                ("2", "bad"),
                (None, "bad"),
                ("np2", "ok"),
            )
        )
        sel["num_threads"] = 2 if v == "np2" else v
        if v == "np2":
            extra.append("kwargs['num_threads'] = np.int64(2)\n")
        if verdict == "bad":
            broken.add("num_threads")
        if verdict == "maybe":
            maybe.add("num_threads")
    elif key == "cpu_ids":
        v, verdict = rng.choice(
            (
                ([], "bad"),
                ([100000], "bad"),
                ([-1], "bad"),
                ([0], "ok"),
                ([0, 0], "ok"),
                ([0.5], "bad"),
                ("0", "bad"),
                (5, "bad"),
                ("nparr", "ok"),
                ([True], "bad"),
                ([0, 1], "maybe"),
            )
        )
        sel["cpu_ids"] = [0] if v == "nparr" else v
        if v == "nparr":
            extra.append("kwargs['cpu_ids'] = np.array([0])\n")
        if verdict == "bad":
            broken.add("cpu_ids")
        if verdict == "maybe":
            maybe.add("cpu_ids")  # cpu 1 may be outside this process's affinity set
    elif key == "engine":
        v = rng.choice(("turbo", "", None, 1, "EXACT", "Fast", "exact", "fast", "auto"))
        sel["engine"] = v
        if v not in ("exact", "fast", "auto"):
            broken.add("engine")
        if v == "fast":
            maybe.add("engine")
    elif key == "model_fields":
        v = rng.choice(
            (
                ("no_field",),
                ("geom_size",),
                ("body_pos", "body_pos"),
                (1,),
                "body_mass",
                ("body_mass", "jnt_axis"),
            )
        )
        sel["model_fields"] = v
        if v not in ("body_mass", ("body_mass", "jnt_axis")):
            broken.add("model_fields")
    elif key == "model":
        code += rng.choice(
            ("model = mujoco.MjData(model)\n", "model = None\n", "model = 'model.xml'\n")
        )
        broken.add("model")
    else:  # combo: two independent problems, either may be named
        sel["bodies"] = ["no_such_body"]
        sel["num_threads"] = -2
        broken |= {"bodies", "num_threads"}
    if sel.get("engine") is None and key != "engine":
        sel["engine"] = rng.choice(("auto", "exact"))
    code += f"kwargs = {sel!r}\n" + "".join(extra)
    code += (
        f"r = c.check_build(model, kwargs, broken={sorted(broken)!r}, "
        f"maybe={sorted(maybe)!r}, mentions={mentions!r}"
        + (", resources=True" if key == "num_threads" else "")
        + ")\n"
        "if r is not None:\n"
        f"    c.check_full_refresh(r, n={rng.choice((1, 4, 9))}, "
        f"seed={rng.randrange(10**6)})\n"
        "    r.close()\n"
    )
    return code


@family(0.3)
def gen_outputs(rng: random.Random) -> str:
    """Refresher.outputs(num_envs, dtype, **arrays) with good and bad arguments."""
    code, info = setup(rng, n=3)
    num, nbad = rng.choice(
        (
            (0, False),
            (1, False),
            (7, False),
            (-1, True),
            (1.5, True),
            (True, True),
            ("3", True),
            (None, True),
            (2**70, True),
            ("np", False),
        )
    )
    dt, dbad = rng.choice(
        (
            ("np.float64", False),
            ("np.float32", False),
            ("'f8'", False),
            ("np.int64", True),
            ("np.float16", True),
            ("'>f8'", True),
            ("np.complex64", True),
            ("None", False),
            ("'float64'", False),
        )
    )
    arrays = rng.choice(
        (
            "{}",
            "{'sensordata': np.zeros((N, model.nsensordata))}",
            "{'foo': np.zeros(3)}",
            "{'sensordata': [0.0]}",
            "{'site_pos': np.zeros((N, 1, 3))}",
        )
    )
    num_text = "np.int64(4)" if num == "np" else repr(num)
    broken = (["num_envs"] if nbad else []) + (["dtype"] if dbad else [])
    if "foo" in arrays:
        broken.append("foo")
    elif "sensordata': [" in arrays:
        broken.append("sensordata")
    code += (
        f"N = {num_text}\nbroken_extra = []\n"
        f"try:\n    arrays = {arrays}\nexcept (TypeError, ValueError):  # N itself is bad\n"
        "    arrays = {}\n"
        "if 'site_pos' in arrays and not r.plan.site_ids:\n"
        "    broken_extra.append('site_pos')  # an output this plan does not write\n"
        "if 'sensordata' in arrays and not r.plan.column_ranges:\n"
        "    broken_extra.append('sensordata')\n"
    )
    code += f"c.check_outputs_call(r, N, {dt}, arrays, broken={broken!r} + broken_extra)\n"
    return code
