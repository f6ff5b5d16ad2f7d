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
    build_spread: float = knob(0.15, rule=non_negative(float),
                               doc="between-build spread of a variant's ratio, ln scale: each interval's upper end "
                               "is multiplied by exp(build_spread) before the 1 - m test, so 'slower with confidence' "
                               "holds across builds, not only within one (0.15: the 90th percentile of |ln| of "
                               "speedup_compiler between two profile runs at load 2.9 and 1.4 over 138 variants, "
                               "metrics/bench/compare_builds_curate_spread.json between_builds.abs_log_ratio_p90; "
                               "benchmarks/compare_builds.py --curate measures it); 0: the within-build interval only")
    task_build_spread: float = knob(0.035, rule=non_negative(float),
                                    doc="the same for a task's geometric mean over its variants (build effects partly "
                                    "average out over a subgraph's variants): 0.035 = the 90th percentile of |ln| of the "
                                    "geometric-mean speedup_compiler new/old over 28 subgraphs of two clean builds "
                                    "(metrics/bench/compare_builds_curate.json between_builds.task_abs_log_ratio_p90)")
    task_size: int = knob(10, rule=positive(int), doc="most variants per task (PassBench: ~10)")
    max_tasks: int = knob(200, rule=positive(int), doc="most tasks kept")
    min_task_variants: int = knob(2, rule=positive(int),
                                  doc="a task needs this many labelled variants (shapes x dtypes) of its subgraph")
