"""The aliasing family: outputs overlapping inputs or each other, rows and
dirty masks inside outputs or inputs, disjoint views of one buffer."""

from __future__ import annotations

import random

from support.fuzz import contract as c
from support.fuzz.cases.draws import OBJ, _allowed_sensors, _get, _name, _out_names, _targets, setup
from support.fuzz.cases.suite import family


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
                "# dirty: a bool view of byte 0 of each row of qpos itself (a model\n"
                "# without joints has no qpos bytes: a buffer beside it then)\n"
                "args['qpos'] = args['qpos'].copy()\n"
                "if model.nq:\n"
                "    args['dirty'] = c.bool_view_into(args['qpos'], byte=0)\n"
                "else:\n"
                "    args['dirty'] = c.bool_view_into(np.zeros((n, 1)), byte=0)\n"
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
