"""Plots of the curate stage: speedup vs eager time per side, log-log (the overhead floor).

One PNG (``plots/curate_speedup_vs_eager.png``): x = eager median ms per call, y = speedup
per row of run 0 for ``speedup_e2e`` (eager / Inductor), ``speedup_compiler`` (Dynamo-only /
Inductor) and ``speedup_dynamo`` (eager / Dynamo-only: the harness alone), one panel each,
the largest structure families in colour; plus ``plots/curate_speedup.csv`` (the points, for
``dvc plots``).
"""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

PANELS = (("speedup_e2e", "eager / Inductor"), ("speedup_compiler", "Dynamo-only / Inductor"),
          ("speedup_dynamo", "eager / Dynamo-only"))


def write_plots(labelled: list[dict], plots: Path, families: int = 6) -> None:
    """Write the scatter PNG and its CSV (module docstring) from labelled rows."""
    import matplotlib  # noqa: PLC0415  (the Agg backend must be chosen before pyplot is imported)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415  (after matplotlib.use)

    plots = Path(plots)
    plots.mkdir(parents=True, exist_ok=True)
    rows = [r for r in labelled if r["run"] == 0 and r.get("eager_median_ms") and r.get("speedup_e2e")]
    with open(plots / "curate_speedup.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["eager_ms", "size", "pattern", *[k for k, _ in PANELS], "overhead_bound", "long_tail"])
        for r in rows:
            w.writerow([r["eager_median_ms"], r.get("size"), r.get("pattern"), *[r.get(k) for k, _ in PANELS],
                        r.get("overhead_bound"), r.get("long_tail")])
    top = [p for p, _ in Counter(r.get("pattern") for r in rows).most_common(families)]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5), sharey=True)
    for ax, (key, title) in zip(axes, PANELS):
        for fam in top + [None]:
            pts = [r for r in rows if (r.get("pattern") in top) == (fam is not None) and (fam is None or r.get("pattern") == fam)]
            if pts:
                ax.scatter([r["eager_median_ms"] for r in pts], [r[key] for r in pts], s=12, alpha=0.7,
                           label=(fam[:40] if fam else "other families"), color=None if fam else "0.6")
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("eager median (ms per call)")
        ax.set_title(f"{key}: {title}")
    axes[0].set_ylabel("speedup (> 1: faster than the reference)")
    axes[-1].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(plots / "curate_speedup_vs_eager.png", dpi=110)
    plt.close(fig)
