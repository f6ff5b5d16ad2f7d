"""Scoring wing: candidates over a task set, S_t / ES_t (``python -m curate score``).

``evaluate`` runs a candidate over a task set (``spec`` parses and loads it, ``child`` runs the
isolated children, ``checks`` / ``clock`` / ``dispatch_guard`` / ``integrity`` are the integrity
defenses), ``scoring`` holds the formulas, ``trajectories`` and ``reward`` the RL-facing records;
``candidates/`` and ``synthetic_tasks`` are the built-in candidates and tasks.
"""
