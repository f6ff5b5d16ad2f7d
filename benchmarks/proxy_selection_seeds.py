"""Benchmark: the prune-method comparison repeated on several base seeds.

For each base seed (default 0, 1, 2) this trains the default base (``proxy.base`` of
``params.yaml`` with ``seed`` replaced), collects its expert statistics (``proxy.stats``) and
runs the stage ``proxy_compare``'s comparison on it (``pipeline.run_compare``: every method of
``proxy.compare.methods`` at every keep ratio, plus the :data:`EXTRA_METHODS` it lacks, random +
output merge among them: :func:`compared_methods`). It writes
``metrics/bench/proxy_selection_seeds.json``: per method x ratio the mean, sd, min and max over
the seeds of held-out loss, KL to the base, task accuracy and routing mass kept, the paired
held-out loss gap of every method to the winner, the winner by
``proxy_artifacts.selection.seed_winner`` (the rule ``proxy.prune`` follows), per seed the measured
wall / CPU seconds of each step (base training, statistics, comparison; recorded when the step ran,
kept across reruns) with the base's final training loss and held-out task exact match, and the load
average. Nothing is asserted.

The stage ``proxy_base`` trains seed 0 only, so the default ``dvc repro`` budget is unchanged; this
script costs about three times (``proxy_base`` + ``proxy_stats`` + ``proxy_compare``).

Usage::

    PYTHONPATH=$PWD nice -n 10 python -m benchmarks.proxy_selection_seeds            # default scale
    PYTHONPATH=$PWD python -m benchmarks.proxy_selection_seeds --steps 100 --seeds 0  # quick look
    python -m benchmarks.proxy_selection_seeds --markdown --docs docs/proxies.md     # the docs table, from the record

``--steps`` / ``--train-windows`` / ``--eval-windows`` / ``--task-problems`` / ``--calibration-windows``
reduce the scale (the
JSON records the scale and says whether it is the default one). Per seed the trained base, the
statistics and the comparison are kept under ``--work`` with a key over every setting and code file
that shapes them; a rerun reuses what the key still matches.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Compared on the seeds beside proxy.compare.methods (an entry of that list with the same name wins):
# random experts with the output merge (the control of the merge: how much of the default's gain the merge
# alone gives on experts chosen without statistics), and the usage-aware selection with the other
# representative rule (the most-routed members of a cluster; the default keeps the highest-REAP ones).
EXTRA_METHODS = [
    {"name": "random+output_merge", "method": "random", "merge": "output"},
    {"name": "usage_cluster_freq_rep", "method": "usage_cluster", "views": {"act": 1.0, "router": 1.0},
     "usage": {"representative": "frequency"}},
    {"name": "usage_cluster_freq_rep+output_merge", "method": "usage_cluster", "views": {"act": 1.0, "router": 1.0},
     "usage": {"representative": "frequency"}, "merge": "output"},
]

CODE = {"base": ("proxy_artifacts/base_model.py", "proxy_artifacts/corpus.py", "proxy_artifacts/corpus_files/stdlib_py311.json.gz",
                 "proxy_artifacts/adapters.py"),
        "stats": ("proxy_artifacts/stats.py", "proxy_artifacts/pipeline.py", "proxy_artifacts/checkpoint.py"),
        "compare": ("proxy_artifacts/cluster.py", "proxy_artifacts/prune.py", "proxy_artifacts/metrics.py",
                    "proxy_artifacts/pipeline.py")}


def compared_methods(methods: list[dict], extras: bool = True) -> list[dict]:
    """``proxy.compare.methods`` followed by the :data:`EXTRA_METHODS` whose names it lacks (all of
    them unless ``extras`` is False): the method list the seeds are compared on."""
    names = {m["name"] for m in methods}
    return list(methods) + ([m for m in EXTRA_METHODS if m["name"] not in names] if extras else [])


def _key(*parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(json.dumps(p, sort_keys=True, default=str).encode())
    return h.hexdigest()


def _code(kind: str) -> dict:
    return {f: hashlib.sha256((ROOT / f).read_bytes()).hexdigest() for f in CODE[kind]}


def _timed(fn, *a, **kw):
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn(*a, **kw)
    return out, round(time.perf_counter() - w0, 1), round(time.process_time() - c0, 1)


def run_seed(p: dict, seed: int, work: Path, log: dict) -> dict:
    """Base, statistics and comparison of one base seed (reused where the keys match): the
    selection summary. Appends wall / CPU seconds of what ran to ``log``."""
    from proxy_artifacts.base_model import train_base
    from proxy_artifacts.pipeline import run_compare, run_stats

    d = work / f"s{seed}"
    d.mkdir(parents=True, exist_ok=True)
    keys_f = d / "keys.json"
    keys = json.loads(keys_f.read_text()) if keys_f.exists() else {}
    bp = dict(p["base"], seed=seed)
    kb = _key(bp, _code("base"))
    ks = _key(kb, p["stats"], _code("stats"))
    kc = _key(ks, p["prune"], p["eval"], p["compare"], _code("compare"))
    if keys.get("base") != kb or not (d / "base" / "config.json").exists():
        keys = {"times": {}}
        _, keys["times"]["base_train_wall_s"], keys["times"]["base_train_cpu_s"] = _timed(train_base, bp, d / "base")
        keys["base"] = kb
        keys_f.write_text(json.dumps(keys))
    times = keys.setdefault("times", {})  # wall / CPU seconds of each step when it ran (kept across reruns)
    sp = dict(p, model={"path": str(d / "base"), "revision": None})
    if keys.get("stats") != ks:
        keys.pop("compare", None)
        _, times["stats_wall_s"], times["stats_cpu_s"] = _timed(run_stats, sp, str(d / "base"), d / "stats")
        keys["stats"] = ks
        keys_f.write_text(json.dumps(keys))
    if keys.get("compare") != kc or not (d / "selection.json").exists():
        _, times["compare_wall_s"], times["compare_cpu_s"] = _timed(run_compare, sp, str(d / "base"), d / "stats",
                                                                    d / "proxies.parquet", d / "selection.json")
        keys["compare"] = kc
        keys_f.write_text(json.dumps(keys))
    times = dict(times)
    tl = json.loads((d / "base" / "train_log.json").read_text())
    times.update(base_final_train_loss=tl["final_loss"], base_task_acc_heldout=tl["task_acc_heldout"],
                 corpus_sha256=tl["corpus_sha256"])
    log[seed] = times
    return json.loads((d / "selection.json").read_text())


def reap_vs_frequency(stats_dir: Path) -> dict:
    """Per layer, Spearman's rank correlation between an expert's routing frequency and its REAP
    saliency on the pooled calibration statistics (scipy.stats.spearmanr), and the routing share
    of the 8 highest-REAP experts vs the 8 most-routed ones."""
    from scipy.stats import spearmanr

    from proxy_artifacts.pipeline import load_stats

    st, _ = load_stats(stats_dir)
    rho, top_reap, top_freq = [], [], []
    for li in range(len(st.blocks)):
        f, r = st.frequency[li].numpy(), st.reap[li].numpy()
        share = f / f.sum()
        rho.append(round(float(spearmanr(f, r).statistic), 4))
        top_reap.append(round(float(share[(-r).argsort()[:8]].sum()), 4))
        top_freq.append(round(float(share[(-f).argsort()[:8]].sum()), 4))
    return {"spearman_per_layer": rho, "routing_share_top8_reap": top_reap, "routing_share_top8_frequency": top_freq}


def _table(table: dict, ratios, names, base: dict) -> str:
    lines = [f"base held-out loss {base['heldout_loss']['mean']:.3f} +- {base['heldout_loss']['sd']:.3f}, "
             f"task {100 * base.get('task_acc', {}).get('mean', 0):.1f}%  (mean +- sd over seeds)",
             "method | " + " | ".join(f"keep {r}: loss / KL / task / mass" for r in ratios)]
    for n in names:
        cells = []
        for r in ratios:
            row = table[f"r{r}/{n}"]
            cells.append(f"{row['heldout_loss']['mean']:.3f}+-{row['heldout_loss']['sd']:.3f} / "
                         f"{row['kl']['mean']:.3f} / {100 * row['task_acc']['mean']:.1f}% / "
                         f"{100 * row['routing_mass_kept']['mean']:.0f}%")
        lines.append(f"{n} | " + " | ".join(cells))
    return "\n".join(lines)


def markdown(ev: dict) -> str:
    """The seed table of a written JSON as a markdown table (docs/proxies.md): per method and
    ratio, held-out loss mean +- sd / KL mean / task accuracy mean / routing mass kept mean."""
    ratios = ev["keep_ratios"]
    ref = ev["winner"]["reference_ratio"]
    w = ev["winner"]
    pu, ph = w.get("p_values_uncorrected") or {}, w.get("p_values_holm") or {}
    entry = {m: e for e, ms in (w.get("entries") or {}).items() for m in ms}
    lines = ["| method | " + " | ".join(f"keep {r}" for r in ratios) + f" | loss - default's at keep {ref} (paired) | "
             f"entry of the rule at keep {ref} (identical methods are one) | p vs the leader (one-sided paired t): "
             "uncorrected / Holm-adjusted |", "|---" * (len(ratios) + 4) + "|"]
    order = sorted(ev["methods"], key=lambda n: ev[f"r{ref}/{n}"]["heldout_loss"]["mean"])
    for n in order:
        cells = []
        for r in ratios:
            row = ev[f"r{r}/{n}"]
            cells.append(f"{row['heldout_loss']['mean']:.3f} +- {row['heldout_loss']['sd']:.3f} / {row['kl']['mean']:.3f}"
                         f" / {100 * row['task_acc']['mean']:.1f}% / {100 * row['routing_mass_kept']['mean']:.0f}%")
        name = f"**{n}**" if n == w["method"] else n
        g = ev[f"r{ref}/{n}"].get("heldout_loss_gap_to_winner") or {"mean": 0.0, "se": 0.0}
        e = entry.get(n, n)
        p = "leader" if e == w.get("leader") else (f"{pu[e]:.4f} / {ph[e]:.4f}" if pu.get(e) is not None else "-")
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {g['mean']:+.4f} +- {g['se']:.4f} | "
                     + (f"`{e}`" if e != n else "itself") + f" | {p} |")
    lines += ["", f"The rule's verdict per keep ratio (`winner.verdict_per_ratio`; the one at keep {ref} decides):", ""]
    for r in ratios:
        vr = (w.get("verdict_per_ratio") or {}).get(f"r{r}")
        if vr is None:
            lines.append(f"- keep {r}: not in the record (`--rejudge` adds it)")
        elif vr["verdict"] == "tied":
            lines.append(f"- keep {r}: tied; leader `{vr['leader']}`, not separated from it: "
                         + ", ".join(f"`{n}`" for n in vr["tied_with_leader"]))
        else:
            lines.append(f"- keep {r}: `{vr['verdict']}` wins (every other method separated)")
    lines += ["", f"Default choice (`proxy.prune` of `params.yaml` follows it): `{w['method']}`."]
    if w.get("runner_up"):
        gr = w.get("gap_to_runner_up") or {}
        lines += ["", f"Runner-up at keep {ref} (the entry with the next-lowest mean after the leader): "
                      f"`{w['runner_up']}`, {gr.get('mean', 0):+.4f} +- {gr.get('se', 0):.4f} nats above the leader "
                      "(paired, mean +- standard error)."]
    if {"random", "random+output_merge"} <= set(ev["methods"]):
        cells = []
        for r in ratios:
            rnd, rm, d = (ev[f"r{r}/{n}"]["heldout_loss"]["mean"] for n in ("random", "random+output_merge", w["method"]))
            cells.append(f"keep {r}: {100 * (rnd - rm) / (rnd - d):.0f}%" if rnd != d else f"keep {r}: -")
        lines += ["", "Share of the held-out loss gap between random experts and the default choice that the output "
                      "merge closes on random experts ((random - random+output_merge) / (random - default), mean "
                      "losses over the seeds): " + ", ".join(cells) + "."]
    lines += representative_lines(ev)
    return "\n".join(lines)


def _paired(ev: dict, a: str, b: str, r: float, short: str) -> tuple[float, float] | None:
    """(mean, standard error) over the record's seeds of ``short``(a) - ``short``(b) at keep ``r``, from
    the ``<short>_per_seed`` lists; None when a list is missing."""
    xa, xb = (ev.get(f"r{r}/{n}", {}).get(f"{short}_per_seed") for n in (a, b))
    if not xa or not xb:
        return None
    d = [x - y for x, y in zip(xa, xb)]
    m = sum(d) / len(d)
    sd = (sum((x - m) ** 2 for x in d) / (len(d) - 1)) ** 0.5 if len(d) > 1 else 0.0
    return m, sd / len(d) ** 0.5


def representative_lines(ev: dict) -> list[str]:
    """Markdown lines on the usage-aware selection's representative rule, from the record: per keep
    ratio the routing mass kept by the REAP rule (``usage_cluster``) and the frequency rule
    (``usage_cluster_freq_rep``) with the paired difference, the paired held-out loss difference
    (frequency rule - REAP rule) with and without output merge, and the ranges of ``reap_vs_frequency``
    (Spearman rank correlation of frequency and REAP per layer; routing share of a layer's 8 highest-REAP
    vs 8 most-routed experts) over layers and seeds. Empty when the record lacks those methods."""
    a, b = "usage_cluster", "usage_cluster_freq_rep"
    if not {a, b} <= set(ev["methods"]):
        return []
    out = ["", f"Representative rule of `usage_cluster` (REAP rule `{a}`, frequency rule `{b}`; paired over "
               "the seeds, mean +- standard error):", ""]
    for r in ev["keep_ratios"]:
        mass = _paired(ev, b, a, r, "routing_mass_kept")
        cells = [f"routing mass kept {100 * ev[f'r{r}/{a}']['routing_mass_kept']['mean']:.0f}% (REAP rule) vs "
                 f"{100 * ev[f'r{r}/{b}']['routing_mass_kept']['mean']:.0f}% (frequency rule)"
                 + (f", {100 * mass[0]:+.1f} +- {100 * mass[1]:.1f} points" if mass else "")]
        for suffix, what in (("+output_merge", "with output merge"), ("", "without merge")):
            g = _paired(ev, b + suffix, a + suffix, r, "heldout_loss") if f"{a}{suffix}" in ev["methods"] \
                and f"{b}{suffix}" in ev["methods"] else None
            if g:
                cells.append(f"held-out loss {what} {g[0]:+.4f} +- {g[1]:.4f} nats (frequency rule - REAP rule)")
        out.append(f"- keep {r}: " + "; ".join(cells))
    rf = ev.get("reap_vs_frequency") or {}
    if rf:
        def rng(key):
            v = [x for d in rf.values() for x in d[key]]
            return f"{min(v):.2f}-{max(v):.2f}"
        out += ["", f"REAP vs frequency on these bases (`reap_vs_frequency`, over layers and seeds): Spearman "
                    f"{rng('spearman_per_layer')}; routing share of a layer's 8 highest-REAP experts "
                    f"{rng('routing_share_top8_reap')} against {rng('routing_share_top8_frequency')} for its 8 "
                    "most-routed."]
    return out


BEGIN, END = "<!-- proxy_selection_seeds -->", "<!-- /proxy_selection_seeds -->"


def render_docs(doc: str | Path, ev: dict, out: str) -> bool:
    """Replace the lines between :data:`BEGIN` and :data:`END` of ``doc`` with :func:`markdown` of the
    record ``ev`` (read from ``out``, named under the table); True when the file changed.

    Raises:
        ValueError: the markers are absent."""
    doc = Path(doc)
    text = doc.read_text()
    if BEGIN not in text or END not in text:
        raise ValueError(f"{doc} has no {BEGIN} ... {END} block")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = f"{head}{BEGIN}\n{markdown(ev)}\n\n(from `{out}`)\n{END}{tail}"
    if new != text:
        doc.write_text(new)
    return new != text


def summaries_from_record(ev: dict) -> dict:
    """{seed: per-seed selection summary} rebuilt from a written record's ``<metric>_per_seed`` lists
    (the keys :func:`selection.seed_winner` and :func:`selection.seed_table` read)."""
    from proxy_artifacts.selection import BASE_METRICS, METRICS

    seeds = ev["seeds"]
    out = {s: {} for s in seeds}
    for r in ev["keep_ratios"]:
        for n in ev["methods"]:
            row = ev[f"r{r}/{n}"]
            for key, short in METRICS:
                vals = row.get(f"{short}_per_seed")
                if vals is not None:
                    for s, v in zip(seeds, vals):
                        out[s].setdefault(f"r{r}/{n}", {})[key] = v
    for key in BASE_METRICS:
        vals = ev["base"].get(f"{key}_per_seed")
        for s, v in zip(seeds, vals or []):
            out[s].setdefault("base", {})[key] = v
    return out


def rejudge(ev: dict) -> dict:
    """A written record with its ``winner`` recomputed by :func:`selection.seed_winner` (the rule as it
    is now) from the per-seed figures it holds, and every method's paired gap to the new default
    choice; the measured figures are unchanged. ``winner.settings`` is kept when the default choice
    is the same method (the record holds names, not settings), else dropped."""
    from proxy_artifacts.selection import paired_gap, seed_winner

    summ = summaries_from_record(ev)
    ratios, names = ev["keep_ratios"], ev["methods"]
    win = seed_winner(summ, ratios, names, ev["winner"]["reference_ratio"])
    if win["method"] == ev["winner"]["method"] and "settings" in ev["winner"]:
        win["settings"] = ev["winner"]["settings"]
    out = dict(ev, winner=win)
    for r in ratios:
        for n in names:
            g, se = paired_gap(summ, n, win["method"], r)
            out[f"r{r}/{n}"] = dict(ev[f"r{r}/{n}"], heldout_loss_gap_to_winner={"mean": g, "se": se})
    out["rejudged_with"] = "python -m benchmarks.proxy_selection_seeds --rejudge"
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--params", default=str(ROOT / "params.yaml"))
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--work", default=str(ROOT / "data" / "bench" / "proxy_selection_seeds"))
    ap.add_argument("--out", default=str(ROOT / "metrics" / "bench" / "proxy_selection_seeds.json"))
    ap.add_argument("--steps", type=int, help="base training steps (default: proxy.base.steps)")
    ap.add_argument("--train-windows", type=int, help="proxy.base.train_windows_per_category")
    ap.add_argument("--eval-windows", type=int, help="proxy.eval.windows_per_category")
    ap.add_argument("--task-problems", type=int, help="proxy.eval.task_problems")
    ap.add_argument("--calibration-windows", type=int, help="proxy.prune.calibration.windows_per_category")
    ap.add_argument("--no-extras", action="store_true", help="only proxy.compare.methods")
    ap.add_argument("--markdown", action="store_true", help="print the table of the --out JSON as markdown; run nothing")
    ap.add_argument("--docs", help="with --markdown: also re-render the table block of this file (docs/proxies.md)")
    ap.add_argument("--rejudge", action="store_true",
                    help="apply selection.seed_winner's rule to the per-seed figures already in --out; run nothing")
    a = ap.parse_args(argv)
    if a.markdown:
        ev = json.loads(Path(a.out).read_text())
        if a.docs:
            render_docs(a.docs, ev, os.path.relpath(a.out, ROOT))
        print(markdown(ev))
        return 0
    if a.rejudge:
        ev = rejudge(json.loads(Path(a.out).read_text()))
        from passnet_common.io import atomic_write_json

        atomic_write_json(a.out, ev, indent=1)
        w = ev["winner"]
        print(f"verdict {w['verdict']} (leader {w['leader']}, tied {w['tied_with_leader']}); default choice "
              f"{w['method']}; Holm-adjusted p-values {w['p_values_holm']}")
        return 0

    from passnet_common.io import atomic_write_json
    from passnet_common.params import load_params
    from proxy_artifacts.selection import method_settings, paired_gap, seed_table, seed_winner

    p = copy.deepcopy(load_params(a.params, "proxy"))
    default = copy.deepcopy(p)
    if a.steps:
        p["base"]["steps"] = a.steps
    if a.train_windows:
        p["base"]["train_windows_per_category"] = a.train_windows
    if a.eval_windows:
        p["eval"]["windows_per_category"] = a.eval_windows
    if a.calibration_windows:
        p["prune"]["calibration"]["windows_per_category"] = a.calibration_windows
    if a.task_problems is not None:
        p["eval"]["task_problems"] = a.task_problems
    p["compare"]["methods"] = compared_methods(p["compare"]["methods"], extras=not a.no_extras)
    entries = {m["name"]: m for m in p["compare"]["methods"]}
    names, ratios = list(entries), list(p["compare"]["keep_ratios"])
    ref = p["compare"].get("reference_ratio") or max(ratios)
    load0, t0, log, summaries, diag = os.getloadavg(), time.perf_counter(), {}, {}, {}
    for seed in a.seeds:
        print(f"--- base seed {seed}", flush=True)
        summaries[seed] = run_seed(p, seed, Path(a.work), log)
        diag[str(seed)] = reap_vs_frequency(Path(a.work) / f"s{seed}" / "stats")
    total = round(time.perf_counter() - t0, 1)
    table = seed_table(summaries, ratios, names)
    win = seed_winner(summaries, ratios, names, ref)
    win["settings"] = method_settings(entries[win["method"]], p["prune"])
    for r in ratios:  # held-out loss minus the winner's on the same base, mean and standard error over seeds
        for n in names:
            g, se = paired_gap(summaries, n, win["method"], r)
            table[f"r{r}/{n}"]["heldout_loss_gap_to_winner"] = {"mean": g, "se": se}
    scale = {"base_steps": p["base"]["steps"], "train_windows_per_category": p["base"]["train_windows_per_category"],
             "eval_windows_per_category": p["eval"]["windows_per_category"],
             "task_problems": p["eval"]["task_problems"],
             "calibration_windows_per_category": p["prune"]["calibration"]["windows_per_category"],
             "default_scale": all(p[b][k] == default[b][k] for b, k in (
                 ("base", "steps"), ("base", "train_windows_per_category"), ("eval", "windows_per_category"),
                 ("eval", "task_problems"))) and p["prune"]["calibration"] == default["prune"]["calibration"]}
    out = {"seeds": list(a.seeds), "scale": scale, "keep_ratios": ratios, "methods": names,
           "command": "python -m benchmarks.proxy_selection_seeds " + " ".join(argv if argv is not None else
                                                                             __import__("sys").argv[1:]),
           "machine": f"{os.cpu_count()} cores, torch threads {p['base'].get('threads', 1)}",
           "load_average_start_end": [round(load0[0], 2), round(os.getloadavg()[0], 2)],
           "winner": win, **table, "reap_vs_frequency": diag,
           "per_seed": {str(s): v for s, v in log.items()}, "total_wall_s": total}
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(a.out, out, indent=1)
    print(_table(table, ratios, names, table["base"]))
    print(f"winner (rule: {win['rule']}): {win['method']} (leader {win['leader']}, tied {win['tied_with_leader']}, "
          f"wins on {win['wins_on_seeds']} seeds); per ratio {win['per_ratio']}")
    print(f"per seed: {json.dumps(out['per_seed'])}  total {total} s  load {out['load_average_start_end']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
