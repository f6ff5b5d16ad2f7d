"""Offline corpus of the default base model: stdlib prose, stdlib code and arithmetic.

Nothing is downloaded. Three categories, each a deterministic list of documents:

- ``text``: docstrings of Python standard-library modules (English prose).
- ``code``: the Python source of stdlib modules (comments and docstrings included).

  Both are read from the committed corpus file :data:`CORPUS_FILE` (gzip JSON, its sha256 in the
  base's ``train_log.json`` and ``metrics/proxy_base.json``), never from the running interpreter:
  a rebuild on another machine or Python patch release trains on the same bytes.
  :func:`build_corpus_file` writes that file from an explicit module list
  (``sys.stdlib_module_names`` of the pinned Python 3.11, resolved inside the stdlib folder,
  ``site-packages`` and ``test``/``idlelib``/``turtledemo`` excluded); the split of a module is a
  hash of its dotted name only (an earlier version also hashed the interpreter's folder name,
  ``python3.11``, so another Python moved every top-level module between the splits).
- ``reverse`` (the default verifiable task, :data:`TASK`): ``"Q: rev(word)=? A: drow"`` with
  :data:`REVERSE_LEN` random lowercase letters; chosen because the tiny base learns it in a few
  hundred CPU steps and generalises to unseen words (arithmetic on operands 0..20 did not
  generalise to held-out operand pairs within the budget: 7% after 600 steps). Word lengths
  :data:`IN_RANGE_LEN` are drawn uniformly; the longest, :data:`EDGE_LEN`, with a relative weight
  ``edge_weight`` (one in-range length = 1): the base's training passes ``proxy.base.edge_weight``,
  the knob that decides how much of the edge the base learns (``metrics/bench/proxy_base_seeds.json``
  has what it learns on seeds 0-2; docs/proxies.md); every other reader (calibration and held-out
  loss windows) draws every task length equally (weight 1).
  :func:`task_windows` gives the task's training windows with the loss
  on the answers only (a prompt's letters are random: predicting them is noise).
- ``arithmetic`` (kept as an optional category): generated problems ``"Q: 17+8=? A: 25"`` (``+ -`` on
  operands 0..20), a verifiable task for RL: :func:`check_answer` grades a completion exactly.

Modules are split by a hash of their name into ``train`` and ``heldout`` (disjoint), and
arithmetic problems by a hash of the problem itself (``a op b``, 20% held out), so held-out
evaluation (loss windows and the exact-match task) never sees a training document or problem:
task accuracy measures generalisation to unseen operand pairs, not recall.
The byte-level tokenizer (:func:`build_tokenizer`) has 256 byte tokens and 3 specials.
"""

from __future__ import annotations

import ast
import functools
import gzip
import hashlib
import json
import random
import re
import sys
import sysconfig
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from .config import CATEGORIES  # noqa: F401  (re-exported: corpus.CATEGORIES; its one home is the params schema)

TASK = "reverse"  # the verifiable task of the default base (a category of CATEGORIES)
ALL_CATEGORIES = ("text", "code", "reverse", "arithmetic")
SPECIALS = ("<pad>", "<s>", "</s>")
_ARITH_RE = re.compile(r"Q: (-?\d+)([+\-*])(-?\d+)=\? A: (-?\d+)")


CORPUS_FILE = Path(__file__).parent / "corpus_files" / "stdlib_py311.json.gz"
EXCLUDED_MODULES = frozenset({"test", "idlelib", "turtledemo", "this", "antigravity"})
# characters kept per (category, split) in the corpus file: > 1.5 x what the default params read
# (train: 1500 windows x 128 tokens x 1.1; heldout: 96 windows x 128 x 1.1)
CORPUS_CAPS = {"train": 360_000, "heldout": 60_000}


