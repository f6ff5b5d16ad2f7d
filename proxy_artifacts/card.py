"""The model card of a proxy (``README.md``: YAML metadata + markdown), from what is recorded.

Written twice in a proxy's life: by :func:`checkpoint.write_proxy` when the proxy is pruned (lineage
and the prune metrics: no RL has run yet), and by :func:`hub.publish` with the fidelity figures of
``metrics/fidelity.json`` (accuracy before / after RL, fault detection and reproduction rates beside
the base's and, for a proxy the negative controls were measured against, the controls') when they
exist. Every figure on the card is read from those records; a figure that is not recorded is said to
be missing, never guessed. The readers of the fidelity record look keys up by pattern (``*before*`` /
``*after*`` pairs, ``rates.models.<name>.<fault>``) and take the control names and verdicts from the
record's ``controls.<proxy>`` block (:func:`controls_of`), so a record that gains keys, models or
controls is rendered as it is. A proxy without a block of its own gets no control columns: its card
names the controls of the record and the proxy they were measured against.

Metadata (the Hub's model-card spec, ``huggingface/hub-docs`` ``modelcard.md``; ``ModelCardData``
itself validates none of it, the Hub does on push): ``library_name``, ``tags``, ``pipeline_tag``,
``license`` (the base's, read from its card; ``other`` + ``license_name`` when it is not an identifier
the Hub lists, or not known) with ``license_link`` whenever it is ``other`` and a link exists (the
base card's own, the builtin base's licence, else the Hub base's card at its revision; a local base
of unknown origin has none, and the card says so), ``base_model`` (must be a Hub repo id: from an
``hf:`` base id, or given at publish time for a local base whose weights the Hub repo holds,
:func:`hub.publish`). A card without ``base_model`` says why in its body (:func:`base_model_line`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Mapping

from huggingface_hub import ModelCard, ModelCardData, constants, hf_hub_download

from .adapters import ADAPTERS

# licence identifiers of the Hub's list that bases of the supported families use; others go to license_name
HUB_LICENSES = {"apache-2.0", "mit", "llama2", "llama3", "llama3.1", "llama3.2", "llama3.3", "gemma", "openrail",
                "cc-by-4.0", "cc-by-sa-4.0", "cc-by-nc-4.0", "bsd-3-clause", "gpl-3.0", "other"}

BUILTIN_LICENSE = {"license": "other", "license_name": "psf-2.0",
                   "license_link": "https://docs.python.org/3/license.html"}
"""The builtin base (``local:``, trained here on CPython standard-library text and code)."""

TASK_TEXT = {"reverse": "reverse a lower-case word: `Q: rev(word)=? A: drow` (greedy exact match)"}


def builtin_training_record(base_dir) -> dict | None:
    """What identifies the builtin base: its ``train_log.json`` (written only by
    :func:`base_model.train_base`) reduced to ``model_type``, ``corpus_sha256``, ``steps`` and ``task``;
    None for a folder without one (a user's local checkpoint) or a Hub id."""
    f = Path(str(base_dir)) / "train_log.json"
    if not f.is_file():
        return None
    try:
        log = json.loads(f.read_text())
    except (OSError, ValueError):
        return None
    rec = {k: log.get(k) for k in ("model_type", "corpus_sha256", "steps", "task")}
    return rec if rec["corpus_sha256"] and rec["steps"] else None


def license_meta(lineage: Mapping) -> dict:
    """The ``license`` metadata of the card.

    - ``lineage['base_license']`` (the base's own card, :func:`base_license_from_hub`): a mapping
      ``{license, license_name, license_link}`` or a bare identifier; an identifier of
      :data:`HUB_LICENSES` is kept (with the card's ``license_name`` / ``license_link`` when it is
      ``other``), any other becomes ``other`` + ``license_name``;
    - the builtin base's (:data:`BUILTIN_LICENSE`) only when ``lineage['base_training']`` records the
      builtin training run (:func:`builtin_training_record`: a ``train_log.json`` with the corpus hash)
      on the same corpus the lineage's calibration names;
    - else ``other`` + ``license_name: unknown`` (a local checkpoint of unknown origin).

    ``license: other`` comes with ``license_link`` (the spec asks for both) whenever one exists: the
    base card's own link, else for a Hub base its card at the pinned revision (:func:`hub_card_link`,
    where its terms are); a local base of unknown origin has no link (the card's licence line says so).
    """
    lic = lineage.get("base_license")
    link = hub_card_link(str(lineage.get("base_model_id", "")))
    if isinstance(lic, Mapping) and lic.get("license"):
        name = str(lic["license"])
        if name not in HUB_LICENSES:
            return {"license": "other", "license_name": name, **({"license_link": link} if link else {})}
        out = {"license": name}
        if name == "other":
            out["license_name"] = str(lic.get("license_name") or "unknown")
            if lic.get("license_link") or link:
                out["license_link"] = str(lic.get("license_link") or link)
        return out
    if lic and not isinstance(lic, Mapping):
        return {"license": lic} if lic in HUB_LICENSES and lic != "other" else {
            "license": "other", "license_name": "unknown" if lic == "other" else str(lic),
            **({"license_link": link} if link else {})}
    tr = lineage.get("base_training") or {}
    cal = lineage.get("calibration") or {}
    if (str(lineage.get("base_model_id", "")).startswith("local:") and tr.get("corpus_sha256")
            and tr.get("corpus_sha256") == cal.get("corpus_sha256")):
        return dict(BUILTIN_LICENSE)
    return {"license": "other", "license_name": "unknown"}


def hub_card_link(base_id: str) -> str | None:
    """The URL of a Hub base's card at its pinned revision (``hf:<repo>@<revision>`` ->
    ``<endpoint>/<repo>/blob/<revision>/README.md``, endpoint ``huggingface_hub.constants.ENDPOINT``:
    ``HF_ENDPOINT`` or the Hub); None for a local base."""
    if not base_id.startswith("hf:"):
        return None
    repo, _, rev = base_id[3:].partition("@")
    return f"{constants.ENDPOINT.rstrip('/')}/{repo}/blob/{rev or 'main'}/README.md"


def base_model_line(base: str, hub_base: str | None) -> str:
    """The card's line on the ``base_model`` metadata: the Hub id it names, or why there is none (the
    spec takes only a Hub repo id, and a local base is not one)."""
    if hub_base:
        return (f"- base on the Hub: `{hub_base}` (`base_model` metadata"
                + ("" if base.startswith("hf:") else "; given at publish time, its weights checked against this "
                                                       "proxy's base") + ")\n")
    return (f"- no `base_model` metadata: the base is a local folder (`{base}`: sha256 of its weights), and the "
            "Hub's `base_model` takes only a Hub repo id; `python -m proxy_artifacts publish ... --base-model "
            "<owner/name>` adds it once the base is on the Hub (publish checks that repo's weights)\n")


def base_license_from_hub(base_id: str) -> dict | None:
    """The licence metadata of a Hub base's own card (``hf:<repo>@<revision>``: its ``README.md``
    metadata at that revision): ``{license, license_name, license_link}`` (the last two only when the
    card has them); None for a local base, a card without a licence, or no network."""
    if not base_id.startswith("hf:"):
        return None
    repo, _, rev = base_id[3:].partition("@")
    try:
        data = ModelCard.load(hf_hub_download(repo, "README.md", revision=rev or None)).data
    except Exception:  # noqa: BLE001 - offline, gated, no card: the card then says the licence is not known
        return None
    lic = getattr(data, "license", None)
    if not lic:
        return None
    out = {"license": lic}
    for k in ("license_name", "license_link"):
        v = getattr(data, k, None)
        if v:
            out[k] = v
    return out


def chance_level(task: str | None, lengths) -> float | None:
    """Exact-match chance of the reversal task: an answer drawn uniformly from the 26^n lower-case
    strings of the right length, averaged over the word lengths of the set. ``lengths`` is the
    recorded ``[lo, hi]`` (inclusive range, lengths uniform: ``corpus.IN_RANGE_LEN`` / ``EDGE_LEN``
    as ``train_log.json`` / ``metrics/proxy_base.json`` record them). None: other tasks or lengths
    not recorded."""
    if task != "reverse" or not lengths or len(lengths) != 2:
        return None
    lo, hi = int(lengths[0]), int(lengths[1])
    ns = range(lo, hi + 1)
    return sum(26.0 ** -n for n in ns) / len(ns)


def task_sets(bm: Mapping) -> dict[str, dict]:
    """Per task set of the base metrics (``metrics/proxy_base.json``): ``{set: {acc, n, lengths}}``
    from ``task_acc_<set>`` keys (``task_acc_heldout`` / ``task_acc_edge``), ``task_problems`` (or a
    per-set mapping) and ``task_lengths[<set>]``; a figure not recorded is None."""
    out = {}
    for k, v in bm.items():
        if not (k.startswith("task_acc_") and isinstance(v, (int, float))):
            continue
        name = k[len("task_acc_"):]
        n = bm.get("task_problems")
        n = n.get(name) if isinstance(n, Mapping) else n
        lens = bm.get("task_lengths")
        lens = lens.get(name) if isinstance(lens, Mapping) else None
        out[name] = {"acc": v, "n": n, "lengths": lens}
    return out


def _fmt(v) -> str:
    if isinstance(v, Mapping) and "mean" in v:
        ci = v.get("ci95")
        return f"{_fmt(v['mean'])}" + (f" [{ci[0]:.4g}, {ci[1]:.4g}]" if ci else "") + (
            f" (n {v['n']})" if "n" in v else "")
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, list) and v and all(isinstance(x, (int, float)) for x in v):
        m = sum(v) / len(v)
        return f"{m:.4g} (mean of {len(v)} seeds, {min(v):.4g}-{max(v):.4g})"
    return str(v)


