"""The extract stage family: models in, graphs out (``python -m extract ...``).

* ``sources/``: where models come from (built-in catalogs, local configs, the Hub, GraphNet);
* ``capture/``: how a model becomes graphs (true-size build, inputs, Dynamo capture,
  completeness, retries);
* ``runs/``: how captures are run (resume key, isolated workers, executor, assembly);
* ``publish/``: what is published (Hub dataset, GraphNet export).

Shared with other stage families only through the core (:mod:`passnet_common`): the graph
record, the graph store, the isolated worker and the canonical form live there.
"""