def stdlib_module_files(stdlib_dir: str | Path | None = None) -> list[tuple[str, Path]]:
    """(dotted module name, source path) of every stdlib module in an explicit list.

    The list is ``sys.stdlib_module_names`` (minus private ``_*`` names and
    :data:`EXCLUDED_MODULES`); each name is resolved inside ``stdlib_dir`` (default: the
    interpreter's ``sysconfig`` stdlib folder) as ``<name>.py`` or the ``.py`` files directly inside
    the package folder ``<name>/`` (``__init__`` and ``_*`` files skipped). Nothing under
    ``site-packages`` can enter: no name of the list resolves there. Sorted by name.
    """
    root = Path(stdlib_dir or sysconfig.get_paths()["stdlib"])
    out = []
    for name in sorted(sys.stdlib_module_names):
        if name.startswith("_") or name in EXCLUDED_MODULES:
            continue
        if (root / f"{name}.py").is_file():
            out.append((name, root / f"{name}.py"))
        elif (root / name).is_dir():
            out += [(f"{name}.{p.stem}", p) for p in sorted((root / name).glob("*.py")) if not p.name.startswith("_")]
    assert not any("site-packages" in p.parts for _, p in out)
    return out


def build_corpus_file(out: str | Path = CORPUS_FILE, stdlib_dir: str | Path | None = None,
                      caps: dict | None = None) -> str:
    """Write the committed text/code corpus (gzip JSON, mtime 0) and return its sha256.

    Modules (:func:`stdlib_module_files`) are split by :func:`_split_of` of their dotted name,
    shuffled with a fixed seed and taken until ``caps[split]`` characters per category.
    Format: ``{"python": version, "license": ..., "docs": {category: {split: [str, ...]}}}``.
    """
    caps = caps or CORPUS_CAPS
    files = stdlib_module_files(stdlib_dir)
    random.Random("stdlib-corpus").shuffle(files)
    docs: dict = {c: {s: [] for s in caps} for c in ("text", "code")}
    for name, path in files:
        split = _split_of(name)
        src = path.read_text(encoding="utf-8", errors="replace")
        for cat, items in (("text", _docstrings(src)), ("code", [src])):
            bucket = docs[cat][split]
            if sum(map(len, bucket)) < caps[split]:
                bucket.extend(items)
    body = {"python": sys.version.split()[0], "source": "CPython standard library (.py sources)",
            "license": "PSF-2.0 (Python Software Foundation License)",
            "modules": "sys.stdlib_module_names minus _* and " + ",".join(sorted(EXCLUDED_MODULES)),
            "docs": docs}
    data = gzip.compress(json.dumps(body, sort_keys=True, ensure_ascii=False).encode("utf-8"), mtime=0)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_bytes(data)
    tmp.replace(out)
    return hashlib.sha256(data).hexdigest()


