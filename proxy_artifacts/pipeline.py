"""The stage functions behind the CLI: statistics, prune at one ratio, selection comparison.

Each takes the ``proxy`` params block (``params.yaml``) and explicit paths, so tests call them
directly and ``dvc.yaml`` calls them through ``python -m proxy_artifacts``.
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import torch

from passnet_common.io import atomic_write_json, sha256_file, write_parquet
from passnet_common.schema import to_table

from . import corpus
from .adapters import adapter_for, expert_count, expert_weight_features, moe_blocks
from .checkpoint import load_base, write_proxy
from .cluster import cluster_rows, select_block
from .metrics import BaseReference, evaluate
from .prune import keep_count, output_merge, prune_model
from .stats import ExpertStats, collect, plot_load_heatmap, stats_rows


def calibration_windows(tokenizer, sp: dict, category: str, split: str = "train") -> torch.Tensor:
    """Calibration windows of one category: int64 [num_samples, seq_len].

    ``sp["dataset"]``: ``builtin`` (the offline corpus, categories text/code/arithmetic) or a
    folder with one ``<category>.txt`` per category.

    Raises:
        FileNotFoundError: the category file of a folder dataset is missing.
        ValueError: no tokenizer, or an unknown builtin category.
    """
    if tokenizer is None:
        raise ValueError("calibration needs the base model's tokenizer")
    ds = sp.get("dataset", "builtin")
    if ds == "builtin":
        return corpus.category_windows(tokenizer, category, split, sp["seq_len"], sp["num_samples"], sp.get("seed", 0))
    f = Path(ds) / f"{category}.txt"
    if not f.exists():
        raise FileNotFoundError(f"calibration file for category {category!r} not found: {f}")
    return corpus.token_windows(tokenizer, [f.read_text(encoding="utf-8")], sp["seq_len"], sp["num_samples"])


def stats_sha256(stats_dir: str | Path) -> str:
    """Content hash of a statistics artifact (all files, sorted by name)."""
    h = hashlib.sha256()
    for f in sorted(Path(stats_dir).iterdir()):
        if f.is_file() and not f.name.startswith("."):
            h.update(f.name.encode())
            h.update(sha256_file(f).encode())
    return h.hexdigest()


def run_stats(params: dict, base_ref: str, out_dir: str | Path, plot_path: str | Path | None = None) -> dict:
    """Collect statistics for every calibration category into ``out_dir``.

    Writes ``<category>.safetensors`` (sums, one file per category: none overwrites another),
    ``expert_stats.parquet`` (all categories) and ``meta.json`` (base id, revision, settings).
    """
    sp = params["stats"]
    torch.set_num_threads(int(sp.get("threads", 1)))
    model, tok, model_id, revision = load_base(base_ref, params["model"].get("revision"))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    by_cat, rows = {}, []
    for cat in sp["categories"]:
        ids = calibration_windows(tok, sp, cat)
        st = collect(model, ids, sp["batch_size"], sp.get("char_tokens_per_batch", 0), sp.get("seed", 0),
                     desc=f"expert stats [{cat}]")
        st.meta = {"category": cat, "model_id": model_id, "revision": revision, "num_samples": int(len(ids)),
                   "seq_len": sp["seq_len"], "dataset": sp.get("dataset", "builtin")}
        st.save(out_dir / f"{cat}.safetensors")
        by_cat[cat] = st
        rows += stats_rows(st, cat, model_id)
    write_parquet(out_dir / "expert_stats.parquet", to_table("expert_stats", rows))
    meta = {"model_id": model_id, "revision": revision, "family": adapter_for(model.config).family,
            "categories": list(sp["categories"]), "settings": sp, "blocks": by_cat[sp["categories"][0]].blocks}
    atomic_write_json(out_dir / "meta.json", meta, indent=1)
    if plot_path:
        plot_load_heatmap(by_cat, plot_path)
    return meta


def load_stats(stats_dir: str | Path, categories="all") -> tuple[ExpertStats, dict]:
    """Pooled statistics of the chosen categories (``all`` or a list) and the artifact's meta.

    Raises:
        FileNotFoundError: no meta.json / category file. ValueError: unknown category.
    """
    stats_dir = Path(stats_dir)
    mp = stats_dir / "meta.json"
    if not mp.exists():
        raise FileNotFoundError(f"statistics artifact not found (no meta.json): {stats_dir}")
    meta = json.loads(mp.read_text())
    cats = meta["categories"] if categories in ("all", None) else list(categories)
    bad = [c for c in cats if c not in meta["categories"]]
    if bad:
        raise ValueError(f"categories {bad} not in statistics artifact (has {meta['categories']})")
    pooled = None
    for c in cats:
        st = ExpertStats.load(stats_dir / f"{c}.safetensors")
        pooled = st if pooled is None else pooled + st
    return pooled, meta


def select(model, stats: ExpertStats, ratio: float, pp: dict, method: str | None = None, seed: int | None = None):
    """Kept experts for every MoE block of ``model``: ({block: kept}, {block: members}, cluster rows, k)."""
    a = adapter_for(model.config)
    cfg = model.config
    E = expert_count(cfg, a)
    G = int(getattr(cfg, a.group_keys[0], 1) or 1) if a.group_keys else 1
    TG = int(getattr(cfg, a.group_keys[1], 1) or 1) if len(a.group_keys) > 1 else None
    k = keep_count(E, ratio, int(cfg.num_experts_per_tok), G, pp.get("new_top_k"), TG)
    method = method or pp["method"]
    blocks = moe_blocks(model, a)
    if [b.name for b in blocks] != stats.blocks:
        raise ValueError(f"statistics blocks {stats.blocks} do not match the model's {[b.name for b in blocks]}")
    kept, members, rows = {}, {}, []
    views = dict(pp.get("views", {"act": 1.0}))
    for li, b in enumerate(blocks):
        w = expert_weight_features(b.experts, a) if views.get("weights", 0) > 0 else None
        ks, mem, labels = select_block(method, k, stats, li, n_group=G, views=views,
                                       rep_rule=pp.get("representative", "frequency"), weights=w,
                                       seed=pp.get("seed", 0) if seed is None else seed, usage=pp.get("usage"))
        kept[b.name], members[b.name] = ks, [mem[x] for x in ks]
        rows += cluster_rows(b.name, b.layer, labels, ks, method, ratio, stats.frequency[li].numpy())
    return kept, members, rows, k


MERGES = ("none", "frequency", "output")


def merge_mode(pp: dict) -> str:
    """The ``merge`` setting of a prune block: ``none`` (false), ``frequency`` (true: parameter-space
    frequency-weighted average of cluster members, HC-SMoE) or ``output`` (output-space merge,
    :func:`prune.output_merge`).

    Raises:
        ValueError: any other value.
    """
    m = pp.get("merge", "none")
    m = {False: "none", None: "none", True: "frequency"}.get(m, m) if isinstance(m, (bool, type(None))) else m
    if m not in MERGES:
        raise ValueError(f"unknown prune merge {m!r}; known: {MERGES} (or true / false)")
    return m


def merge_calibration(tok, pp: dict, meta: dict) -> torch.Tensor:
    """Calibration windows of the output merge: int64 [N, S], ``pp['calibration']``
    {windows_per_category, seq_len} of each statistics category (training split, the statistics'
    dataset), never the evaluation windows."""
    cal = pp.get("calibration") or {}
    sp = {"dataset": (meta.get("settings") or {}).get("dataset", "builtin"), "seq_len": int(cal.get("seq_len", 128)),
          "num_samples": int(cal.get("windows_per_category", 32)), "seed": int(pp.get("seed", 0))}
    cats = meta["categories"] if pp.get("categories", "all") in ("all", None) else list(pp["categories"])
    return torch.cat([calibration_windows(tok, sp, c) for c in cats])


def build_proxy(model, kept: dict, members: dict, pp: dict, merge: str, cal_ids: torch.Tensor | None = None):
    """The pruned copy of ``model`` with ``merge`` applied: (proxy, merge report or None)."""
    proxy = prune_model(copy.deepcopy(model), kept, pp.get("new_top_k"),
                        merge=members if merge == "frequency" else None)
    rep = None
    if merge == "output":
        if cal_ids is None:
            raise ValueError("output merge needs calibration windows")
        rep = output_merge(model, proxy, cal_ids, float((pp.get("calibration") or {}).get("ridge", 1e-2)))
    return proxy, rep


def eval_windows(tok, ep: dict) -> dict[str, torch.Tensor]:
    """Held-out windows per corpus category (disjoint from training and calibration)."""
    return {c: corpus.category_windows(tok, c, "heldout", ep["seq_len"], ep["windows_per_category"], seed=7)
            for c in corpus.CATEGORIES}


def run_prune(params: dict, base_ref: str, stats_dir: str | Path, ratio: float, out_dir: str | Path,
              metrics_path: str | Path | None = None) -> dict:
    """Prune the base at ``ratio`` with ``params['prune']``; write the proxy folder, clusters and metrics."""
    pp, ep = params["prune"], params["eval"]
    torch.set_num_threads(int(pp.get("threads", 1)))
    model, tok, model_id, revision = load_base(base_ref, params["model"].get("revision"))
    stats, meta = load_stats(stats_dir, pp.get("categories", "all"))
    if meta["model_id"] != model_id:
        raise ValueError(f"statistics were collected on {meta['model_id']}, base is {model_id}")
    kept, members, rows, k = select(model, stats, ratio, pp)
    E = expert_count(model.config, adapter_for(model.config))
    ref = BaseReference(model, tok, eval_windows(tok, ep), ep["batch_size"], ep.get("task_problems", 0)) \
        if metrics_path else None
    merge = merge_mode(pp)
    proxy, merge_report = build_proxy(model, kept, members, pp, merge,
                                      merge_calibration(tok, pp, meta) if merge == "output" else None)
    metrics = evaluate(ref, proxy) if ref is not None else None
    sha = stats_sha256(stats_dir)
    lineage = {"base_model_id": model_id, "base_revision": revision, "family": adapter_for(model.config).family,
               "stats_sha256": sha, "stats_categories": pp.get("categories", "all"), "method": pp["method"],
               "merge": merge, "merge_report": merge_report,
               "keep_ratio_requested": ratio, "keep_ratio_effective": round(k / E, 6),
               "experts_base": E, "experts_kept": k,
               "mtp_layers_base": max([int(getattr(model.config, key, 0) or 0)
                                       for key in adapter_for(model.config).mtp_keys], default=0),
               "num_experts_per_tok": int(proxy.config.num_experts_per_tok), "params": pp,
               "calibration": {"dataset": meta.get("settings", {}).get("dataset", "builtin"),
                               "categories": meta.get("categories"),
                               "stats_windows_per_category": meta.get("settings", {}).get("num_samples"),
                               "stats_seq_len": meta.get("settings", {}).get("seq_len"),
                               "merge_windows_per_category": (pp.get("calibration") or {}).get("windows_per_category")
                               if merge == "output" else 0,
                               "corpus_sha256": corpus.corpus_sha256() if meta.get("settings", {}).get(
                                   "dataset", "builtin") == "builtin" else None}}
    out_dir = Path(out_dir)
    write_proxy(proxy, tok, out_dir / "model", kept, lineage, metrics)
    write_parquet(out_dir / "expert_clusters.parquet", to_table("expert_clusters", rows))
    if metrics_path:
        atomic_write_json(metrics_path, {"keep_ratio": ratio, "keep_ratio_effective": round(k / E, 6),
                                         "method": pp["method"], "merge": merge, **metrics}, indent=1)
    return metrics or {}


def compare_winner(summary: dict, ratios, names, reference_ratio: float | None = None) -> dict:
    """The selection winner: lowest held-out loss at ``reference_ratio`` (default: the largest
    ratio; ties: higher task accuracy, then the name), its loss ratio to the base and task-accuracy
    gap (points) at every ratio, and the per-ratio winners (lowest held-out loss at that ratio).

    Raises:
        ValueError: ``reference_ratio`` is not one of ``ratios``.
    """
    ref = max(ratios) if reference_ratio is None else reference_ratio
    if ref not in ratios:
        raise ValueError(f"compare reference ratio {ref} is not one of {list(ratios)}")
    base = summary["base"]

    def key(n, r):
        row = summary[f"r{r}/{n}"]
        return (row["heldout_loss_proxy"], -row.get("task_acc_proxy", 0.0), n)

    best = min(names, key=lambda n: key(n, ref))
    out = {"method": best, "reference_ratio": ref, "rule": "lowest held-out loss at the reference ratio",
           "per_ratio": {f"r{r}": min(names, key=lambda n: key(n, r)) for r in ratios}}
    for r in ratios:
        row = summary[f"r{r}/{best}"]
        out[f"r{r}"] = {"loss_ratio_to_base": round(row["heldout_loss_proxy"] / base["heldout_loss"], 4),
                        "task_acc_gap_points": None if base.get("task_acc") is None else
                        round(100 * (base["task_acc"] - row.get("task_acc_proxy", 0.0)), 2)}
    return out


def run_compare(params: dict, base_ref: str, stats_dir: str | Path, out_table: str | Path,
                metrics_path: str | Path) -> list[dict]:
    """Compare selection methods at every keep ratio (in memory, nothing is saved but metrics).

    Methods from ``params['compare']['methods']``: each {name, method, views?, usage?, merge?}
    (``merge``: none | frequency | output, default none); ``random`` is averaged over
    ``random_seeds`` (each seed a table row).
    """
    cp, pp, ep = params["compare"], params["prune"], params["eval"]
    torch.set_num_threads(int(pp.get("threads", 1)))
    model, tok, model_id, revision = load_base(base_ref, params["model"].get("revision"))
    stats, meta = load_stats(stats_dir, pp.get("categories", "all"))
    ref = BaseReference(model, tok, eval_windows(tok, ep), ep["batch_size"], ep.get("task_problems", 0))
    sha = stats_sha256(stats_dir)
    E = expert_count(model.config, adapter_for(model.config))
    cal_ids = None
    rows, summary = [], {}
    from tqdm import tqdm

    n_runs = sum(len(cp["random_seeds"]) if m["method"] == "random" else 1 for m in cp["methods"]) * len(cp["keep_ratios"])
    bar = tqdm(total=n_runs, desc="proxy_compare", mininterval=2.0)
    freq = stats.frequency / stats.frequency.sum(1, keepdim=True).clamp_min(1e-300)  # [L, E] share of routed slots
    for ratio in cp["keep_ratios"]:
        for m in cp["methods"]:
            seeds = cp["random_seeds"] if m["method"] == "random" else [pp.get("seed", 0)]
            accum = []
            for seed in seeds:
                bar.set_postfix_str(f"r{ratio} {m['name']} seed {seed}")
                mp = dict(pp, views=m.get("views", pp.get("views")), usage={**(pp.get("usage") or {}),
                                                                            **(m.get("usage") or {})})
                kept, members, _, k = select(model, stats, ratio, mp, method=m["method"], seed=seed)
                merge = merge_mode({"merge": m.get("merge", "none")})
                if merge == "output" and cal_ids is None:
                    cal_ids = merge_calibration(tok, pp, meta)
                proxy, _ = build_proxy(model, kept, members, pp, merge, cal_ids)
                r = evaluate(ref, proxy)
                bar.update(1)
                mass = [float(freq[li, list(v)].sum()) for li, v in enumerate(kept.values())]
                r["routing_mass_kept_mean"] = round(sum(mass) / len(mass), 6)
                r["routing_mass_kept_min"] = round(min(mass), 6)
                rows.append({"base_model_id": model_id, "method": m["name"], "keep_ratio": ratio, "seed": seed,
                             "experts_base": E, "experts_kept": k, "stats_sha256": sha, **r})
                accum.append(r)
            key = f"r{ratio}/{m['name']}"
            summary[key] = {f: round(sum(a[f] for a in accum) / len(accum), 6) for f in
                            ("heldout_loss_proxy", "next_token_acc_proxy", "kl_base_to_proxy",
                             "routing_entropy_proxy", "task_acc_proxy", "params_proxy",
                             "routing_mass_kept_mean", "routing_mass_kept_min")
                            + tuple(f"heldout_loss_proxy/{c}" for c in corpus.CATEGORIES)
                            + tuple(f"kl_base_to_proxy/{c}" for c in corpus.CATEGORIES) if f in accum[0]}
    bar.close()
    summary["base"] = {"heldout_loss": rows[0]["heldout_loss_base"], "next_token_acc": rows[0]["next_token_acc_base"],
                       "routing_entropy": rows[0]["routing_entropy_base"], "params": rows[0]["params_base"],
                       "task_acc": rows[0].get("task_acc_base"),
                       **{f"heldout_loss/{c}": rows[0][f"heldout_loss_base/{c}"] for c in corpus.CATEGORIES}}
    summary["winner"] = compare_winner(summary, cp["keep_ratios"], [m["name"] for m in cp["methods"]],
                                       cp.get("reference_ratio"))
    write_parquet(out_table, to_table("proxies", rows))
    atomic_write_json(metrics_path, summary, indent=1)
    return rows
