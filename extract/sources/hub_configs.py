"""Config dedupe key for Hub configs, the committed corpus of real ``config.json`` files,
and the deterministic long-tailed multiplier that turns it into a 100,000-repo listing.

Dedupe before capture (the "graph config"): two Hub repos whose ``config.json`` differ only
in keys that cannot change the FX graph of the model built from the config get the same
:func:`graph_config_hash` and are captured once. The keys dropped, and why:

* provenance / bookkeeping: ``_name_or_path`` (the path the author saved from),
  ``transformers_version``, ``_commit_hash``, ``_attn_implementation_autoset`` - written by
  ``save_pretrained``, never read by a model's ``__init__``/``forward``;
* generation-only token ids and settings: ``bos_token_id``, ``eos_token_id``,
  ``decoder_start_token_id``, ``forced_bos_token_id``, ``forced_eos_token_id``,
  ``sep_token_id``, ``task_specific_params``, ``max_length``, ``min_length``, ``do_sample``,
  ``early_stopping``, ``num_beams``, ``num_beam_groups``, ``temperature``, ``top_k``,
  ``top_p``, ``typical_p``, ``repetition_penalty``, ``length_penalty``,
  ``no_repeat_ngram_size``, ``num_return_sequences``, ``diversity_penalty`` - read by
  ``generate()`` only (a forward pass with ``input_ids`` and no labels does not use them);
* ``finetuning_task`` (a label) and ``id2label``/``label2id``, replaced by their *count*
  ``num_labels``: label names do not reach the graph, the number of labels sets the
  classifier's output size and stays in the key.

``torch_dtype``/``dtype`` are KEPT (key version 3): transformers' ``_from_config`` builds the
model in ``config.dtype`` (a ``bfloat16`` config gives ``bfloat16`` parameters and graph), so a
float32 and a bfloat16 fine-tune are two graphs.

A key of the list is kept after all when the model type's modeling code reads it from the
config (:func:`model_reads`): CLIP's text forward branches on ``eos_token_id`` (the legacy
value 2 selects argmax pooling), so two CLIP configs that differ only in ``eos_token_id`` are
two graphs and two keys.

``pad_token_id`` is KEPT: many models pass it as ``padding_idx`` to ``nn.Embedding``, a
literal of the graph. Nested sub-configs (``text_config``, ``vision_config``, ...) get the
same treatment. The key is conservative: keeping a key can only miss a dedupe (one extra
capture), dropping a graph-relevant key would merge different graphs; the capture's own
graph hash stays the ground truth.

This key decides only which Hub repos the crawl keeps as representatives
(``hub_configs.jsonl``). In the pipeline, the catalog merges equal configs (provenance aside,
:func:`extract.sources.catalog.dedupe_key`) and the capture stage merges configs of one
architecture by the attributes a capture of it actually read (:mod:`extract.runs.reads_dedupe`),
for every source.

Corpus: ``extract/sources/hub_data/real_configs.jsonl.gz`` holds the real configs (one JSON object a
line: ``{"name", "source_repo", "source_path", "config"}``); ``hub_data/MANIFEST.md`` lists
source repository and path per config.
"""

from __future__ import annotations

import bisect
import gzip
import hashlib
import importlib.util
import json
import math
import random
import re
from functools import lru_cache
from pathlib import Path

GRAPH_KEY_VERSION = 3  # 2: keys the model's code reads are kept (model_reads); 3: dtype kept

IGNORED_KEYS = frozenset({
    "_name_or_path", "transformers_version", "_commit_hash", "_attn_implementation_autoset",
    "bos_token_id", "eos_token_id", "decoder_start_token_id", "forced_bos_token_id",
    "forced_eos_token_id", "sep_token_id", "task_specific_params", "max_length", "min_length",
    "do_sample", "early_stopping", "num_beams", "num_beam_groups", "temperature", "top_k", "top_p",
    "typical_p", "repetition_penalty", "length_penalty", "no_repeat_ngram_size",
    "num_return_sequences", "diversity_penalty", "finetuning_task",
})

CORPUS_PATH = Path(__file__).parent / "hub_data" / "real_configs.jsonl.gz"


# Provenance keys: never part of the key even when modeling code mentions them.
CAPTURE_DECIDED = frozenset({"_name_or_path", "transformers_version", "_commit_hash", "_attn_implementation_autoset"})


