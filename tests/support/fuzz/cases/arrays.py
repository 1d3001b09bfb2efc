"""Families of valid calls (parity) and of one argument array of another
dtype, shape, layout, alignment or writability: parity, dtypes, shapes,
strides, alignment, readonly."""

from __future__ import annotations

import random

from support.fuzz import contract as c
from support.fuzz.cases.draws import OBJ, _allowed_sensors, _get, _name, _targets, call_line, setup
from support.fuzz.cases.suite import family

DTYPES = (
    "float16",
    "float32",
    "float64",
    ">f8",
    ">f4",
    "longdouble",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bool",
    "complex64",
    "complex128",
    "object",
    "U8",
    "S8",
    "datetime64[ns]",
    "timedelta64[ns]",
    "V8",
)


@family(1.0)
def gen_parity(rng: random.Random) -> str:
    """Valid calls: random models, selections, engines, dtypes, rows, layouts."""
    code, info = setup(rng)
    sel_code, method = call_line(rng, info["n"])
    code += sel_code
    for t in _targets(info):
        if rng.random() < 0.3:
            kind = rng.choice(("c", "row_strided", "negative_rows", "wide_rows"))
            code += f"{_get(t)} = c.relayout({_get(t)}, {kind!r})\n"
    code += f"c.check(r, {method!r}, args)\n"
    return code


@family(1.2)
def gen_dtypes(rng: random.Random) -> str:
    """One input or output (or time, rows, model field) of another dtype, or not an array."""
    code, info = setup(rng, n=rng.choice((1, 3, 6)))
    sel_code, method = call_line(rng, info["n"])
    code += sel_code
    target = rng.choice(_targets(info) + ["time"])
    if target == "time":
        value = rng.choice(
            (
                "np.zeros(n, np.float32)",
                "np.zeros(n, np.int64)",
                "'abc'",
                "1j",
                "np.zeros(n, object)",
                "[0.5] * n",
                "2",
                "np.float32(1.5)",
                "np.zeros(n, 'datetime64[ns]')",
                "{'t': 1}",
                "np.zeros(n, bool)",
                "states['time'][:, None]",
                "states['time'].astype('>f8')",
                "'1.5'",
                "True",
                "np.float64(np.nan)",
            )
        )
        code += f"args['time'] = {value}\n"
    elif rng.random() < 0.15:
        form = rng.choice(("tolist()", "tobytes()", "__getitem__(0)", "sum()"))
        code += f"{_get(target)} = {_get(target)}.{form}\n"
    else:
        dt = rng.choice(DTYPES)
        code += f"{_get(target)} = c.retyped({_get(target)}, {dt!r})\n"
    code += f"c.check(r, {method!r}, args)\n"
    return code


@family(1.0)
def gen_shapes(rng: random.Random) -> str:
    """Wrong ndim, widths, rows; N = 0 and N = 1."""
    n = rng.choice((0, 1, 1, 2, 5))
    code, info = setup(rng, n=n)
    sel_code, method = call_line(rng, n)
    code += sel_code
    target = rng.choice(_targets(info))
    if rng.random() < 0.15:
        code += "# a valid call: only N is unusual\n"
    else:
        code += f"shape = list(np.shape({_get(target)}))\n"
        op = rng.choice(
            (
                "add_axis",
                "drop_axis",
                "width+1",
                "width-1",
                "width0",
                "rows+1",
                "rows-1",
                "rows0",
                "scalar",
                "swap",
            )
        )
        code += {
            "add_axis": "shape = shape + [1]\n",
            "drop_axis": "shape = shape[:-1]\n",
            "width+1": "shape[-1] += 1\n",
            "width-1": "shape[-1] = max(0, shape[-1] - 1)\n",
            "width0": "shape[-1] = 0\n",
            "rows+1": "shape[0] += 1\n",
            "rows-1": "shape[0] = max(0, shape[0] - 1)\n",
            "rows0": "shape[0] = 0\n",
            "scalar": "shape = []\n",
            "swap": "shape = shape[::-1]\n",
        }[op]
        fill = "c.SENTINEL" if target.startswith("out.") else "0.25"
        code += f"{_get(target)} = np.full(shape, {fill}, dtype=np.asarray({_get(target)}).dtype)\n"
    code += f"c.check(r, {method!r}, args)\n"
    return code


@family(1.2)
def gen_strides(rng: random.Random) -> str:
    """Negative strides, Fortran order, non-contiguous last axis, row-strided,
    wide-row, unaligned and stride-0 broadcast views of inputs and outputs."""
    code, info = setup(rng, n=rng.choice((1, 2, 4, 7)))
    sel_code, method = call_line(rng, info["n"])
    code += sel_code
    for t in rng.sample(_targets(info), k=min(2, len(_targets(info)))):
        kinds = list(c.LAYOUTS)
        if t.startswith("mocap") or t in (
            "out.body_pos",
            "out.body_quat",
            "out.site_mat",
            "out.body_linvel",
            "out.site_pos",
        ):
            kinds += list(c.ITEM_LAYOUTS)
        if t.startswith("out."):
            kinds += ["broadcast_writable"]
        kind = rng.choice(kinds)
        code += f"{_get(t)} = c.relayout({_get(t)}, {kind!r})\n"
    if rng.random() < 0.2:
        code += "args['time'] = c.relayout(states['time'][:, None], 'row_strided')[:, 0]\n"
    code += f"c.check(r, {method!r}, args)\n"
    return code


@family(0.5)
def gen_alignment(rng: random.Random) -> str:
    """Unaligned inputs and outputs (a float64 array at an odd byte address,
    as np.frombuffer at an offset gives), with long runs of sensordata
    columns (what the exact engine writes with streaming stores)."""
    model = rng.choice(("quadruped", "humanoid", "zoo", "legged"))
    m = c.load_model(model)
    allowed = _allowed_sensors(m)
    sel = {"sensors": [_name(m, OBJ.mjOBJ_SENSOR, i) for i in allowed]}
    if rng.random() < 0.5:
        sel["bodies"] = [_name(m, OBJ.mjOBJ_BODY, 1)]
    code, info = setup(
        rng,
        model=model,
        n=rng.choice((1, 3, 6)),
        selection=sel,
        engine=rng.choice(("exact", "exact", "fast", "auto")),
    )
    for t in rng.sample(_targets(info), k=rng.randint(1, 2)):
        if rng.random() < 0.7 and t != "out.sensordata" and "out.sensordata" in _targets(info):
            t = "out.sensordata"
        code += f"{_get(t)} = c.relayout({_get(t)}, 'unaligned')\n"
    sel_code, method = call_line(rng, info["n"])
    code += sel_code + f"c.check(r, {method!r}, args)\n"
    return code


@family(0.6)
def gen_readonly(rng: random.Random) -> str:
    """Read-only inputs (fine), outputs, rows and dirty masks."""
    code, info = setup(rng, n=rng.choice((1, 3, 6)))
    sel_code, method = call_line(rng, info["n"])
    code += sel_code
    for t in rng.sample(_targets(info), k=min(len(_targets(info)), rng.randint(1, 2))):
        code += f"{_get(t)} = c.relayout({_get(t)}, 'readonly')\n"
    sel = "dirty" if "dirty" in method else "rows"
    if rng.random() < 0.4:
        code += f"args[{sel!r}] = np.array(args[{sel!r}])\nargs[{sel!r}].flags.writeable = False\n"
    code += f"c.check(r, {method!r}, args)\n"
    return code
