"""Families of MuJoCo features: global callbacks (callbacks),
multi-dimensional actuators (multidim), sleep (sleep), model options
(options) and plugins (plugins)."""

from __future__ import annotations

import random

import mujoco

from support.edge_models import version_at_least
from support.fuzz import contract as c
from support.fuzz.cases.draws import call_line, random_selection, rows_literal, setup
from support.fuzz.cases.suite import family

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


@family(0.6, since=(3, 11, "the <orientation> actuator (nu != nactuator)"))
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
if not version_at_least(3, 11):  # no <orientation> actuator before 3.11
    OPTION_MODELS = OPTION_MODELS[:-1]


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
        "    try:  # some flags need others (MuJoCo 4.0's ipc needs its integrator)\n"
        "        mujoco.mj_forward(model, mujoco.MjData(model))\n"
        "    except mujoco.FatalError:\n"
        "        continue  # MuJoCo itself refuses the model: nothing to compare with\n"
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
