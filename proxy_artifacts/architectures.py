"""The six MoE families end to end, as a user with a real checkpoint runs them.

For each family of the adapter table (:mod:`adapters`) a tiny random-initialised checkpoint of the
family's real transformers class (:data:`TINY_CONFIGS`: 2-3 layers, hidden 32, the family's router
and expert layout: Qwen2-MoE's shared expert with its gate, DeepSeek-V3's multi-head latent
attention, shared experts and group-limited sigmoid routing with ``e_score_correction_bias``,
gpt-oss's biased router and interleaved gate/up with biases) goes through:

1. ``init``: ``AutoModelForCausalLM.from_config`` + seeded re-draw of every weight (no router ties),
   saved with the byte tokenizer of :mod:`corpus` (``save_pretrained``) and a card declaring its
   licence, and uploaded to the Hub: from here on the base is a Hub id pinned to that commit;
2. ``stats``: :func:`pipeline.run_stats` (streamed expert statistics on the built-in calibration
   categories) of the base loaded by Hub id;
3. ``prune``: :func:`pipeline.run_prune` at keep ``KEEP`` with the ``proxy.prune`` settings
   (selection method and output merge of ``params.yaml``);
4. ``invariants``: :func:`check_invariants`: the proxy against the base, tensor by tensor: every
   non-expert tensor (embeddings, attention incl. MLA, norms, dense layers, lm_head, shared experts) equal
   to the base's, router rows / router bias / correction bias equal to the base's rows of the kept
   experts (``kept_experts.json``), kept experts' tensors equal to the base's kept experts but for the
   down projections the output merge refits, which must be that refit of the base's kept down
   projections; KL(base || proxy) on a few tokens recorded;
5. ``publish``: :func:`hub.publish` to a Hub (the tests and the committed table: the offline stand-in
   :class:`passnet_common.hub_standin.HubStandIn`);
6. ``pull``: :func:`hub.pull` pinned to the published commit, lineage checked against the base id;
7. ``from_pretrained``: plain ``AutoModelForCausalLM.from_pretrained`` of the pulled folder: no
   missing / unexpected / mismatched keys, the kept expert count in the config and in every MoE block,
   logits equal (``torch.testing.assert_close``) to the pruned model written before publishing;
8. ``grpo``: one GRPO step (:func:`rl.run_grpo`, TRL ``GRPOTrainer``, healthy) of the pulled folder
   with a deterministic reward that varies within a group (:func:`completion_hash_reward`: a random
   model earns none of the task reward) and the load-balancing loss off: one optimizer step logged with
   a finite loss, reward spread within groups, gradient norm > 0 and parameter update norm > 0 (the
   policy gradient moved the weights), every MoE layer's expert load over exactly the kept experts,
   finite weights after the step.

Each step's outcome is recorded (``ok``, what was checked, the error if any); a failed step stops
that family. :func:`run_all` writes ``metrics/proxy_architectures.json``; :func:`markdown` renders
its table (``docs/proxies.md``). Command::

    python -m proxy_artifacts.architectures --out metrics/proxy_architectures.json --docs docs/proxies.md
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import math
import os
import sys
import tempfile
import traceback
import zlib
from pathlib import Path
from unittest import mock

import huggingface_hub.constants as hc
import torch
from huggingface_hub import HfApi
from transformers import AutoConfig, AutoModelForCausalLM

from passnet_common.hub_standin import HubStandIn
from passnet_common.io import atomic_write_json
from passnet_common.params import load_params

from . import corpus, rl
from .adapters import adapter_for, expert_count, moe_blocks
from .hub import publish, pull
from .pipeline import merge_calibration, run_prune, run_stats
from .prune import output_merge
from .timing import machine

FAMILY_ORDER = ("qwen3_moe", "qwen2_moe", "olmoe", "mixtral", "deepseek_v3", "gpt_oss")
FAMILY_NAMES = {"qwen3_moe": "Qwen3-MoE", "qwen2_moe": "Qwen2-MoE", "olmoe": "OLMoE", "mixtral": "Mixtral",
                "deepseek_v3": "DeepSeek-V3", "gpt_oss": "gpt-oss"}
STEPS = ("init", "stats", "prune", "invariants", "publish", "pull", "from_pretrained", "grpo")
KEEP = 0.5

_COMMON = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, intermediate_size=48,
               max_position_embeddings=256, pad_token_id=0, bos_token_id=1, eos_token_id=2, tie_word_embeddings=False)

TINY_CONFIGS: dict[str, dict] = {
    "qwen3_moe": dict(num_experts=8, num_experts_per_tok=2, moe_intermediate_size=24, head_dim=8, norm_topk_prob=True),
    "qwen2_moe": dict(num_experts=8, num_experts_per_tok=2, moe_intermediate_size=24, shared_expert_intermediate_size=40,
                      norm_topk_prob=False),
    "olmoe": dict(num_experts=8, num_experts_per_tok=2),
    "mixtral": dict(num_local_experts=8, num_experts_per_tok=2),
    "deepseek_v3": dict(num_hidden_layers=3, n_routed_experts=16, num_key_value_heads=4, num_experts_per_tok=2,
                        moe_intermediate_size=24, n_group=4, topk_group=2, first_k_dense_replace=1, kv_lora_rank=16,
                        q_lora_rank=16, qk_rope_head_dim=8, qk_nope_head_dim=8, v_head_dim=8, n_shared_experts=1,
                        routed_scaling_factor=2.5),
    "gpt_oss": dict(num_local_experts=8, num_experts_per_tok=2, head_dim=8, sliding_window=16),
}
"""Config keys per family on top of ``_COMMON`` (vocabulary: the byte tokenizer's 259 ids)."""

TINY_PARAMS = {
    "stats": {"dataset": "builtin", "categories": ["text", "code", "reverse"], "num_samples": 4, "seq_len": 32,
              "batch_size": 4, "char_tokens_per_batch": 8, "seed": 0, "threads": 1},
    "calibration": {"windows_per_category": 4, "seq_len": 32},
    "grpo": {"steps": 1, "prompts_per_step": 2, "num_generations": 2, "max_completion_length": 4, "eval_problems": 2,
             "seed": 0, "threads": 1, "drop_zero_variance_groups": False},
}
"""Sizes that make one family's run take seconds; every other setting is ``params.yaml``'s ``proxy`` block.
The ``grpo`` step's reward is :func:`completion_hash_reward` (a random model earns none of the task
reward); ``drop_zero_variance_groups`` is off so a group of identical completions does not skip the
batch."""


def tiny_params(proxy_params: dict) -> dict:
    """The ``proxy`` params block with the sizes of :data:`TINY_PARAMS` (a deep copy)."""
    p = copy.deepcopy(proxy_params)
    p["model"] = dict(p.get("model") or {}, revision=None)
    p["stats"] = dict(p["stats"], **TINY_PARAMS["stats"])
    p["prune"] = dict(p["prune"], calibration=dict(p["prune"].get("calibration") or {}, **TINY_PARAMS["calibration"]))
    p["grpo"] = dict(p["grpo"], **TINY_PARAMS["grpo"])
    return p


def save_tiny_base(family: str, folder: str | Path, seed: int = 0) -> dict:
    """Build the tiny random-init ``family`` checkpoint and save it with the byte tokenizer.

    Returns {"model_type", "class", "params", "experts", "top_k", "moe_layers", "shared_experts",
    "router"} of the saved model. Raises ValueError: unknown family.
    """
    if family not in TINY_CONFIGS:
        raise ValueError(f"unknown family {family!r}; known: {sorted(TINY_CONFIGS)}")
    tok = corpus.build_tokenizer()
    cfg = AutoConfig.for_model(family, vocab_size=len(tok), **{**_COMMON, **TINY_CONFIGS[family]})
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(cfg)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g) if "norm" in name else
                    0.3 * torch.randn(p.shape, generator=g))
        for name, b in model.named_buffers():
            if name.endswith("e_score_correction_bias"):
                b.copy_(0.05 * torch.randn(b.shape, generator=g))
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    a = adapter_for(cfg)
    blocks = moe_blocks(model, a)
    return {"model_type": cfg.model_type, "class": type(model).__name__, "params": int(model.num_parameters()),
            "experts": expert_count(cfg, a), "top_k": int(cfg.num_experts_per_tok), "moe_layers": len(blocks),
            "shared_experts": any(getattr(blocks[0].block, s, None) is not None for s in a.shared_attrs),
            "router": f"{a.score_fn}" + (f", group-limited (n_group {cfg.n_group}, topk_group {cfg.topk_group}), "
                                         "e_score_correction_bias" if a.group_keys else "")
            + (", router bias" if "bias" in a.router_params else "")}


