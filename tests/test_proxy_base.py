"""The default base's task, held-out sets, training windows, schedule and acceptance check."""

from __future__ import annotations

import random
import re

import pytest

from proxy_artifacts import base_model, corpus, metrics
from proxy_artifacts.config import BaseConfig


def test_schedule_warms_up_holds_and_never_decays_to_zero():
    f = [base_model.lr_factor(s, 100, 0.05, 0.2, 0.1) for s in range(100)]
    assert f[0] == pytest.approx(0.2) and f[4] == 1.0  # 5 warmup steps
    assert all(v == 1.0 for v in f[5:80])  # constant through the phase change
    assert f[80] == 1.0 and f[-1] == pytest.approx(0.1 + 0.9 / 20) and min(f[5:]) > 0.1  # linear decay to 10%
    assert all(a >= b for a, b in zip(f[80:], f[81:]))


def test_task_windows_put_the_loss_on_the_answers_only():
    tok = corpus.build_tokenizer()
    ids, labels = corpus.task_windows(tok, "train", 64, 3, seed=0)
    assert ids.shape == labels.shape == (3, 64)
    text = tok.decode(ids[0].tolist())
    kept = [tok.decode([int(i)]) for i, lab in zip(ids[0], labels[0]) if lab != -100]
    assert (labels[labels != -100] == ids[labels != -100]).all()
    # the first problem: its answer and newline carry the loss, "Q: rev(<word>)=? A: " none of it
    q, a = corpus.reverse_problem(random.Random("rever-train-0"), "train")
    assert text.startswith(q + a + "\n") and "".join(kept).startswith(a + "\n")
    assert int((labels[0, : len(q)] != -100).sum()) == 0 and int((labels[0, len(q): len(q) + len(a) + 1] == -100).sum()) == 0


@pytest.mark.parametrize("edge_weight", [1.0, 0.5, 0.05])
def test_training_lengths_follow_the_task_distribution(edge_weight):
    """Edge problems / problems of one in-range length = edge_weight x the number of edge lengths."""
    rng = random.Random(0)
    n = [len(corpus.reverse_problem(rng, edge_weight=edge_weight)[1]) for _ in range(30000)]
    assert set(n) == set(range(corpus.REVERSE_LEN[0], corpus.REVERSE_LEN[1] + 1))
    in_range = sum(corpus.IN_RANGE_LEN[0] <= x <= corpus.IN_RANGE_LEN[1] for x in n)
    edge = len(n) - in_range
    per_len = in_range / (corpus.IN_RANGE_LEN[1] - corpus.IN_RANGE_LEN[0] + 1)
    want = edge_weight * (corpus.EDGE_LEN[1] - corpus.EDGE_LEN[0] + 1)
    assert edge / per_len == pytest.approx(want, rel=0.15)


def test_edge_noise_share_replaces_one_letter_in_that_share_of_edge_answers():
    """At share 0.7 about 70% of the edge-length answers differ from the reversed word (a binomial count:
    99.9% bounds), each in exactly one letter; no in-range answer does; at share 0 the problems are exactly
    the plain task's (no extra random number drawn), so every other set is unchanged."""
    from scipy.stats import binom

    rng = random.Random(3)
    probs = [corpus.reverse_problem(rng, "train", edge_weight=1.0, edge_noise_share=0.7) for _ in range(6000)]
    words = [(re.match(r"Q: rev\(([a-z]+)\)", q).group(1), a) for q, a in probs]
    edge = [(w, a) for w, a in words if corpus.EDGE_LEN[0] <= len(w) <= corpus.EDGE_LEN[1]]
    noisy = [(w, a) for w, a in edge if a != w[::-1]]
    lo, hi = binom.interval(0.999, len(edge), 0.7)
    assert len(edge) > 500 and lo <= len(noisy) <= hi
    assert all(len(a) == len(w) and sum(x != y for x, y in zip(a, w[::-1])) == 1 for w, a in noisy)
    assert all(a == w[::-1] for w, a in words if len(w) < corpus.EDGE_LEN[0])
    r1, r2 = random.Random(5), random.Random(5)
    assert [corpus.reverse_problem(r1, "train", edge_weight=1.0) for _ in range(500)] == \
        [corpus.reverse_problem(r2, "train", edge_weight=1.0, edge_noise_share=corpus.NO_EDGE_NOISE) for _ in range(500)]
    # the reward is the task's: a noisy answer is wrong
    assert not corpus.check_answer("Q: rev(abcdefg)=? A: ", "gfedcbz\n") and corpus.check_answer("Q: rev(abcdefg)=? A: ", "gfedcba\n")


