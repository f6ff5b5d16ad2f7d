"""A fixed set of graphs and the canonical form's output on each, to prove that a change made
for speed changes no hash and no stored byte.

``tests/canonical_identity.json`` holds, per graph, a fingerprint of everything the canonical
form returns: ``graph_hash``, ``structure_hash``, ``wl_hash``, the sha256 of the canonical text,
of the stored ``graph.json`` part (node list, sub-graphs, placeholder permutation, written with
the store's own ``canonical_json``), the canonical order, ``graph_hashes`` and
``output_permutation``. It is written by this module when the canonical version changes::

    python -m tests.canonical_identity --write

Graphs: every graph of the labelled corpus (:mod:`tests.canonical_corpus`, both sides of every
pair: Dynamo, ``symbolic_trace`` and hand-built FX graphs, with the transformers width
sweeps), tiny transformers models captured on meta (Llama, Qwen2, ViT, BERT, GPT-2, Mixtral,
Qwen3-Next), the benchmark's synthetic transformer chains, seeded random DAGs with dead nodes
and the two stored graphs of ``tests/fixtures/curate`` (rebuilt by ``load_graph``).
``fast`` marks the graphs built without Dynamo (the test's fast slice, :func:`is_fast`).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Callable, Iterator

import torch

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

EXPECTED = Path(__file__).with_name("canonical_identity.json")

MIXTRAL = {"model_type": "mixtral", "architectures": ["MixtralForCausalLM"], "vocab_size": 128, "hidden_size": 32,
           "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
           "num_local_experts": 4, "num_experts_per_tok": 2, "max_position_embeddings": 64}
QWEN3_NEXT = {"model_type": "qwen3_next", "architectures": ["Qwen3NextForCausalLM"], "vocab_size": 128,
              "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4,
              "num_key_value_heads": 2, "head_dim": 8, "linear_num_value_heads": 4, "linear_num_key_heads": 2,
              "linear_key_head_dim": 8, "linear_value_head_dim": 8, "num_experts": 4, "num_experts_per_tok": 2,
              "moe_intermediate_size": 16, "shared_expert_intermediate_size": 16, "max_position_embeddings": 64}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def fingerprint(gm, kinds) -> dict:
    """Everything the canonical form returns for ``(gm, kinds)``, reduced to short values
    (the public API only, so that the same code runs on the implementation before a change)."""
    from passnet_common.canonical import canonicalize, graph_hashes, output_permutation
    from passnet_common.io import canonical_json

    c = canonicalize(gm, kinds)
    stored = canonical_json({"nodes": c.nodes, "subgraphs": c.subgraph_json(), "placeholder_permutation": c.placeholder_order})
    kept = canonicalize(gm, kinds, with_wl=False, keep_placeholder_order=True)
    try:
        perm = output_permutation(gm, kinds)
    except Exception as exc:  # noqa: BLE001 - recorded as part of the fingerprint
        perm = f"error:{type(exc).__name__}"
    return {"graph_hash": c.graph_hash, "structure_hash": c.structure_hash, "wl_hash": c.wl_hash,
            "text_sha": _sha(c.text), "stored_sha": _sha(stored), "order_sha": _sha(json.dumps(c.order)),
            "num_nodes": len(c.nodes), "graph_hashes": list(graph_hashes(gm, kinds)), "output_permutation": perm,
            "kept_order_hashes": [kept.graph_hash, kept.structure_hash, _sha(kept.text)]}


def _corpus_cases() -> Iterator[tuple[str, Callable]]:
    from tests.canonical_corpus import corpus

    for p in corpus(with_transformers=True):
        yield f"corpus: {p.name} [a]", p.a
        yield f"corpus: {p.name} [b]", p.b


def _hf_cases() -> Iterator[tuple[str, Callable]]:
    from tests.canonical_corpus import LLAMA, QWEN, VIT, _hf
    from tests.conftest import TINY_CONFIGS

    for name, cfg in (("llama", LLAMA), ("qwen2", QWEN), ("vit", VIT), ("bert", TINY_CONFIGS["tiny-bert"]),
                      ("gpt2", TINY_CONFIGS["tiny-gpt2"]), ("mixtral", MIXTRAL), ("qwen3-next", QWEN3_NEXT)):
        yield f"hf: tiny {name} (meta)", lambda c=cfg: _hf(c)


def _fx_cases() -> Iterator[tuple[str, Callable]]:
    from benchmarks.bench_hash import synthetic_chain
    from tests.test_canonical import _build_dag, _build_dead, _dead_case

    for n, w in ((1_000, 64), (3_000, 32)):
        yield f"chain {n} width {w}", lambda n=n, w=w: (synthetic_chain(n, w), None)
    for seed in range(40):
        ops, outs, perm, order_seed = _dead_case(seed)
        yield f"dead-node dag {seed}", lambda a=(ops, outs, perm, order_seed): (_build_dead(*a), None)
    for seed in range(10):
        ops, outs, _, order_seed = _dead_case(1000 + seed)
        dag = [(o[0], o[1] % 4, *[min(a, i + 1) for a in o[2:]]) for i, o in enumerate(ops)]
        yield f"dag {seed}", lambda d=dag, s=order_seed: (_build_dag(d, order_seed=s), None)
    for folder in sorted((ROOT / "tests" / "fixtures" / "curate").glob("*/graph.json")):
        def load(f=folder.parent):
            from passnet_common.store import load_graph

            gm, _ = load_graph(f)
            return gm, None
        yield f"store fixture {folder.parent.name[:12]}", load


def cases() -> Iterator[tuple[str, Callable, str]]:
    """``(name, build, group)`` of every graph of the set; ``build()`` returns ``(gm, kinds)``;
    ``group`` is ``fx`` (hand-built), ``corpus`` or ``hf``."""
    for name, build in _fx_cases():
        yield name, build, "fx"
    for name, build in _corpus_cases():
        yield name, build, "corpus"
    for name, build in _hf_cases():
        yield name, build, "hf"


def is_fast(gm, group: str) -> bool:
    """True for a graph built without Dynamo: hand-built ones, and corpus graphs without
    Dynamo's ``example_value`` metadata (``symbolic_trace``, ``ShapeProp``)."""
    if group == "fx":
        return True
    return group == "corpus" and not any("example_value" in n.meta for n in gm.graph.nodes)


def build_all(only: set[str] | None = None) -> dict[str, dict]:
    """``{name: fingerprint + fast flag}`` for every case (``only``: those names); a case that
    fails to build is recorded as ``{"error": ...}``."""
    out = {}
    for name, build, group in cases():
        if only is not None and name not in only:
            continue
        torch.manual_seed(0)
        try:
            gm, kinds = build()
        except Exception as exc:  # noqa: BLE001 - recorded, so the test can skip it the same way
            out[name] = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
            continue
        out[name] = {"fast": is_fast(gm, group), **fingerprint(gm, kinds)}
    return out


if __name__ == "__main__":
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    res = build_all()
    if "--write" in sys.argv:
        from passnet_common.canonical import CANONICAL_VERSION
        from passnet_common.io import atomic_write_json

        atomic_write_json(EXPECTED, {"canonical_version": CANONICAL_VERSION, "graphs": res}, indent=1)
    bad = [k for k, v in res.items() if "error" in v]
    print(f"{len(res)} graphs, {sum(1 for v in res.values() if v.get('fast'))} fast, {len(bad)} failed to build: {bad}")