KL_TOKENS = (2, 16)
"""Shape of the seeded random token batch the ``invariants`` step measures KL(base || proxy) on."""


def _rel_diff(got: torch.Tensor, want: torch.Tensor) -> float:
    return float((got.double() - want.double()).norm() / want.double().norm().clamp_min(1e-30))


def check_invariants(base_dir: str | Path, proxy_dir: str | Path, merge: str, cal_ids: torch.Tensor | None = None,
                     ridge: float | None = None, refit_tol: float = 1e-4) -> dict:
    """Step ``invariants``: the pruned proxy against its base, tensor by tensor (both loaded with plain
    ``from_pretrained``; the kept experts read from the proxy's ``kept_experts.json``).

    - every tensor outside the routed experts and the routers (embeddings, attention incl. MLA, norms,
      dense layers, lm_head, and the shared experts with their gate where the family has them) is equal
      to the base's (``torch.equal``);
    - every router tensor (router rows, router bias, ``e_score_correction_bias``) equals the base's rows
      of the kept experts, in the kept order;
    - the kept experts' tensors equal the base's kept experts (``merge`` ``none``); with ``output`` merge
      every expert tensor but the down projection (and its bias) equals the base's kept experts, and the
      down projections are what the merge guarantees: :func:`prune.output_merge` run again from the
      base's kept down projections on the same calibration windows (``cal_ids``, ``ridge``) gives them
      (relative L2 difference <= ``refit_tol`` per block, for thread-count rounding); with ``frequency``
      merge the expert tensors are averages of cluster members and are not compared;
    - the proxy has exactly the base's tensor names (no tensor dropped or added).

    Records KL(base || proxy) (nats per token, mean over a seeded :data:`KL_TOKENS` batch of random ids).

    Raises:
        AssertionError: any invariant fails (the message names the first tensors that differ).
    """
    base = AutoModelForCausalLM.from_pretrained(base_dir, dtype=torch.float32).eval()
    proxy = AutoModelForCausalLM.from_pretrained(proxy_dir, dtype=torch.float32).eval()
    a = adapter_for(base.config)
    kept = json.loads((Path(proxy_dir) / "kept_experts.json").read_text())
    bb, pb = moe_blocks(base, a), moe_blocks(proxy, a)
    if [b.name for b in bb] != [b.name for b in pb] or sorted(kept) != sorted(b.name for b in bb):
        raise AssertionError(f"MoE blocks differ: base {[b.name for b in bb]}, proxy {[b.name for b in pb]}, "
                             f"kept_experts.json {sorted(kept)}")
    sb, sp = base.state_dict(), proxy.state_dict()
    if set(sb) != set(sp):
        raise AssertionError(f"tensor names differ: only in base {sorted(set(sb) - set(sp))[:5]}, only in proxy "
                             f"{sorted(set(sp) - set(sb))[:5]}")
    down = {"down_proj"} | ({a.down_bias} if a.down_bias else set())
    routed, router, refit, bad = {}, {}, [], []
    for b in bb:
        idx = torch.tensor(kept[b.name], dtype=torch.long)
        for pn in a.expert_params:
            routed[f"{b.name}.{a.experts_attr}.{pn}"] = (idx, pn)
        for pn in a.router_params:
            router[f"{b.name}.{a.router_attr}.{pn}"] = idx
    for k in list(routed) + list(router):
        if k not in sb:
            raise AssertionError(f"{k} is not a tensor of the base's state dict")
    shared_prefixes = tuple(f"{b.name}.{s}." for b in bb for s in a.shared_attrs)
    counts = {"non_expert": 0, "shared_expert": 0, "router": 0, "expert": 0, "expert_refit": 0}
    for k, t in sb.items():
        if k in routed or k in router:
            continue
        counts["shared_expert" if k.startswith(shared_prefixes) else "non_expert"] += 1
        if not torch.equal(sp[k], t):
            bad.append(f"{k} (not a routed-expert or router tensor) differs from the base's")
    for k, idx in router.items():
        counts["router"] += 1
        if not torch.equal(sp[k], sb[k].index_select(0, idx)):
            bad.append(f"{k} is not the base's rows of the kept experts {idx.tolist()[:8]}...")
    for k, (idx, pn) in routed.items():
        if merge == "frequency" or (merge == "output" and pn in down):
            continue
        counts["expert"] += 1
        if not torch.equal(sp[k], sb[k].index_select(0, idx)):
            bad.append(f"{k} is not the base's kept experts {idx.tolist()[:8]}...")
    if bad:
        raise AssertionError(f"{len(bad)} tensor(s) break the structure-preserving invariants: " + "; ".join(bad[:4]))
    if merge == "output":
        if cal_ids is None or ridge is None:
            raise AssertionError("output merge: the invariants need the merge's calibration windows and ridge")
        want = copy.deepcopy(proxy)
        with torch.no_grad():
            for b, wb in zip(bb, moe_blocks(want, a)):
                idx = torch.tensor(kept[b.name], dtype=torch.long)
                for pn in down:
                    getattr(wb.experts, pn).data.copy_(getattr(b.experts, pn).data.index_select(0, idx))
        output_merge(base, want, cal_ids, float(ridge))
        for pbk, wb in zip(pb, moe_blocks(want, a)):
            for pn in down:
                d = _rel_diff(getattr(pbk.experts, pn).data, getattr(wb.experts, pn).data)
                counts["expert_refit"] += 1
                refit.append(round(d, 9))
                if not d <= refit_tol:
                    raise AssertionError(f"{pbk.name}.{a.experts_attr}.{pn} is not the output merge's refit of the "
                                         f"base's kept experts (relative difference {d:.3g} > {refit_tol})")
    ids = torch.randint(3, base.config.vocab_size, KL_TOKENS, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        lb = torch.log_softmax(base(input_ids=ids).logits.double(), -1)
        lp = torch.log_softmax(proxy(input_ids=ids).logits.double(), -1)
    kl = float((lb.exp() * (lb - lp)).sum(-1).mean())
    return {"tensors_checked": counts, "merge": merge, "down_refit_max_rel_diff": max(refit) if refit else None,
            "kl_base_to_proxy": round(kl, 6), "kl_tokens": list(KL_TOKENS)}


def _check_loaded(pulled: Path, local: Path, kept_count: int) -> dict:
    """Step ``from_pretrained``: plain load of the pulled folder, keys, expert counts, logits."""
    model, info = AutoModelForCausalLM.from_pretrained(pulled, output_loading_info=True)
    bad = {k: v for k, v in info.items() if k in ("missing_keys", "unexpected_keys", "mismatched_keys") and v}
    if bad:
        raise AssertionError(f"load of {pulled} reports {bad}")
    a = adapter_for(model.config)
    counts = sorted({int(getattr(b.experts, a.expert_params[0]).shape[0]) for b in moe_blocks(model, a)})
    if expert_count(model.config, a) != kept_count or counts != [kept_count]:
        raise AssertionError(f"expert count {expert_count(model.config, a)} / block tensors {counts} != {kept_count}")
    ref = AutoModelForCausalLM.from_pretrained(local).eval()
    ids = torch.randint(3, model.config.vocab_size, (2, 12), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        got, want = model.eval()(input_ids=ids).logits, ref(input_ids=ids).logits
    torch.testing.assert_close(got, want)
    return {"class": type(model).__name__, "experts": kept_count, "logits_finite": bool(torch.isfinite(got).all())}


def completion_hash_reward(prompts, completions, **kwargs) -> list[float]:
    """The end-to-end check's reward: crc32 of the completion text mod 1000, over 1000 (in [0, 1)).
    Deterministic and different for different completions, so a group of sampled completions has a
    non-zero advantage unless its completions are identical: the policy-gradient term then reaches
    the parameters of a random model that would earn 0 of the task reward."""
    return [(zlib.crc32(str(c).encode()) % 1000) / 1000.0 for c in completions]


def _check_grpo(pulled: Path, gp: dict, kept_count: int) -> dict:
    """Step ``grpo``: one healthy GRPO step of the pulled folder (:func:`rl.run_grpo`) with
    :func:`completion_hash_reward` in place of the task reward and the load-balancing loss off
    (``aux_loss_coef`` 0), so the step's update is the policy gradient's alone.

    Checks: one row per step, finite loss and gradient norm, reward spread within groups
    (``reward_std`` > 0), gradient norm > 0 and ``update_norm`` (the parameter change, L2) > 0, expert
    load over exactly the kept experts, finite weights after the step.
    """
    # rl.run_grpo reads the module's reward_exact at call time; the check swaps it for the hash reward
    with mock.patch.object(rl, "reward_exact", completion_hash_reward):
        r = rl.run_grpo(pulled, "none", dict(gp, aux_loss_coef=0.0))
    rows = r["steps"]
    if len(rows) != int(gp["steps"]):
        raise AssertionError(f"{len(rows)} step rows, expected {gp['steps']}")
    row = rows[0]
    loss, gn, upd = row.get("loss"), row.get("grad_norm_total"), row.get("update_norm")
    if loss is None or not math.isfinite(loss) or gn is None or not math.isfinite(gn):
        raise AssertionError(f"non-finite loss {loss} or gradient norm {gn}")
    if not (row.get("reward_std") or 0) > 0:
        raise AssertionError(f"reward_std {row.get('reward_std')}: no reward spread within a group")
    if not gn > 0 or upd is None or not upd > 0:
        raise AssertionError(f"gradient norm {gn}, update norm {upd}: the policy gradient did not move the weights")
    loads = row["expert_load"]
    if not loads or any(len(x["load"]) != kept_count for x in loads):
        raise AssertionError(f"expert load rows {[len(x['load']) for x in loads]} != {kept_count} experts")
    if not r["weights_finite_after"]:
        raise AssertionError("weights not finite after the step")
    return {"loss": round(float(loss), 6), "grad_norm_total": round(float(gn), 6),
            "grad_norm_trl": row.get("grad_norm_trl"),
            "update_norm": round(float(upd), 6), "reward": row.get("reward"), "reward_std": row.get("reward_std"),
            "reward_fn": "completion_hash_reward", "aux_loss_coef": 0.0, "moe_layers_logged": len(loads)}


BASE_LICENSE = "apache-2.0"
"""The licence the tiny bases' own Hub cards declare (the proxy card must carry it over)."""


@contextlib.contextmanager
def hub_endpoint(endpoint: str, cache: str | Path):
    """Point ``huggingface_hub`` (and so ``from_pretrained`` of a Hub id) at ``endpoint`` with the Hub
    cache in ``cache``, online, for the duration: ``constants.ENDPOINT``, the resolve-URL template,
    ``HF_HUB_CACHE`` and ``HF_HUB_OFFLINE`` are read at call time (a stand-in Hub in a test process)."""
    names = ("ENDPOINT", "HUGGINGFACE_CO_URL_TEMPLATE", "HF_HUB_CACHE", "HF_HUB_OFFLINE")
    old = {n: getattr(hc, n) for n in names}
    try:
        hc.ENDPOINT = endpoint
        hc.HUGGINGFACE_CO_URL_TEMPLATE = endpoint + "/{repo_id}/resolve/{revision}/{filename}"
        hc.HF_HUB_CACHE = str(cache)
        hc.HF_HUB_OFFLINE = False
        yield
    finally:
        for n, v in old.items():
            setattr(hc, n, v)


def run_family(family: str, proxy_params: dict, work: str | Path, endpoint: str, token: str) -> dict:
    """Run the eight steps (module docstring) for ``family`` under ``work``; stops at the first failure.

    The base is used as a user's real MoE is: ``init`` uploads it (with a card declaring
    :data:`BASE_LICENSE`) to the Hub at ``endpoint``, and ``stats`` / ``prune`` load it by Hub id at
    that commit (``proxy.model.path`` = ``passnet/tiny-<family>-base``, ``proxy.model.revision`` =
    the sha), so the lineage names ``hf:<id>@<sha>`` and the card carries ``base_model`` and the
    base's licence.

    Returns {"family", "name", "steps": {step: {"ok", ...details or "error"}}, "passed" (all eight ok),
    "base" (:func:`save_tiny_base`), "base_id", "merge", "method", "keep_ratio_effective"}.
    """
    work = Path(work)
    p = tiny_params(proxy_params)
    out = {"family": family, "name": FAMILY_NAMES.get(family, family), "steps": {}}
    state: dict = {}
    repo = f"passnet/tiny-{family.replace('_', '-')}-base"

    def init():
        out["base"] = save_tiny_base(family, work / "base")
        (work / "base" / "README.md").write_text(f"---\nlicense: {BASE_LICENSE}\n---\n\nTiny random {family} base.\n")
        api = HfApi(endpoint=endpoint, token=token)
        api.create_repo(repo, exist_ok=True)
        sha = api.upload_folder(repo_id=repo, folder_path=str(work / "base")).oid
        p["model"] = dict(p["model"], path=repo, revision=sha)
        out["base_id"] = f"hf:{repo}@{sha}"
        return {"class": out["base"]["class"], "experts": out["base"]["experts"], "hub_id": repo, "commit": sha}

    def stats():
        meta = run_stats(p, repo, work / "stats")
        state["model_id"] = meta["model_id"]
        return {"categories": meta["categories"], "blocks": len(meta["blocks"]), "model_id": meta["model_id"]}

    def prune():
        run_prune(p, repo, work / "stats", KEEP, work / "proxy")
        lin = json.loads((work / "proxy" / "model" / "lineage.json").read_text())
        state["kept"] = int(lin["experts_kept"])
        out.update(method=lin["method"], merge=lin["merge"], keep_ratio_effective=lin["keep_ratio_effective"])
        return {"experts_kept": lin["experts_kept"], "experts_base": lin["experts_base"], "merge": lin["merge"]}

    def invariants():
        cal, ridge = None, None
        if out.get("merge") == "output":
            meta = json.loads((work / "stats" / "meta.json").read_text())
            cal = merge_calibration(corpus.build_tokenizer(), p["prune"], meta)
            ridge = p["prune"]["calibration"]["ridge"]
        with torch.random.fork_rng(devices=[]):  # loading draws from the global RNG; the later steps see none of it
            return check_invariants(work / "base", work / "proxy" / "model", out.get("merge"), cal, ridge)

    def publish_():
        state["sha"] = publish(work / "proxy" / "model", f"passnet/tiny-{family.replace('_', '-')}-proxy",
                               endpoint=endpoint, token=token)
        return {"commit": state["sha"]}

    def pull_():
        state["pulled"] = pull(f"passnet/tiny-{family.replace('_', '-')}-proxy@{state['sha']}", endpoint=endpoint,
                               token=token, cache_dir=work / "pull_cache", expect_base=state["model_id"])
        return {"lineage_verified": True}

    def load():
        return _check_loaded(state["pulled"], work / "proxy" / "model", state["kept"])

    def grpo():
        return _check_grpo(state["pulled"], p["grpo"], state["kept"])

    with hub_endpoint(endpoint, work / "hub_cache"):
        for step, fn in zip(STEPS, (init, stats, prune, invariants, publish_, pull_, load, grpo)):
            try:
                out["steps"][step] = {"ok": True, **fn()}
            except Exception as exc:  # noqa: BLE001 - recorded per step; the table says which step failed and why
                out["steps"][step] = {"ok": False, "error": f"{type(exc).__name__}: {exc}".splitlines()[0][:400],
                                      "where": traceback.format_exc().strip().splitlines()[-3][:300]}
                break
    out["passed"] = all(out["steps"].get(s, {}).get("ok") for s in STEPS)
    return out


def run_all(proxy_params: dict, families=FAMILY_ORDER, work: str | Path | None = None) -> dict:
    """Every family through :func:`run_family` against one offline Hub stand-in; the metrics dict."""
    token = "hf_standin_token"
    with tempfile.TemporaryDirectory(prefix="proxy_arch_") as tmp, HubStandIn() as hub:
        root = Path(work or tmp)
        fams = {f: run_family(f, proxy_params, root / f, hub.endpoint, token) for f in families}
    return {"keep_ratio": KEEP, "steps": list(STEPS), "families": fams,
            "all_passed": all(f["passed"] for f in fams.values()),
            "hub": "passnet_common.hub_standin.HubStandIn (offline, 127.0.0.1)",
            "sizes": TINY_PARAMS, "machine": machine(), "load_average": [round(x, 2) for x in os.getloadavg()],
            "command": "python -m proxy_artifacts.architectures " + " ".join(sys.argv[1:])}


def _r(v) -> str:
    return "-" if v is None else f"{float(v):.4g}"


def markdown(m: dict) -> str:
    """The family x step table of a :func:`run_all` result (one row per family)."""
    L = ["| family | class | experts (base -> proxy), top-k | shared experts | router | merge | "
         + " | ".join(STEPS) + " | KL(base \\|\\| proxy), nats/token | GRPO step: reward mean / std, grad norm "
         "before clipping, update norm |",
         "|---" * (6 + len(STEPS) + 2) + "|"]
    for f in m["families"].values():
        b = f.get("base") or {}
        st = f["steps"]
        cells = ["ok" if st.get(s, {}).get("ok") else ("FAILED" if s in st else "-") for s in STEPS]
        g = st.get("grpo", {})
        kl = st.get("invariants", {}).get("kl_base_to_proxy") if st.get("invariants", {}).get("ok") else None
        L.append(f"| {f['name']} | `{b.get('class')}` | {b.get('experts')} -> {st.get('prune', {}).get('experts_kept')}, "
                 f"{b.get('top_k')} | {'yes' if b.get('shared_experts') else 'no'} | {b.get('router')} | "
                 f"{f.get('merge')} | " + " | ".join(cells) + f" | {_r(kl)}"
                 + (f" | {_r(g.get('reward'))} / {_r(g.get('reward_std'))}, {_r(g.get('grad_norm_trl'))}, "
                    f"{_r(g.get('update_norm'))} |" if g.get("ok") else " | - |"))
    return "\n".join(L) + f"\n\n(from `metrics/proxy_architectures.json`, written by `{m['command'].strip()}`)\n"


BEGIN, END = "<!-- proxy_architectures -->", "<!-- /proxy_architectures -->"


def render_docs(doc: str | Path, m: dict) -> bool:
    """Replace the lines between :data:`BEGIN` and :data:`END` of ``doc`` with :func:`markdown`;
    True when the file changed. Raises ValueError: the markers are absent."""
    doc = Path(doc)
    text = doc.read_text()
    if BEGIN not in text or END not in text:
        raise ValueError(f"{doc} has no {BEGIN} ... {END} block")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = f"{head}{BEGIN}\n{markdown(m)}{END}{tail}"
    if new != text:
        doc.write_text(new)
    return new != text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--out", default="metrics/proxy_architectures.json")
    ap.add_argument("--docs", help="markdown file with the table block to re-render (docs/proxies.md)")
    ap.add_argument("--families", nargs="*", default=list(FAMILY_ORDER))
    ap.add_argument("--render-only", action="store_true", help="render --docs from --out; run nothing")
    a = ap.parse_args(argv)
    if a.render_only:
        m = json.loads(Path(a.out).read_text())
    else:
        torch.set_num_threads(1)
        m = run_all(load_params(a.params, "proxy"), a.families)
        atomic_write_json(a.out, m, indent=1)
    if a.docs:
        render_docs(a.docs, m)
    print(markdown(m))
    return 0 if m["all_passed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
