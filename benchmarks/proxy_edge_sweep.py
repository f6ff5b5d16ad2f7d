"""Where is the edge? Per word length, what a base trained with a given length distribution solves.

One base per call (:func:`proxy_artifacts.base_model.train_base`, the ``proxy.base`` params of
``params.yaml`` with ``seed``), trained on reversal words whose lengths are drawn with weight 1 up to
``--train-max`` letters and weight ``--edge-weight`` at ``--edge-len`` letters (``corpus.task_length``
replaced for the run), then measured per length L of ``--lengths`` on 64 held-out words of L letters:
greedy exact match and the mean reward of 8 samples at T = 1 (what GRPO's rollouts see) with the share
of words whose samples disagree; ``--probe MODEL...`` measures existing bases instead of training one.
One JSON row per base is appended to ``--out`` (machine, load before / after, command).

    PYTHONPATH=$PWD nice -n 10 python -m benchmarks.proxy_edge_sweep --edge-weight 0.05 --edge-len 8 --train-max 7
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from passnet_common.params import load_params
from proxy_artifacts import corpus, metrics
from proxy_artifacts.base_model import train_base
from proxy_artifacts.timing import load_average, machine


def per_length(model, tok, lengths: list[int], n: int = 64, samples: int = 8) -> dict:
    """{"L<len>": {"greedy", "sampled", "nz_share"}} on ``n`` held-out words of each length (seeded by length)."""
    out = {}
    for L in lengths:
        rng = random.Random(f"len-{L}")
        ps = [corpus.reverse_problem(rng, "heldout", (L, L))[0] for _ in range(n)]
        g = metrics.greedy_completions(model, tok, ps, L + 2)
        s = metrics.sampled_completions(model, tok, ps, L + 2, samples, 1.0, 0)
        per = [sum(corpus.check_answer(q, c) for c in cs) / samples for q, cs in zip(ps, s)]
        out[f"L{L}"] = {"greedy": round(sum(corpus.check_answer(q, c) for q, c in zip(ps, g)) / n, 3),
                        "sampled": round(sum(per) / n, 3), "nz_share": round(sum(0 < v < 1 for v in per) / n, 3)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--edge-weight", type=float, default=None)
    ap.add_argument("--edge-len", type=int, default=None)
    ap.add_argument("--train-max", type=int, default=None, help="longest length trained at weight 1")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lengths", default="7,8,9,10")
    ap.add_argument("--probe", nargs="*", default=[], help="existing base folders to measure (no training)")
    ap.add_argument("--models", default="data/proxy/bench_sweep")
    ap.add_argument("--out", default="metrics/bench/proxy_edge_sweep.jsonl")
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    lengths = [int(x) for x in a.lengths.split(",")]
    cmd = "python -m benchmarks.proxy_edge_sweep " + " ".join(sys.argv[1:] if argv is None else argv)
    rows = []
    if a.probe:
        for d in a.probe:
            l0, t = load_average(), time.time()
            tok, model = AutoTokenizer.from_pretrained(d), AutoModelForCausalLM.from_pretrained(d).eval()
            rows.append({"model": d, **per_length(model, tok, lengths), "seconds": round(time.time() - t, 1),
                         "load_average_start": l0, "load_average_end": load_average()})
    else:
        w, edge, top = a.edge_weight, a.edge_len, a.train_max
        lens = list(range(corpus.IN_RANGE_LEN[0], max(top, edge) + 1))
        corpus.REVERSE_LEN = (lens[0], lens[-1])
        corpus.task_length = lambda rng, edge_weight=1.0: rng.choices(
            lens, weights=[w if n == edge else (1.0 if n <= top else 0.0) for n in lens])[0]
        p = dict(load_params(a.params, "proxy")["base"], seed=a.seed, task_problems=8)
        l0 = load_average()
        folder = Path(a.models) / f"w{w}_e{edge}_t{top}_s{a.seed}"
        summ = train_base(p, folder)
        tok, model = AutoTokenizer.from_pretrained(folder), AutoModelForCausalLM.from_pretrained(folder).eval()
        rows.append({"edge_weight": w, "edge_len": edge, "train_max": top, "seed": a.seed,
                     "train_seconds": summ["train_seconds"], "final_loss": summ["final_loss"],
                     **per_length(model, tok, lengths), "load_average_start": l0, "load_average_end": load_average()})
    with open(a.out, "a") as f:
        for r in rows:
            f.write(json.dumps({**r, "machine": machine(), "command": cmd}) + "\n")
            print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
