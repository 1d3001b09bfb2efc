"""mjrefresh's microbenchmark, shipped with the package so that an installed
mjrefresh can benchmark the user's own robot: ``mjrefresh bench [MODEL]``
(:mod:`mjrefresh.bench.cli`).

It measures how long every installed way of refreshing a selection of N
simulations takes (per-env Python loop, mjbatch-uni, ``mujoco.batch``, the
mjrefresh engines), checks each one's values against ``mj_forward`` and
reports a table, a headline, a JSON record and a plot.

Modules: :mod:`~mjrefresh.bench.cli` (options, run), :mod:`~mjrefresh.bench.selection`
(what is refreshed), :mod:`~mjrefresh.bench.workloads`, :mod:`~mjrefresh.bench.contenders`,
:mod:`~mjrefresh.bench.measure` (build, check, time), :mod:`~mjrefresh.bench.report`
(derived numbers, table, headline), :mod:`~mjrefresh.bench.plot`, and the pieces the
repository's research benchmarks share: :mod:`~mjrefresh.bench.envinfo`,
:mod:`~mjrefresh.bench.availability`, :mod:`~mjrefresh.bench.timing`,
:mod:`~mjrefresh.bench.states`, :mod:`~mjrefresh.bench.stage_loop`,
:mod:`~mjrefresh.bench.output`.
"""
