"""Fingerprints of every graph of a graph store, to compare two implementations of the canonical
form on real captured graphs: two checkouts, or the compiled path and the Python definition of one
checkout (``PASSNET_CANONICAL_PURE=1`` turns the compiled path off). Not a test: the store is a
pipeline output, absent from a fresh clone.

    PYTHONPATH=. python tests/canonical_store_check.py data/graph_store /tmp/a.json
    PASSNET_CANONICAL_PURE=1 PYTHONPATH=. python tests/canonical_store_check.py data/graph_store /tmp/b.json
    python tests/canonical_store_check.py --compare /tmp/a.json /tmp/b.json

(or ``PYTHONPATH=<checkout A>`` / ``<checkout B>`` for two checkouts of the same canonical version.)

Each graph is rebuilt from its stored node list by :func:`curate.decompose.segments.build_parent` (output
metadata on the meta device, nothing allocated; constants and sub-graphs stand in as
placeholders and buffers have no values, so a graph re-hashes to the hash it is filed under only
when it has no constant, sub-graph or small buffer; kinds from the stored placeholders) and fingerprinted by
:func:`tests.canonical_identity.fingerprint` (public API only, so the same code runs on either
checkout: ``graph_hash``, ``structure_hash``, ``wl_hash``, text, stored ``graph.json`` part,
order, ``graph_hashes``, ``output_permutation``, the kept-order form). ``--compare`` prints the
number of graphs compared and every mismatch, and exits 1 on any.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def fingerprints(store: Path) -> dict[str, dict]:
    """``{folder name: fingerprint}`` of every ``*/*/graph.json`` below ``store``; a graph that
    fails to load is recorded as ``{"error": class name}``. ``stored_graph_hash``: the hash the
    store filed it under (the folder name)."""
    import torch

    from curate.decompose.segments import build_parent
    from tests.canonical_identity import fingerprint

    out = {}
    for gj in sorted(store.glob("*/*/graph.json")):
        name = gj.parent.name
        try:
            nodes = json.loads(gj.read_text())["nodes"]
            graph, _ = build_parent(nodes)
            kinds = [n.get("kind", "input") if n["op"] == "placeholder" else "input" for n in nodes
                     if n["op"] in ("placeholder", "get_attr")]
            out[name] = {"stored_graph_hash": name, **fingerprint(torch.fx.GraphModule(torch.nn.Module(), graph), kinds)}
        except Exception as exc:  # noqa: BLE001 - recorded, compared like any other value
            out[name] = {"error": type(exc).__name__}
    return out


def compare(a: dict, b: dict) -> list[str]:
    """Names whose fingerprints differ, or that only one side has."""
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


if __name__ == "__main__":
    if sys.argv[1] == "--compare":
        a, b = (json.loads(Path(p).read_text()) for p in sys.argv[2:4])
        bad = compare(a, b)
        errors = sum(1 for v in a.values() if "error" in v)
        same_as_store = sum(1 for v in a.values() if v.get("graph_hash") == v.get("stored_graph_hash"))
        print(f"{len(set(a) | set(b))} graphs compared ({errors} failed to load on both sides alike), "
              f"{len(bad)} mismatches{': ' + ', '.join(bad) if bad else ''}; "
              f"{same_as_store} re-hash to the hash they are stored under")
        sys.exit(1 if bad else 0)
    res = fingerprints(Path(sys.argv[1]))
    Path(sys.argv[2]).write_text(json.dumps(res, indent=1, sort_keys=True))
    print(f"{len(res)} graphs fingerprinted, {sum(1 for v in res.values() if 'error' in v)} failed to load")
