"""The contract each fuzz case asserts (README "Guarantees"), as helpers the
case scripts import: models by name, states, sentinel-filled outputs and the
checks of one call.

A call ends in exactly one of these ways, and `check_call` asserts which ones
the case allows and what each implies:

* success: every selected row equals `mj_forward` at that row's state (exact
  engine: bit for bit; fast engine: 1e-12 for poses, 1e-10 for velocities;
  float32 outputs: the float32 rounding of that value), no byte outside the
  selected rows' planned columns/items changed in any array the call was
  given (or in the buffers those arrays view), and rows whose state is
  non-finite or huge are only required not to crash or disturb other rows;
* rejection: a `TypeError`/`ValueError` whose message names the offending
  argument (the text before its first colon), and nothing written at all;
* `RuntimeError("Refresher is closed")` after `close()` (nothing written);
* `mjrefresh.RefreshError` where the case allows MuJoCo errors in rows (the
  failing rows untouched, the others correct).

Anything else (another exception type, a crash, a hang) is a violation: an
`AssertionError` here, or a signal/timeout reported by the fork server.

The helpers live in modules by subject, all re-exported here:

* `named_models`: models by name, random trees, computable sensors, option flags;
* `states`: states, sentinel-filled outputs and valid call arguments;
* `memory`: byte snapshots of the buffers a call was given;
* `comparison`: the mj_forward oracle and the comparison with it;
* `calls`: one call and the contract for its outcome (`check_call`);
* `validity`: which arguments must or may be rejected (`expectation`, `check`);
* `building`: building a refresher, and `Refresher.outputs`;
* `cache`: StateCache reads, `bind_arrays` and row marks;
* `layouts`: arrays in other layouts and dtypes, views into other arrays;
* `processes`: forked children, calls after close, rows written or untouched;
* `violations`: `ContractViolation`.
"""

from __future__ import annotations

from support.fuzz.contract.building import check_build, check_full_refresh, check_outputs_call
from support.fuzz.contract.cache import (
    check_bind_arrays,
    check_cache_read,
    check_mark,
    expected_read,
)
from support.fuzz.contract.calls import CLOSED, check_call, names_argument, run_call
from support.fuzz.contract.comparison import (
    HUGE,
    POSE_TOL,
    VEL_TOL,
    assert_rows_match,
    compare,
    oracle,
    planned_columns,
)
from support.fuzz.contract.layouts import (
    ITEM_LAYOUTS,
    LAYOUTS,
    bool_view_into,
    int64_view_into,
    relayout,
    retyped,
)
from support.fuzz.contract.memory import Memory
from support.fuzz.contract.named_models import (
    INF_GEOM_XML,
    MODEL_NAMES,
    OPTION_FLAGS,
    OPTION_NAMES,
    ORIENTATION_XML,
    PID_XML,
    SLEEP2_XML,
    USER_SENSOR_XML,
    load_model,
    names,
    pos_vel_sensors,
    random_tree_desc,
    tree_model,
)
from support.fuzz.contract.processes import (
    all_written,
    expect_closed,
    untouched,
    vm_size,
    wait_child,
)
from support.fuzz.contract.states import (
    SENTINEL,
    degenerate_field_row,
    make_states,
    sentinel_outputs,
    set_quaternions,
    sleeping_states,
    state_kwargs,
    tiled_states,
    valid_args,
)
from support.fuzz.contract.validity import check, expectation
from support.fuzz.contract.violations import ContractViolation, violation

__all__ = [
    "CLOSED",
    "ContractViolation",
    "HUGE",
    "INF_GEOM_XML",
    "ITEM_LAYOUTS",
    "LAYOUTS",
    "MODEL_NAMES",
    "Memory",
    "OPTION_FLAGS",
    "OPTION_NAMES",
    "ORIENTATION_XML",
    "PID_XML",
    "POSE_TOL",
    "SENTINEL",
    "SLEEP2_XML",
    "USER_SENSOR_XML",
    "VEL_TOL",
    "all_written",
    "assert_rows_match",
    "bool_view_into",
    "check",
    "check_bind_arrays",
    "check_build",
    "check_cache_read",
    "check_call",
    "check_full_refresh",
    "check_mark",
    "check_outputs_call",
    "compare",
    "degenerate_field_row",
    "expect_closed",
    "expectation",
    "expected_read",
    "int64_view_into",
    "load_model",
    "make_states",
    "names",
    "names_argument",
    "oracle",
    "planned_columns",
    "pos_vel_sensors",
    "random_tree_desc",
    "relayout",
    "retyped",
    "run_call",
    "sentinel_outputs",
    "set_quaternions",
    "sleeping_states",
    "state_kwargs",
    "tiled_states",
    "tree_model",
    "untouched",
    "valid_args",
    "violation",
    "vm_size",
    "wait_child",
]
