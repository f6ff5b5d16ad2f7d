"""Profiling wing: eager, Dynamo-only and Inductor on subgraph variants (``python -m curate profile``).

``variant`` checks and times one variant in an isolated child, ``run`` orders the runs (compile phase
beside timing, passes, stress), ``sizes`` writes the workload-size variants; the timing protocol
itself is :mod:`curate.timing`, shared with scoring and the task folders.
"""
