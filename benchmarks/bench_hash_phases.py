"""Where the canonical form's time goes: CPU time per FX node of each pass of ``canonicalize``
(label pass, side effects, Merkle hashes, canonical order, the whole ``_core`` with the texts and
their sha256, the stored node list), with the compiled passes of
:mod:`passnet_common.canonical._cmerkle` and with the Python loops, on a 10K-node synthetic chain
and the true-size Llama-3.3-70B / Qwen3-Next-80B-A3B meta captures of ``benchmarks.bench_hash``.
A printed table (best of 3 per pass), never asserted, no record written.

    nice -n 10 taskset -c 0 python -m benchmarks.bench_hash_phases
"""

from __future__ import annotations

import time

from benchmarks.bench_hash import real_graphs, synthetic_chain

pt = time.process_time


def phases(gm, kinds, use_compiled: bool) -> dict[str, float]:
    """Best-of-3 CPU seconds of each pass on ``gm`` (the calls ``canonicalize`` makes)."""
    from passnet_common.canonical import form as F
    from passnet_common.canonical import order as O
    from passnet_common.canonical import stored as S
    from passnet_common.canonical.effects import ordering_deps

    saved = O._c_merkle, O._c_order
    if not use_compiled:
        O._c_merkle = O._c_order = None
    try:
        best: dict[str, float] = {}
        for _ in range(3):
            with F._NoGC():
                nodes = list(gm.graph.nodes)
                t0 = pt()
                index = {m: i for i, m in enumerate(nodes)}
                exact, struct, inputs, _, _ = F._labels(nodes, gm, kinds, False, index, want_store=True)
                t1 = pt()
                extra, _ = ordering_deps(nodes, inputs, gm, index)
                t2 = pt()
                sc, sd = O.merkle(O.label_ids(struct), inputs, extra)
                cols = [sc, sd]
                if len(set(zip(sc, sd))) < len(sc):
                    cols += list(O.merkle(O.label_ids(exact), inputs, extra))
                t3 = pt()
                O.canonical_order_of([m.op for m in nodes], inputs, extra, cols, False)
                t4 = pt()
                nodes, order, pos, _, _, _, ci, subs, store, index, ops = F._core(gm, kinds, False)
                t5 = pt()
                S._node_list(nodes, ops, order, pos, ci, subs, store, index, gm, kinds)
                t6 = pt()
            for k, v in {"labels": t1 - t0, "side effects": t2 - t1, "Merkle": t3 - t2, "order": t4 - t3,
                         "_core total": t5 - t4, "stored node list": t6 - t5}.items():
                best[k] = min(best.get(k, float("inf")), v)
        return best
    finally:
        O._c_merkle, O._c_order = saved


def main() -> None:
    import torch

    from passnet_common.canonical import order as O

    torch.set_num_threads(1)
    cases = [("synthetic chain 10K", synthetic_chain(10_000), None)]
    cases += real_graphs(("llama70b", "qwen3next80b"), max_nodes=20_000)
    paths = [False, True] if O._c_merkle is not None else [False]
    for name, gm, kinds in cases:
        n = len(gm.graph.nodes)
        for use in paths:
            b = phases(gm, kinds, use)
            print(f"{name} | {n} | {'compiled' if use else 'Python'} | "
                  + " | ".join(f"{k} {v / n * 1e6:.2f} us" for k, v in b.items()), flush=True)


if __name__ == "__main__":
    main()