def before_after(d: Mapping) -> list[tuple[str, object, object]]:
    """(name, before, after) for every key pair ``<x>before<y>`` / ``<x>after<y>`` of ``d`` and of its
    ``capability`` block (the fidelity record's per-model RL figures)."""
    out = []
    cap = d.get("capability")
    if isinstance(cap, Mapping):
        d = {**{k: v for k, v in d.items() if k != "capability"}, **cap}
    for k in sorted(d):
        if "before" in k and k.replace("before", "after") in d:
            out.append((k.replace("_before", "").replace("before_", "").replace("before", ""), d[k],
                        d[k.replace("before", "after")]))
    return out


def interval_includes_zero(v: Mapping) -> bool:
    """True when a ``{"mean", "ci95": [lo, hi]}`` figure's interval contains 0 (no measurable change);
    False without an interval."""
    ci = v.get("ci95") if isinstance(v, Mapping) else None
    return bool(ci) and ci[0] <= 0 <= ci[1]


def control_signature_matches(models: Mapping, controls: list[str], faults: list[str]
                              ) -> list[tuple[str, list[tuple[str, Mapping]]]]:
    """For each fault, the controls whose signature reproduces the base's on at least one seed
    (``rates.models.<control>.<fault>.reproduction.k`` > 0): [(fault, [(control, rate), ...]), ...] in
    fault order, faults without such a control left out."""
    out = []
    for f in faults:
        cs = [(c, r) for c in controls
              if isinstance(r := (models.get(c) or {}).get(f, {}).get("reproduction"), Mapping) and r.get("k", 0) > 0]
        if cs:
            out.append((f, cs))
    return out


