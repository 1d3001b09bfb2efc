"""Single measurements whose tables ``bench/README.md`` quotes, each run as a module:

* ``python -m bench.research.floor`` -- the engines next to the memory-traffic
  and stage-function cost floors;
* ``python -m bench.research.model_fields`` -- the cost of per-environment
  model fields (domain randomisation);
* ``python -m bench.research.cache_overhead`` -- Python overhead of
  ``StateCache`` reads;
* ``python -m bench.research.mjdata_list`` -- per-row cost of a list of
  ``MjData`` (``bind_mjdata_list``) next to ``bind_arrays`` and the
  per-``MjData`` Python loop;
* ``python -m bench.research.threads`` -- the tracking refresh of both
  engines against mjbatch-uni at each thread count, hot and cold, next to
  the memory-traffic floor on the same threads;
* ``python -m bench.research.sensor_types`` -- the cost of each sensor type,
  fast engine against exact engine;
* ``python -m bench.research.call_overhead`` -- the per-call cost of a build
  (e.g. the stable-ABI wheel against a version-specific one);
* ``python -m bench.research.instructions`` -- instructions per refreshed row
  (callgrind), independent of machine load.
"""
