"""Families of calls racing something: close() (lifecycle), other Python
threads (threads) and SIGINT (sigint)."""

from __future__ import annotations

import random

from support.fuzz.cases.draws import _long_setup, setup
from support.fuzz.cases.suite import family


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
        # The delay counts from just before the call: a Timer's own start
        # (waiting for its thread) took longer than 5 ms on a loaded host,
        # and the signal then interrupted the test, not the call.
        "fire = threading.Event()\n"
        f"def _kill():\n    fire.wait()\n    time.sleep({delay})\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "timer = threading.Thread(target=_kill)\n"
        "timer.start()\n"
        "try:\n"
        "    fire.set()\n"
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