def test_base_training_windows_take_the_edge_weight():
    """proxy.base.edge_weight reaches the task windows: no edge word at weight 0, some at weight 1."""
    from proxy_artifacts.base_model import training_batches

    tok = corpus.build_tokenizer()
    p = dict(BaseConfig().to_params(), train_windows_per_category=4, category_mix={"reverse": 10.0, "text": 0.25,
                                                                                  "code": 0.25})

    def edge_words(w):
        ids, _ = training_batches(tok, dict(p, edge_weight=w))
        rows = [tok.decode(r.tolist()) for r in ids]  # one window at a time: a word cut at a window's end is lost
        return sum(len(x) == corpus.EDGE_LEN[0] for t in rows for x in re.findall(r"rev\(([a-z]+)\)", t))

    assert edge_words(0.0) == 0 and edge_words(1.0) > 0


def test_heldout_sets_are_named_disjoint_from_training_and_prefix_stable():
    heldout, edge = metrics.task_prompts(128, "heldout"), metrics.task_prompts(128, "edge")
    assert metrics.task_prompts(64, "heldout") == heldout[:64]  # a smaller set is a prefix
    words = {p[len("Q: rev("):-len(")=? A: ")] for p in heldout + edge}
    assert all(corpus._split_of(f"rev:{w}", corpus.ARITH_HELDOUT_SHARE) == "heldout" for w in words)
    assert {len(p) for p in edge} == {len("Q: rev()=? A: ") + n for n in range(corpus.EDGE_LEN[0], corpus.EDGE_LEN[1] + 1)}
    assert all(corpus.IN_RANGE_LEN[0] <= len(p) - len("Q: rev()=? A: ") <= corpus.IN_RANGE_LEN[1] for p in heldout)
    with pytest.raises(ValueError, match="unknown task set"):
        metrics.task_prompts(4, "test")


def test_a_base_below_the_bar_fails_the_stage():
    base_model.check_competent({"task_acc_heldout": 0.8, "task": "reverse"}, 0.8)
    with pytest.raises(RuntimeError, match="0.7969 < proxy.base.min_task_acc 0.8"):
        base_model.check_competent({"task_acc_heldout": 0.7969, "task": "reverse"}, 0.8)


def test_sampled_reward_of_a_perfect_and_a_wrong_model():
    """sampled_reward counts exact answers of every sample: a model that always answers right gets 1,
    one that never does 0; the non-zero-advantage share is 0 for both (every group agrees)."""
    import torch

    tok = corpus.build_tokenizer()

    class Oracle(torch.nn.Module):
        def __init__(self, right: bool):
            super().__init__()
            self.right = right

        def forward(self, input_ids, use_cache=False):
            out = []
            for row in input_ids.tolist():
                text = tok.decode(row)
                q = text[: text.index("A: ") + 3]
                want = (q[len("Q: rev("):-len(")=? A: ")][::-1] if self.right else "zz") + "\n"
                done = len(text) - len(q)
                nxt = tok.encode(want[done] if done < len(want) else "\n", add_special_tokens=False)[0]
                lg = torch.full((len(tok),), -1e4)
                lg[nxt] = 0.0
                out.append(lg)
            return type("O", (), {"logits": torch.stack(out)[:, None, :]})()

    good = metrics.sampled_reward(Oracle(True), tok, 8, 3, "edge", temperature=1.0, seed=0)
    bad = metrics.sampled_reward(Oracle(False), tok, 8, 3, "edge", temperature=1.0, seed=0)
    assert good["reward"] == 1.0 and bad["reward"] == 0.0
    assert good["nonzero_advantage_share"] == bad["nonzero_advantage_share"] == 0.0
    assert metrics.task_accuracy(Oracle(True), tok, 8, "heldout") == 1.0
