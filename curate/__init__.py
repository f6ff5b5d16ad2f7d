"""The curate stage family (``python -m curate decompose|profile|curate|score``), one wing per stage:

* ``decompose/``: parent graphs -> subgraph ranges;
* ``profile/``: eager, Dynamo-only and Inductor on subgraph variants;
* ``select/``: long-tail labels, tasks, task folders;
* ``score/``: candidates scored by S_t / ES_t, with the integrity defenses;
* ``passbench/``: PassBench / GraphNet layout export and check.

Shared by the wings: ``timing`` (the three-sided timing protocol) and ``tolerance`` (GraphNet's
correctness levels). ``config`` holds the family's params blocks.
"""