def _rate(r) -> str:
    if not isinstance(r, Mapping) or "k" not in r:
        return "-"
    ci = r.get("ci95")
    return f"{r['k']}/{r['n']}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def _score(e) -> str:
    """A model's magnitude score cell of a ``controls`` block entry: ``k/n [ci] pass|fail``."""
    if not isinstance(e, Mapping) or not isinstance(e.get("score"), Mapping):
        return "-"
    return _rate(e["score"]) + (" pass" if e.get("passes") else " fail")


CONTROL_KIND_TEXT = {"random_experts": "experts chosen uniformly at random, no merge",
                     "random_output_merge": "the same random experts with the output-space merge",
                     "reinit": "this proxy's architecture with re-initialised weights",
                     "dense": "a dense model of this proxy's active size: per layer one MLP, the mean of its top-k "
                              "most-routed experts"}
"""What a control of each kind of ``controls.CONTROL_KINDS`` is (a control model is named
``control_<kind>``); a control of another name is named on the card without a description."""

HEALTHY = "none"
"""The fault name of the healthy runs (no fault injected) in the ``controls`` block."""


def is_control(model: str) -> bool:
    """A control model of a fidelity record without a ``controls`` block: ``control*`` / ``*random*``."""
    return "control" in model or "random" in model


def controls_of(fidelity: Mapping, name: str) -> tuple[list[str], dict[str, list[str]], list[str]]:
    """Which control models of the fidelity record were measured against proxy ``name``.

    With a ``controls`` block (``metrics/fidelity.json``: {proxy: {"controls": [names], ...}}, written by
    :func:`controls.control_verdicts` for the proxy of ``proxy.fidelity.controls.keep_ratio`` only) the
    block of ``name`` says it; without one a control model of ``rates.models`` counts only when its name
    starts with ``<name>_``.

    Returns (this proxy's control names in the record's order, {other proxy: its control names},
    [control models of a record without a ``controls`` block that name no proxy]).
    """
    blocks = fidelity.get("controls")
    if isinstance(blocks, Mapping) and blocks:
        own = blocks.get(name) if isinstance(blocks.get(name), Mapping) else {}
        others = {p: list(b.get("controls") or []) for p, b in sorted(blocks.items())
                  if p != name and isinstance(b, Mapping)}
        return list(own.get("controls") or []), others, []
    models = sorted(((fidelity.get("rates") or {}).get("models") or {}))
    mine = [m for m in models if m.startswith(f"{name}_") and is_control(m)]
    proxies = set(fidelity.get("proxies") or {}) | {m for m in models if not is_control(m)} | {name}
    loose = [m for m in models if is_control(m) and not any(m.startswith(f"{p}_") for p in proxies)]
    return mine, {}, loose


def _control_text(c: str) -> str:
    kind = c[len("control_"):] if c.startswith("control_") else c
    return f"`{c}`" + (f" ({CONTROL_KIND_TEXT[kind]})" if kind in CONTROL_KIND_TEXT else "")


