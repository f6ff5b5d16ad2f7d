"""The canonical form returns, on a fixed set of graphs, exactly what was recorded for its version
(``tests/canonical_identity.json``, written by ``python -m tests.canonical_identity --write`` when
``CANONICAL_VERSION`` changes): every ``graph_hash``, ``structure_hash``, ``wl_hash``, canonical
text, stored ``graph.json`` part, canonical order, ``graph_hashes`` and ``output_permutation``.
A change made for speed (the compiled path, the label cache) must leave it unchanged; the test
runs on the compiled path where it is built and on the plain Python definition (the seam's
switch, :mod:`passnet_common.canonical.compiled`). Plus the cases the label cache's exact
template must keep apart."""

from __future__ import annotations

import contextlib
import json

import pytest
import torch
import torch.fx as fx

from passnet_common.canonical import CANONICAL_VERSION, canonicalize
from passnet_common.canonical.compiled import python_only
from tests.canonical_identity import EXPECTED, build_all

_DATA = json.loads(EXPECTED.read_text())
_GRAPHS = _DATA["graphs"]
_FAST = {k for k, v in _GRAPHS.items() if v.get("fast")}


def test_expected_set_is_broad():
    """The recorded set covers Dynamo, symbolic_trace and hand-built graphs, with distinct
    hashes (a set of copies of one graph would prove little)."""
    built = [v for v in _GRAPHS.values() if "error" not in v]
    assert _DATA["canonical_version"] == CANONICAL_VERSION
    assert len(built) >= 150
    assert sum(1 for v in built if not v["fast"]) >= 80  # through Dynamo
    assert len({v["graph_hash"] for v in built}) >= 100
    assert max(v["num_nodes"] for v in built) >= 3000


def _check(names: set[str], path: str) -> None:
    with contextlib.nullcontext() if path == "compiled" else python_only():
        got = build_all(names)
    assert set(got) == names
    wrong = {k: [f for f in _GRAPHS[k] if got[k].get(f) != _GRAPHS[k][f]] for k in names if got[k] != _GRAPHS[k]}
    assert wrong == {}


@pytest.mark.parametrize("path", ["compiled", "python"])
def test_fast_slice_identical_to_recorded(path):
    """Hand-built and symbolic_trace graphs (chains of 1K and 3K nodes, random DAGs with dead
    nodes, stored graphs, the corpus' non-Dynamo pairs), on the compiled path (where it is on)
    and on the Python definition."""
    _check(_FAST, path)


@pytest.mark.slow
@pytest.mark.parametrize("path", ["compiled", "python"])
def test_every_graph_identical_to_recorded(path):
    """All graphs: the labelled corpus through Dynamo and tiny transformers models on meta."""
    _check({k for k, v in _GRAPHS.items() if "error" not in v}, path)


def _two_calls(a: dict, b: dict) -> fx.GraphModule:
    g = fx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y")
    calls = (g.call_function(torch.add, (x, y), a), g.call_function(torch.add, (x, y), b))
    g.output(calls)
    for n in (x, y, *calls):  # recorded metadata, as Dynamo writes it (no execution needed)
        n.meta["example_value"] = torch.empty(3, device="meta")
    return fx.GraphModule(torch.nn.Module(), g)


@pytest.mark.parametrize("other", [-0.0, 0.5, 1, True])
def test_cached_keyword_literals_keep_their_value_and_type(other):
    """Two calls in one graph differing only in a keyword literal (``alpha=0.0`` vs ``-0.0``,
    ``0.5``, the int ``1``, ``True``) get the labels each gets alone: the label cache's key
    does not merge them."""
    same = canonicalize(_two_calls({"alpha": 0.0}, {"alpha": 0.0}), with_wl=False)
    diff = canonicalize(_two_calls({"alpha": 0.0}, {"alpha": other}), with_wl=False)
    assert diff.graph_hash != same.graph_hash
    alone = canonicalize(_two_calls({"alpha": other}, {"alpha": other}), with_wl=False)
    labels = {ln.split("\t")[0] for ln in diff.text.splitlines()[2:4]}
    assert {ln.split("\t")[0] for ln in alone.text.splitlines()[2:4]} <= labels


def test_keyword_calls_reuse_one_cached_label():
    """Calls with keyword arguments and FX's immutable lists hit the label cache (one label
    object shared by equal calls), and their stored nodes are those of the slow path."""
    from passnet_common.canonical.form import _labels

    g = fx.Graph()
    x = g.placeholder("x")
    outs = [g.call_function(torch.cat, ([x, x],), {"dim": 0}) for _ in range(3)]
    g.output(tuple(outs))
    x.meta["example_value"] = torch.empty(2, device="meta")
    for n in outs:
        n.meta["example_value"] = torch.empty(4, device="meta")
    gm = fx.GraphModule(torch.nn.Module(), g)
    nodes = list(gm.graph.nodes)
    exact, _, inputs, _, _ = _labels(nodes, gm, None, False, {m: i for i, m in enumerate(nodes)}, want_store=True)
    assert exact[1] is exact[2] is exact[3]
    assert inputs[1:4] == [[0, 0]] * 3
    c = canonicalize(gm, with_wl=False)
    assert [n["args"] for n in c.nodes[1:4]] == [["tuple", ["list", ["%", 0], ["%", 0]]]] * 3
    assert [n["kwargs"] for n in c.nodes[1:4]] == [["dict", ["dim", 0]]] * 3
