"""The core every stage family uses (stage families import this package, never each other).

* ``canonical/``: the canonical form of an FX graph and its hashes (``graph_hash``,
  ``structure_hash``);
* ``record``: a captured graph (:class:`~passnet_common.record.CapturedGraph`) and the JSON
  record describing it (:func:`~passnet_common.record.describe_graph`, tensor statistics);
* ``store``: the content-addressed graph store (``write_graph``, ``load_graph``, the op-target
  allowlist);
* ``worker``: the isolated child process (``run_isolated``: timeout, memory cap, resume);
* ``schema``: every table's Arrow schema; ``params`` + ``spec``: the params.yaml blocks and their checks; ``io``: atomic
  writers and canonical JSON; ``cli``: the shared CLI wrapper.
"""
