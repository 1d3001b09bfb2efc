"""A seeded, bounded fuzz suite for the public API, each case in a child process.

* `cases`: the generator; a seed gives the same cases, each one a
  self-contained Python script (`Case.source`) that asserts the contract.
* `contract`: what those scripts import: the models, states, sentinel-filled
  outputs, and the checks of README "Guarantees" (`check_call` and friends).
* `server` / `runner`: a fork server that imports numpy, mujoco and mjrefresh
  once and runs each case in a forked child with a timeout, reporting a crash
  (signal), a hang (killed) or the child's own verdict.

tests/test_fuzz.py runs it; a failing case prints its script, which runs on
its own (``python case.py``) from anywhere, with the checkout's tests/ on the path.
"""
