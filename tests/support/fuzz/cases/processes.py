"""Families of processes and the interpreter: os.fork() (fork), thread
creation failing (thread_limits) and interpreter exit (exit)."""

from __future__ import annotations

import random

from mjrefresh.refresher import MAX_THREADS
from support.fuzz.cases.draws import _long_setup, setup
from support.fuzz.cases.suite import family


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
        + (", maybe={'num_threads'}" if threads > MAX_THREADS else "")
        + ")\n"
        "finally:\n"
        "    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))\n"
        "if r is not None:\n"
        "    c.check_full_refresh(r, 8, seed=2, note='built under the limit')\n"
        "    r.close()\n"
        "r2 = c.check_build(model, {'bodies': [1], 'num_threads': 2})\n"
        "c.check_full_refresh(r2, 8, seed=3, note='a refresher after the failure')\n"
    )


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
