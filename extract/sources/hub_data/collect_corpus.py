"""Collect real HF config.json files from fetched mirrors into the corpus (run by hand).

    python extract/sources/hub_data/collect_corpus.py OUT_DIR
"""
import ast
import collections
import glob
import gzip
import hashlib
import json
import os
import re
import subprocess
import sys

EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")
LOCAL_PREFIXES = ("/home/", "/Users/", "/root/", "/data/", "/mnt/")
MANIFEST_HEAD = (
    "# Real config.json corpus: sources\n\nOne line per config in `real_configs.jsonl.gz`: public GitHub repository, "
    "commit, path (a `#key` names the entry of a vendored preset table). Configs are kept as published except that "
    "string values holding an e-mail address become `<removed>` and local filesystem paths become "
    "`<local path removed>`. No personal data.\n\n| # | model_type | source repository | commit | path |\n"
    "|---|---|---|---|---|\n"
)


def scrub(v):
    """``v`` with e-mail addresses and local paths in its strings replaced."""
    if isinstance(v, dict):
        return {k: scrub(x) for k, x in v.items()}
    if isinstance(v, list):
        return [scrub(x) for x in v]
    if isinstance(v, str):
        if EMAIL.search(v):
            return "<removed>"
        if v.startswith(LOCAL_PREFIXES) or re.match(r"^[A-Za-z]:[/\\]", v):
            return "<local path removed>"
    return v


def add(out, name, repo, path, commit, cfg):
    """Add one config to ``out`` (keyed by its content hash) unless it has no model type or architecture."""
    if not isinstance(cfg, dict) or not (cfg.get("model_type") or cfg.get("architectures")):
        return
    cfg = scrub(cfg)
    # drop any personal-data-looking keys: local paths in _name_or_path are replaced
    nop = cfg.get("_name_or_path")
    if isinstance(nop, str) and (nop.startswith("/") or ":\\" in nop or "home" in nop.split("/")[:3]):
        cfg = dict(cfg)
        cfg["_name_or_path"] = "<local path removed>"
    key = json.dumps(cfg, sort_keys=True)
    h = hashlib.sha256(key.encode()).hexdigest()
    if h in out:
        return
    out[h] = {"name": name, "source_repo": repo, "source_path": path, "source_commit": commit, "config": cfg}


def collect(out):
    """Every config.json of the mirrors under /work/.mirror (and mlc-llm's preset table) into ``out``."""
    for d in sorted(glob.glob("/work/.mirror/*/repo")):
        repo = os.path.basename(os.path.dirname(d)).replace("+", "/", 1)
        try:
            commit = subprocess.check_output(["git", "-C", d, "rev-parse", "HEAD"], text=True).strip()
            files = subprocess.check_output(["git", "-C", d, "ls-tree", "-r", "--name-only", "HEAD"], text=True).splitlines()
        except Exception as e:
            print("skip", repo, e, file=sys.stderr)
            continue
        if repo == "mlc-ai/mlc-llm":
            src = subprocess.check_output(["git", "-C", d, "show", "HEAD:python/mlc_llm/model/model_preset.py"], text=True)
            tree = ast.parse(src)
            for node in tree.body:
                if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "MODEL_PRESETS":
                    presets = ast.literal_eval(node.value)
                    for k, v in presets.items():
                        add(out, f"mlc-preset/{k}", repo, f"python/mlc_llm/model/model_preset.py#{k}", commit, v)
            continue
        for f in files:
            if os.path.basename(f) != "config.json":
                continue
            try:
                raw = subprocess.check_output(["git", "-C", d, "show", f"HEAD:{f}"])
                cfg = json.loads(raw)
            except Exception:
                continue
            name = repo if f == "config.json" else f"{repo}/{os.path.dirname(f)}"
            add(out, name, repo, f, commit, cfg)


def main(dest):
    out = {}
    collect(out)
    rows = sorted(out.values(), key=lambda r: (r["source_repo"], r["source_path"]))
    os.makedirs(dest, exist_ok=True)
    with gzip.GzipFile(os.path.join(dest, "real_configs.jsonl.gz"), "wb", mtime=0) as fh:
        for r in rows:
            fh.write((json.dumps(r, sort_keys=True) + "\n").encode())
    with open(os.path.join(dest, "MANIFEST.md"), "w") as fh:
        fh.write(MANIFEST_HEAD)
        for i, r in enumerate(rows):
            fh.write(f"| {i} | {r['config'].get('model_type')} | {r['source_repo']} | {r['source_commit'][:12]} | {r['source_path']} |\n")
    print(len(rows), collections.Counter(r["config"].get("model_type") for r in rows).most_common(15))


if __name__ == "__main__":
    main(sys.argv[1])