@lru_cache(maxsize=None)
def model_reads(model_type: str | None) -> frozenset:
    """The keys of :data:`IGNORED_KEYS` that the modeling code of ``model_type`` reads from its
    config (``config.<key>`` or ``getattr(config, "<key>"`` in ``transformers/models/<module>/
    modeling_*.py``, read as text, never imported): such a key is NOT ignored for that model
    type. CLIP's text transformer branches on ``config.eos_token_id`` (``== 2``: the legacy
    argmax pooling, else the first eos position), BART's classification head masks on it.

    A static over-approximation of what :mod:`extract.capture.config_reads` records at run
    time (a key mentioned but not read costs a missed dedupe, never a false merge); empty for an
    unknown model type or when transformers is not installed.
    """
    if not model_type:
        return frozenset()
    try:
        from transformers.models.auto.configuration_auto import model_type_to_module_name  # noqa: PLC0415  (env: reads HF_HUB_OFFLINE at import; python -m extract sets it first)

        spec = importlib.util.find_spec(f"transformers.models.{model_type_to_module_name(model_type)}")
    except (ImportError, ValueError, AttributeError):
        return frozenset()
    if spec is None or not spec.submodule_search_locations:
        return frozenset()
    text = "".join(f.read_text(encoding="utf-8", errors="replace")
                   for loc in spec.submodule_search_locations for f in sorted(Path(loc).glob("modeling_*.py")))
    return frozenset(k for k in IGNORED_KEYS - CAPTURE_DECIDED
                     if re.search(rf"config\.{k}\b|getattr\(\s*(self\.)?config,\s*[\"']{k}[\"']", text))


def graph_config(config: dict, reads: frozenset = frozenset()) -> dict:
    """``config`` without the keys of :data:`IGNORED_KEYS` (recursively in sub-configs) except
    those the model's code reads (:func:`model_reads` of the config's ``model_type``, and of each
    sub-config's own), ``id2label``/``label2id`` replaced by ``num_labels``. Pure; ``config``
    is not modified."""
    reads = reads | model_reads(config.get("model_type") if isinstance(config.get("model_type"), str) else None)
    out = {}
    for k, v in config.items():
        if k in IGNORED_KEYS and k not in reads:
            continue
        if k in ("id2label", "label2id"):
            if isinstance(v, dict):
                out["num_labels"] = len(v)
            continue
        out[k] = graph_config(v, reads) if isinstance(v, dict) and k.endswith("_config") else v
    return out


