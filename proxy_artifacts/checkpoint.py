"""Proxy checkpoint I/O: loading bases, writing proxies with card and lineage, verifying them.

A proxy folder (the unit that is published to the Hub) holds::

    config.json  model.safetensors  generation_config.json  tokenizer files
    kept_experts.json   block path -> kept original expert indices
    lineage.json        base id + revision + weights hash, statistics hash, method, params,
                        requested and effective keep ratio, and the sha256 of EVERY other file of
                        the folder (config, generation config, tokenizer files, weights,
                        kept_experts.json, the card): editing any of them fails verification
    README.md           model card (huggingface_hub.ModelCard)

Folders and files get the usual modes (0777 / 0666 minus the umask), not the 0700 / 0600 of
``tempfile``.

Base models load with ``AutoModelForCausalLM.from_pretrained`` only (never ``trust_remote_code``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import torch
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

from passnet_common.io import atomic_write_json, atomic_write_text, sha256_file

from .adapters import adapter_for, expert_count
from .card import base_license_from_hub
from .card import card_text as _card_text

LINEAGE_VERSION = 2


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def usual_modes(root: str | Path) -> None:
    """chmod ``root`` and everything below it to 0777 (folders) / 0666 (files) minus the umask."""
    mask = _umask()
    root = Path(root)
    root.chmod(0o777 & ~mask)
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            os.chmod(os.path.join(dirpath, d), 0o777 & ~mask)
        for f in filenames:
            os.chmod(os.path.join(dirpath, f), 0o666 & ~mask)


def folder_file_hashes(folder: str | Path) -> dict[str, str]:
    """{relative posix path: sha256} of every file below ``folder`` except ``lineage.json`` and
    hidden files/folders (names starting with ``.``: ``.gitattributes``, Hub cache markers)."""
    folder = Path(folder)
    out = {}
    for f in sorted(folder.rglob("*")):
        rel = f.relative_to(folder)
        if f.is_file() and rel.as_posix() != "lineage.json" and not any(part.startswith(".") for part in rel.parts):
            out[rel.as_posix()] = sha256_file(f)
    return out


def load_base(ref: str, revision: str | None = None, dtype: str = "float32"):
    """Load a base MoE checkpoint: local folder or Hub id (``revision`` pinned).

    Returns (model in eval mode, tokenizer or None, model_id string (source-prefixed and pinned, docs/tables.md):
    ``local:<sha256[:16] of weights>`` or ``hf:<repo>@<revision>``, revision).

    Raises:
        FileNotFoundError: a local path that does not exist or has no config.json.
        ValueError: a Hub id without a pinned revision; a model type not in the adapter table.
    """
    p = Path(ref)
    if p.exists() or ref.startswith((".", "/", "~")) or ref.count("/") != 1:
        if not (p / "config.json").exists():
            raise FileNotFoundError(f"base checkpoint not found (no config.json): {p}")
        model = AutoModelForCausalLM.from_pretrained(p, dtype=getattr(torch, dtype), trust_remote_code=False)
        rev = weights_sha256(p)
        model_id, revision = f"local:{rev[:16]}", rev
        tok_src = p
    else:
        if not revision:
            raise ValueError(f"Hub base {ref!r} needs a pinned revision (commit sha)")
        model = AutoModelForCausalLM.from_pretrained(ref, revision=revision, dtype=getattr(torch, dtype),
                                                     trust_remote_code=False)
        model_id, tok_src = f"hf:{ref}@{revision}", ref
    adapter_for(model.config)  # fail early on unsupported families
    try:
        tok = AutoTokenizer.from_pretrained(tok_src, revision=revision if tok_src == ref else None)
    except (OSError, ValueError):
        tok = None
    model.eval()
    return model, tok, model_id, revision


def weights_sha256(folder: str | Path) -> str:
    """sha256 over the sorted ``*.safetensors`` files of a folder (name + content hash)."""
    folder = Path(folder)
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise FileNotFoundError(f"no *.safetensors in {folder}")
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode())
        h.update(sha256_file(f).encode())
    return h.hexdigest()


def card_text(lineage: dict, metrics: dict | None, **kw) -> str:
    """The proxy's model card: :func:`card.card_text` (kept here for callers of this module)."""
    return _card_text(lineage, metrics, **kw)


