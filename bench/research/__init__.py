"""Single measurements whose tables ``bench/README.md`` quotes, each run as a module:

* ``python -m bench.research.floor`` -- the engines next to the memory-traffic
  and stage-function cost floors;
* ``python -m bench.research.model_fields`` -- the cost of per-environment
  model fields (domain randomisation);
* ``python -m bench.research.cache_overhead`` -- Python overhead of
  ``StateCache`` reads;
* ``python -m bench.research.mjdata_list`` -- per-row cost of a list of
  ``MjData`` (``bind_mjdata_list``) next to ``bind_arrays`` and the
  per-``MjData`` Python loop.
"""