def corpus_sha256(path: str | Path = CORPUS_FILE) -> str:
    """sha256 (hex) of the committed corpus file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@functools.lru_cache(maxsize=2)
def _corpus_docs(path: str) -> dict:
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"corpus file {p} is missing (rebuild it: python -m proxy_artifacts build-corpus)")
    return json.loads(gzip.decompress(p.read_bytes()).decode("utf-8"))["docs"]


def _split_of(name: str, heldout_share: float = 0.1) -> str:
    h = int(hashlib.sha256(name.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "heldout" if h < heldout_share else "train"


def _docstrings(src: str) -> list[str]:
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            d = ast.get_docstring(node)
            if d and len(d) > 40:
                out.append(d.strip())
    return out


ARITH_MAX_OPERAND = 20  # small enough for the tiny default base to learn the task in minutes


ARITH_HELDOUT_SHARE = 0.2
# The reversal task's word lengths (a definition of the task, read by every stage: base training,
# calibration windows, held-out sets, GRPO prompts). In range: drawn uniformly; edge: the longest
# length, drawn with a relative weight (one in-range length = 1; base training: proxy.base.edge_weight):
# the less weight, the less of the edge the base solves and the more headroom RL has there. A length
# beyond the longest trained one is no edge (the base extrapolates to none of it:
# metrics/bench/proxy_edge_sweep.jsonl), so the edge is the longest trained length, seen less often.
IN_RANGE_LEN = (2, 4)
EDGE_LEN = (5, 5)
REVERSE_LEN = (IN_RANGE_LEN[0], EDGE_LEN[1])
#: the task's own length distribution: the edge length as likely as each in-range length. What
#: calibration, evaluation and the specialisation summary draw; a different quantity from
#: ``proxy.base.edge_weight`` (the base's training mix, which train_base passes explicitly).
UNIFORM_EDGE_WEIGHT = 1.0
#: the task's own answers: no edge answer with a letter replaced. What every set but the base's training
#: windows uses; ``proxy.base.edge_noise_share`` (:func:`reverse_problem`) is the base's training mix.
NO_EDGE_NOISE = 0.0
_REVERSE_RE = re.compile(r"Q: rev\(([a-z]+)\)=\? A: ")


def task_length(rng: random.Random, edge_weight: float = UNIFORM_EDGE_WEIGHT) -> int:
    """A word length of the task's distribution: :data:`IN_RANGE_LEN` uniform, :data:`EDGE_LEN` at relative
    weight ``edge_weight`` (:data:`UNIFORM_EDGE_WEIGHT`: every length equally; the base's training passes ``proxy.base.edge_weight``)."""
    lens = list(range(REVERSE_LEN[0], REVERSE_LEN[1] + 1))
    w = [edge_weight if EDGE_LEN[0] <= n <= EDGE_LEN[1] else 1.0 for n in lens]
    return rng.choices(lens, weights=w)[0]


def reverse_problem(rng: random.Random, split: str | None = None, lengths: tuple[int, int] | None = None,
                    edge_weight: float = UNIFORM_EDGE_WEIGHT, edge_noise_share: float = NO_EDGE_NOISE) -> tuple[str, str]:
    """One reversal problem ``"Q: rev(word)=? A: "`` and its answer (the word reversed).

    ``word``: random lowercase letters, ``lengths[0]..lengths[1]`` of them (uniform), or with
    ``lengths`` None the task's distribution with edge weight ``edge_weight`` (:func:`task_length`);
    ``split`` (train / heldout): draw until the word belongs to that split (sha256 of the word, 20% held
    out), so a held-out problem's word never occurs in training.

    ``edge_noise_share`` (base training only; 0 everywhere else): this share of the edge-length problems
    (:data:`EDGE_LEN`) is answered with one letter of the reversed word, at a uniform position, replaced by
    a uniform other letter -- noise in the base's data at its edge. Cross-entropy fits the data's answer
    distribution, so the base learns the reversal there and samples each letter right with probability
    about ``1 - share / length``: the sampled reward at the edge is partial (between ``1 - share`` if the
    noise is modelled as one event and ``(1 - share / length) ** length`` if letter by letter), whatever
    the seed or the CPU's float rounding, while greedy decoding takes the most likely letter, the right
    one. A verifier reward has that headroom to take. With 0 no extra random number is drawn, so the
    problems are those of the plain task.
    """
    while True:
        n = task_length(rng, edge_weight) if lengths is None else rng.randint(*lengths)
        w = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(n))
        if split is None or _split_of(f"rev:{w}", ARITH_HELDOUT_SHARE) == split:
            a = w[::-1]
            if edge_noise_share > 0 and EDGE_LEN[0] <= n <= EDGE_LEN[1] and rng.random() < edge_noise_share:
                i = rng.randrange(n)
                a = a[:i] + rng.choice([c for c in "abcdefghijklmnopqrstuvwxyz" if c != a[i]]) + a[i + 1:]
            return f"Q: rev({w})=? A: ", a


