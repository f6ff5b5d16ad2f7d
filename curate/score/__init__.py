"""Scoring wing: candidates over a task set, S_t / ES_t (``python -m curate score``).

``evaluate`` runs a candidate over a task set (``spec`` parses and loads it, ``config`` is the
``score`` params block); ``boundary/`` is the trust boundary (``parent``: sandbox processes,
shared-memory slots, the parent's clock; ``sandbox``: the script the sandboxes run, holding nothing
of the evaluator; ``child``: walks the subgraphs and replaces failed sandboxes); ``defenses/`` holds
the checks the parent runs (``checks``, ``clock``, ``compare``, ``dispatch_guard``, ``integrity``);
``scoring`` holds the formulas, ``trajectories`` and ``reward`` the RL-facing records;
``candidates/`` and ``synthetic_tasks`` are the built-in candidates and tasks.
"""
