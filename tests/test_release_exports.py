"""Release formats of a task variant: PassBench's files carry numbers and ranges (not None), GraphNet's
``input_tensor_constraints.py`` is written, and the KernelBench problem computes the stored graph."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import torch
import torch.fx as fx
import torch.nn.functional as F
from torch.fx.passes.shape_prop import ShapeProp

from curate.passbench.check import read_meta
from curate.passbench.export import export_tasks
from curate.passbench.kernelbench import export_kernelbench
from passnet_common.record import CapturedGraph, describe_graph
from passnet_common.store import load_graph, store_path, write_graph

VOCAB = 50


def embed_mask(ids, mask, w, scale):
    """An integer input (token ids < VOCAB), a bool input, a weight and a float buffer."""
    return F.embedding(ids, w) * mask.unsqueeze(-1) * scale


def rms(x, w):
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6))


def csquare(z):
    """A complex input (not floating: the KernelBench draw once gave it zeros)."""
    return torch.view_as_real(z * z)


@pytest.fixture(scope="module")
def tasks(tmp_path_factory):
    """Three task folders whose variants were stored without statistics (as decompose stores them)."""
    from curate.select.tasks import group_tasks, write_task_folders

    root = tmp_path_factory.mktemp("exports")
    members = []
    for size, h in (("catalog", 16), ("workload", 32)):
        for fn, inputs, kinds, spec in [
            (embed_mask, [torch.randint(0, VOCAB, (1, 8)), torch.ones(1, 8, dtype=torch.bool), torch.randn(VOCAB, h),
                          torch.ones(h)], ["input", "input", "parameter", "buffer"], [{"high": VOCAB}]),
            (rms, [torch.randn(1, 8, h), torch.ones(h)], ["input", "parameter"], None),
            (csquare, [torch.randn(1, h, dtype=torch.complex64)], ["input"], None),
        ]:
            gm = fx.symbolic_trace(fn)
            ShapeProp(gm).propagate(*inputs)
            rec = describe_graph(0, CapturedGraph(gm, kinds, inputs, None), with_stats=False)
            write_graph(root / "store", rec, spec)
            members.append({"subgraph_hash": rec["graph_hash"], "size": size, "pattern": fn.__name__, "speedup_e2e": 0.5,
                            "variant_folder": str(store_path(root / "store", rec["graph_hash"]))})
    write_task_folders(group_tasks(members, task_size=10), root / "tasks", -5, {"machine": "test"})
    return root / "tasks"


def test_passbench_metas_hold_numbers_and_integer_ranges(tasks, tmp_path):
    rep = export_tasks(tasks, tmp_path / "pb")
    assert rep["exported"] == 6 and rep["skipped"] == []
    seen_int = seen_bool = 0
    for gl in sorted((tmp_path / "pb").glob("*/graph_list.txt")):
        for rel in gl.read_text().split():
            v = gl.parent / rel
            metas = read_meta(v / "weight_meta.py")
            for m in metas:
                assert isinstance(m["mean"], float) and isinstance(m["std"], float), m
            for m in metas:
                if m["dtype"] == "torch.int64":
                    seen_int += 1
                    assert (m["min_val"], m["max_val"]) == (0, VOCAB - 1)  # drawn from [0, int_high)
                if m["dtype"] == "torch.bool":
                    seen_bool += 1
                    assert (m["min_val"], m["max_val"]) == (1, 1)  # synthesised masks are all true
                if m["name"].startswith("w_") and m["dtype"] == "torch.float32" and m["shape"][0] == VOCAB:
                    assert (m["mean"], m["std"]) == (0.0, 0.02)  # parameters are drawn N(0, 0.02) without recorded stats
            ns: dict = {}
            exec((v / "input_tensor_constraints.py").read_text(), ns)  # our own generated file
            assert ns["dynamic_dim_constraint_symbols"] == []
            assert ns["dynamic_dim_constraint_input_shapes"] == [(m["shape"], m["name"]) for m in metas]
    assert seen_int == 2 and seen_bool == 2


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"kb_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # a file this repository generated (never a foreign one)
    return mod


def test_kernelbench_problem_computes_the_stored_graph(tasks, tmp_path):
    rep = export_kernelbench(tasks, tmp_path / "kb")
    assert rep["problems"] == 6 and rep["skipped"] == [] and rep["tasks"] == len(list(tasks.glob("*/task.json")))
    index = json.loads((tmp_path / "kb" / "index.json").read_text())["index"]
    folders = {sg["variant_id"]: tj.parent / "subgraphs" / sg["folder"]
               for tj in tasks.glob("*/task.json") for sg in json.loads(tj.read_text())["subgraphs"]}
    for entries in index.values():
        for e in entries:
            mod = _load(tmp_path / "kb" / e["file"])
            model = mod.Model(*mod.get_init_inputs())
            x1, x2 = mod.get_inputs(), mod.get_inputs()
            assert len(x1) == len(e["inputs"]) and len(model._buffers) == len(e["weights"])
            assert any(not torch.equal(a, b) for a, b in zip(x1, x2) if a.dtype.is_floating_point) or \
                all(not a.dtype.is_floating_point for a in x1), "each get_inputs() call draws fresh inputs"
            assert all(float(a.abs().min()) > 0 and not torch.equal(a, b) for a, b in zip(x1, x2) if a.dtype.is_complex)
            ints = [a for a in x1 if a.dtype == torch.int64]
            assert all(0 <= int(a.min()) and int(a.max()) < VOCAB for a in ints)
            # the same arguments through the stored graph give the same output
            gm, _ = load_graph(folders[e["variant_id"]])
            it, wt = iter(x1), iter(model._buffers.values())
            kinds = [p["kind"] for p in sorted(json.loads((folders[e["variant_id"]] / "input_meta.json").read_text())["placeholders"]
                                               + json.loads((folders[e["variant_id"]] / "weight_meta.json").read_text())["placeholders"],
                                               key=lambda p: p["position"])]
            args = [next(it) if k == "input" else next(wt) for k in kinds]
            torch.testing.assert_close(model(*x1), gm(*args))


def test_the_committed_release_carries_the_definitions_graph_hash_of_every_exported_variant():
    """Every ``graph_hash`` of the committed release's PassBench export is the canonical definition's
    hash (pure Python, no label cache) of its public task variant, rebuilt as the export does
    (:func:`curate.passbench.export.variant_graph_hash`). A release exported while the compiled path
    bound calls by a plan its memo held from an earlier call (two ``conv2d>batch_norm`` tasks got
    another hash than the definition's) fails this, and so does a release left stale by a change of
    the form."""
    from curate.passbench.export import variant_graph_hash
    from passnet_common.canonical import compiled

    rel = Path(__file__).resolve().parents[1] / "data_full" / "release"
    metas = sorted((rel / "passbench").glob("*/graphs/*/*/graph_net.json"))
    if not metas:
        pytest.skip("no committed release export")
    bad = []
    with compiled.python_only():
        for m in metas:
            pn = json.loads(m.read_text())["passnet"]
            folder = rel / "tasks" / pn["task_id"] / "subgraphs" / m.parent.name
            if variant_graph_hash(folder) != pn["graph_hash"]:
                bad.append(f"{pn['task_id']}/{m.parent.name}")
    assert len(metas) >= 100 and not bad, bad


def test_the_committed_release_tables_load_as_its_card_says_and_hold_every_graphs_nodes():
    """Every table of the committed release loads with DuckDB from the path its dataset card names
    (``fullscale.release.table_path``: the nodes table is one file per shard) with the row count of its
    manifest, and the nodes hold every unique graph once: the docs' queries run on the release."""
    import duckdb
    import yaml

    from fullscale.release import table_path

    rel = Path(__file__).resolve().parents[1] / "data_full" / "release"
    man = json.loads((rel / "manifest.json").read_text())
    card = (rel / "README.md").read_text().split("---")[1]
    paths = {c["config_name"]: c["data_files"][0]["path"] for c in yaml.safe_load(card)["configs"]}
    assert paths == {n: table_path(n) for n in man["tables"]} and paths["nodes"] == "tables/nodes/*.parquet"
    con = duckdb.connect()
    for name, n in man["tables"].items():
        assert con.sql(f"SELECT count(*) FROM read_parquet('{rel / paths[name]}')").fetchall()[0][0] == n, name
    graphs = {r[0] for r in con.sql(f"SELECT graph_hash FROM read_parquet('{rel / 'tables/unique_graphs.parquet'}')").fetchall()}
    nodes = con.sql(f"SELECT graph_hash, count(DISTINCT filename) FROM read_parquet('{rel / paths['nodes']}', filename=true) "
                    "GROUP BY graph_hash").fetchall()
    assert {h for h, _ in nodes} == graphs and all(files == 1 for _, files in nodes)


def test_the_committed_release_unique_graphs_count_every_model_of_the_graphs_table():
    """``unique_graphs`` of the committed release agrees with its ``graphs`` table: per graph hash
    ``num_models`` is the number of distinct models, ``num_instances`` the number of (model, graph index)
    rows and ``members`` those rows; ``store_path`` is the nodes file that holds the graph. A release
    whose rows kept only the first shard's members (every ``num_models`` 1, though hundreds of graphs are
    shared by several models) fails this, and the README's "graphs shared by several models" query
    then returns nothing."""
    import duckdb

    rel = Path(__file__).resolve().parents[1] / "data_full" / "release"
    if not (rel / "tables" / "unique_graphs.parquet").is_file():
        pytest.skip("no committed release")
    con = duckdb.connect()
    con.sql(f"CREATE VIEW g AS SELECT * FROM read_parquet('{rel / 'tables/graphs.parquet'}')")
    con.sql(f"CREATE VIEW u AS SELECT * FROM read_parquet('{rel / 'tables/unique_graphs.parquet'}')")
    wrong = con.sql("""
        SELECT u.graph_hash FROM u JOIN (
            SELECT graph_hash, count(DISTINCT model_id) AS m, count(*) AS n FROM g GROUP BY graph_hash) c
          USING (graph_hash)
        WHERE u.num_models <> c.m OR u.num_instances <> c.n OR len(u.members) <> c.n""").fetchall()
    shared = con.sql("SELECT count(*) FROM u WHERE num_models > 1").fetchall()[0][0]
    expected_shared = con.sql("SELECT count(*) FROM (SELECT graph_hash FROM g GROUP BY graph_hash "
                              "HAVING count(DISTINCT model_id) > 1)").fetchall()[0][0]
    assert not wrong and shared == expected_shared > 0, (wrong[:5], shared, expected_shared)
    paths = con.sql("SELECT DISTINCT store_path FROM u").fetchall()
    assert all((rel / p).is_file() for (p,) in paths), paths[:5]


def test_the_committed_release_licences_say_in_release_for_the_models_with_graphs():
    """``licences.in_release`` of the committed release is true exactly for the models with rows in its ``graphs``
    table; the models whose capture failed (rows in ``models`` only) are listed, licence and all, as not in it,
    and the card counts the same."""
    import duckdb

    rel = Path(__file__).resolve().parents[1] / "data_full" / "release"
    if not (rel / "tables" / "licences.parquet").is_file():
        pytest.skip("no committed release")
    con = duckdb.connect()
    con.sql(f"CREATE VIEW l AS SELECT * FROM read_parquet('{rel / 'tables/licences.parquet'}')")
    con.sql(f"CREATE VIEW g AS SELECT DISTINCT model_id FROM read_parquet('{rel / 'tables/graphs.parquet'}')")
    con.sql(f"CREATE VIEW m AS SELECT * FROM read_parquet('{rel / 'tables/models.parquet'}')")
    wrong = con.sql("SELECT model_id FROM l WHERE in_release <> (model_id IN (SELECT model_id FROM g))").fetchall()
    out = con.sql("SELECT count(*) FROM l WHERE NOT in_release AND model_id IN (SELECT model_id FROM m)").fetchall()[0][0]
    n_in = con.sql("SELECT count(*) FROM l WHERE in_release").fetchall()[0][0]
    assert not wrong and out > 0, (wrong[:5], out)
    assert f"`graphs` table, from a full or a census shard: {n_in};" in (rel / "README.md").read_text()


def test_the_committed_release_summary_is_the_committed_metrics_and_counts_its_task_folders():
    """The release's ``summary.json`` is ``metrics/full/summary.json`` (one summary, made from the release's
    task count: ``fullscale.release.release_with_summary``), and its ``tasks`` are the release's task folders
    and manifest count; the manifest's sizes are what its entries sum to (``fullscale.release.release_size``)."""
    from fullscale.release import release_size

    root = Path(__file__).resolve().parents[1]
    rel = root / "data_full" / "release"
    if not (rel / "manifest.json").is_file():
        pytest.skip("no committed release")
    summary = json.loads((rel / "summary.json").read_text())
    man = json.loads((rel / "manifest.json").read_text())
    assert summary == json.loads((root / "metrics" / "full" / "summary.json").read_text())
    assert summary["tasks"] == man["tasks"] == sum(1 for _ in (rel / "tasks").glob("*/task.json"))
    assert {k: man[k] for k in ("total_bytes", "unique_bytes")} == {
        k: v for k, v in release_size(man["files"]).items() if k != "over_size_budget"}


def test_a_malformed_task_file_is_named_by_every_reader(tasks, tmp_path):
    """A ``task.json`` that is not JSON is a ValueError naming the file for the scorer's loader, and the
    PassBench and KernelBench exports exit 2 naming it (no traceback); a task folder passed where the
    folder of task folders is expected is told so."""
    import shutil

    from curate.passbench.export import main as passbench_main
    from curate.passbench.kernelbench import main as kernelbench_main
    from curate.select.tasks import load_task_set, task_folders

    src = task_folders(tasks)[0]
    root = tmp_path / "tasks"
    shutil.copytree(src, root / src.name)
    (root / src.name / "task.json").write_text('{"task_id": "x",\n')
    with pytest.raises(ValueError, match="task.json: not a task file"):
        load_task_set(root)
    assert kernelbench_main(["--tasks", str(root), "--out", str(tmp_path / "kb")]) == 2
    assert passbench_main(["export", "--tasks", str(root), "--out", str(tmp_path / "pb")]) == 2
    with pytest.raises(FileNotFoundError, match="is one task folder"):
        task_folders(root / src.name)
    good = json.loads((src / "task.json").read_text())
    for subs in ([1], [{}], [{**good["subgraphs"][0], "folder": "../../../etc"}]):
        (root / src.name / "task.json").write_text(json.dumps({**good, "subgraphs": subs}))
        with pytest.raises(ValueError, match="task.json: subgraphs"):
            load_task_set(root)
        assert kernelbench_main(["--tasks", str(root), "--out", str(tmp_path / "kb")]) == 2