def arithmetic_split(a: int, op: str, b: int) -> str:
    """``train`` or ``heldout`` for the problem ``a op b`` (sha256 of ``"a op b"``, 20% held out)."""
    return _split_of(f"arith:{a}{op}{b}", ARITH_HELDOUT_SHARE)


def arithmetic_problem(rng: random.Random, max_operand: int = ARITH_MAX_OPERAND,
                       split: str | None = None) -> tuple[str, int]:
    """One problem ``"Q: a<op>b=? A: "`` (op in + -, a, b in [0, max_operand]) and its integer answer.

    ``split`` (``train`` / ``heldout``): draw until the problem belongs to that split
    (:func:`arithmetic_split`); None: any problem.
    """
    while True:
        a, b = rng.randint(0, max_operand), rng.randint(0, max_operand)
        op = rng.choice("+-")
        if split is None or arithmetic_split(a, op, b) == split:
            break
    ans = a + b if op == "+" else a - b if op == "-" else a * b
    return f"Q: {a}{op}{b}=? A: ", ans


def task_problem(rng: random.Random, split: str | None = None, lengths: tuple[int, int] | None = None
                 ) -> tuple[str, str]:
    """A problem of the verifiable task of the default base (:data:`TASK`): (prompt, answer text).

    ``lengths``: word lengths of a reversal problem (None: the training distribution); ignored by
    arithmetic.
    """
    if TASK == "reverse":
        return reverse_problem(rng, split, lengths)
    q, a = arithmetic_problem(rng, split=split)
    return q, str(a)


def check_answer(prompt: str, completion: str) -> bool:
    """Verifiable reward: True iff ``completion`` starts with the exact answer of ``prompt``
    (reversal: the reversed word followed by a non-letter or the end; arithmetic: the integer).

    Raises:
        ValueError: ``prompt`` is neither a reversal nor an arithmetic prompt.
    """
    m = _REVERSE_RE.match(prompt)
    if m:
        want = m.group(1)[::-1]
        return completion.startswith(want) and not completion[len(want): len(want) + 1].isalpha()
    m = re.match(r"Q: (\d+)([+\-*])(\d+)=\? A: ", prompt)
    if not m:
        raise ValueError(f"not a task prompt (reversal or arithmetic): {prompt!r}")
    a, op, b = int(m.group(1)), m.group(2), int(m.group(3))
    ans = a + b if op == "+" else a - b if op == "-" else a * b
    got = re.match(r"\s*(-?\d+)", completion)
    return bool(got) and int(got.group(1)) == ans


def documents(category: str, split: str, max_chars: int, seed: int = 0, edge_weight: float = UNIFORM_EDGE_WEIGHT,
              edge_noise_share: float = NO_EDGE_NOISE) -> list[str]:
    """Documents of one category and split, about ``max_chars`` characters in total (``edge_weight``,
    ``edge_noise_share``: the ``reverse`` category's, :func:`task_length`, :func:`reverse_problem`).

    Raises:
        ValueError: unknown category or split.
    """
    if category not in ALL_CATEGORIES:
        raise ValueError(f"unknown corpus category {category!r}; known: {ALL_CATEGORIES}")
    if split not in ("train", "heldout"):
        raise ValueError(f"unknown split {split!r}; known: train, heldout")
    out, total = [], 0
    if category in ("arithmetic", "reverse"):
        rng = random.Random(f"{category[:5]}-{split}-{seed}")
        while total < max_chars:
            lines = []
            for _ in range(8):
                q, a = arithmetic_problem(rng, split=split) if category == "arithmetic" else \
                    reverse_problem(rng, split, edge_weight=edge_weight, edge_noise_share=edge_noise_share)
                lines.append(f"{q}{a}")
            doc = "\n".join(lines) + "\n"
            out.append(doc)
            total += len(doc)
        return out
    docs = list(_corpus_docs(str(CORPUS_FILE))[category][split])
    random.Random(f"{category}-{seed}").shuffle(docs)
    for d in docs:
        out.append(d + "\n")
        total += len(d) + 1
        if total >= max_chars:
            return out
    return out