def graph_config_hash(config: dict) -> str:
    """sha256 hex of the canonical JSON of :func:`graph_config` (version :data:`GRAPH_KEY_VERSION`)."""
    blob = json.dumps({"v": GRAPH_KEY_VERSION, "config": graph_config(config)}, sort_keys=True,
                      separators=(",", ":"), allow_nan=True, default=str, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


@lru_cache(maxsize=2)
def load_corpus(path: str | None = None) -> tuple[dict, ...]:
    """The committed real configs, in file order (tuple of dicts; cached).

    Raises:
        FileNotFoundError: the corpus file is missing.
    """
    p = Path(path) if path else CORPUS_PATH
    with gzip.open(p, "rt", encoding="utf-8") as fh:
        return tuple(json.loads(line) for line in fh if line.strip())


# --- the multiplier ------------------------------------------------------------------------

# Shares of listed repos that exercise the crawler's skip and error paths (realistic order
# of magnitude: gated repos ~1-2% of popular models; the others rarer).
FAULT_SHARES = {
    "gated": 0.012, "private": 0.003, "no_config": 0.006, "malformed": 0.002,
    "remote_code": 0.01, "unknown_model_type": 0.003,
}
# Share of fine-tunes that change a graph-relevant key (classifier heads, resized vocab).
VARIANT_SHARE = 0.03
ZIPF_S = 1.1  # popularity exponent of base architectures: many fine-tunes of few bases


class Listing:
    """A deterministic synthetic listing of ``n`` Hub repos built from real configs.

    Repo ``i`` (0 = most downloaded) is a pure function of ``(seed, i)``, so a server can
    answer any page or file without holding the listing in memory. Each repo is a
    "fine-tune" of one base config drawn from a Zipf(:data:`ZIPF_S`) popularity over the
    corpus (a seeded permutation decides which base is most popular); it differs from its
    base in ignored keys (``_name_or_path``, ``transformers_version``, token ids), and with
    probability :data:`VARIANT_SHARE` in a graph-relevant key (``num_labels`` via
    ``id2label``, or ``vocab_size``); fault kinds follow :data:`FAULT_SHARES`.
    Downloads fall as ``2e7 / (i+1)^0.85`` (a power law; sorted by downloads = index order).
    """

    def __init__(self, n: int, seed: int = 0, corpus: tuple[dict, ...] | None = None,
                 fault_shares: dict[str, float] | None = None):
        self.n = int(n)
        self.fault_shares = dict(FAULT_SHARES if fault_shares is None else fault_shares)
        self.seed = int(seed)
        self.corpus = corpus if corpus is not None else load_corpus()
        if not self.corpus:
            raise ValueError("empty config corpus")
        perm = list(range(len(self.corpus)))
        random.Random(f"perm:{seed}").shuffle(perm)
        self.perm = perm
        w = [1.0 / (r + 1) ** ZIPF_S for r in range(len(perm))]
        total = sum(w)
        acc, cum = 0.0, []
        for x in w:
            acc += x / total
            cum.append(acc)
        self.cum = cum

    def _base(self, u: float) -> int:
        return self.perm[min(bisect.bisect_left(self.cum, u), len(self.cum) - 1)]

    def repo(self, i: int, with_config: bool = True) -> dict:
        """Listing entry of repo ``i``: id, sha, metadata, ``fault`` kind or None, and (with
        ``with_config``) the ``config_bytes`` its ``config.json`` serves (None when it has none)."""
        if not 0 <= i < self.n:
            raise IndexError(i)
        rng = random.Random(f"{self.seed}:{i}")
        b = self._base(rng.random())
        entry = self.corpus[b]
        base = entry["config"]
        name = re.sub(r"-{2,}", "-", re.sub(r"[^A-Za-z0-9._-]", "-", entry["name"].split("/")[-1])).strip("-.")[:60]
        org = f"org{rng.randrange(5000):04d}"
        repo_id = f"{org}/{name}-ft{i:06d}"
        u = rng.random()
        fault = None
        for kind, share in self.fault_shares.items():
            if u < share:
                fault = kind
                break
            u -= share
        cfg = dict(base)
        cfg["_name_or_path"] = f"{org}/{name}"
        cfg["transformers_version"] = rng.choice(["4.36.2", "4.41.2", "4.46.3", "4.51.3", "4.57.1"])
        if "eos_token_id" in cfg and rng.random() < 0.3:
            cfg["eos_token_id"] = [cfg["eos_token_id"]] if not isinstance(cfg["eos_token_id"], list) else cfg["eos_token_id"]
        if rng.random() < VARIANT_SHARE:
            if "vocab_size" in cfg and rng.random() < 0.5:
                cfg["vocab_size"] = int(cfg["vocab_size"]) + 8 * rng.randint(1, 4)
            else:
                k = rng.randint(2, 12)
                cfg["id2label"] = {str(j): f"LABEL_{j}" for j in range(k)}
                cfg["label2id"] = {f"LABEL_{j}": j for j in range(k)}
        if fault == "remote_code":
            cfg["auto_map"] = {"AutoConfig": "configuration_custom.CustomConfig",
                               "AutoModelForCausalLM": "modeling_custom.CustomForCausalLM"}
        elif fault == "unknown_model_type":
            cfg["model_type"] = f"custom_{cfg.get('model_type', 'x')}"
        if not with_config or fault == "no_config":
            config_bytes = None
        elif fault == "malformed":
            config_bytes = json.dumps(cfg, sort_keys=True).encode()[:-7]  # truncated JSON
        else:
            config_bytes = json.dumps(cfg, indent=2, sort_keys=True).encode()
        sha = hashlib.sha1(f"{self.seed}:{repo_id}:{b}:{fault}:{cfg.get('vocab_size')}:{len(cfg.get('id2label', ()))}".encode()).hexdigest()
        arch = (base.get("architectures") or [None])[0]
        return {
            "id": repo_id, "sha": sha, "index": i, "base": b, "fault": fault,
            "private": fault == "private", "gated": "manual" if fault == "gated" else False,
            "downloads": int(2e7 / (i + 1) ** 0.85), "likes": int(5e4 / (i + 1) ** 0.9),
            "library_name": "transformers", "pipeline_tag": _pipeline_tag(arch),
            "tags": ["transformers", "safetensors", str(base.get("model_type"))],
            "config": {k: cfg[k] for k in ("architectures", "model_type", "auto_map") if k in cfg},
            "param_total": int(math.exp(rng.uniform(math.log(1e6), math.log(7e10)))) if rng.random() < 0.7 else None,
            "config_bytes": config_bytes,
        }

    def index_of(self, repo_id: str) -> int | None:
        """Index encoded in a repo id of this listing (``...-ft<i>``), or None."""
        tail = repo_id.rsplit("-ft", 1)
        if len(tail) != 2 or not tail[1].isdigit():
            return None
        i = int(tail[1])
        return i if 0 <= i < self.n and self.repo(i, with_config=False)["id"] == repo_id else None


def _pipeline_tag(arch: str | None) -> str | None:
    if not arch:
        return None
    for suffix, tag in (("ForCausalLM", "text-generation"), ("LMHeadModel", "text-generation"),
                        ("ForConditionalGeneration", "text2text-generation"),
                        ("ForSequenceClassification", "text-classification"),
                        ("ForImageClassification", "image-classification"), ("ForMaskedLM", "fill-mask"),
                        ("ForTokenClassification", "token-classification"),
                        ("ForSpeechSeq2Seq", "automatic-speech-recognition"), ("ForCTC", "automatic-speech-recognition")):
        if arch.endswith(suffix):
            return tag
    return "feature-extraction"
