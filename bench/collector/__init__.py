"""The collector-shaped benchmark: environment transitions per second of an
off-policy collector's active window, per update-state variant.

Run it with ``python -m bench.collector [options]`` (see :mod:`bench.collector.cli`).
"""
