"""dedupe: canonical form of FX graphs, hashes, grouping and near-duplicate families."""
