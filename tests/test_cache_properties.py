"""Property test: any sequence of steps, state writes, resets and reads keeps
every read equal to mj_forward at the current state, and refreshes exactly the
dirty rows the read returns."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from support.backends import ArrayBackend
from support.models import LEGGED_BODIES as BODIES
from support.models import legged_model
from support.oracle import expected_outputs
from support.sensors import tracked_sensors

import mjrefresh

N = 4
MODEL = legged_model()

rows_st = st.lists(st.integers(0, N - 1), min_size=1, max_size=N, unique=True).map(sorted)
op_st = st.one_of(
    st.tuples(st.just("step"), rows_st),
    st.tuples(st.just("write"), rows_st),
    st.tuples(st.just("reset"), rows_st),
    st.tuples(st.just("read"), st.one_of(st.none(), st.lists(st.integers(0, N - 1), max_size=6))),
    st.tuples(st.just("frozen_step"), rows_st),
)


@settings(max_examples=30, deadline=None)
@given(ops=st.lists(op_st, min_size=1, max_size=10), seed=st.integers(0, 2**16))
def test_reads_always_current(ops, seed):
    be = ArrayBackend(MODEL, N, seed=seed)
    with mjrefresh.Refresher(
        MODEL, bodies=BODIES, relative_to="base", sensors=tracked_sensors(MODEL), num_threads=2
    ) as r:
        cache = be.bind(r)
        for op, arg in ops:
            if op == "step":
                be.step(rows=arg, nsub=1)
                cache.mark_stepped(arg)
            elif op == "write":
                be.write_state(arg)
                cache.mark_dirty(arg)
            elif op == "reset":
                be.reset(arg)
                cache.mark_fresh(arg)
            elif op == "frozen_step":
                with cache.frozen():
                    held = cache.body_pos().copy()
                    be.step(rows=arg, nsub=1)
                    cache.mark_stepped(arg)
                    np.testing.assert_array_equal(cache.body_pos(), held)
            else:
                rows = list(range(N)) if arg is None else arg
                dirty_before = cache.dirty.copy()
                cache.reset_stats()
                got = cache.body_linvel(
                    env_ids=None if arg is None else np.array(arg, dtype=np.int64)
                )
                expect_rows = len(set(i for i in rows if dirty_before[i]))
                assert cache.stats.rows_refreshed == expect_rows
                assert cache.stats.native_calls == (1 if expect_rows else 0)
                if rows:
                    exp = expected_outputs(MODEL, be.states(), BODIES, "base", rows=rows)
                    np.testing.assert_allclose(got, exp["body_linvel"], rtol=0, atol=1e-12)
                    np.testing.assert_allclose(
                        cache.body_pos_rel(env_ids=rows), exp["body_pos_rel"], rtol=0, atol=1e-12
                    )
                untouched = [i for i in range(N) if i not in rows]
                np.testing.assert_array_equal(cache.dirty[untouched], dirty_before[untouched])
        # finally everything is current
        exp = expected_outputs(MODEL, be.states(), BODIES, "base")
        np.testing.assert_allclose(cache.body_quat(), exp["body_quat"], rtol=0, atol=1e-12)
        cols = np.concatenate([np.arange(a, b) for a, b in r.plan.column_ranges])
        np.testing.assert_allclose(
            be.sensordata[:, cols], exp["sensordata"][:, cols], rtol=0, atol=1e-12
        )
