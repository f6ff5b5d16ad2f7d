"""The method list of ``benchmarks/proxy_selection_seeds.py`` (the 3-seed selection comparison)."""

from __future__ import annotations

from pathlib import Path

from benchmarks.proxy_selection_seeds import EXTRA_METHODS, compared_methods
from passnet_common.params import load_params

ROOT = Path(__file__).resolve().parents[1]


def _names(methods) -> list[str]:
    return [m["name"] for m in methods]


def test_seed_comparison_includes_random_output_merge_once():
    """random + output merge (the merge's control) is compared on the seeds whether or not
    ``proxy.compare.methods`` lists it, exactly once, with random selection and the output merge."""
    methods = load_params(ROOT / "params.yaml", "proxy")["compare"]["methods"]
    without = [m for m in methods if m["name"] != "random+output_merge"]
    for given in (methods, without):
        names = _names(compared_methods(given))
        assert names.count("random+output_merge") == 1 and len(names) == len(set(names))
        entry = next(m for m in compared_methods(given) if m["name"] == "random+output_merge")
        assert (entry["method"], entry["merge"]) == ("random", "output")
    assert _names(compared_methods(without, extras=False)) == _names(without)
    # an entry of proxy.compare.methods wins over the extra of the same name
    own = [*without, {"name": "random+output_merge", "method": "random", "merge": "output", "seed": 7}]
    assert [m for m in compared_methods(own) if m["name"] == "random+output_merge"] == [own[-1]]
    assert "random+output_merge" in _names(EXTRA_METHODS)


def test_docs_seed_table_is_rendered_from_the_committed_record():
    """docs/proxies.md's seed table, per-ratio verdicts and merge share are the committed record's
    (``--markdown --docs``), and the record compares random + output merge."""
    import json

    from benchmarks.proxy_selection_seeds import BEGIN, END, markdown

    rec = "metrics/bench/proxy_selection_seeds.json"
    ev = json.loads((ROOT / rec).read_text())
    block = (ROOT / "docs" / "proxies.md").read_text().split(BEGIN, 1)[1].split(END, 1)[0]
    assert block == f"\n{markdown(ev)}\n\n(from `{rec}`)\n"
    assert "random+output_merge" in ev["methods"] and len(ev["seeds"]) >= 3
