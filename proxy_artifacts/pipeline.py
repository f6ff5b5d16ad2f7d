"""The stage functions behind the CLI: statistics, prune at one ratio, selection comparison.

Each takes the ``proxy`` params block (``params.yaml``) and explicit paths, so tests call them
directly and ``dvc.yaml`` calls them through ``python -m proxy_artifacts``. The block passes
through :func:`proxy_artifacts.config.proxy_params` first: validated, every key it leaves out at
its default from the family's config (the one home of every default), so the code below indexes
it and never carries a default of its own.
"""

from __future__ import annotations

import copy
import hashlib
import json
import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import torch
from tqdm import tqdm
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

from passnet_common.io import atomic_write_json, sha256_file, write_parquet
from passnet_common.schema import to_table

from . import corpus
from .adapters import adapter_for, expert_count, expert_weight_features, moe_blocks
from .card import builtin_training_record
from .checkpoint import load_base, write_proxy
from .cluster import cluster_rows, select_block
from .config import COMPARE_METHOD_MERGE, PruneConfig, proxy_params
from .controls import CONTROL_KINDS
from .metrics import BaseReference, evaluate
from .prune import keep_count, output_merge, prune_model
from .selection import judge_compare
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
    ds = sp["dataset"]
    if ds == "builtin":
        return corpus.category_windows(tokenizer, category, split, sp["seq_len"], sp["num_samples"], sp["seed"])
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
    params = proxy_params(params)
    sp = params["stats"]
    torch.set_num_threads(int(sp["threads"]))
    model, tok, model_id, revision = load_base(base_ref, params["model"].get("revision"))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    by_cat, rows = {}, []
    for cat in sp["categories"]:
        ids = calibration_windows(tok, sp, cat)
        st = collect(model, ids, sp["batch_size"], sp["char_tokens_per_batch"], sp["seed"],
                     desc=f"expert stats [{cat}]")
        st.meta = {"category": cat, "model_id": model_id, "revision": revision, "num_samples": int(len(ids)),
                   "seq_len": sp["seq_len"], "dataset": sp["dataset"]}
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


def load_stats(stats_dir: str | Path, categories=PruneConfig.categories) -> tuple[ExpertStats, dict]:
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
    k = keep_count(E, ratio, int(cfg.num_experts_per_tok), G, pp["new_top_k"], TG)
    method = method or pp["method"]
    blocks = moe_blocks(model, a)
    if [b.name for b in blocks] != stats.blocks:
        raise ValueError(f"statistics blocks {stats.blocks} do not match the model's {[b.name for b in blocks]}")
    kept, members, rows = {}, {}, []
    views = dict(pp["views"])
    for li, b in enumerate(blocks):
        w = expert_weight_features(b.experts, a) if views.get("weights", 0) > 0 else None
        ks, mem, labels = select_block(method, k, stats, li, n_group=G, views=views,
                                       rep_rule=pp["representative"], weights=w,
                                       seed=pp["seed"] if seed is None else seed, usage=pp["usage"])
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
    m = pp["merge"]
    m = {False: "none", None: "none", True: "frequency"}.get(m, m) if isinstance(m, (bool, type(None))) else m
    if m not in MERGES:
        raise ValueError(f"unknown prune merge {m!r}; known: {MERGES} (or true / false)")
    return m


def merge_calibration(tok, pp: dict, meta: dict) -> torch.Tensor:
    """Calibration windows of the output merge: int64 [N, S], ``pp['calibration']``
    {windows_per_category, seq_len} of each statistics category (training split, the statistics'
    dataset), never the evaluation windows."""
    cal = pp["calibration"]
    sp = {"dataset": meta["settings"]["dataset"], "seq_len": int(cal["seq_len"]),
          "num_samples": int(cal["windows_per_category"]), "seed": int(pp["seed"])}
    cats = meta["categories"] if pp["categories"] in ("all", None) else list(pp["categories"])
    return torch.cat([calibration_windows(tok, sp, c) for c in cats])


def build_proxy(model, kept: dict, members: dict, pp: dict, merge: str, cal_ids: torch.Tensor | None = None):
    """The pruned copy of ``model`` with ``merge`` applied: (proxy, merge report or None)."""
    proxy = prune_model(copy.deepcopy(model), kept, pp["new_top_k"],
                        merge=members if merge == "frequency" else None)
    rep = None
    if merge == "output":
        if cal_ids is None:
            raise ValueError("output merge needs calibration windows")
        rep = output_merge(model, proxy, cal_ids, float(pp["calibration"]["ridge"]))
    return proxy, rep


