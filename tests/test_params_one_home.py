"""One home per params knob: stage code never carries a default of its own for a params key.

The rule (docs/layout.md, "One home per knob"): a knob's default lives once, in its family's typed
config (:class:`passnet_common.config.ParamsConfig`); stage code reads the config, or a mapping the
config filled, so a ``.get(key, default)`` on a params mapping is a second home that can drift
(``proxy.fidelity.detector.grad_collapse_steps`` was 1 in a ``.get`` and 3 in params.yaml).

The scan: every ``X.get("<key>", <default>)`` in the stage packages whose key is the name of a
knob (or block) of a registered config and whose default is a literal other than ``None``. A
mapping that is not a params block but happens to share a key name (a run record, a JSON file the
stage wrote, a Hugging Face config) is listed in :data:`NOT_PARAMS` with the reason; a file owned
elsewhere that still holds a second home is listed in :data:`OWNED_ELSEWHERE`.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import typing
from pathlib import Path

from passnet_common import config as C

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("passnet_common", "extract", "dedupe", "curate", "proxy_artifacts", "fullscale")
FAMILIES = ("extract", "curate", "proxy_artifacts", "fullscale")

#: (file, key): a ``.get`` with a literal default on a mapping that is not a params block
NOT_PARAMS = {
    ("extract/sources/hub_configs.py", "model_type"): "a Hugging Face config.json mapping",
    ("curate/select/cli.py", "timing"): "profile.json, the profile stage's output record",
    ("curate/select/cli.py", "compile_workers"): "profile.json, the profile stage's output record",
    ("curate/select/task_runner.py", "rule"): "a task folder's task.json",
    ("curate/score/defenses/clock.py", "dynamo"): "a per-call accumulator of the clock checks",
    ("proxy_artifacts/architectures.py", "grpo"): "a family's step results of run_all",
    ("proxy_artifacts/architectures.py", "prune"): "a family's step results of run_all",
    ("proxy_artifacts/card.py", "merge"): "lineage.json of a proxy (written by run_prune)",
    ("proxy_artifacts/cost.py", "workers"): "a GRPO stage's timing JSON record",
    ("proxy_artifacts/fidelity.py", "seed"): "a GRPO run's summary JSON (runs of older layouts name no seed)",
    ("proxy_artifacts/report.py", "heldout_healthy_seeds"): "metrics/fidelity.json, the record the report renders",
    ("fullscale/summary.py", "tasks"): "a shard manifest's counts",
    ("fullscale/summary.py", "capture"): "a failed shard's progress record",
    ("fullscale/runner.py", "tasks"): "a shard manifest's counts",
    ("passnet_common/hub_standin.py", "limit"): "an HTTP query string of the Hub stand-in",
}

#: (file, key): second homes in files another engineer owns (reported, not changed here)
OWNED_ELSEWHERE = {
    ("proxy_artifacts/selection.py", "merge"): "prune.get('merge', 'none') / entry.get('merge', 'none')",
}


def knob_names() -> set[str]:
    """Names of every knob and block of every registered config (nested blocks included)."""
    import passnet_common.summary  # noqa: F401, PLC0415  (registers the core's `summary` block)

    for fam in FAMILIES:
        importlib.import_module(f"{fam}.config")
    names: set[str] = set(C.CONFIGS)

    def walk(cls: type) -> None:
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            names.add(f.name)
            sub = C._config_type(hints[f.name]) or C._list_item_config(hints[f.name])
            if sub is not None:
                walk(sub)

    for cls in C.CONFIGS.values():
        walk(cls)
    return names


def _literal(node: ast.expr) -> bool:
    """A literal default other than None (numbers, strings, containers, negated numbers)."""
    if isinstance(node, ast.Constant):
        return node.value is not None
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
        return True
    return isinstance(node, (ast.Dict, ast.List, ast.Tuple, ast.Set))


def literal_gets(source: str, names: set[str]) -> list[tuple[int, str]]:
    """``(line, key)`` of every ``X.get("<key>", <literal>)`` in ``source`` whose key is in ``names``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                and len(node.args) == 2 and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str) and node.args[0].value in names and _literal(node.args[1])):
            out.append((node.lineno, node.args[0].value))
    return sorted(out)


def test_no_literal_default_on_a_params_key_in_stage_code() -> None:
    names = knob_names()
    found = set()
    bad = []
    for pkg in PACKAGES:
        for f in sorted((ROOT / pkg).rglob("*.py")):
            rel = f.relative_to(ROOT).as_posix()
            for line, key in literal_gets(f.read_text(encoding="utf-8"), names):
                found.add((rel, key))
                if (rel, key) not in NOT_PARAMS and (rel, key) not in OWNED_ELSEWHERE:
                    bad.append(f"{rel}:{line} .get({key!r}, <literal>)")
    assert not bad, "params defaults outside their config (read the config / the filled mapping):\n" + "\n".join(bad)
    stale = sorted(set(NOT_PARAMS) - found)
    assert not stale, f"allow-list entries that no longer match any code (remove them): {stale}"


def test_the_scan_flags_a_second_home_and_passes_a_record_key() -> None:
    """Known right values: the detector's old ``det.get("grad_collapse_steps", 1)`` is flagged; a
    key no config has, a ``None`` default and a default read from the config are not."""
    names = knob_names()
    assert "grad_collapse_steps" in names and "char_tokens_per_batch" in names
    src = ('hold = int(det.get("grad_collapse_steps", 1))\n'
           'n = sp.get("char_tokens_per_batch", 0)\n'
           'r = row.get("reward_mean_not_a_knob", 0.0)\n'
           'rev = params["model"].get("revision")\n'
           'seed = cfg.get("seed", ProfileConfig.seed)\n')
    assert sorted(literal_gets(src, names)) == [(1, "grad_collapse_steps"), (2, "char_tokens_per_batch")]
