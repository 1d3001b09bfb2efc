"""Families of unusual values: non-finite and huge states (nonfinite),
non-finite model values (model_inf) and per-environment model fields
(model_fields)."""

from __future__ import annotations

import random

from support.fuzz import contract as c
from support.fuzz.cases.draws import _get, _targets, call_line, random_selection, setup
from support.fuzz.cases.suite import family


@family(1.0)
def gen_nonfinite(rng: random.Random) -> str:
    """NaN, inf, 1e308 and denormal state values in some rows: no crash, the
    other rows exact (and the exact engine gives what mj_forward gives)."""
    code, info = setup(rng, n=rng.choice((2, 5, 9, 17)))
    sel_code, method = call_line(rng, info["n"])
    code += sel_code
    n = info["n"]
    for _ in range(rng.randint(1, 4)):
        t = rng.choice(_targets(info, outputs=False) + ["time"])
        val = rng.choice(("np.nan", "np.inf", "-np.inf", "1e308", "-1e308", "5e-324", "1e300"))
        row = rng.randrange(n)
        if t == "time":
            code += f"args['time'] = np.array(states['time'])\nargs['time'][{row}] = {val}\n"
        else:
            code += (
                f"{_get(t)} = np.array({_get(t)})\n"
                f"if {_get(t)}.size:\n"
                f"    {_get(t)}.reshape(n, -1)[{row}, "
                f"{rng.randrange(64)} % {_get(t)}.reshape(n, -1).shape[1]] = {val}\n"
            )
    if rng.random() < 0.4:  # finite but degenerate quaternions: fully checked
        q = rng.choice(
            (
                [0, 0, 0, 0],
                [1e-300, 0, 0, 0],
                [1e-160, 1e-160, 0, 0],
                [1e50, 2e50, 0, 0],
                [-1, 0, 0, 0],
                [0, 0, 0, -3.5],
            )
        )
        code += (
            "# degenerate (finite) quaternions in every free/ball joint and mocap body\n"
            f"c.set_quaternions(model, args, {rng.randrange(n)}, {q!r})\n"
        )
    code += f"c.check(r, {method!r}, args)\n"
    return code


INF_FIELDS = (
    "geom_pos",
    "body_pos",
    "body_ipos",
    "site_pos",
    "body_mass",
    "body_inertia",
    "jnt_pos",
    "jnt_axis",
    "geom_quat",
    "body_quat",
)


@family(0.7)
def gen_model_inf(rng: random.Random) -> str:
    """Finite states on models with an infinite/NaN/1e308 value in a model
    field (a geom at infinity on a welded body, ...): mj_forward's values
    where it gives finite ones."""
    if rng.random() < 0.4:
        code, info = setup(rng, model="inf_geom", n=rng.choice((1, 4, 9)))
    else:
        name = rng.choice(("legged", "three_link", "zoo", "hostile", "rich"))
        m = c.load_model(name)
        field = rng.choice(INF_FIELDS)
        arr = getattr(m, field)
        idx = rng.randrange(arr.shape[0])
        col = rng.randrange(arr.shape[1]) if arr.ndim > 1 else None
        val = rng.choice(("np.inf", "-np.inf", "np.nan", "1e308"))
        code = (
            "import copy\n"
            f"model = copy.deepcopy(c.load_model({name!r}))\n"
            f"model.{field}[{idx}{'' if col is None else f', {col}'}] = {val}\n"
        )
        n = rng.choice((1, 4, 9))
        sel = random_selection(rng, m)
        sel.update(num_threads=rng.choice((1, 2)), engine=rng.choice(("auto", "exact", "fast")))
        maybe = "{'engine'}" if sel["engine"] == "fast" else "()"
        code += (
            f"n = {n}\nstates = c.make_states(model, n, seed={rng.randrange(10**6)})\n"
            f"r = c.check_build(model, {sel!r}, maybe={maybe})\n"
            "if r is None:\n    raise SystemExit(0)\n"
            f"args = c.valid_args(r, states, n, np.{rng.choice(('float64', 'float32'))})\n"
        )
        info = {"n": n}
    sel_code, method = call_line(rng, info["n"])
    lenient = ", lenient_fast=True" if "= 1e308" in code else ""
    code += sel_code + f"c.check(r, {method!r}, args{lenient})\n"
    return code


FIELD_SETS = (
    ("body_pos",),
    ("body_mass",),
    ("body_pos", "body_quat"),
    ("geom_pos", "site_pos"),
    ("jnt_axis", "jnt_pos"),
    ("body_ipos", "body_iquat", "body_inertia"),
    ("sensor_cutoff",),
    ("body_mass", "geom_quat", "site_quat"),
)


@family(0.8)
def gen_model_fields(rng: random.Random) -> str:
    """Per-environment model fields: valid values (any row stride), NaN rows,
    and missing/extra/misshapen/mistyped/aliasing field arrays."""
    fields = rng.choice(FIELD_SETS)
    code, info = setup(
        rng,
        model=rng.choice(("legged", "three_link", "zoo", "quadruped", "hostile", "tree")),
        n=rng.choice((1, 3, 7)),
        fields=fields,
    )
    code += (
        "from support.states import random_fields\n"
        f"args['model_fields'] = random_fields(model, r.plan.model_fields, n, "
        f"seed={rng.randrange(10**6)})\n"
    )
    sel_code, method = call_line(rng, info["n"])
    code += sel_code
    kind = rng.choice(
        (
            "valid",
            "valid",
            "layout",
            "nan_row",
            "missing",
            "extra",
            "shape",
            "dtype",
            "not_mapping",
            "noncontig_row",
            "readonly",
            "degenerate",
            "huge",
        )
    )
    key = "r.plan.model_fields[0]"
    code += {
        "valid": "",
        "layout": f"args['model_fields'][{key}] = c.relayout(args['model_fields'][{key}], "
        f"{rng.choice(('row_strided', 'negative_rows', 'broadcast'))!r})\n",
        "nan_row": f"args['model_fields'][{key}][{rng.randrange(info['n'])}] = np.nan\n",
        "missing": f"del args['model_fields'][{key}]\n",
        "extra": "args['model_fields']['body_quat_x'] = np.zeros((n, 1))\n",
        "shape": f"args['model_fields'][{key}] = args['model_fields'][{key}][..., None]\n",
        "dtype": f"args['model_fields'][{key}] = "
        f"args['model_fields'][{key}].astype({rng.choice(('float32', 'int64'))!r})\n",
        "not_mapping": "args['model_fields'] = list(args['model_fields'].values())\n",
        "noncontig_row": f"args['model_fields'][{key}] = c.relayout("
        f"args['model_fields'][{key}], 'last_strided')\n",
        "readonly": f"args['model_fields'][{key}] = c.relayout(args['model_fields'][{key}], "
        "'readonly')\n",
        "degenerate": f"c.degenerate_field_row(args['model_fields'], {rng.randrange(info['n'])}, "
        f"{rng.choice((0.0, 1e-300, 1e120, -1.0))!r})\n",
        "huge": f"args['model_fields'][{key}][{rng.randrange(info['n'])}] = 1e308\n",
    }[kind]
    code += f"c.check(r, {method!r}, args)\n"
    return code
