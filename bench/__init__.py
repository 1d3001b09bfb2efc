"""mjrefresh's benchmarks, run as modules from the repository root.

* ``python -m bench.micro`` -- the microbenchmark: refresh of tracked sensor
  columns for N simulations, every installed contender, checked against
  ``mj_forward`` (:mod:`bench.micro`).
* ``python -m bench.collector`` -- collector-shaped throughput on a real native
  batch, per update-state variant (:mod:`bench.collector`).
* ``python -m bench.research.floor`` / ``bench.research.model_fields`` /
  ``bench.research.cache_overhead`` -- single measurements quoted in
  ``bench/README.md`` (:mod:`bench.research`).

:mod:`bench.common` holds what they share (environment record, timing,
command-line and output helpers, the embedded models and random states).
"""
