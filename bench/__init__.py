"""mjrefresh's benchmarks, run as modules from the repository root.

* ``python -m bench.micro`` -- the microbenchmark (:mod:`mjrefresh.bench`, also
  ``mjrefresh bench``): refresh of tracked sensor columns for N simulations,
  every installed contender, checked against ``mj_forward`` (:mod:`bench.micro`).
* ``python -m bench.collector`` -- collector-shaped throughput on a real native
  batch, per update-state variant (:mod:`bench.collector`).
* ``python -m bench.research.floor`` / ``bench.research.model_fields`` /
  ``bench.research.cache_overhead`` -- single measurements quoted in
  ``bench/README.md`` (:mod:`bench.research`).

The microbenchmark's harness and the pieces these tools share (environment
record, timing, random states, JSON output) are in :mod:`mjrefresh.bench`;
:mod:`bench.common` holds what only these tools need (``python -m`` parser,
README sections).
"""
