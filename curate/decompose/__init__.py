"""Decomposition wing: parent graphs -> anchor-bounded subgraph ranges (``ranges``; the segmentation
rules in ``segments``), deduplicated by canonical hash into a subgraph store (``python -m curate decompose``)."""
