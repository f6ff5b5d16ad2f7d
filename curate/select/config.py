"""``curate.curate``: the knobs of ``python -m curate curate`` (labels, tasks, task folders)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from passnet_common.config import ParamsConfig, knob
from passnet_common.spec import non_negative, positive


@dataclass(frozen=True)
class SelectConfig(ParamsConfig):
    """Long-tail rule and task shape (:mod:`curate.select.longtail`, :mod:`curate.select.tasks`)."""

    tolerance_t: int = knob(-5, doc="long tail = correct at this level t (-5: torch.testing.assert_close defaults)")
    rule: Literal["compiler", "e2e"] = knob("compiler", doc="compiler: the generated code is slower than Dynamo-only "
                                            "with confidence | e2e: PassNet's (slower than eager)")
    build_spread: float = knob(0.0, rule=non_negative(float),
                               doc="extra between-build spread of a variant's ratio, ln scale: each interval's upper end "
                               "is multiplied by exp(build_spread) before the 1 - m test (0: run 0's pooled replicate "
                               "interval alone, which holds the between-child spread: curate/profile/replicates.py; "
                               "benchmarks/compare_builds.py --curate measures what two builds still disagree on)")
    task_build_spread: float = knob(0.0, rule=non_negative(float),
                                    doc="the same for a task's geometric mean over its variants")
    task_size: int = knob(10, rule=positive(int), doc="most variants per task (PassBench: ~10)")
    max_tasks: int = knob(200, rule=positive(int), doc="most tasks kept")
    min_task_variants: int = knob(2, rule=positive(int),
                                  doc="a task needs this many labelled variants (shapes x dtypes) of its subgraph")
    min_task_shapes: int = knob(3, rule=positive(int),
                                doc="a task needs labelled variants in this many sizes (curate.profile.sizes: catalog, "
                                "mid, workload); PassBench's tasks span shapes x dtypes, so a subgraph with one size is "
                                "not a task (its variants can still be long tail)")
