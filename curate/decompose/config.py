"""``curate.decompose``: the knobs of ``python -m curate decompose`` (:mod:`curate.decompose.ranges`)."""

from __future__ import annotations

from dataclasses import dataclass

from passnet_common.config import ParamsConfig, knob
from passnet_common.spec import ListOf, non_negative, positive


@dataclass(frozen=True)
class DecomposeConfig(ParamsConfig):
    """How unique graphs are cut into anchor-bounded ranges (module docstring of ``curate/decompose/ranges.py``)."""

    anchors_per_subgraph: int = knob(1, rule=positive(int), doc="anchor ops per range")
    max_nodes: int = knob(64, rule=positive(int), doc="most call nodes per range")
    max_param_bytes: int = knob(256 * 2**20, rule=positive(int),
                                doc="bytes of parameters above which a range is skipped (param_bytes_cap)")
    min_graph_ops: int = knob(2, rule=non_negative(int), doc="parents with fewer call ops are Dynamo logging graphs")
    variants: list[int] = knob(factory=lambda: [1, 2], rule=ListOf(positive(int)),
                               doc="anchors_per_subgraph values whose subgraph counts are measured")
