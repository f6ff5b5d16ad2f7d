"""The headline figures of a build in one small metrics file, and PNG renders of the CSV plots.

``python -m passnet_common.summary --params params.yaml`` reads the ``summary:`` block:

* ``figures``: ``{name: "<metrics file>:<dotted key>"}``; each figure is read from the stage
  metrics file and written under its short ``name`` to ``summary.out`` (default
  ``metrics/summary.json``), flat, in the order given. This file is the only one ``dvc.yaml``
  declares as a DVC metric, so ``dvc metrics show`` / ``dvc metrics diff`` fit one screen; the
  stage files stay committed beside it with every detail.
* ``plots``: ``[{csv, x, y, title}]``: each CSV (written by its stage) is drawn as a horizontal
  bar chart PNG next to it (``<csv stem>.png``), so ``dvc plots show`` renders offline (DVC's CSV
  templates load Vega from a CDN).

A figure whose file or key is missing is written as ``null`` and named on stderr (the summary
says it is incomplete; it never invents a value).

Raises:
    passnet_common.params.ParamsError: a malformed ``summary:`` block (names the key).
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from passnet_common.config import ParamsConfig, knob, register
from passnet_common.io import atomic_write_bytes, atomic_write_json
from passnet_common.params import load_params


def read_figure(spec: str) -> tuple[Any, str | None]:
    """Value of ``"<file>:<dotted.key>"`` and None, or ``(None, reason)`` when the file or the key
    is missing. A key may itself contain dots when the file has it literally (``es_t@-5``)."""
    path, _, key = spec.partition(":")
    if not key:
        return None, f"{spec!r}: expected <metrics file>:<key>"
    try:
        value: Any = json.loads(Path(path).read_text())
    except FileNotFoundError:
        return None, f"{path} does not exist"
    except json.JSONDecodeError as exc:
        return None, f"{path}: not JSON ({exc})"
    rest = key
    while rest:
        if isinstance(value, dict) and rest in value:
            return value[rest], None
        parts = rest.split(".")
        # the longest leading run of parts that is a key (a key such as "r0.5" holds a dot)
        i = next((i for i in range(len(parts) - 1, 0, -1) if isinstance(value, dict) and ".".join(parts[:i]) in value), 0)
        if not i:
            return None, f"{path}: no key {key!r}"
        value, rest = value[".".join(parts[:i])], ".".join(parts[i:])
    return value, None


def summarize(figures: dict[str, str]) -> tuple[dict[str, Any], list[str]]:
    """``{name: value}`` for every figure (None where missing) and the list of problems."""
    out, problems = {}, []
    for name, spec in figures.items():
        value, why = read_figure(spec)
        if isinstance(value, float):
            value = round(value, 4)
        if isinstance(value, (dict, list)):
            value, why = None, f"{spec}: not a single figure"
        out[name] = value
        if why:
            problems.append(f"{name}: {why}")
    return out, problems


def bar_png(csv_path: str | Path, x: str, y: str, out: str | Path, title: str | None = None) -> Path:
    """Horizontal bar chart of column ``x`` (values) against ``y`` (labels) of a CSV, as a PNG.

    Raises:
        FileNotFoundError: the CSV does not exist.
        ValueError: a column is missing (named in the message).
    """
    import matplotlib  # noqa: PLC0415  (the Agg backend must be chosen before pyplot is imported)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415  (after matplotlib.use)

    df = pl.read_csv(csv_path)
    for col in (x, y):
        if col not in df.columns:
            raise ValueError(f"{csv_path}: no column {col!r} (has {df.columns})")
    labels = [str(v) for v in df[y].to_list()]
    values = df[x].to_list()
    fig, ax = plt.subplots(figsize=(8, max(2.5, 0.28 * len(labels) + 1)), dpi=110)
    ax.barh(range(len(labels)), values, color="#4C72B0")
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(x)
    ax.set_title(title or Path(csv_path).stem, fontsize=11)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()

    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    plt.close(fig)
    out = Path(out)
    atomic_write_bytes(out, buf.getvalue())
    return out


@dataclass(frozen=True)
class SummaryPlot(ParamsConfig):
    """One CSV plot rendered as a PNG beside it (``summary.plots[i]``)."""

    csv: str = knob(doc="CSV file with a header row")
    x: str = knob(doc="column of the bar labels")
    y: str = knob(doc="column of the bar heights")
    title: str | None = knob(None, doc="plot title")


@dataclass(frozen=True)
class SummaryConfig(ParamsConfig):
    """The ``summary:`` params block."""

    figures: dict[str, str] = knob(factory=dict, doc="headline name -> 'metrics file:dotted.key'")
    out: str = knob("metrics/summary.json", doc="where the headline figures are written")
    plots: list[SummaryPlot] = knob(factory=list, doc="CSV plots rendered as PNG")


register("summary", SummaryConfig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m passnet_common.summary", description=__doc__.split("\n")[0])
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args(argv)
    cfg = SummaryConfig.from_params(load_params(args.params, "summary"), "summary")
    values, problems = summarize(cfg.figures)
    out = Path(cfg.out)
    atomic_write_json(out, values)
    for p in cfg.plots:
        csv = Path(p.csv)
        if not csv.exists():
            problems.append(f"plot {csv}: does not exist")
            continue
        bar_png(csv, p.x, p.y, csv.with_suffix(".png"), p.title)
    for p in problems:
        print(f"summary: missing {p}", file=sys.stderr)
    print(json.dumps(values, indent=1))
    return 0


if __name__ == "__main__":
    from passnet_common.cli import run_cli

    sys.exit(run_cli(lambda: main()))
