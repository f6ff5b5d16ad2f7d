"""The full-scale build: the whole catalog in shards that survive a session, and its release.

The orchestrator sits above the stage families and imports none of them: each shard calls their
CLIs in subprocesses (:mod:`fullscale.pipeline`). Modules: ``config`` (the ``fullscale`` params
block), ``params`` (override merge), ``shards`` (assignment, committed shard folders),
``pipeline`` (one shard), ``runner`` (local / Ray executors, resume), ``summary``
(``metrics/full/summary.json``), ``release`` (release folder, held-out split), ``licences``,
``hub`` (publish / fetch). Guide: ``docs/full_scale.md``.
"""
