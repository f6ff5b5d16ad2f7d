"""The full build's task-rate plot, drawn from ``metrics/full/summary.json`` alone.

One PNG (``plots/full_task_rates.png``, written by ``python -m fullscale summary``), three panels:

- left: the share of profiled structures with a long-tail task per size in FX ops (``task_rates.by_ops``;
  bars, each labelled ``with a task / profiled``), the build's overall share as a line -- why the shard
  order ranks by size first (:mod:`fullscale.order`);
- right: the leave-one-shard-out backtest (``tasks_target_projection.highest_rate_first.backtest``):
  structures with a task among the top share of the profiled structures ranked by the kind rates
  (``top``: predicted and actual) and by anchor alone (``anchor_only``), against the share a random order
  would give (the fraction times all of them);
- third: what the tasks still missing for 200 cost in the yield order under each rate floor
  (``tasks_target_projection.yield_order.by_rate_floor``): bars of core-hours, each labelled with its
  shards, hatched where the walk never reaches the target (its bar is then every walked shard's cost), priced at
  the CPU model its axis names (``yield_order.cpu_model``).

Plus ``plots/full_task_rates.csv`` (the bars and the points of every panel, for ``dvc plots``). Nothing is drawn
from a summary without ``task_rates`` (None returned).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from passnet_common.io import atomic_write_bytes


def write_task_rate_plot(summary: dict, png: str | Path) -> Path | None:
    """Write the PNG (module docstring) and its CSV beside it (same stem, ``.csv``), atomically; return the
    PNG's path, or None when ``summary`` has no ``task_rates``."""
    rates = summary.get("task_rates")
    if not rates or not rates.get("by_ops"):
        return None
    import matplotlib  # noqa: PLC0415  (the Agg backend must be chosen before pyplot is imported)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415  (after matplotlib.use)

    png = Path(png)
    sizes = list(rates["by_ops"].items())  # [(size label, [profiled, with a task])], in the summary's order
    profiled = sum(c[0] for _, c in sizes)
    overall = sum(c[1] for _, c in sizes) / profiled if profiled else 0.0
    target = summary.get("tasks_target_projection") or {}
    bt = (target.get("highest_rate_first") or {}).get("backtest")
    floors = [f for f in (target.get("yield_order") or {}).get("by_rate_floor") or [] if f.get("core_hours") is not None]

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["panel", "x", "profiled", "with_task", "share", "predicted", "actual", "anchor_only", "random",
                "core_hours", "shards", "reached"])
    for label, (n, k) in sizes:
        w.writerow(["by_ops", label, n, k, round(k / n, 4) if n else None, None, None, None, None, None, None, None])
    fig, (left, right, third) = plt.subplots(1, 3, figsize=(16, 4.2))
    left.bar([label for label, _ in sizes], [k / n if n else 0.0 for _, (n, k) in sizes], color="tab:blue")
    for i, (_, (n, k)) in enumerate(sizes):
        left.annotate(f"{k}/{n}", (i, k / n if n else 0.0), ha="center", va="bottom", fontsize=8)
    left.axhline(overall, color="k", lw=0.8, ls="--", label=f"all sizes ({overall:.3f})")
    left.set_xlabel("structure size (FX ops)")
    left.set_ylabel("share of profiled structures with a task")
    left.set_title("long-tail task rate by size")
    left.legend(fontsize=8)
    if bt and bt.get("top"):
        total = bt["with_task"]
        xs = [t["fraction"] for t in bt["top"]]
        only = {t["fraction"]: t["actual"] for t in bt.get("anchor_only") or []}
        for t in bt["top"]:
            w.writerow(["backtest", t["fraction"], None, None, None, t["predicted"], t["actual"],
                        only.get(t["fraction"]), round(t["fraction"] * total, 1), None, None, None])
        right.plot(xs, [t["actual"] for t in bt["top"]], "o-", label="ranked by kind (size, anchor): actual")
        right.plot(xs, [t["predicted"] for t in bt["top"]], "o:", color="tab:blue", alpha=0.6,
                   label="ranked by kind: predicted")
        if only:
            right.plot(xs, [only.get(x) for x in xs], "s-", color="tab:orange", label="ranked by anchor alone: actual")
        right.plot(xs, [x * total for x in xs], "k--", lw=0.8, label="random order")
        right.set_xscale("log")
        right.set_xlabel("top share of the profiled structures")
        right.set_ylabel("structures with a task")
        right.set_title(f"leave-one-shard-out backtest ({bt['shards']} shards, {bt['structures']} structures)")
        right.legend(fontsize=8)
    else:
        right.set_axis_off()
        right.text(0.5, 0.5, "no backtest: fewer than two full shards", ha="center", va="center")
    if floors:
        labels = ["none" if f["rate_floor"] is None else f"{f['rate_floor']:g}" for f in floors]
        bars = third.bar(labels, [f["core_hours"] for f in floors], color="tab:green")
        for label, f, bar in zip(labels, floors, bars):
            reached = f.get("shards") is not None
            shards = f["shards"] if reached else f.get("shards_walked")  # a walk that falls short: all it walked
            w.writerow(["by_rate_floor", label, None, None, None, None, f.get("tasks_expected"), None, None,
                        f["core_hours"], shards, reached])
            if not reached:
                bar.set_hatch("//")
                bar.set_alpha(0.5)
            third.annotate(f"{shards} shards" + ("" if reached else " (short)"),
                           (bar.get_x() + bar.get_width() / 2, f["core_hours"]), ha="center", va="bottom", fontsize=8)
        third.set_ylim(0, 1.15 * max(f["core_hours"] for f in floors) or 1.0)
        third.set_xlabel("fullscale.rate_floor")
        cpu = ((summary.get("tasks_target_projection") or {}).get("yield_order") or {}).get("cpu_model")
        third.set_ylabel(f"core-hours of the shards walked ({cpu or 'this machine'}'s rates)")
        third.set_title("the tasks missing for 200, yield order by rate floor")
    else:
        third.set_axis_off()
        third.text(0.5, 0.5, "no shard walk (200 tasks reached, or no rates)", ha="center", va="center")
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=100, metadata={"Software": None})  # no matplotlib version in the bytes
    plt.close(fig)
    png.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(png, out.getvalue())
    atomic_write_bytes(png.with_suffix(".csv"), buf.getvalue().encode())
    return png
