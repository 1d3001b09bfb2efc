"""The microbenchmark, run from the repository as ``python -m bench.micro``:
a thin wrapper over :mod:`mjrefresh.bench` (the same harness as
``mjrefresh bench``) that can also rewrite bench/README.md's result sections.
"""
