"""Scoring wing: candidates over a task set, S_t / ES_t (``python -m curate score``).

``evaluate`` runs a candidate over a task set (``spec`` parses and loads it, ``config`` is the
``score`` params block); ``boundary`` and ``sandbox`` are the trust boundary (the candidate in a
sandbox process holding nothing of the evaluator, the references in another, shared-memory slots,
the parent's clock); ``child`` walks the subgraphs and replaces failed sandboxes; ``checks`` /
``clock`` / ``dispatch_guard`` / ``integrity`` are the checks the parent runs; ``scoring`` holds
the formulas, ``trajectories`` and ``reward`` the RL-facing records; ``candidates/`` and
``synthetic_tasks`` are the built-in candidates and tasks.
"""
