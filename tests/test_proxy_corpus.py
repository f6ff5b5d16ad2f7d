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
        assert a == w[::-1] and corpus.REVERSE_LEN[0] <= len(w) <= corpus.REVERSE_LEN[1]
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


def test_stdlib_module_list_never_reaches_site_packages(tmp_path):
    """The corpus list is sys.stdlib_module_names resolved in the stdlib folder: a third-party
    module dropped into <stdlib>/site-packages (or a stray top-level file) never enters."""
    import sys

    root = tmp_path / "lib"
    (root / "site-packages").mkdir(parents=True)
    (root / "site-packages" / "six.py").write_text('"""Third-party module with a long enough docstring, mind."""\n')
    (root / "json").mkdir()
    (root / "json" / "decoder.py").write_text("x = 1\n")
    (root / "json" / "_private.py").write_text("y = 1\n")
    (root / "textwrap.py").write_text("z = 1\n")
    (root / "not_a_stdlib_name.py").write_text("w = 1\n")
    got = corpus.stdlib_module_files(root)
    assert got == [("json.decoder", root / "json" / "decoder.py"), ("textwrap", root / "textwrap.py")]
    assert "six" not in sys.stdlib_module_names


def test_corpus_comes_from_the_committed_file_not_the_interpreter(monkeypatch):
    """text/code documents are read from the committed corpus file: pointing sysconfig at an empty
    folder changes nothing; the file's sha256 is the one the committed base metrics name."""
    import json
    import sysconfig
    from pathlib import Path

    before = corpus.documents("code", "train", 5000)
    monkeypatch.setattr(sysconfig, "get_paths", lambda *a, **k: {"stdlib": "/nonexistent"})
    assert corpus.documents("code", "train", 5000) == before
    m = json.loads((Path(__file__).parents[1] / "metrics" / "proxy_base.json").read_text())
    assert m["corpus_sha256"] == corpus.corpus_sha256()


def test_corpus_file_rebuilds_byte_identically_on_the_pinned_python(tmp_path):
    import gzip
    import json
    import sys

    pinned = json.loads(gzip.decompress(corpus.CORPUS_FILE.read_bytes()))["python"]
    if sys.version.split()[0] != pinned:
        pytest.skip(f"corpus file written by Python {pinned}; this is {sys.version.split()[0]}")
    assert corpus.build_corpus_file(tmp_path / "c.json.gz") == corpus.corpus_sha256()
