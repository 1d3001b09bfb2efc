"""The microbenchmark: refresh of tracked sensor columns for N simulations.

Run it with ``python -m bench.micro [options]`` (see :mod:`bench.micro.cli`).
"""