def eval_windows(tok, ep: dict) -> dict[str, torch.Tensor]:
    """Held-out windows per corpus category (disjoint from training and calibration)."""
    return {c: corpus.category_windows(tok, c, "heldout", ep["seq_len"], ep["windows_per_category"], seed=7)
            for c in corpus.CATEGORIES}


def run_prune(params: dict, base_ref: str, stats_dir: str | Path, ratio: float, out_dir: str | Path,
              metrics_path: str | Path | None = None, choice_seed: int | None = None) -> dict:
    """Prune the base at ``ratio`` with ``params['prune']``; write the proxy folder, clusters and metrics.

    ``choice_seed``: the seed of the expert choice alone (``select``'s ``seed``: a random control's draw);
    ``prune.seed`` still draws the calibration windows of the merge, so two controls of other draws differ
    in their experts only."""
    params = proxy_params(params)
    pp, ep = params["prune"], params["eval"]
    torch.set_num_threads(int(pp["threads"]))
    model, tok, model_id, revision = load_base(base_ref, params["model"].get("revision"))
    stats, meta = load_stats(stats_dir, pp["categories"])
    if meta["model_id"] != model_id:
        raise ValueError(f"statistics were collected on {meta['model_id']}, base is {model_id}")
    kept, members, rows, k = select(model, stats, ratio, pp, seed=choice_seed)
    E = expert_count(model.config, adapter_for(model.config))
    ref = BaseReference(model, tok, eval_windows(tok, ep), ep["batch_size"], ep["task_problems"]) \
        if metrics_path else None
    merge = merge_mode(pp)
    proxy, merge_report = build_proxy(model, kept, members, pp, merge,
                                      merge_calibration(tok, pp, meta) if merge == "output" else None)
    metrics = evaluate(ref, proxy) if ref is not None else None
    sha = stats_sha256(stats_dir)
    lineage = {"base_model_id": model_id, "base_revision": revision, "family": adapter_for(model.config).family,
               "base_training": builtin_training_record(base_ref),
               "stats_sha256": sha, "stats_categories": pp["categories"], "method": pp["method"],
               "merge": merge, "merge_report": merge_report,
               "keep_ratio_requested": ratio, "keep_ratio_effective": round(k / E, 6),
               "experts_base": E, "experts_kept": k,
               "mtp_layers_base": max([int(getattr(model.config, key, 0) or 0)
                                       for key in adapter_for(model.config).mtp_keys], default=0),
               "num_experts_per_tok": int(proxy.config.num_experts_per_tok), "params": pp,
               "calibration": {"dataset": meta["settings"]["dataset"],
                               "categories": meta.get("categories"),
                               "stats_windows_per_category": meta["settings"]["num_samples"],
                               "stats_seq_len": meta["settings"]["seq_len"],
                               "merge_windows_per_category": pp["calibration"]["windows_per_category"]
                               if merge == "output" else 0,
                               "corpus_sha256": corpus.corpus_sha256() if meta["settings"]["dataset"] == "builtin"
                               else None}}
    out_dir = Path(out_dir)
    write_proxy(proxy, tok, out_dir / "model", kept, lineage, metrics)
    write_parquet(out_dir / "expert_clusters.parquet", to_table("expert_clusters", rows))
    if metrics_path:
        atomic_write_json(metrics_path, {"keep_ratio": ratio, "keep_ratio_effective": round(k / E, 6),
                                         "method": pp["method"], "merge": merge, **metrics}, indent=1)
    return metrics or {}