def write_proxy(model, tokenizer, out_dir: str | Path, kept: dict, lineage: dict, metrics: dict | None = None) -> Path:
    """Write a proxy folder atomically (staging folder renamed into place; an old one is replaced).

    ``lineage`` must hold ``keep_ratio_requested`` and ``keep_ratio_effective``; it gets the proxy
    weights hash, kept-experts hash and ``files`` (sha256 of every file, the card included) added.
    Returns ``out_dir``.

    Raises:
        KeyError: a required lineage key is missing.
    """
    for key in ("keep_ratio_requested", "keep_ratio_effective", "experts_kept", "experts_base", "method"):
        if key not in lineage:
            raise KeyError(f"lineage misses {key!r}")
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        model.save_pretrained(staging)
        if tokenizer is not None:
            tokenizer.save_pretrained(staging)
        atomic_write_json(staging / "kept_experts.json", kept, indent=1)
        lineage = dict(lineage, lineage_version=LINEAGE_VERSION, proxy_weights_sha256=weights_sha256(staging),
                       kept_experts_sha256=sha256_file(staging / "kept_experts.json"))
        if "base_license" not in lineage:
            lineage["base_license"] = base_license_from_hub(str(lineage.get("base_model_id", "")))
        lineage["card_metrics"] = metrics  # what the card shows, so a later card (refresh_card) shows it too
        atomic_write_text(staging / "README.md", card_text(lineage, metrics))
        lineage["files"] = folder_file_hashes(staging)
        atomic_write_json(staging / "lineage.json", lineage, indent=1)
        usual_modes(staging)
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.rename(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out_dir


def refresh_card(folder: str | Path, out_dir: str | Path, **card_kw) -> Path:
    """Copy the proxy ``folder`` to ``out_dir`` with its card rewritten by :func:`card.card_text`
    (``card_kw``: ``fidelity``, ``proxy_name``, ``base_metrics``, ``base_model``) and ``lineage.json``'s
    ``files`` updated for the new card; weights and every other file are copied unchanged. Returns
    ``out_dir``.

    Raises:
        FileNotFoundError / ValueError: ``folder`` fails :func:`verify_lineage`.
    """
    lin = verify_lineage(folder)
    out_dir = Path(out_dir)
    shutil.copytree(folder, out_dir, ignore=shutil.ignore_patterns(".*"), dirs_exist_ok=True)
    lin = {k: v for k, v in lin.items() if k != "files"}
    atomic_write_text(out_dir / "README.md", card_text(lin, lin.get("card_metrics"), **card_kw))
    lin["files"] = folder_file_hashes(out_dir)
    atomic_write_json(out_dir / "lineage.json", lin, indent=1)
    verify_lineage(out_dir)
    return out_dir


def verify_lineage(folder: str | Path, expect_base: str | None = None) -> dict:
    """Check a proxy folder against its ``lineage.json``; returns the lineage.

    Verified: lineage file present and of a known version; every file of the folder (hidden
    names aside) is listed in ``files`` with its sha256 and every listed file exists with that
    hash (config, tokenizer and card included); weights hash and kept-experts hash equal the
    files; config expert count equals the kept count; optional ``expect_base`` equals the
    recorded base id.

    Raises:
        FileNotFoundError: no lineage.json. ValueError: any mismatch (named in the message).
    """
    folder = Path(folder)
    lp = folder / "lineage.json"
    if not lp.exists():
        raise FileNotFoundError(f"no lineage.json in {folder}")
    lin = json.loads(lp.read_text())
    if lin.get("lineage_version") != LINEAGE_VERSION:
        raise ValueError(f"{lp}: lineage_version {lin.get('lineage_version')} != {LINEAGE_VERSION}")
    listed = lin.get("files") or {}
    present = folder_file_hashes(folder)
    missing = sorted(set(listed) - set(present))
    if missing:
        raise ValueError(f"{folder}: files listed in lineage.json are missing: {missing}")
    extra = sorted(set(present) - set(listed))
    if extra:
        raise ValueError(f"{folder}: files not covered by lineage.json: {extra}")
    changed = sorted(f for f in listed if present[f] != listed[f])
    if changed:
        raise ValueError(f"{folder}: sha256 of {changed} differs from lineage.json")
    got = weights_sha256(folder)
    if got != lin["proxy_weights_sha256"]:
        raise ValueError(f"{folder}: weights sha256 {got} != lineage {lin['proxy_weights_sha256']}")
    if sha256_file(folder / "kept_experts.json") != lin["kept_experts_sha256"]:
        raise ValueError(f"{folder}: kept_experts.json does not match lineage.json")

    cfg = AutoConfig.from_pretrained(folder)
    n = expert_count(cfg, adapter_for(cfg))
    if n != lin["experts_kept"]:
        raise ValueError(f"{folder}: config has {n} experts, lineage says {lin['experts_kept']}")
    if expect_base is not None and lin["base_model_id"] != expect_base:
        raise ValueError(f"{folder}: base {lin['base_model_id']!r} != expected {expect_base!r}")
    return lin
