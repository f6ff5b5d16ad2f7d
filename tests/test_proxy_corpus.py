"""Offline corpus, tokenizer and the verifiable tasks (reversal: the default; arithmetic)."""

from __future__ import annotations

import random

import pytest

from proxy_artifacts import corpus


def test_tokenizer_is_byte_level_and_round_trips():
    tok = corpus.build_tokenizer()
    s = "héllo\n  wörld Q: 3+4=? A: 7 ∑"
    ids = tok.encode(s, add_special_tokens=False)
    assert ids == [b + 3 for b in s.encode("utf-8")]
    assert tok.decode(ids) == s
    assert len(tok) == 259 and (tok.pad_token_id, tok.bos_token_id, tok.eos_token_id) == (0, 1, 2)


def test_check_answer_grades_exactly():
    rng = random.Random(0)
    for _ in range(50):
        q, a = corpus.arithmetic_problem(rng)
        x, op, y = q[3:].split("=")[0].partition("+") if "+" in q else q[3:].split("=")[0].partition("-")
        assert a == (int(x) + int(y) if op == "+" else int(x) - int(y))
        assert corpus.check_answer(q, f"{a}\nQ: 1+1=? A: 2")
        assert not corpus.check_answer(q, f"{a + 1}")
        assert not corpus.check_answer(q, "")
    with pytest.raises(ValueError, match="not a task prompt"):
        corpus.check_answer("hello", "1")


def test_reversal_task_grades_exactly_and_holds_out_words():
    rng = random.Random(0)
    for _ in range(50):
        q, a = corpus.reverse_problem(rng)
        w = q[len("Q: rev("):-len(")=? A: ")]
        assert a == w[::-1] and 2 <= len(w) <= 5
        assert corpus.check_answer(q, a) and corpus.check_answer(q, a + "\nQ: rev(ab)=? A: ba")
        assert not corpus.check_answer(q, a + "x") and not corpus.check_answer(q, a[:-1]) and not corpus.check_answer(q, "")
    train = {corpus.task_problem(random.Random(i), "train")[0] for i in range(300)}
    held = {corpus.task_problem(random.Random(i), "heldout")[0] for i in range(300)}
    assert not train & held  # a held-out word never appears in training
    train_docs = "".join(corpus.documents("reverse", "train", 20000))
    assert not any(q in train_docs for q in list(held)[:50])


def test_splits_are_disjoint_and_deterministic():
    for cat in corpus.CATEGORIES:
        tr = corpus.documents(cat, "train", 20000)
        ho = corpus.documents(cat, "heldout", 20000)
        assert tr == corpus.documents(cat, "train", 20000)
        if cat not in ("arithmetic", "reverse"):  # generated problems may repeat by chance; modules may not
            assert not set(tr) & set(ho)
    with pytest.raises(ValueError, match="unknown corpus category"):
        corpus.documents("poetry", "train", 10)