def build_control(params: dict, kind: str, base_ref: str, stats_dir: str | Path, proxy_model: str | Path,
                  ratio: float, out_dir: str | Path) -> Path:
    """Write negative control ``kind`` of the proxy at keep ``ratio`` (its expert count) to ``out_dir``: a
    proxy folder with the model in ``out_dir/model`` and ``out_dir/control.json`` (kind, seed, ratio).

    ``random_experts`` / ``random_output_merge``: :func:`run_prune` with method ``random`` (the expert
    choice drawn by ``proxy.fidelity.controls.seed``; the merge's calibration windows by ``proxy.prune.seed``,
    as the proxy's) and merge ``none`` / ``output``, the rest as ``proxy.prune``.
    ``reinit``: the proxy's architecture (``proxy_model``'s ``config.json``) with the weights
    ``from_config`` draws under ``torch.manual_seed(seed)``, and its tokenizer.
    ``dense``: :func:`dense_control` of the proxy (its active size, no router), and its tokenizer.

    Raises:
        ValueError: unknown ``kind``.
    """
    if kind not in CONTROL_KINDS:
        raise ValueError(f"unknown control {kind!r}; known: {CONTROL_KINDS}")
    params = proxy_params(params)
    seed = int(params["fidelity"]["controls"]["seed"])
    out_dir = Path(out_dir)
    extra: dict = {}
    if kind in ("reinit", "dense"):
        if kind == "reinit":
            torch.manual_seed(seed)
            model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(proxy_model))
        else:
            stats, _ = load_stats(stats_dir, params["prune"]["categories"])
            proxy = AutoModelForCausalLM.from_pretrained(proxy_model, dtype=torch.float32)
            kept = json.loads((Path(proxy_model) / "kept_experts.json").read_text())
            model, chosen = dense_control(proxy, kept, stats)
            extra = {"dense_experts": chosen}
        model.save_pretrained(out_dir / "model")
        AutoTokenizer.from_pretrained(proxy_model).save_pretrained(out_dir / "model")
    else:
        pp = dict(params["prune"], method="random", merge="output" if kind == "random_output_merge" else "none")
        run_prune(dict(params, prune=pp), base_ref, stats_dir, ratio, out_dir, choice_seed=seed)
    atomic_write_json(out_dir / "control.json", {"kind": kind, "seed": seed, "keep_ratio": ratio, **extra},
                      indent=1)
    return out_dir


def dense_control(proxy, kept: dict, stats: ExpertStats):
    """The dense control of an MoE proxy: the same transformer with every routed-expert block replaced by
    one dense MLP of the proxy's *active* size (``top_k x moe_intermediate_size``: per token, the expert
    parameters a routed token uses), and no router.

    Weights: attention, norms and embeddings are the proxy's. Layer l's dense MLP concatenates the ``top_k``
    proxy experts of that layer that the base routed to most often (``stats.frequency`` of the base expert
    each proxy expert was kept from, ``kept``; ties to the lower index), gate and up projections stacked,
    down projection side by side and divided by ``top_k``: its output is the *mean* of those experts'
    outputs, f(x) = (1/k) sum_j f_j(x), where the proxy would weight its k routed experts by router
    probabilities that sum to 1 (``norm_topk_prob``). Only families with the fused gate-first layout
    (``gate_up_proj`` [E,2I,H], ``down_proj`` [E,H,I]) whose decoder layers take a dense MLP of
    ``config.intermediate_size`` by ``config.mlp_only_layers`` (Qwen3-MoE: ``Qwen3MoeMLP``) are supported.

    Args:
        proxy: the proxy model (float32). kept: its ``kept_experts.json`` {block path: [base expert index]}.
        stats: the base's routing statistics (``proxy_stats``).

    Returns:
        (the dense model, {block path: [proxy expert indices merged]}).

    Raises:
        ValueError: a family or layout this construction does not cover.
    """
    a = adapter_for(proxy.config)
    cfg = copy.deepcopy(proxy.config)
    if not hasattr(cfg, "mlp_only_layers") or a.expert_params != ("gate_up_proj", "down_proj") \
            or a.family not in ("qwen3_moe",):
        raise ValueError(f"dense control: family {a.family} has no dense-MLP layer of the proxy's config")
    blocks = moe_blocks(proxy, a)
    k, inter = int(cfg.num_experts_per_tok), int(cfg.moe_intermediate_size)
    cfg.mlp_only_layers = list(range(int(cfg.num_hidden_layers)))
    cfg.intermediate_size = k * inter
    dense = AutoModelForCausalLM.from_config(cfg)
    sd = {n: t for n, t in proxy.state_dict().items() if not n.startswith(tuple(b.name + "." for b in blocks))}
    chosen: dict = {}
    freq = stats.frequency
    for b in blocks:
        li = stats.blocks.index(b.name)
        f = freq[li, torch.tensor(kept[b.name], dtype=torch.long)]
        idx = sorted(range(len(f)), key=lambda j: (-float(f[j]), j))[:k]
        chosen[b.name] = idx
        gu, down = b.experts.gate_up_proj.detach(), b.experts.down_proj.detach()
        sd[f"{b.name}.gate_proj.weight"] = torch.cat([gu[j, :inter] for j in idx], 0)
        sd[f"{b.name}.up_proj.weight"] = torch.cat([gu[j, inter:] for j in idx], 0)
        sd[f"{b.name}.down_proj.weight"] = torch.cat([down[j] for j in idx], 1) / k
    missing, unexpected = dense.load_state_dict(sd, strict=False)
    missing = [m for m in missing if m != "lm_head.weight" or not cfg.tie_word_embeddings]
    if missing or unexpected:
        raise ValueError(f"dense control: weights missing {missing}, unexpected {unexpected}")
    if cfg.tie_word_embeddings:
        dense.tie_weights()
    return dense, chosen