def build_tokenizer():
    """Byte-level ``PreTrainedTokenizerFast``: ids 0-2 specials (pad, bos, eos), 3..258 bytes."""
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    byte_to_char = {b: c for b, c in zip(range(256), _bytes_to_unicode())}
    assert set(byte_to_char.values()) == set(alphabet)
    vocab = {s: i for i, s in enumerate(SPECIALS)}
    vocab.update({byte_to_char[b]: 3 + b for b in range(256)})
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", bos_token="<s>", eos_token="</s>")


def _bytes_to_unicode() -> list[str]:
    """GPT-2's reversible byte -> printable character map (what ByteLevel uses), in byte order."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    table = dict(zip(bs, cs))
    return [chr(table[b]) for b in range(256)]


def token_windows(tokenizer, docs: list[str], seq_len: int, num: int | None = None) -> torch.Tensor:
    """Concatenate ``docs`` (each followed by eos) and cut into windows: int64 [N, seq_len].

    Raises:
        ValueError: the documents hold fewer than ``seq_len`` tokens.
    """
    ids: list[int] = []
    for d in docs:
        ids.extend(tokenizer.encode(d, add_special_tokens=False))
        ids.append(tokenizer.eos_token_id)
    n = len(ids) // seq_len
    if n == 0:
        raise ValueError(f"corpus of {len(ids)} tokens is shorter than seq_len={seq_len}")
    if num is not None:
        n = min(n, num)
    return torch.tensor(ids[: n * seq_len], dtype=torch.long).view(n, seq_len)


def task_windows(tokenizer, split: str, seq_len: int, num: int, seed: int = 0, edge_weight: float = UNIFORM_EDGE_WEIGHT,
                 edge_noise_share: float = NO_EDGE_NOISE) -> tuple[torch.Tensor, torch.Tensor]:
    """``num`` training windows of the reversal task with answer-only labels: (ids, labels), each
    int64 [num, seq_len].

    Problems (:func:`reverse_problem`, edge weight ``edge_weight``, edge noise share ``edge_noise_share``, ``split`` words) are packed one
    per line; ``labels`` is ``ids`` on the answer tokens and the newline that ends them, -100 (no
    loss) on the prompt tokens, whose letters are random. The generator is the ``reverse``
    category's (:func:`documents`), so the windows hold the same problems in the same order.
    """
    rng = random.Random(f"rever-{split}-{seed}")
    ids: list[int] = []
    lab: list[int] = []
    while len(ids) < num * seq_len:
        q, a = reverse_problem(rng, split, edge_weight=edge_weight, edge_noise_share=edge_noise_share)
        tq = tokenizer.encode(q, add_special_tokens=False)
        ta = tokenizer.encode(a + "\n", add_special_tokens=False)
        ids += tq + ta
        lab += [-100] * len(tq) + ta
    n = num * seq_len
    return torch.tensor(ids[:n]).view(num, seq_len), torch.tensor(lab[:n]).view(num, seq_len)


def category_windows(tokenizer, category: str, split: str, seq_len: int, num: int, seed: int = 0,
                     edge_weight: float = UNIFORM_EDGE_WEIGHT, edge_noise_share: float = NO_EDGE_NOISE) -> torch.Tensor:
    """``num`` windows of ``seq_len`` tokens of one category/split: int64 [num', seq_len], num' <= num
    (``edge_weight``, ``edge_noise_share``: the ``reverse`` category's, :func:`reverse_problem`)."""
    docs = documents(category, split, max_chars=int(num * seq_len * 1.1) + seq_len, seed=seed, edge_weight=edge_weight,
                     edge_noise_share=edge_noise_share)
    return token_windows(tokenizer, docs, seq_len, num)
