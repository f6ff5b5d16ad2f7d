"""proxy_artifacts: MoE expert statistics, clustering-based pruning, proxy checkpoints."""
