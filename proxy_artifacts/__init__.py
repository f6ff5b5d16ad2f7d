"""The MoE proxy stage family (``python -m proxy_artifacts ...``).

``adapters`` (MoE families as rows of one table), ``corpus`` (+ ``corpus_files/``: the committed
calibration/training text), ``base_model`` (the tiny fine-grained base), ``stats`` (expert
statistics), ``cluster`` + ``prune`` (clustering-based pruning that keeps backbone and router),
``checkpoint`` + ``hub`` + ``card`` (safetensors checkpoints with lineage, Hub publish/pull, the
model card), ``selection`` (the winner rule), ``architectures`` (the six families end to end), ``pipeline``
and ``metrics`` (stage glue and figures), ``rl`` (GRPO runs with injected faults), ``fidelity`` +
``verdicts`` + ``report`` (fault signatures, seeded statistics, the report), ``cost`` (FLOPs per
token, measured step time and memory), ``projection`` (the accelerator projection and its assumptions).
"""