SUMMARY_FIELDS = (("heldout_loss_proxy", "next_token_acc_proxy", "kl_base_to_proxy", "routing_entropy_proxy",
                   "task_acc_proxy", "params_proxy", "routing_mass_kept_mean", "routing_mass_kept_min")
                  + tuple(f"heldout_loss_proxy/{c}" for c in corpus.CATEGORIES)
                  + tuple(f"kl_base_to_proxy/{c}" for c in corpus.CATEGORIES))


def compare_jobs(cp: dict, pp: dict) -> list[tuple[float, dict, int]]:
    """The select/build/evaluate runs of a comparison, in table order: (keep ratio, method entry,
    seed) for every ratio of ``cp['keep_ratios']``, every method, and every seed of
    ``cp['random_seeds']`` for ``random`` (``pp['seed']`` for the others)."""
    return [(ratio, m, seed) for ratio in cp["keep_ratios"] for m in cp["methods"]
            for seed in (cp["random_seeds"] if m["method"] == "random" else [pp["seed"]])]


class _CompareState:
    """What every run of a comparison reads: the base, its tokenizer, the pooled statistics and
    their meta, the base reference on the held-out windows and the routing share [L, E] of each
    expert (share of a layer's routed slots). ``cal_ids``: the output merge's calibration windows,
    int64 [N, S] (``None`` until needed)."""

    def __init__(self, params: dict, base_ref: str, stats_dir: str | Path, with_reference: bool = True,
                 cal_ids: torch.Tensor | None = None):
        pp, ep = params["prune"], params["eval"]
        self.pp = pp
        torch.set_num_threads(int(pp["threads"]))
        self.model, self.tok, self.model_id, self.revision = load_base(base_ref, params["model"].get("revision"))
        self.stats, self.meta = load_stats(stats_dir, pp["categories"])
        self.ref = BaseReference(self.model, self.tok, eval_windows(self.tok, ep), ep["batch_size"],
                                 ep["task_problems"]) if with_reference else None
        self.E = expert_count(self.model.config, adapter_for(self.model.config))
        self.freq = self.stats.frequency / self.stats.frequency.sum(1, keepdim=True).clamp_min(1e-300)
        self.cal_ids = cal_ids

    def calibration(self) -> torch.Tensor:
        """The output merge's calibration windows (:func:`merge_calibration`), built once."""
        if self.cal_ids is None:
            self.cal_ids = merge_calibration(self.tok, self.pp, self.meta)
        return self.cal_ids

    def run(self, ratio: float, m: dict, seed: int) -> tuple[dict, int]:
        """Select with method entry ``m`` at ``ratio`` (``seed``), build, evaluate: (metrics of
        :func:`metrics.evaluate` + routing mass kept, experts kept per layer)."""
        pp = self.pp
        mp = dict(pp, views=m.get("views", pp["views"]), usage={**pp["usage"], **(m.get("usage") or {})})
        kept, members, _, k = select(self.model, self.stats, ratio, mp, method=m["method"], seed=seed)
        merge = merge_mode({"merge": m.get("merge", COMPARE_METHOD_MERGE)})
        proxy, _ = build_proxy(self.model, kept, members, pp, merge, self.calibration() if merge == "output" else None)
        r = evaluate(self.ref, proxy)
        mass = [float(self.freq[li, list(v)].sum()) for li, v in enumerate(kept.values())]
        r["routing_mass_kept_mean"] = round(sum(mass) / len(mass), 6)
        r["routing_mass_kept_min"] = round(min(mass), 6)
        return r, k


_WORKER: dict = {}  # the comparison state of a spawned worker process (set by _compare_worker_init)


