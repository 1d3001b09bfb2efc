"""The case generator: a seed and a case count give the same cases, each a
self-contained Python script that asserts the contract (support.fuzz.contract).

Each family (`FAMILIES`) draws its cases from its own `random.Random`,
seeded from the suite's seed, the family's name and the case index, so a
family's cases do not change when another family or the count changes. The
drawn values are rendered into the script as literals: the script, not the
generator, is the reproducer.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import mujoco

from support.fuzz import contract as c

TESTS_DIR = Path(__file__).resolve().parents[2]
DEFAULT_SEED = 20250611

HEADER = """\
# mjrefresh fuzz case {name} (seed {seed}); the contract: README "Guarantees".
# Runs on its own: python this_file.py (exit status 0: the contract held).
import sys
sys.path.insert(0, {tests!r})
import numpy as np
import mujoco
import mjrefresh
from support.fuzz import contract as c

"""


@dataclass(frozen=True)
class Case:
    family: str
    index: int
    seed: int
    body: str
    timeout_factor: float = 1.0

    @property
    def name(self) -> str:
        return f"{self.family}-{self.index:03d}"

    @property
    def source(self) -> str:
        head = HEADER.format(name=self.name, seed=self.seed, tests=str(TESTS_DIR))
        return head + self.body.strip() + "\n"


def case_seed(seed: int, family: str, index: int) -> int:
    return zlib.crc32(f"{seed}/{family}/{index}".encode()) & 0x7FFFFFFF


# ------------------------------------------------------------------ selections
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


# -------------------------------------------------------------------- families
Gen = Callable[[random.Random], "tuple[str, float] | str"]
FAMILIES: dict[str, tuple[float, Gen]] = {}


def family(weight: float) -> Callable[[Gen], Gen]:
    """Register a generator; `weight` is its share of the case count."""

    def deco(fn: Gen) -> Gen:
        FAMILIES[fn.__name__.removeprefix("gen_")] = (weight, fn)
        return fn

    return deco


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


@family(1.4)
def gen_aliasing(rng: random.Random) -> str:
    """Outputs overlapping inputs or each other; rows and dirty masks inside
    outputs or inputs; model fields, time and mocap inside outputs; disjoint
    views of one buffer (valid)."""
    n = rng.choice((3, 5, 8, 12))
    kind = rng.choice(
        (
            "out_in",
            "out_out",
            "same_object",
            "interleaved",
            "rows_in_out",
            "rows_in_out",
            "rows_in_input",
            "dirty_in_out",
            "dirty_in_input_buffer",
            "dirty_on_input",
            "time_in_out",
            "mocap_in_out",
            "field_in_out",
        )
    )
    sel = None
    model = None
    fields: tuple[str, ...] = ()
    if kind in ("rows_in_out", "dirty_in_out", "time_in_out"):
        model = rng.choice(("hostile", "legged", "three_link", "zoo", "soak"))
    if kind == "mocap_in_out":
        model = "hostile"
    if kind == "field_in_out":
        model, fields = rng.choice(
            (
                ("legged", ("body_mass",)),
                ("three_link", ("body_pos",)),
                ("zoo", ("geom_pos", "body_mass")),
            )
        )
    m = c.load_model(model) if model else None
    if m is not None:
        allowed = _allowed_sensors(m)
        sel = {
            "bodies": [_name(m, OBJ.mjOBJ_BODY, 1)],
            "sensor_ranges": [
                (int(m.sensor_adr[i]), int(m.sensor_adr[i] + m.sensor_dim[i])) for i in allowed
            ],
        }
        if kind == "time_in_out":
            sel = {"bodies": [_name(m, OBJ.mjOBJ_BODY, 1)]}
    code, info = setup(rng, model=model, n=n, selection=sel, fields=fields)
    m = info["m"]
    outs = _out_names(info)
    method = "refresh"
    if fields:
        code += (
            "args['model_fields'] = {k: np.repeat(np.asarray(getattr(model, k))[None], n, 0)"
            f" for k in {list(fields)!r}}}\n"
        )
    if kind == "out_in" and outs:
        o = rng.choice(outs)
        src = rng.choice(_targets(info, outputs=False))
        code += (
            f"# out.{o} views the bytes of {src}\n"
            f"buf = np.full(np.asarray({_get(src)}).size + args['out'].{o}.size + 64, "
            "c.SENTINEL)\n"
            f"buf[:{_get(src)}.size] = np.asarray({_get(src)}).reshape(-1)\n"
            f"args[{src!r}] = buf[:{_get(src)}.size].reshape({_get(src)}.shape)\n"
            f"o = args['out'].{o}\n"
            f"off = {rng.randint(0, 3)}\n"
            f"args['out'].{o} = buf.view(o.dtype)[off:off + o.size].reshape(o.shape)\n"
            f"args['out'].{o}[...] = c.SENTINEL\n"
        )
    elif kind == "out_out" and len(outs) >= 1:
        a, b = rng.sample(outs, 2) if len(outs) >= 2 else (outs[0], outs[0])
        code += (
            f"# out.{b} views bytes of out.{a}\n"
            f"buf = np.full(args['out'].{a}.size + args['out'].{b}.size, c.SENTINEL,"
            f" dtype=args['out'].{a}.dtype)\n"
            f"args['out'].{a} = buf[:args['out'].{a}.size].reshape(args['out'].{a}.shape)\n"
            f"off = {rng.randint(0, 2)}\n"
            f"args['out'].{b} = buf[off:off + args['out'].{b}.size]"
            f".reshape(args['out'].{b}.shape)\n"
        )
    elif kind == "same_object" and len(outs) >= 2:
        same = [
            k for k in outs if k.endswith(("pos", "linvel", "angvel")) and k not in ("site_pos",)
        ][:2]
        if len(same) == 2:
            code += f"args['out'].{same[1]} = args['out'].{same[0]}\n"
    elif kind == "interleaved":
        code += (
            "# qpos, qvel and sensordata side by side in one buffer per row (valid)\n"
            "nq, nv = model.nq, model.nv\n"
            "w = nq + nv + model.nsensordata\n"
            "buf = np.full((n, w + 3), 777.25)\n"
            "buf[:, :nq] = states['qpos']\nbuf[:, nq:nq + nv] = states['qvel']\n"
            "args['qpos'], args['qvel'] = buf[:, :nq], buf[:, nq:nq + nv]\n"
            "if args['out'].sensordata is not None and args['out'].sensordata.dtype == "
            "np.float64:\n"
            "    args['out'].sensordata = buf[:, nq + nv:nq + nv + model.nsensordata]\n"
            "    args['out'].sensordata[...] = c.SENTINEL\n"
        )
    elif kind in ("rows_in_out", "rows_in_input"):
        ids = sorted(rng.sample(range(n), k=rng.randint(min(n, 3), n)))
        method = rng.choice(("refresh", "bound", "bound_call"))
        if kind == "rows_in_out":
            target = rng.choice(["sensordata", "body_pos", "body_quat"])
            first = "c.planned_columns(r.plan)[0]" if target == "sensordata" else "0"
            code += (
                f"# rows: int64 view of row {ids[0]}'s {target} (refreshed first)\n"
                f"arr = args['out'].{target}\n"
                f"col = int({first}) if arr.dtype == np.float64 else "
                f"(int({first}) + 1) // 2 * 2\n"
                f"args['rows'] = c.int64_view_into(arr, {ids[0]}, col, {ids!r})\n"
            )
        else:
            code += (
                "# rows: int64 ids stored in the buffer qpos views (disjoint: valid)\n"
                "buf = np.zeros((n, model.nq + 8))\nbuf[:, :model.nq] = states['qpos']\n"
                "args['qpos'] = buf[:, :model.nq]\n"
                f"args['rows'] = c.int64_view_into(buf, 0, model.nq, {ids!r})\n"
            )
    elif kind in ("dirty_in_out", "dirty_in_input_buffer", "dirty_on_input"):
        ids = sorted(rng.sample(range(n), k=rng.randint(1, n)))
        method = rng.choice(("refresh_dirty_rows", "bound_dirty"))
        if kind == "dirty_in_out":
            target = rng.choice(["sensordata", "body_pos"])
            code += (
                f"# dirty: a bool view of byte 7 of each row of out.{target}\n"
                f"args['dirty'] = c.bool_view_into(args['out'].{target}, byte=7)\n"
            )
        elif kind == "dirty_in_input_buffer":
            code += (
                "# dirty: bool bytes in the buffer qpos views (disjoint from qpos)\n"
                "buf = np.zeros((n, model.nq + 1))\nbuf[:, :model.nq] = states['qpos']\n"
                "args['qpos'] = buf[:, :model.nq]\n"
                "args['dirty'] = c.bool_view_into(buf[:, model.nq:], byte=0)\n"
            )
        else:
            code += (
                "# dirty: a bool view of byte 0 of each row of qpos itself\n"
                "args['qpos'] = args['qpos'].copy()\n"
                "args['dirty'] = c.bool_view_into(args['qpos'], byte=0)\n"
            )
        code += f"args['dirty'][{ids!r}] = True\n"
    elif kind == "time_in_out":
        code += (
            "# time: a view of out.body_pos's bytes\n"
            "args['time'] = args['out'].body_pos.reshape(n, -1)[:, 0]\n"
            if info["dtype"] == "float64"
            else "args['time'] = states['time']\n"
        )
    elif kind == "mocap_in_out":
        code += (
            "# mocap_pos inside out.sensordata's buffer\n"
            "sd = args['out'].sensordata\n"
            "if sd is not None and sd.dtype == np.float64 and sd.shape[1] >= 3:\n"
            "    args['mocap_pos'] = sd[:, :3].reshape(n, 1, 3)\n"
            "    args['mocap_pos'][...] = states['mocap_pos']\n"
        )
    elif kind == "field_in_out":
        code += (
            "# a model-field array inside out.sensordata's buffer\n"
            "k = next(iter(args['model_fields']))\nf = args['model_fields'][k]\n"
            "sd = args['out'].sensordata\n"
            "if sd is not None and sd.dtype == np.float64:\n"
            "    buf = np.full((n, f[0].size + sd.shape[1]), c.SENTINEL)\n"
            "    args['out'].sensordata = buf[:, f[0].size - 1:f[0].size - 1 + sd.shape[1]]\n"
            "    args['model_fields'][k] = buf[:, :f[0].size].reshape(f.shape)\n"
            "    args['model_fields'][k][...] = f\n"
        )
    code += f"c.check(r, {method!r}, args)\n"
    return code


@family(1.0)
def gen_rows(rng: random.Random) -> str:
    """Row ids of every integer dtype; out of range, negative, unsorted,
    duplicate; bool masks of the wrong length; odd containers."""
    n = rng.choice((1, 3, 6, 9))
    code, info = setup(rng, n=n)
    method = rng.choice(("refresh", "bound", "bound_call"))
    dt = rng.choice(("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"))
    ids = sorted(rng.sample(range(n), k=rng.randint(0, n)))
    kind = rng.choice(
        (
            "valid",
            "valid",
            "out_of_range",
            "negative",
            "unsorted",
            "duplicate",
            "mask_short",
            "mask_long",
            "mask_empty",
            "float",
            "2d",
            "scalar",
            "none",
            "object",
            "strided",
            "reversed_view",
            "huge_unsigned",
            "list",
            "range",
            "tuple",
            "empty_float",
            "str",
        )
    )
    v = {
        "valid": f"np.array({ids!r}, dtype=np.{dt})",
        "out_of_range": f"np.array({sorted(set(ids) | {n + rng.randint(0, 3)})!r}, dtype=np.{dt})",
        "negative": f"np.array({[-rng.randint(1, 2**31)] + ids!r})",
        "unsorted": f"np.array({ids[::-1] + [n - 1] if ids else [n - 1, 0]!r}, dtype=np.{dt})",
        "duplicate": f"np.array({sorted(ids + ids[:1]) if ids else [0, 0]!r}, dtype=np.{dt})",
        "mask_short": f"np.ones({n - 1}, bool)",
        "mask_long": f"np.ones({n + 1}, bool)",
        "mask_empty": "np.ones(0, bool)",
        "float": f"np.array({ids!r}, dtype=np.float64)",
        "2d": f"np.array({ids!r}, dtype=np.{dt}).reshape(1, -1)",
        "scalar": f"np.{dt}({ids[0] if ids else 0})",
        "none": "None",
        "object": f"np.array({ids!r}, dtype=object)",
        "strided": f"np.repeat(np.array({ids!r}, dtype=np.{dt}), 2)[::2]",
        "reversed_view": f"np.array({ids[::-1]!r}, dtype=np.{dt})[::-1]",
        "huge_unsigned": f"np.array({ids + [2**64 - 1]!r}, dtype=np.uint64)",
        "list": f"{ids!r}",
        "range": f"range({n})",
        "tuple": f"tuple({ids!r})",
        "empty_float": "np.array([], dtype=np.float64)",
        "str": "'0'",
    }[kind]
    code += f"args['rows'] = {v}\n"
    if rng.random() < 0.3:
        code += (
            "args['rows'] = c.relayout(np.asarray(args['rows']), 'readonly') "
            "if isinstance(args['rows'], np.ndarray) and args['rows'].ndim else args['rows']\n"
        )
    code += f"c.check(r, {method!r}, args)\n"
    return code


@family(0.6)
def gen_dirty(rng: random.Random) -> str:
    """Dirty masks: dtypes, lengths, read-only, strided, none set."""
    n = rng.choice((1, 4, 7))
    code, info = setup(rng, n=n)
    method = rng.choice(("refresh_dirty_rows", "bound_dirty"))
    ids = sorted(rng.sample(range(n), k=rng.randint(0, n)))
    kind = rng.choice(
        (
            "valid",
            "valid",
            "int8",
            "uint8",
            "short",
            "long",
            "readonly",
            "2d",
            "list",
            "strided",
            "none_set",
            "all_set",
            "float",
        )
    )
    v = {
        "valid": f"np.isin(np.arange(n), {ids!r})",
        "int8": f"np.isin(np.arange(n), {ids!r}).astype(np.int8)",
        "uint8": f"np.isin(np.arange(n), {ids!r}).astype(np.uint8)",
        "short": f"np.ones({n - 1}, bool)",
        "long": f"np.ones({n + 1}, bool)",
        "readonly": f"c.relayout(np.isin(np.arange(n), {ids!r}), 'readonly')",
        "2d": f"np.isin(np.arange(n), {ids!r})[None]",
        "list": f"np.isin(np.arange(n), {ids!r}).tolist()",
        "strided": f"np.repeat(np.isin(np.arange(n), {ids!r}), 3)[::3]",
        "none_set": "np.zeros(n, bool)",
        "all_set": "np.ones(n, bool)",
        "float": f"np.isin(np.arange(n), {ids!r}).astype(float)",
    }[kind]
    code += f"args['dirty'] = {v}\n"
    code += f"c.check(r, {method!r}, args)\n"
    return code


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


@family(0.5)
def gen_lifecycle(rng: random.Random) -> tuple[str, float]:
    """Calls after close() (refresh, dirty rows, bind, bound calls, cache
    reads), close() twice, context-manager exit, close() from another thread
    during a long call."""
    kind = rng.choice(
        (
            "after_close",
            "after_close",
            "with_block",
            "close_during_call",
            "close_during_call",
            "close_while_waiting",
            "gc_with_bound",
        )
    )
    if kind in ("after_close", "with_block"):
        code, info = setup(rng, n=rng.choice((1, 4, 7)))
        code += (
            "bound = r.bind(args['qpos'], args['qvel'], args['out'], "
            "**{k: v for k, v in args.items() if k not in ('rows', 'qpos', 'qvel', 'out')})\n"
            "cache = mjrefresh.bind_arrays(r, states['qpos'].copy(), states['qvel'].copy(), "
            "**c.state_kwargs(model, states, time=r.plan.needs_time))\n"
        )
        code += "with r:\n    pass\n" if kind == "with_block" else "r.close()\n"
        if rng.random() < 0.5:
            code += "r.close()  # idempotent\n"
        code += (
            "assert r.closed and r.memory_bytes == 0, (r.closed, r.memory_bytes)\n"
            "repr(r), r.describe(), r.num_threads\n"
        )
        method = rng.choice(("refresh", "refresh_dirty_rows", "bound", "bound_call", "bound_dirty"))
        code += "args['dirty'] = np.ones(n, bool)\n"
        if rng.random() < 0.5 and method.startswith("bound"):
            code += "args['bound'] = bound  # bound before close\n"
        code += f"c.check_call(r, {method!r}, args, closed=True)\n"
        code += (
            "reads = [lambda: cache.outputs(), lambda: cache.refresh_dirty_rows()]\n"
            "if r.plan.body_ids:\n    reads.append(lambda: cache.body_pos())\n"
            "for read in reads:\n"
            "    c.expect_closed(read, cache.storage.arrays().values(), 'a cache read')\n"
        )
        return code, 1.0
    if kind == "gc_with_bound":
        code, info = setup(rng, n=4)
        code += (
            "import gc\nbound = r.bind(args['qpos'], args['qvel'], args['out'], "
            "**{k: v for k, v in args.items() if k not in ('rows', 'qpos', 'qvel', 'out')})\n"
            "plan = r.plan\nr2 = r\ndel r\ngc.collect()\n"
            "args['bound'] = bound\n"
            "c.check(r2, 'bound', args, note='bound call after the Refresher name is gone')\n"
        )
        return code, 1.0
    code = _long_setup(rng, rng.choice((60_000, 120_000)))
    code += "import threading, time\nresult = {}\n"
    if kind == "close_during_call":
        closer_main = rng.random() < 0.5
        code += (
            "def call():\n"
            "    try:\n"
            "        result['n'] = r.refresh(np.arange(n), states['qpos'], states['qvel'], out, "
            "**kw)\n"
            "    except BaseException as exc:  # judged below\n"
            "        result['exc'] = exc\n"
        )
        if closer_main:
            code += (
                "t = threading.Thread(target=call)\nt.start()\n"
                f"time.sleep({rng.choice((0.0, 0.01, 0.05, 0.2))})\n"
                "r.close()  # from the main thread while the other is inside the call\n"
                "t.join(60)\nassert not t.is_alive(), 'the call never returned'\n"
            )
        else:
            delay = rng.choice((0.0, 0.01, 0.05, 0.2))
            code += (
                f"closer = threading.Timer({delay!r}, r.close)\ncloser.start()\n"
                "call()  # closed from another thread meanwhile\ncloser.join(60)\n"
            )
        code += (
            "if 'exc' in result:\n"
            "    exc = result['exc']\n"
            "    if not (isinstance(exc, RuntimeError) and str(exc) == c.CLOSED):\n"
            "        raise c.violation(f'a call racing close() raised {exc!r}')\n"
            "    assert c.untouched(out), 'a call refused as closed wrote outputs'\n"
            "else:\n"
            "    assert result['n'] == n\n"
            "    assert c.all_written(r, out), 'a call racing close() returned with rows unwritten'\n"
            "    c.assert_rows_match(r, out, states, sample)\n"
            "assert r.closed\n"
            "c.check_call(r, 'refresh', dict(rows=np.arange(3), qpos=states['qpos'][:3], "
            "qvel=states['qvel'][:3], out=c.sentinel_outputs(r, 3), "
            "**{k: v[:3] for k, v in kw.items()}), closed=True)\n"
        )
        return code, 2.0
    # several callers waiting on the lock while one closes
    code += (
        "errors = []\n"
        "def call(k):\n"
        "    o = c.sentinel_outputs(r, n)\n"
        "    try:\n"
        "        r.refresh(np.arange(n), states['qpos'], states['qvel'], o, **kw)\n"
        "    except RuntimeError as exc:\n"
        "        if str(exc) != c.CLOSED:\n"
        "            errors.append(exc)\n"
        "        elif not c.untouched(o):\n"
        "            errors.append(AssertionError('refused call wrote'))\n"
        "        return\n"
        "    except BaseException as exc:\n"
        "        errors.append(exc)\n"
        "        return\n"
        "    if not c.all_written(r, o):\n"
        "        errors.append(AssertionError('a call returned with rows unwritten'))\n"
        "ts = [threading.Thread(target=call, args=(k,)) for k in range(3)]\n"
        "for t in ts:\n    t.start()\n"
        "time.sleep(0.05)\nr.close()\n"
        "for t in ts:\n    t.join(60)\n    assert not t.is_alive(), 'a caller never returned'\n"
        "if errors:\n    raise c.violation(f'callers racing close(): {errors!r}')\n"
    )
    return code, 2.0


@family(0.5)
def gen_threads(rng: random.Random) -> tuple[str, float]:
    """Several Python threads calling one refresher at once (refresh, dirty
    rows, bound calls), each checked against mj_forward."""
    code, info = setup(rng, n=rng.choice((16, 40, 64)), threads=rng.choice((1, 2, 3)))
    k = rng.randint(2, 5)
    iters = rng.randint(3, 8)
    code += (
        "import threading\n"
        "errors = []\n"
        "kw = {k: v for k, v in args.items() if k not in ('rows', 'qpos', 'qvel', 'out')}\n"
        "def worker(seed):\n"
        "    rng = np.random.default_rng(seed)\n"
        "    try:\n"
        "        a = dict(args, out=c.sentinel_outputs(r, n, args['out'].arrays()['sensordata']"
        ".dtype if 'sensordata' in args['out'].arrays() else np.float64))\n"
        "        bound = r.bind(a['qpos'], a['qvel'], a['out'], **kw)\n"
        f"        for i in range({iters}):\n"
        "            rows = np.flatnonzero(rng.random(n) < 0.5)\n"
        "            how = ('refresh', 'refresh_dirty_rows', 'bound')[i % 3]\n"
        "            if how == 'refresh':\n"
        "                r.refresh(rows, a['qpos'], a['qvel'], a['out'], **kw)\n"
        "            elif how == 'refresh_dirty_rows':\n"
        "                d = np.isin(np.arange(n), rows)\n"
        "                r.refresh_dirty_rows(d, a['qpos'], a['qvel'], a['out'], **kw)\n"
        "                assert not d.any()\n"
        "            else:\n"
        "                bound(rows)\n"
        "            c.assert_rows_match(r, a['out'], states, rows, label=f' thread {seed}')\n"
        "    except BaseException as exc:\n"
        "        errors.append(exc)\n"
        f"ts = [threading.Thread(target=worker, args=(s,)) for s in range({k})]\n"
        "for t in ts:\n    t.start()\n"
        "for t in ts:\n    t.join(120)\n    assert not t.is_alive(), 'a thread never returned'\n"
        "if errors:\n    raise errors[0]\n"
    )
    if rng.random() < 0.4:
        code += (
            "# shared outputs, disjoint rows per thread\n"
            "out = c.sentinel_outputs(r, n)\n"
            f"parts = np.array_split(np.arange(n), {k})\n"
            "ts = [threading.Thread(target=r.refresh, args=(p, args['qpos'], args['qvel'], out),"
            " kwargs=kw) for p in parts]\n"
            "for t in ts:\n    t.start()\n"
            "for t in ts:\n    t.join(120)\n"
            "c.assert_rows_match(r, out, states, np.arange(n))\n"
        )
    return code, 2.0


@family(0.5)
def gen_fork(rng: random.Random) -> tuple[str, float]:
    """os.fork() then refresh in the child: after the parent used the
    workers or not, with another thread inside a call at fork time, closing
    or building refreshers in the child, a second fork, multiprocessing."""
    kind = rng.choice(
        (
            "after_use",
            "before_use",
            "busy_thread",
            "busy_thread",
            "child_close",
            "grandchild",
            "multiprocessing",
            "cache",
        )
    )
    if kind == "busy_thread":
        code = _long_setup(rng, rng.choice((60_000, 120_000)))
        code += (
            "import os, threading, time, traceback\n"
            "busy = threading.Thread(target=r.refresh, args=(np.arange(n), states['qpos'], "
            "states['qvel'], out), kwargs=kw)\n"
            "busy.start()\n"
            f"time.sleep({rng.choice((0.0, 0.02, 0.1))})\n"
            "small = {k: v[:20] for k, v in states.items()}\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    code = 1\n"
            "    try:\n"
            "        a = dict(rows=np.arange(20), qpos=small['qpos'], qvel=small['qvel'], "
            "out=c.sentinel_outputs(r, 20), **c.state_kwargs(model, small))\n"
            "        c.check(r, 'refresh', a, note='in the child, forked during a call')\n"
            "        code = 0\n"
            "    except BaseException:\n"
            "        traceback.print_exc()\n"
            "    finally:\n"
            "        os._exit(code)\n"
            "c.wait_child(pid, 30)\n"
            "busy.join(120)\n"
            "assert c.all_written(r, out), 'the parent call lost rows'\n"
            "c.assert_rows_match(r, out, states, sample)\n"
        )
        return code, 2.0
    code, info = setup(rng, n=rng.choice((3, 8, 20)), threads=rng.choice((1, 2, 4)))
    code += "import os, traceback\n"
    if kind != "before_use":
        code += "c.check(r, 'refresh', dict(args))  # the parent's workers exist\n"
    child = {
        "after_use": "c.check(r, 'refresh', dict(args, out=c.sentinel_outputs(r, n)), "
        "note='in the child')\n",
        "before_use": "c.check(r, 'refresh', dict(args, out=c.sentinel_outputs(r, n)), "
        "note='in the child')\n",
        "child_close": "r.close()\n"
        "r2 = c.check_build(model, {'sensors': c.pos_vel_sensors(model), "
        "'bodies': [0]})\n"
        "c.check_full_refresh(r2, n, seed=5, note='new refresher in the child')\n"
        "r2.close()\n",
        "grandchild": "pid2 = os.fork()\n"
        "if pid2 == 0:\n"
        "    code2 = 1\n"
        "    try:\n"
        "        c.check(r, 'refresh', dict(args, out=c.sentinel_outputs(r, n)), "
        "note='in the grandchild')\n"
        "        code2 = 0\n"
        "    except BaseException:\n"
        "        traceback.print_exc()\n"
        "    finally:\n"
        "        os._exit(code2)\n"
        "c.wait_child(pid2, 30, 'the grandchild')\n"
        "c.check(r, 'refresh', dict(args, out=c.sentinel_outputs(r, n)), "
        "note='in the child after its fork')\n",
        "cache": "cache = mjrefresh.bind_arrays(r, args['qpos'], args['qvel'], "
        "**{k: v for k, v in args.items() if k in ('mocap_pos', 'mocap_quat', 'time')})\n"
        "cache.outputs()\n"
        "c.assert_rows_match(r, cache.storage, states, np.arange(n), "
        "label=' cache in the child')\n",
    }
    if kind == "multiprocessing":
        code += (
            "import multiprocessing as mp\n"
            "def job(q):\n"
            "    try:\n"
            "        c.check(r, 'refresh', dict(args, out=c.sentinel_outputs(r, n)), "
            "note='in a multiprocessing fork child')\n"
            "        q.put('ok')\n"
            "    except BaseException as exc:\n"
            "        q.put(repr(exc)[:2000])\n"
            "ctx = mp.get_context('fork')\nq = ctx.Queue()\n"
            "p = ctx.Process(target=job, args=(q,))\np.start()\np.join(60)\n"
            "if p.is_alive():\n    p.kill()\n    raise c.violation('the fork child hung')\n"
            "if p.exitcode != 0:\n"
            "    raise c.violation(f'the fork child exited with {p.exitcode}')\n"
            "verdict = q.get(timeout=5)\nassert verdict == 'ok', verdict\n"
        )
    else:
        body = child[kind]
        code += (
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    code = 1\n"
            "    try:\n"
            + "".join(f"        {ln}\n" for ln in body.splitlines())
            + "        code = 0\n"
            "    except BaseException:\n"
            "        traceback.print_exc()\n"
            "    finally:\n"
            "        os._exit(code)\n"
            "c.wait_child(pid, 30)\n"
        )
    code += (
        "c.check(r, 'refresh', dict(args, out=c.sentinel_outputs(r, n)), "
        "note='the parent after the fork')\n"
    )
    return code, 2.0


@family(0.35)
def gen_sigint(rng: random.Random) -> tuple[str, float]:
    """SIGINT during a long call: KeyboardInterrupt once the call returns,
    with every row written (refresh, dirty rows, bound call, cache read, a
    caller waiting for the call lock)."""
    kind = rng.choice(("refresh", "refresh_dirty_rows", "bound", "cache", "waiting"))
    code = _long_setup(rng, rng.choice((60_000, 120_000)))
    delay = rng.choice((0.005, 0.02, 0.05))
    code += "import os, signal, threading, time\n"
    call = {
        "refresh": "r.refresh(np.arange(n), states['qpos'], states['qvel'], out, **kw)",
        "refresh_dirty_rows": "r.refresh_dirty_rows(dirty, states['qpos'], states['qvel'], out, "
        "**kw)",
        "bound": "bound(np.arange(n))",
        "cache": "cache.outputs()",
        "waiting": "r.refresh(np.arange(n), states['qpos'], states['qvel'], out, **kw)",
    }[kind]
    if kind == "refresh_dirty_rows":
        code += "dirty = np.ones(n, bool)\n"
    if kind == "bound":
        code += "bound = r.bind(states['qpos'], states['qvel'], out, **kw)\n"
    if kind == "cache":
        code += (
            "cache = mjrefresh.bind_arrays(r, states['qpos'], states['qvel'], **kw, "
            "sensordata=out.sensordata, body_pos=out.body_pos, body_quat=out.body_quat, "
            "body_linvel=out.body_linvel, body_angvel=out.body_angvel)\n"
        )
    if kind == "waiting":
        code += (
            "out1 = c.sentinel_outputs(r, n)\n"
            "first = threading.Thread(target=r.refresh, args=(np.arange(n), states['qpos'], "
            "states['qvel'], out1), kwargs=kw)\nfirst.start()\ntime.sleep(0.01)\n"
        )
    code += (
        f"timer = threading.Timer({delay}, os.kill, (os.getpid(), signal.SIGINT))\n"
        "timer.start()\n"
        "try:\n"
        f"    {call}\n"
        "    time.sleep(5)  # reached only if the call returned before the signal\n"
        "except KeyboardInterrupt:\n"
        "    pass\n"
        "else:\n"
        "    raise c.violation('SIGINT was never delivered as KeyboardInterrupt')\n"
        "timer.join()\n"
        "assert c.all_written(r, out), 'a call interrupted by SIGINT left rows unwritten'\n"
        "c.assert_rows_match(r, out, states, sample)\n"
    )
    if kind == "refresh_dirty_rows":
        code += "assert not dirty.any() or dirty.all(), 'dirty partly cleared'\n"
    if kind == "waiting":
        code += (
            "first.join(60)\nassert c.all_written(r, out1)\n"
            "c.assert_rows_match(r, out1, states, sample)\n"
        )
    code += "c.check_full_refresh(r, 5, seed=3, note='after the interrupt')\n"
    return code, 2.0


CALLBACKS = {
    "passive": (
        "mujoco.set_mjcb_passive",
        ("lambda m, d: None", "lambda m, d: calls.append('passive')"),
    ),
    "control": (
        "mujoco.set_mjcb_control",
        ("lambda m, d: None", "lambda m, d: calls.append('control')"),
    ),
    "time": ("mujoco.set_mjcb_time", ("lambda: 0.0", "lambda: float(len(calls))")),
    "contactfilter": ("mujoco.set_mjcb_contactfilter", ("lambda m, d, g1, g2: 0",)),
    "act_gain": ("mujoco.set_mjcb_act_gain", ("lambda m, d, i: 1.0",)),
    "act_bias": ("mujoco.set_mjcb_act_bias", ("lambda m, d, i: 0.0",)),
    "act_dyn": ("mujoco.set_mjcb_act_dyn", ("lambda m, d, i: 0.0",)),
    "sensor": (
        "mujoco.set_mjcb_sensor",
        ("lambda m, d, stage: None", "lambda m, d, stage: calls.append('sensor')"),
    ),
}
CALLBACK_SELECTIONS = {
    # model: selections needing mj_fwdVelocity, collision, constraint rows, kinematics
    "tendon_vel": ({"sensors": ["tv"]}, {"sensors": ["fp"]}, {"bodies": ["b"], "sensors": ["tv"]}),
    "constraint": (
        {"sensors": ["adp"]},
        {"sensors": ["adv"]},
        {"sensors": ["jlp1", "tlps"]},
        {"sensors": ["jlv2", "m1v"]},
        {"sensors": ["fp", "gy"]},
    ),
    "legged": (
        {"sensors": ["spring_vel", "pull_vel"]},
        {"bodies": ["base", "foot"]},
        {"sensors": ["base_subtree_vel"]},
    ),
    "user_sensor": ({"sensors": ["fp", "gy"]}, {"sensors": ["jv"]}, {"bodies": ["b"]}),
    "rich": ({"sensors": ["tv_spatial", "av_site"]}, {"sensors": ["camproj", "rangefinder"]}),
}


# (callback, model, selection): each callback next to selections whose stages
# call it in mj_forward (mj_passive in mj_fwdVelocity, the contact filter in
# mj_collision, timers in mj_collision/mj_makeConstraint, mjcb_sensor in
# mj_sensorPos/Vel of a model with a user sensor), and plain kinematics.
CALLBACK_PLAN = (
    ("passive", "tendon_vel", {"sensors": ["tv"]}),
    ("passive", "legged", {"sensors": ["spring_vel", "pull_vel"]}),
    ("passive", "constraint", {"sensors": ["jlv2", "m1v"]}),
    ("passive", "legged", {"bodies": ["base", "foot"]}),
    ("contactfilter", "constraint", {"sensors": ["adp"]}),
    ("contactfilter", "constraint", {"sensors": ["adv"]}),
    ("time", "constraint", {"sensors": ["adp"]}),
    ("time", "constraint", {"sensors": ["jlp1", "tlps"]}),
    ("time", "rich", {"sensors": ["camproj", "rangefinder"]}),
    ("sensor", "user_sensor", {"sensors": ["fp", "gy"]}),
    ("sensor", "user_sensor", {"sensors": ["jv"]}),
    ("sensor", "legged", {"sensors": ["imu_gyro"]}),
    ("control", "tendon_vel", {"sensors": ["tv"]}),
    ("act_gain", "constraint", {"sensors": ["adv", "m1v"]}),
    ("act_bias", "legged", {"sensors": ["pull_vel"]}),
    ("act_dyn", "rich", {"sensors": ["tv_spatial", "av_site"]}),
    ("control", "legged", {"bodies": ["base"]}),
    ("passive", "rich", {"sensors": ["tv_spatial", "av_site"]}),
)


@family(1.0)
def gen_callbacks(rng: random.Random, index: int) -> str:
    """MuJoCo global callbacks set in the process (Python functions, some
    doing nothing), before or after the Refresher is built, around refreshes
    that run mj_fwdVelocity, collision, constraint rows or plain kinematics:
    correct values (as mj_forward computes them with the callbacks) or a
    clean refusal naming the callback."""
    first, model, sel = CALLBACK_PLAN[index % len(CALLBACK_PLAN)]
    sel = dict(sel)
    sel.update(num_threads=rng.choice((1, 2, 3)), engine=rng.choice(("auto", "exact")))
    chosen = [first] + rng.sample(sorted(set(CALLBACKS) - {first}), k=rng.randint(0, 2))
    n = rng.choice((1, 4, 16, 40))
    before = rng.random() < 0.5
    code = f"model = c.load_model({model!r})\nn = {n}\n"
    code += f"states = c.make_states(model, n, seed={rng.randrange(10**6)})\ncalls = []\n"
    sets = ""
    for name in chosen:
        setter, fns = CALLBACKS[name]
        sets += f"{setter}({rng.choice(fns)})\n"
    resets = "".join(f"{CALLBACKS[name][0]}(None)\n" for name in chosen)
    if before:
        code += "# callbacks installed before the Refresher is built\n" + sets
    code += f"r = c.check_build(model, {sel!r}, callbacks=True)\nif r is not None:\n"
    body = "# callbacks installed after the Refresher is built\n" + sets if not before else ""
    body += (
        "args = c.valid_args(r, states, n)\n"
        f"args['rows'] = {rows_literal(rng, n)}\n"
        "c.check(r, 'refresh', args, callbacks=True)\n"
        "args['out'] = c.sentinel_outputs(r, n)\n"
        "c.check(r, 'refresh', args, callbacks=True, note='a second call')\n"
    )
    code += "".join(f"    {ln}\n" for ln in body.splitlines())
    code += resets
    code += "if r is not None:\n    c.check_full_refresh(r, n, seed=1, note='callbacks removed')\n"
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


@family(0.25)
def gen_thread_limits(rng: random.Random) -> str:
    """Thread creation failing (RLIMIT_AS a little above what the process
    uses, then many threads, up to 2**40): a MemoryError/RuntimeError naming
    the thread count (or, for counts past any machine, a ValueError naming
    num_threads), or a refresher that works; the process survives either way."""
    model = rng.choice(("three_link", "legged", "hostile", "quadruped"))
    # huge counts too: under the address-space cap they fail fast instead of
    # allocating scratch state until the machine runs out of memory
    threads = rng.choice((64, 400, 400, 1000, 1000, 10**6, 2**31 - 1, 2**31, 2**40))
    slack = rng.choice((32, 128, 512)) << 20
    engine = rng.choice(("exact", "fast", "auto"))
    return (
        "import os, resource\n"
        "if os.environ.get('MJREFRESH_UNDER_ASAN'):\n"
        "    raise SystemExit(0)  # ASan aborts on a refused allocation by design\n"
        f"model = c.load_model({model!r})\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_AS)\n"
        f"resource.setrlimit(resource.RLIMIT_AS, (c.vm_size() + {slack}, hard))\n"
        "try:\n"
        f"    r = c.check_build(model, {{'bodies': [1], 'num_threads': {threads}, "
        f"'engine': {engine!r}}}, resources=True"
        + (", maybe={'num_threads'}" if threads > 10**6 else "")
        + ")\n"
        "finally:\n"
        "    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))\n"
        "if r is not None:\n"
        "    c.check_full_refresh(r, 8, seed=2, note='built under the limit')\n"
        "    r.close()\n"
        "r2 = c.check_build(model, {'bodies': [1], 'num_threads': 2})\n"
        "c.check_full_refresh(r2, 8, seed=3, note='a refresher after the failure')\n"
    )


@family(0.6)
def gen_multidim(rng: random.Random) -> str:
    """Models with a multi-dimensional (<orientation>) actuator, nu != nactuator,
    with actuatorpos/actuatorvel sensors on it and on ordinary actuators."""
    code, info = setup(rng, model="orientation", n=rng.choice((1, 5, 12)))
    sel_code, method = call_line(rng, info["n"])
    code += sel_code + f"c.check(r, {method!r}, args)\n"
    return code


@family(0.6)
def gen_sleep(rng: random.Random) -> str:
    """Sleep-enabled models: trees asleep (after physics steps, or at reset)
    with zero and non-zero velocities."""
    model = rng.choice(("sleep", "sleep2"))
    code, info = setup(rng, model=model, n=rng.choice((1, 6, 12)))
    if rng.random() < 0.6:
        code += (
            f"states = c.sleeping_states(model, n, seed={rng.randrange(10**6)})\n"
            "args.update(qpos=states['qpos'], qvel=states['qvel'])\n"
        )
    sel_code, method = call_line(rng, info["n"])
    code += sel_code + f"c.check(r, {method!r}, args)\n"
    return code


DISABLE_BITS = tuple(k for k in mujoco.mjtDisableBit.__members__ if k not in ("mjNDISABLE",))
ENABLE_BITS = tuple(k for k in mujoco.mjtEnableBit.__members__ if k not in ("mjNENABLE",))


OPTION_MODELS = ("zoo", "sleep2", "constraint", "legged", "rich", "quadruped", "orientation")


@family(0.35)
def gen_options(rng: random.Random, index: int) -> tuple[str, float]:
    """Model options: every disable and enable flag in turn (sensors,
    actuation, contacts, energy, sleep, ...) on a copy of one model, with
    random gravity/magnetic fields, every computable sensor and some bodies
    selected, refreshed by both engines; every flag that breaks the
    contract is reported."""
    name = OPTION_MODELS[index % len(OPTION_MODELS)]
    m = c.load_model(name)
    sel = random_selection(rng, m, sensors=False)
    sel["num_threads"] = rng.choice((1, 2))
    n = rng.choice((1, 4, 9))
    field = ""
    if rng.random() < 0.3:
        field += (
            f"    model.opt.magnetic[:] = {[round(rng.uniform(-2, 2), 3) for _ in range(3)]!r}\n"
        )
    if rng.random() < 0.3:
        field += (
            f"    model.opt.gravity[:] = {[round(rng.uniform(-20, 20), 3) for _ in range(3)]!r}\n"
        )
    sel_code, method = call_line(rng, n)
    code = (
        "import copy\n"
        f"base = c.load_model({name!r})\nn = {n}\n"
        f"states = c.make_states(base, n, seed={rng.randrange(10**6)})\n"
        "problems = []\n"
        "for field, bit in c.OPTION_FLAGS:\n"
        "    model = copy.deepcopy(base)\n"
        "    setattr(model.opt, field, getattr(model.opt, field) ^ bit)\n"
        + field
        + "    for engine in ('auto', 'exact'):\n"
        f"        kwargs = dict({sel!r}, sensors=c.pos_vel_sensors(model), engine=engine)\n"
        "        label = f'{field} ^= {bit:#x} ({c.OPTION_NAMES[(field, bit)]}), {engine}'\n"
        "        try:\n"
        "            r = c.check_build(model, kwargs)\n"
        f"            args = c.valid_args(r, states, n, np.{rng.choice(('float64', 'float32'))})\n"
        + "".join(f"            {ln}\n" for ln in sel_code.splitlines())
        + f"            c.check(r, {method!r}, args, note=label)\n"
        "            r.close()\n"
        "        except c.ContractViolation as exc:\n"
        "            problems.append(str(exc).splitlines()[0])\n"
        "if problems:\n"
        "    raise c.violation(f'{problems[0]}\\n(of {len(problems)} flag/engine pairs that "
        "break the contract:)\\n' + '\\n'.join(problems))\n"
    )
    return code, 2.0


@family(0.5)
def gen_plugins(rng: random.Random) -> str:
    """Plugin models: ordinary sensors and bodies refresh; the plugin sensor
    (and ranges covering it) is refused, naming it."""
    model = rng.choice(("touch_grid", "pid"))
    m = c.load_model(model)
    sel = random_selection(rng, m)
    refused = []
    if model == "touch_grid" and rng.random() < 0.4:
        if rng.random() < 0.5:
            sel["sensors"] = list(sel.get("sensors", [])) + ["tg"]
        else:
            sel["sensor_ranges"] = [(0, m.nsensordata)]
        refused = ["tg"]
    sel.update(num_threads=rng.choice((1, 2)), engine=rng.choice(("auto", "exact", "fast")))
    n = rng.choice((1, 5, 11))
    broken = sorted({"sensors", "sensor_ranges"} & set(sel)) if refused else []
    maybe = ["engine"] if sel["engine"] == "fast" else []
    code = (
        f"model = c.load_model({model!r})\nn = {n}\n"
        f"states = c.make_states(model, n, seed={rng.randrange(10**6)})\n"
        f"r = c.check_build(model, {sel!r}, broken={broken!r}, maybe={maybe!r}, "
        f"mentions={refused!r})\n"
        "if r is not None:\n"
        "    args = c.valid_args(r, states, n)\n"
        f"    args['rows'] = {rows_literal(rng, n)}\n"
        "    c.check(r, 'refresh', args)\n"
    )
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


EXIT_PROGRAMS = {
    "daemon_in_call": (  # four daemon threads, each inside a call on its own refresher
        "rs = [r] + [mjrefresh.Refresher(m, sensors=c.pos_vel_sensors(m), num_threads=1, "
        "engine='exact') for _ in range(3)]\n"
        "for rk in rs:\n"
        "    threading.Thread(target=rk.refresh, args=(np.arange(n), st['qpos'], st['qvel'], "
        "rk.outputs(n)), kwargs=kw, daemon=True).start()\n"
        "time.sleep(0.05)\n",
        0,
    ),
    "left_open": (
        "others = [mjrefresh.Refresher(m, bodies=[1], num_threads=3) for _ in range(3)]\n"
        "bound = r.bind(st['qpos'], st['qvel'], out, **kw)\nbound(np.arange(10))\n"
        "cache = mjrefresh.bind_arrays(others[0], st['qpos'], st['qvel'], **kw)\n"
        "cache.body_pos()\ncycle = [r]\ncycle.append(cycle)\n",
        0,
    ),
    "exception_in_with": (
        "with mjrefresh.Refresher(m, bodies=[1], num_threads=2) as r2:\n"
        "    r2.refresh(np.arange(10), st['qpos'][:10], st['qvel'][:10], r2.outputs(10), "
        "**{k: v[:10] for k, v in kw.items()})\n"
        "    raise SystemExit(3)\n",
        3,
    ),
    "fork_child_exits": (
        "r.refresh(np.arange(10), st['qpos'][:10], st['qvel'][:10], r.outputs(10), "
        "**{k: v[:10] for k, v in kw.items()})\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    r.refresh(np.arange(10), st['qpos'][:10], st['qvel'][:10], r.outputs(10), "
        "**{k: v[:10] for k, v in kw.items()})\n"
        "    sys.exit(0)  # a real interpreter exit in the child (atexit closes r)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "assert os.waitstatus_to_exitcode(status) == 0, status\n",
        0,
    ),
}


@family(0.15)
def gen_exit(rng: random.Random) -> tuple[str, float]:
    """Interpreter exit (a real one, in a subprocess) with refreshers left
    open, a daemon thread inside a call, an exception in a with block, or a
    forked child that exits normally: the process exits with its own status."""
    kind = rng.choice(sorted(EXIT_PROGRAMS))
    program, status = EXIT_PROGRAMS[kind]
    model = rng.choice(("legged", "three_link", "hostile"))
    prelude = (
        "import os, sys, threading, time\nimport numpy as np\nimport mjrefresh\n"
        "from support.fuzz import contract as c\n"
        f"m = c.load_model({model!r})\n"
        "st = c.tiled_states(c.make_states(m, 500, 1), 200)\nn = len(st['qpos'])\n"
        "r = mjrefresh.Refresher(m, sensors=c.pos_vel_sensors(m), bodies=[1], "
        f"num_threads={rng.choice((1, 2, 3))}, engine='exact')\n"
        "out = r.outputs(n)\nkw = c.state_kwargs(m, st)\n"
    )
    code = (
        "import os, subprocess\n"
        f"program = {prelude + program!r}\n"
        "env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))\n"
        "res = subprocess.run([sys.executable, '-c', program], capture_output=True, text=True, "
        "timeout=120, env=env)\n"
        f"if res.returncode != {status}:\n"
        f"    raise c.violation(f'the interpreter exited with {{res.returncode}} (expected {status})"
        f"\\n{{res.stderr[-3000:]}}')\n"
        "for bad in ('Fatal Python error', 'terminate called', 'Segmentation', 'Aborted'):\n"
        "    assert bad not in res.stderr, res.stderr[-3000:]\n"
    )
    return code, 2.0


# ---------------------------------------------------------------- the suite
def generate(seed: int, total: int, only: set[str] | None = None) -> dict[str, list[Case]]:
    """`total` cases (at least one per family), shared out by weight."""
    weight_sum = sum(w for w, _ in FAMILIES.values())
    out: dict[str, list[Case]] = {}
    for fam, (weight, gen) in FAMILIES.items():
        if only and fam not in only:
            continue
        count = max(1, round(total * weight / weight_sum))
        cases = []
        for k in range(count):
            s = case_seed(seed, fam, k)
            made = (
                gen(random.Random(s), k) if gen.__code__.co_argcount > 1 else gen(random.Random(s))
            )
            body, factor = made if isinstance(made, tuple) else (made, 1.0)
            cases.append(Case(fam, k, seed, body, factor))
        out[fam] = cases
    return out