def _keep_text(proxy: str) -> str:
    """``"keep-0.5 "`` for a proxy named ``r0.5`` (the pipeline's ``r<keep ratio>`` names), else ``""``."""
    return f"keep-{proxy[1:]} " if re.fullmatch(r"r\d*\.?\d+", proxy) else ""


def _seed_cells(score) -> str:
    """``k/n`` per seed of a magnitude score's ``by_seed`` in seed order (``"6/6, 2/6, 6/6"``); ``-`` without."""
    bs = (score or {}).get("by_seed") if isinstance(score, Mapping) else None
    if not bs:
        return "-"
    return ", ".join(f"{k}/{n}" for _, (k, n) in sorted(bs.items(), key=lambda x: int(x[0])))


def _ahead_text(controls_row: Mapping, name: str) -> str:
    """`` (seeds where <name> matched more cells: <control> i of n, ...)`` of one fault's control entries."""
    parts = [f"{c} {e['seeds_proxy_ahead'][0]} of {e['seeds_proxy_ahead'][1]}" for c, e in controls_row.items()
             if isinstance(e, Mapping) and e.get("seeds_proxy_ahead")]
    return f" (seeds where {name} matched more cells than the control: " + ", ".join(parts) + ")" if parts else ""


def per_seed_lines(cblk: Mapping, name: str, controls: list[str], faults: list[str]) -> list[str]:
    """The per-seed magnitude cells of a ``controls`` block (``score.by_seed`` of the proxy and of each
    control, and ``seeds_proxy_ahead``) as a table, with the caveat that the cells are not independent.
    A block without per-seed counts says so."""
    cf = cblk.get("faults") or {}
    have = any(isinstance(((cf.get(f) or {}).get("proxy") or {}).get("score"), Mapping)
               and cf[f]["proxy"]["score"].get("by_seed") for f in faults)
    caveat = ("The (seed, quantity) cells are not independent draws: the quantities of one run share its seed "
              "(prompts, sampling), so the distance test pairs runs, not cells, and with 3 seeds its per-fault "
              "interval is wide. What separates the proxy from a control is how many seeds do")
    if not have:
        return ["", caveat + "; this record holds no per-seed counts (`score.by_seed`), so the card cannot say how "
                "many."]
    head = ["fault", f"{name} cells matched per seed"] + [f"{c} cells matched per seed" for c in controls] + [
        f"seeds where {name} matched more cells than {c}" for c in controls]
    L = ["", caveat + ": the last columns count them (a seed counts when the proxy's share of that run's cells is "
         "above the control's; `controls." + name + ".faults.<fault>.controls.<control>.seeds_proxy_ahead`).", "",
         "| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for f in faults:
        row = cf.get(f)
        if not isinstance(row, Mapping):
            continue
        cs = row.get("controls") or {}
        ahead = [(cs.get(c) or {}).get("seeds_proxy_ahead") for c in controls]
        L.append("| " + " | ".join([f, _seed_cells((row.get("proxy") or {}).get("score"))]
                                   + [_seed_cells((cs.get(c) or {}).get("score")) for c in controls]
                                   + [f"{a[0]} of {a[1]}" if a else "-" for a in ahead]) + " |")
    return L


def fault_summary(fidelity: Mapping, name: str) -> str | None:
    """One sentence: of the faults the base shows by signature (the fault table's faults, ``+fix`` runs and
    ``no_signature_on_base`` left out), how many proxy ``name`` reproduces by signature on every seed, on
    some and on none (``rates.models.<name>.<fault>.reproduction``), and, with a ``controls`` block of its
    own, which it reproduces beyond the controls on magnitudes. None when the record has no rates for it."""
    models = (fidelity.get("rates") or {}).get("models") or {}
    mine = models.get(name)
    if not isinstance(mine, Mapping):
        return None
    no_sig = set((fidelity.get("rates") or {}).get("no_signature") or fidelity.get("no_signature_on_base") or [])
    fdef = fidelity.get("faults")
    names = set(fdef) if isinstance(fdef, Mapping) else set((models.get("base") or {}))
    shown = sorted(f for f in names if "+" not in f and f != HEALTHY and f not in no_sig)
    every, some, none = [], [], []
    for f in shown:
        r = (mine.get(f) or {}).get("reproduction")
        if not isinstance(r, Mapping) or not r.get("n"):
            none.append(f"`{f}` (not run)")
        elif r["k"] == r["n"]:
            every.append(f"`{f}`")
        elif r["k"] > 0:
            some.append(f"`{f}` {r['k']}/{r['n']}")
        else:
            none.append(f"`{f}`")
    out = (f"of the {len(shown)} faults the base shows by signature (`metrics/fidelity.json`), this proxy reproduces "
           f"{len(every)} on every seed ({', '.join(every) or '-'}), {len(some)} on some seeds ({', '.join(some) or '-'}) "
           f"and {len(none)} on none ({', '.join(none) or '-'})")
    blk = (fidelity.get("controls") or {}).get(name) if isinstance(fidelity.get("controls"), Mapping) else None
    if isinstance(blk, Mapping) and blk.get("reproduces") is not None:
        beyond = [f for f in blk["reproduces"] if f != HEALTHY]
        out += (f"; beyond its negative controls on magnitudes: {len(beyond)} "
                f"({', '.join(f'`{f}`' for f in beyond) or '-'})")
    else:
        out += ("; no negative control was measured against it, so these rates do not show that a bad proxy "
                "would fail them")
    return out


def fidelity_section(fidelity: Mapping, name: str) -> str:
    """Markdown of the fidelity record for proxy ``name``: accuracy before / after RL of the base and
    the proxy, and per fault the detection rate of the base, the base's self-reproduction, this proxy's
    detection and reproduction, and the control columns of the controls measured against this proxy
    (:func:`controls_of`): each control's reproduction and, from the ``controls`` block, every model's
    magnitude score with its pass / fail verdict and whether the proxy reproduces the fault beyond its
    controls; the block's healthy row ``none`` is a row of the table like every fault. Controls measured
    against another proxy are named with where they are in the record, never shown as this proxy's."""
    L = []
    models = {m: {f: v for f, v in d.items() if isinstance(v, Mapping)}
              for m, d in ((fidelity.get("rates") or {}).get("models") or {}).items()}
    prox = (fidelity.get("proxies") or {}).get(name) or {}
    base = fidelity.get("base") or {}
    rows = [("base", base), (name, prox)]
    ba = [(m, before_after(d)) for m, d in rows if d]
    if any(x for _, x in ba):
        L += ["", "RL before / after (healthy runs; `metrics/fidelity.json`):", "",
              "| model | figure | before RL | after RL |", "|---|---|---|---|"]
        for m, pairs in ba:
            L += [f"| {m} | {k} | {_fmt(b)} | {_fmt(a)} |" for k, b, a in pairs]
    gains, no_gain = [], []
    for m, d in rows:
        cap = d.get("capability") if isinstance(d.get("capability"), Mapping) else d
        if isinstance(cap.get("rl_gain_edge"), Mapping):
            gains.append(f"{m} {_fmt(cap['rl_gain_edge'])}")
            if interval_includes_zero(cap["rl_gain_edge"]):
                no_gain.append(m)
    if gains:
        L += ["", "RL gain on the edge task set (sampled reward after - before, points, mean [95% t interval] over "
                  "healthy seeds): " + "; ".join(gains) + "."]
        if no_gain:
            L += ["", ("Both intervals include" if len(no_gain) == 2 and len(gains) == 2 else
                       "The interval of " + ", ".join(no_gain) + " includes")
                  + " 0: in this build RL did not measurably raise the edge reward of "
                  + " or ".join(no_gain) + ", so these runs show how training behaves (the faults below), not "
                  "that the proxy learns as the base does. Whether longer RL raises it is the question of the "
                  "longer study `benchmarks/proxy_rl_study.py` (more steps and seeds; its figures are not part of "
                  "this record)."]
    controls, other_controls, loose = controls_of(fidelity, name)
    blocks = fidelity.get("controls") if isinstance(fidelity.get("controls"), Mapping) else {}
    cblk = blocks.get(name) if isinstance(blocks.get(name), Mapping) else None
    cfaults = (cblk or {}).get("faults") or {}
    fdef = fidelity.get("faults")
    fault_info = fdef if isinstance(fdef, Mapping) else {}
    faults = sorted(f for f in set(fdef or {f for m in models.values() for f in m}) | set(cfaults)
                    if "+" not in f and f != HEALTHY)
    if HEALTHY in cfaults:
        faults.insert(0, HEALTHY)
    if models and faults:
        self_rates = (fidelity.get("rates") or {}).get("base_self") or {}
        no_sig = set((fidelity.get("rates") or {}).get("no_signature") or fidelity.get("no_signature_on_base") or [])
        kinds = fidelity.get("fault_kinds") or {}
        with_fix = any(isinstance(v, Mapping) and "fix_rate" in v for v in fault_info.values())
        head = ["fault (signature)", "base detection", "base self-reproduction", f"{name} detection",
                f"{name} reproduction"] + [f"{c} reproduction (control)" for c in controls] + (
            [f"{name} magnitude score"] + [f"{c} magnitude score (control)" for c in controls]
            + [f"{name} reproduces beyond the controls"] if cblk else []) + (
            ["fix", "base with the fix"] if with_fix else [])
        L += ["", "Faults (k of n seeds, 95% Wilson interval; a proxy reproduces a fault when its signature on seed "
                  "s matches the base's" + ("; a control's match on the same rule is in its column beside it"
                                            if controls else "") + "):", "",
              "| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
        for f in faults:
            label = (f"{HEALTHY} (healthy runs, no fault injected; judged on magnitudes only)" if f == HEALTHY
                     else f"{f} ({', '.join(kinds.get(f, [])) or '-'})" + (" - no signature on the base"
                                                                           if f in no_sig else ""))
            cells = [label, _rate((models.get("base") or {}).get(f, {}).get("detection")), _rate(self_rates.get(f)),
                     _rate((models.get(name) or {}).get(f, {}).get("detection")),
                     _rate((models.get(name) or {}).get(f, {}).get("reproduction"))]
            cells += [_rate((models.get(c) or {}).get(f, {}).get("reproduction")) for c in controls]
            if cblk:
                row = cfaults.get(f) or {}
                cells += [_score(row.get("proxy"))] + [_score((row.get("controls") or {}).get(c)) for c in controls]
                cells.append(str(row.get("reproduces", "-")))
            if with_fix:
                fi = fault_info.get(f) or {}
                cells += [str(fi.get("fix", "-")).replace("|", "/"),
                          "-" if fi.get("fix_run_exists") is False else _rate(fi.get("fix_rate"))]
            L.append("| " + " | ".join(cells) + " |")
        if cblk:
            rule = cblk.get("rule") or {}
            share, min_score = rule.get("min_seed_share"), rule.get("min_score")
            L += ["", "Magnitude score: share of (seed, quantity) cells (reward, entropy, KL, gradient norm before "
                      "clipping, log-prob mismatch on fresh rollouts; not the update norm, which Adam makes alike for "
                      "every model of one shape) within the base's seed-to-seed tolerance of the base's run, k/n [95% "
                      "Wilson interval], pass / fail of the fidelity test. A model passes a fault when its score is at "
                      "least `min_score`" + (f" ({min_score:g})" if min_score is not None else "")
                  + " and, for a fault with a signature, its signature also reproduces the base's on at least "
                    "`min_seed_share`" + (f" ({share:g})" if share is not None else "") + " of the seeds "
                    "(`proxy.fidelity.controls`): two equal scores can be a pass and a fail when one model's "
                    "signature reproduces and the other's does not. A proxy reproduces a fault beyond its "
                    "controls when it passes and it is closer to the base than every control that ran the fault: "
                    "the 95% t interval of the paired difference of run magnitude distances (per cell |model - base| "
                    "/ tolerance, capped, averaged per run; control minus proxy, seed by seed) lies above 0 and its "
                    "mean is at least `min_effect`. A `+fix` row no control ran is judged on the proxy alone"
                  + (", and one draw of a random control is one draw (another draw can sit closer to the base)"
                     if any("random" in c for c in controls) else "")
                  + ". The healthy row `none` has no signature: its verdicts are magnitudes "
                    "only. Controls measured against this proxy, with its expert count (`metrics/fidelity.json` "
                    f"`controls.{name}.controls`): " + ", ".join(_control_text(c) for c in controls) + "."]
            L += per_seed_lines(cblk, name, controls, faults)
            if cblk.get("reproduces") is not None:
                L += ["", f"Reproduced beyond the controls on magnitudes (`controls.{name}.reproduces`): "
                      + (", ".join(f"`{f}`" + (" (the healthy runs)" if f == HEALTHY else "")
                                   + _ahead_text((cfaults.get(f) or {}).get("controls") or {}, name)
                                   for f in cblk["reproduces"]) or "none") + "."]
            overall = {c: o for c, o in (cblk.get("overall") or {}).items() if isinstance(o, Mapping)}
            if overall:
                L += ["", f"Pooled over every fault a control ran (`controls.{name}.overall`), the mean run distance "
                      f"difference, control minus {name} (positive: {name} is closer to the base), with its 95% "
                      "interval over the paired runs: " + "; ".join(
                          f"{c} {o['mean']:+.3f} [{o['ci95'][0]:+.3f}, {o['ci95'][1]:+.3f}]" for c, o in overall.items())
                      + "."]
            sig = control_signature_matches(models, controls, faults)
            if sig:
                L += ["", "By signature alone the controls also reproduce faults: "
                      + "; ".join(f"`{f}` (" + ", ".join(f"{c} {_rate(r)}" for c, r in cs) + ")" for f, cs in sig)
                      + ". For these a signature match alone does not tell the proxy from a control; the magnitude "
                        "score does."]
        elif controls:
            L += ["", "Controls measured against this proxy (named `<proxy>_...` in `metrics/fidelity.json` "
                      "`rates.models`; the record has no `controls` block, so no magnitude scores): "
                  + ", ".join(f"`{c}`" for c in controls) + "."]
        for p, cs in other_controls.items():
            L += ["", f"No negative control was measured against this proxy. The record's controls "
                      f"({', '.join(f'`{c}`' for c in cs)}) were measured against the {_keep_text(p)}proxy `{p}` "
                      "(`proxy.fidelity.controls.keep_ratio` of `params.yaml`), with its expert count: their "
                      f"verdicts are in `metrics/fidelity.json` under `controls.{p}` (reproduction rates under "
                      f"`rates.models.<control>`) and on `{p}`'s card. They are not columns of this table, and these "
                      "rates do not show that a bad proxy of this proxy's expert count would fail them."]
        if loose:
            L += ["", "The record's control models " + ", ".join(f"`{c}`" for c in loose) + " name no proxy and "
                      "the record has no `controls` block saying which proxy they were measured against: their "
                      "rates (`metrics/fidelity.json` `rates.models.<control>`) are not shown as this proxy's, and "
                      "these rates do not show that a bad proxy would fail them."]
        if not controls and not other_controls and not loose:
            L += ["", "No control model (random-expert proxy, random weights) is in this fidelity record, so these "
                      "rates do not show that a bad proxy would fail them."]
        fp = fidelity.get("false_positive_rate_heldout") or {}
        if fp:
            L += ["", "Detector false-positive rate on held-out healthy runs, per signature kind: "
                  + ", ".join(f"{k} {v}" for k, v in sorted(fp.items())) + "."]
    return "\n".join(L)


def card_text(lineage: Mapping, metrics: Mapping | None = None, *, fidelity: Mapping | None = None,
              proxy_name: str | None = None, base_metrics: Mapping | None = None,
              base_model: str | None = None, base_metrics_name: str | None = None) -> str:
    """The card (YAML metadata + markdown) of a proxy via ``huggingface_hub.ModelCard``.

    Args:
        lineage: the proxy's ``lineage.json`` content (family, base id, method, keep ratios, calibration).
        metrics: the prune metrics (``metrics/proxy_r<ratio>.json``-shaped; ``task_acc_base`` /
            ``task_acc_proxy`` etc. rendered when present).
        fidelity / proxy_name: ``metrics/fidelity.json`` and this proxy's name in it (``r0.5``).
        base_metrics: ``metrics/proxy_base.json`` (task name, lengths, held-out accuracy of the base);
            ``base_metrics_name``: the file they were read from, named on the card (default
            ``metrics/proxy_base.json``).
        base_model: Hub id of the base for the metadata when the lineage's base id is local.
    """
    base = str(lineage["base_model_id"])
    hub_base = base_model or (base[3:].split("@")[0] if base.startswith("hf:") else None)
    lic = license_meta(lineage)
    data = ModelCardData(library_name="transformers", pipeline_tag="text-generation",
                         tags=["moe", "expert-pruning", "proxy-model", "passnet"], base_model=hub_base, **lic)
    fam = lineage.get("family")
    row = ADAPTERS.get(fam)
    req, eff = lineage["keep_ratio_requested"], lineage["keep_ratio_effective"]
    mtp = int(lineage.get("mtp_layers_base", 0) or 0)
    merge = lineage.get("merge", "none") or "none"
    if row is None:
        kept_parts = "backbone, attention, norms and the router mechanism are the base model's"
    elif row.shared_experts:
        kept_parts = ("backbone, attention, norms, the shared experts (never pruned) and the router mechanism are "
                      "the base model's")
    else:
        kept_parts = (f"backbone, attention, norms and the router mechanism are the base model's ({fam} has no "
                      "shared experts)")
    merge_line = {"output": "- merge: output space (the kept experts' down projections are refitted by ridge regression so "
                            "each pruned block reproduces the base block's routed output on calibration tokens; "
                            "MergeMoE-style, `prune.output_merge`): weights differ from the base's kept experts\n",
                  "frequency": "- merge: parameter space (each kept expert is the frequency-weighted average of its "
                               "cluster's members, HC-SMoE)\n"}.get(merge, "- merge: none (kept experts are the base's "
                                                                       "weights unchanged)\n")
    mtp_line = (f"- MTP layers: the base declares {mtp} (`num_nextn_predict_layers`); transformers builds no MTP "
                "module, so the proxy has none and its config sets the key to 0\n") if mtp else ""
    cal = lineage.get("calibration") or {}
    cal_line = (f"- calibration data: `{cal.get('dataset')}` (categories {cal.get('categories')}; "
                f"{cal.get('stats_windows_per_category')} windows of {cal.get('stats_seq_len')} tokens per category for "
                f"the expert statistics"
                + (f", {cal.get('merge_windows_per_category')} training-split windows per category for the output "
                   f"merge" if merge == "output" else "")
                + "; evaluation windows are held out"
                + (f"; builtin corpus file sha256 `{cal['corpus_sha256']}`" if cal.get("corpus_sha256") else "") + ")\n"
                ) if cal else "- calibration data: not recorded in lineage.json\n"
    method = lineage["method"]
    if method == "random":
        seed = (lineage.get("params") or {}).get("seed") if isinstance(lineage.get("params"), Mapping) else None
        chosen = "chosen uniformly at random" + (f" (seed {seed})" if seed is not None else "") + \
            " (no statistics are read to choose them)"
    else:
        chosen = f"chosen by `{method}` on expert-activation statistics"
    bm = base_metrics or {}
    task = bm.get("task") or (metrics or {}).get("task")
    sets = task_sets(bm)
    if task:
        figs = []
        for name, d in sorted(sets.items()):
            ch = chance_level(task, d["lengths"])
            figs.append(f"base greedy exact match on the `{name}` set "
                        + (f"({d['n']} problems" if d["n"] else "(problem count not recorded")
                        + (f", word lengths {d['lengths'][0]}-{d['lengths'][1]}" if d["lengths"] else "")
                        + f", `{base_metrics_name or 'metrics/proxy_base.json'}`): {d['acc']}; chance level "
                        + (f"{ch:.2g} (uniform letters of the right length)" if ch is not None else "not recorded"))
        task_line = (f"- task: `{task}`, {TASK_TEXT.get(task, 'the verifiable task of the PassNet proxy line')}"
                     + ("; " + "; ".join(figs) if figs else "; chance level: not recorded") + "\n")
    else:
        task_line = "- task: not recorded with this proxy (no base metrics given)\n"
    acc = ""
    if metrics and "task_acc_base" in metrics:
        n = metrics.get("task_problems")
        acc = ("- task accuracy at pruning (greedy exact match on the in-range held-out set, "
               + (f"{n} problems" if n else "problem count not recorded with the prune metrics")
               + f", the prune stage's own evaluation; before any RL): base {metrics['task_acc_base']}, proxy "
               f"{metrics.get('task_acc_proxy')}\n")
    if lic == BUILTIN_LICENSE:
        lic_line = ("- licence: the builtin base is trained here on CPython standard-library text and code (PSF-2.0); "
                    "the proxy derives from its weights\n")
    elif lic.get("license") != "other":
        lic_line = f"- licence: `{lic['license']}`, the base's; the proxy is a derivative of the base's weights\n"
    elif lic.get("license_name") == "unknown":
        lic_line = ("- licence: not known (the base's own card declares none that was read here); the proxy is a "
                    "derivative of the base's weights and inherits its terms"
                    + ("" if lic.get("license_link") else "; no `license_link`: a local base of unknown origin has "
                                                          "no licence text to link to")
                    + "\n")
    else:
        lic_line = (f"- licence: the base's (`{lic.get('license_name')}`"
                    + (f", {lic['license_link']}" if lic.get("license_link") else "")
                    + "); the proxy is a derivative of the base's weights and inherits its terms\n")
    summary = fault_summary(fidelity, proxy_name) if fidelity and proxy_name else None
    use = ("- intended use: a small stand-in for studying RL post-training failures of the base on fewer "
           "accelerators, for the faults it reproduces; not for deployment, not for quality claims about the base. "
           + (summary[0].upper() + summary[1:] if summary else
              "Which of the base's faults it reproduces is not in this card (it is written when the proxy is pruned, "
              "before any RL; `publish --fidelity` adds the record's figures)") + ".\n")
    rows = ""
    if metrics:
        for k in ("params_base", "params_proxy", "heldout_loss_base", "heldout_loss_proxy", "next_token_acc_base",
                  "next_token_acc_proxy", "kl_base_to_proxy", "routing_entropy_base", "routing_entropy_proxy",
                  "task_acc_base", "task_acc_proxy"):
            if k in metrics:
                rows += f"| {k} | {metrics[k]} |\n"
    table = f"| metric | value |\n|---|---|\n{rows}" if rows else "No evaluation metrics were recorded with this proxy.\n"
    fid = fidelity_section(fidelity, proxy_name) if fidelity and proxy_name else (
        "\nFidelity under RL: not in this card (it is written when the proxy is pruned, before any RL; "
        "`python -m proxy_artifacts publish --fidelity metrics/fidelity.json --name <proxy>` adds the figures).")
    body = f"""---
{data.to_yaml()}
---

# MoE proxy of `{base}`

Structure-preserving expert pruning (PassNet data, `proxy_artifacts`): {kept_parts}; {lineage['experts_kept']} of
{lineage['experts_base']} routed experts are kept per MoE layer (keep ratio requested {req},
effective {eff}), {chosen}. Load with plain
`AutoModelForCausalLM.from_pretrained` (no remote code).

- base: `{base}` (revision `{lineage['base_revision']}`{', family `' + fam + '`' if fam else ''})
{base_model_line(base, hub_base)}- statistics artifact sha256: `{lineage['stats_sha256']}`
- selection params: `{json.dumps(lineage['params'], sort_keys=True)}`
- kept experts per layer: `kept_experts.json`; provenance: `lineage.json` (sha256 of every file)
- keep ratio: requested {req}, effective {eff} ({lineage['experts_kept']}/{lineage['experts_base']}; floors for
  top-k and group-limited routing can raise it)
{merge_line}{mtp_line}{task_line}{cal_line}{acc}{lic_line}{use}
{table}{fid}
"""
    return str(ModelCard(body))