def _compare_worker_init(params: dict, base_ref: str, stats_dir: str, cal_ids) -> None:
    """Initializer of a spawned comparison worker: load the base, statistics and reference once;
    ``cal_ids`` (numpy int64 [N, S] or None) are the parent's calibration windows."""
    _WORKER["state"] = _CompareState(params, base_ref, stats_dir,
                                     cal_ids=None if cal_ids is None else torch.from_numpy(cal_ids))


def _compare_worker_run(i: int, ratio: float, m: dict, seed: int) -> tuple[int, dict, int]:
    return (i, *_WORKER["state"].run(ratio, m, seed))


def run_compare(params: dict, base_ref: str, stats_dir: str | Path, out_table: str | Path,
                metrics_path: str | Path) -> list[dict]:
    """Compare selection methods at every keep ratio (in memory, nothing is saved but metrics).

    Methods from ``params['compare']['methods']``: each {name, method, views?, usage?, merge?}
    (``merge``: none | frequency | output, default none); ``random`` is averaged over
    ``random_seeds`` (each seed a table row).

    ``params['compare']['workers']``: with 1 the runs go one after another in this
    process (the definition); with n > 1, n spawned processes (``params['prune']['threads']``
    torch threads each, each loading the base, statistics and reference once) run them side by
    side, with the output merge's calibration windows built once here and handed to every
    worker. A run does not depend on the runs before it (seeded selection, fresh pruned copy),
    so the table (rows in :func:`compare_jobs` order) and the metrics JSON are byte-identical
    to a one-process run (``tests/test_proxy_compare_workers.py``). A failing run raises (the
    stage stops; a worker that dies raises ``BrokenProcessPool``).
    """
    params = proxy_params(params)
    cp, pp = params["compare"], params["prune"]
    jobs = compare_jobs(cp, pp)
    workers = max(1, min(int(cp["workers"]), len(jobs)))
    bar = tqdm(total=len(jobs), desc="proxy_compare", mininterval=2.0)
    st = _CompareState(params, base_ref, stats_dir, with_reference=workers == 1)
    results: list = [None] * len(jobs)
    if workers == 1:
        for i, (ratio, m, seed) in enumerate(jobs):
            bar.set_postfix_str(f"r{ratio} {m['name']} seed {seed}")
            results[i] = st.run(ratio, m, seed)
            bar.update(1)
    else:
        cal = st.calibration().numpy() if any(merge_mode({"merge": m.get("merge", COMPARE_METHOD_MERGE)}) == "output"
                                               for _, m, _ in jobs) else None
        with ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"),
                                 initializer=_compare_worker_init,
                                 initargs=(params, str(base_ref), str(stats_dir), cal)) as pool:
            futs = [pool.submit(_compare_worker_run, i, *job) for i, job in enumerate(jobs)]
            for fut in as_completed(futs):
                i, r, k = fut.result()
                results[i] = (r, k)
                ratio, m, seed = jobs[i]
                bar.set_postfix_str(f"r{ratio} {m['name']} seed {seed}")
                bar.update(1)
    bar.close()
    sha = stats_sha256(stats_dir)
    rows, summary, accum = [], {}, {}
    for (ratio, m, seed), (r, k) in zip(jobs, results):
        rows.append({"base_model_id": st.model_id, "method": m["name"], "keep_ratio": ratio, "seed": seed,
                     "experts_base": st.E, "experts_kept": k, "stats_sha256": sha, **r})
        accum.setdefault(f"r{ratio}/{m['name']}", []).append(r)
    for key, acc in accum.items():
        summary[key] = {f: round(sum(a[f] for a in acc) / len(acc), 6) for f in SUMMARY_FIELDS if f in acc[0]}
    summary["base"] = {"heldout_loss": rows[0]["heldout_loss_base"], "next_token_acc": rows[0]["next_token_acc_base"],
                       "routing_entropy": rows[0]["routing_entropy_base"], "params": rows[0]["params_base"],
                       "task_acc": rows[0].get("task_acc_base"),
                       **{f"heldout_loss/{c}": rows[0][f"heldout_loss_base/{c}"] for c in corpus.CATEGORIES}}
    summary["winner"] = judge_compare(summary, rows, cp, pp)
    write_parquet(out_table, to_table("proxies", rows))
    atomic_write_json(metrics_path, summary, indent=1)
    return rows
