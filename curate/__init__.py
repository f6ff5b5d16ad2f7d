"""The curate stage family (``python -m curate decompose|profile|curate|score``).

* decomposition: ``decompose`` (parent graphs -> subgraph ranges), ``segments`` (the range rules);
* profiling: ``profile`` (compile phase, then timing alone), ``profile_run`` (one subgraph's
  child), ``timing`` (the three-sided protocol: eager, Dynamo-only, Inductor), ``sizes``
  (workload-size variants);
* curation: ``longtail`` (labels and the long-tail rule), ``tasks`` (task folders; ``task_runner``
  is shipped into each as ``run_task.py``), ``plots``;
* scoring: ``evaluate`` (a candidate over a task set), ``score_spec`` / ``score_child`` /
  ``score_timing`` / ``score_checks`` / ``dispatch_guard`` / ``integrity`` (isolation, the
  candidate-proof clock and the integrity defenses), ``tolerance`` (GraphNet's levels),
  ``scoring`` (S_t, ES_t, the aggregate score), ``trajectories``; ``candidates/`` and
  ``synthetic_tasks`` are the built-in candidates and tasks.
"""
