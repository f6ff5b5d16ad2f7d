"""The headline-metrics summary, PNG plot renders, docs rendered from data, and the DuckDB CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from passnet_common.docs import render
from passnet_common.summary import bar_png, read_figure, summarize


def test_figures_are_read_by_dotted_path_and_literal_keys(tmp_path):
    m = tmp_path / "score.json"
    m.write_text(json.dumps({"candidates": {"inductor": {"paper": {"ES_t@t=-5": 0.61234567}}}, "tasks": 19}))
    assert read_figure(f"{m}:tasks") == (19, None)
    assert read_figure(f"{m}:candidates.inductor.paper.ES_t@t=-5") == (0.61234567, None)
    value, why = read_figure(f"{m}:candidates.eager.paper")
    assert value is None and "no key" in why
    # a key with a dot in the middle of a path (a proxy named "r0.5"), and a missing leaf below it
    f = tmp_path / "fidelity.json"
    f.write_text(json.dumps({"controls": {"r0.5": {"reproduces": ["lr_spike"], "r0": 1}}}))
    assert read_figure(f"{f}:controls.r0.5.reproduces") == (["lr_spike"], None)
    assert read_figure(f"{f}:controls.r0.5.missing")[0] is None
    values, problems = summarize({"es": f"{m}:candidates.inductor.paper.ES_t@t=-5", "gone": f"{tmp_path}/x.json:a",
                                  "nested": f"{m}:candidates"})
    assert values == {"es": 0.6123, "gone": None, "nested": None}  # missing and non-scalar figures are null
    assert [p.split(":")[0] for p in problems] == ["gone", "nested"]


def test_bar_png_is_a_png_with_one_bar_per_row(tmp_path):
    csv = tmp_path / "sizes.csv"
    csv.write_text("model_id,num_nodes\na,3\nb,10\n")
    out = bar_png(csv, "num_nodes", "model_id", tmp_path / "sizes.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    try:
        bar_png(csv, "nodes", "model_id", tmp_path / "bad.png")
    except ValueError as exc:
        assert "nodes" in str(exc)
    else:
        raise AssertionError("a missing column must be an error")


def _db(tmp_path: Path) -> Path:
    pq.write_table(pa.table({"x": [1, 2, 3]}), tmp_path / "t.parquet")
    db = tmp_path / "t.duckdb"
    con = duckdb.connect(str(db), config={"storage_compatibility_version": "v1.2.0"})
    con.execute(f"CREATE VIEW t AS SELECT * FROM read_parquet('{tmp_path / 't.parquet'}')")
    con.close()
    return db


def test_query_blocks_get_their_output_and_rendering_is_idempotent(tmp_path):
    con = duckdb.connect(str(_db(tmp_path)), read_only=True)
    doc = "intro\n<!-- query -->\n```sql\nSELECT count(*) AS n FROM t WHERE x > 0;\n```\nafter\n"
    once = render(doc, con)
    assert "│3│" in once.replace(" ", "") and once.endswith("```\nafter\n")
    assert render(once, con) == once  # the output block is replaced, not appended again
    stale = once.replace("3 │", "4 │")
    assert stale != once
    assert render(stale, con) == once


def test_metrics_blocks_render_a_table(tmp_path):
    m = tmp_path / "m.json"
    m.write_text(json.dumps({"a": 1, "b": 0.123456, "c": {"d": 2}}))
    doc = f"<!-- metrics {m} -->\nold\n<!-- /metrics -->\n"
    out = render(doc, None)
    assert "| `a` | 1 |" in out and "| `b` | 0.1235 |" in out and "`c`" not in out and "old" not in out
    assert "| `c.d` | 2 |" in render(f"<!-- metrics {m} c.d -->\n<!-- /metrics -->\n", None)


def test_the_installed_duckdb_cli_opens_the_database(tmp_path):
    from dedupe.database import build_database

    pq.write_table(pa.table({"graph_hash": ["a", "b"]}), tmp_path / "g.parquet")
    db = tmp_path / "p.duckdb"
    build_database(db, {"graphs": str(tmp_path / "g.parquet")})
    cli = Path(sys.executable).with_name("duckdb")
    assert cli.exists(), "the duckdb-cli package (a dependency) provides this command"
    out = subprocess.run([str(cli), str(db), "-c", "SELECT count(*) AS n FROM graphs"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert "2" in out.stdout
