"""One home per params knob: stage code never carries a default of its own for a params key.

The rule (docs/layout.md, "One home per knob"): a knob's default lives once, in its family's typed
config (:class:`passnet_common.config.ParamsConfig`); stage code reads the config, or a mapping the
config filled, so any other default is a second home that can drift
(``proxy.fidelity.detector.grad_collapse_steps`` was 1 in a ``.get`` and 3 in params.yaml).

Four scans of the stage packages, each over the knob (and block) names of the file's own family
(a default that reads the config, ``ProfileConfig.seed``, is not a literal and passes):

1. ``X.get("<knob>", <literal>)`` (:func:`literal_gets`);
2. a function parameter named as a knob with a literal default (``def group_tasks(rows,
   task_size=10)``) (:func:`second_homes`, ``sig``);
3. a dataclass field named as a knob with a literal default outside the family's config classes
   (``warmup: int = 3`` in a non-params dataclass) (``field``);
4. a module-level constant named as a knob (``MAX_VARIANT_S``, ``DEFAULT_TASK_SIZE``, ``_SEED``)
   whose value is a scalar literal, or a container literal equal to that knob's default (``const``;
   a config module's own constants, such as the choice lists a schema is made of, are its home).

A literal default is any literal other than ``None`` (None means "not given"). A hit that is not a
knob's second home (a name shared by chance, a file whose bytes are an output) is listed in
:data:`NOT_PARAMS` / :data:`NOT_KNOBS` with the reason; a file owned elsewhere that still holds a
second home is listed in :data:`OWNED_ELSEWHERE`. An entry that no longer matches fails the test.
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
    ("extract/capture/multimodal.py", "model_type"): "a transformers config's attribute, not proxy.model.model_type",
    ("extract/sources/hub_configs.py", "model_type"): "a Hugging Face config.json mapping",
    ("curate/select/stage.py", "timing"): "profile.json, the profile stage's output record",
    ("curate/select/stage.py", "compile_workers"): "profile.json, the profile stage's output record",
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
}

#: (file, key): second homes in files another engineer owns (reported, not changed here)
OWNED_ELSEWHERE: dict[tuple[str, str], str] = {}


def knob_names() -> set[str]:
    """Names of every knob and block of every registered config (nested blocks included)."""
    names: set[str] = set(C.CONFIGS)
    for cls in config_classes():
        names.update(f.name for f in dataclasses.fields(cls))
    return names


def _literal(node: ast.expr) -> bool:
    """A literal default other than None (numbers, strings, containers, negated numbers)."""
    if isinstance(node, ast.Constant):
        return node.value is not None
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
        return True
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):  # a container of literals ([cfg["dtype"]] is a read, not a default)
        return all(_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(_literal(v) for v in node.values)
    return False


def _empty(node: ast.expr) -> bool:
    """``{}``, ``[]``, ``()``, ``""``, ``0``, ``0.0``, ``False``: what ``x.get(k) or <empty>`` uses to read an
    absent optional mapping / list / number as empty, not a knob's default."""
    if isinstance(node, (ast.Dict, ast.List, ast.Tuple, ast.Set)):
        return not (getattr(node, "keys", None) or getattr(node, "elts", None))
    return isinstance(node, ast.Constant) and not node.value


def _key_call(node: ast.AST, names: set[str], methods: tuple[str, ...], nargs: int) -> str | None:
    """The knob name of ``X.<method>("<key>", ...)`` with ``nargs`` arguments (``getattr(X, "<key>", ...)``
    when ``methods`` is ``("getattr",)``), else None."""
    if not isinstance(node, ast.Call) or len(node.args) != nargs:
        return None
    f = node.func
    if methods == ("getattr",):
        if not (isinstance(f, ast.Name) and f.id == "getattr"):
            return None
        key = node.args[1]
    elif isinstance(f, ast.Attribute) and f.attr in methods:
        key = node.args[0]
    else:
        return None
    return key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value in names else None


def literal_gets(source: str, names: set[str]) -> list[tuple[int, str]]:
    """``(line, key)`` of every literal default on a knob name ``key`` (in ``names``) in ``source``:
    ``X.get("<key>", <literal>)``, ``X.setdefault("<key>", <literal>)``, ``getattr(X, "<key>", <literal>)``
    and ``X.get("<key>") or <literal>`` with a literal that is not empty (:func:`_empty`)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        key = _key_call(node, names, ("get", "setdefault"), 2) or _key_call(node, names, ("getattr",), 3)
        if key is not None and _literal(node.args[-1]):
            out.append((node.lineno, key))
        elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and len(node.values) == 2:
            key = _key_call(node.values[0], names, ("get",), 1)
            if key is not None and _literal(node.values[1]) and not _empty(node.values[1]):
                out.append((node.lineno, key))
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
    stale = sorted((set(NOT_PARAMS) | set(OWNED_ELSEWHERE)) - found)
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
           'seed = cfg.get("seed", ProfileConfig.seed)\n'
           'n = cfg.get("task_size") or 10\n'
           'n = getattr(cfg, "task_size", 10)\n'
           'cfg.setdefault("task_size", 10)\n'
           'n = cfg.get("task_size") or ProfileConfig.seed\n'
           't = cfg.get("timing") or {}\n')
    assert sorted(literal_gets(src, names)) == [(1, "grad_collapse_steps"), (2, "char_tokens_per_batch"),
                                                (6, "task_size"), (7, "task_size"), (8, "task_size")]


# --- signature defaults, dataclass fields, module constants ------------------------------------

_EXTRACT_BYTES = ("extract/**/*.py enter extract.runs.attempts.code_hash, recorded in every extractions row: an edit "
                  "changes the extract stage's outputs, so this second home waits for a build that may change them")
_SHIPPED_TIMING = "curate/timing.py ships byte-for-byte as timing_protocol.py in every task folder (the curate stage's output)"
_SHIPPED_RUNNER = ("curate/select/task_runner.py ships byte-for-byte as run_task.py in every task folder (the curate "
                   "stage's output), standalone: no curate package, so no config to read")
_PROFILE_BYTES = "curate/profile/variant.py enters code_version(), recorded in every profile row: an edit changes the profile's outputs"
_PASSBENCH = "python -m curate.passbench (no DVC stage, no params block): its own CLI's value, not a curate knob"

#: (file, kind, name): a hit of :func:`second_homes` that is not a knob's second home, with the reason
NOT_KNOBS = {
    ("extract/capture/completeness.py", "sig", "_ops_text(limit)"): "ops listed in a message, not catalog.limit",
    ("extract/capture/retry.py", "sig", "_exception_chain(limit)"): "causes followed in a message, not catalog.limit",
    ("extract/capture/synth.py", "sig", "size2(default)"): "an image side when a config names none, not a knob",
    ("extract/runs/coverage.py", "sig", "run_coverage(capture)"): "a switch of the coverage run, not the extract.capture block",
    ("extract/capture/completeness.py", "sig", "assess_completeness(meta)"): ("whether the graphs ran on meta tensors "
                                                                              "(the caller measures it), not the "
                                                                              "extract.capture.meta switch"),
    ("extract/sources/graphnet.py", "sig", "capture_sample(timeout_s)"): ("a GraphNet sample's capture child (its "
                                                                           "CLI, not the extract stage's timeout_s); " + _EXTRACT_BYTES),
    ("curate/timing.py", "sig", "paired_bootstrap(n_boot)"): _SHIPPED_TIMING,
    ("curate/timing.py", "sig", "paired_bootstrap(seed)"): _SHIPPED_TIMING,
    ("curate/timing.py", "sig", "bootstrap_ratio_ci(n_boot)"): _SHIPPED_TIMING,
    ("curate/timing.py", "sig", "bootstrap_ratio_ci(seed)"): _SHIPPED_TIMING,
    ("curate/timing.py", "sig", "bootstrap_speedup_ci(n_boot)"): _SHIPPED_TIMING,
    ("curate/timing.py", "sig", "bootstrap_speedup_ci(seed)"): _SHIPPED_TIMING,
    ("curate/timing.py", "sig", "ratio_ci(n_boot)"): _SHIPPED_TIMING,
    ("curate/timing.py", "sig", "ratio_ci(seed)"): _SHIPPED_TIMING,
    ("curate/timing.py", "field", "SidesTiming.clock"): "a result's record of the clock it was measured with; " + _SHIPPED_TIMING,
    ("curate/select/task_runner.py", "sig", "load(seed)"): _SHIPPED_RUNNER,
    ("curate/select/task_runner.py", "sig", "verdict(rule)"): _SHIPPED_RUNNER,
    ("curate/profile/variant.py", "sig", "fingerprint(device)"): _PROFILE_BYTES,
    ("curate/passbench/export.py", "sig", "import_samples(timeout_s)"): _PASSBENCH,
    ("curate/passbench/export.py", "sig", "import_samples(mem_cap_gb)"): _PASSBENCH,
    ("curate/passbench/kernelbench.py", "const", "SEED"): _PASSBENCH + " (the exported problems' input seed)",
    ("curate/select/tasks.py", "sig", "load_task_set(seed)"): ("a public reader's input seed (make_inputs(seed=...) "
                                                              "overrides it); no stage reads task folders through it"),
    ("curate/score/defenses/clock.py", "field", "AccountableConfig.max_inner"): ("the boundary's own cap on calls per "
                                                                                "trial: score.timing has no max_inner"),
    ("curate/score/defenses/clock.py", "field", "AccountableConfig.ci_level"): ("the boundary's own interval level: "
                                                                               "score.timing has no ci_level"),
    ("curate/score/defenses/clock.py", "sig", "median_ratio_ci(seed)"): "the bootstrap's RNG seed: score has no such knob",
    ("proxy_artifacts/architectures.py", "sig", "save_tiny_base(seed)"): ("the six-family harness (python -m "
                                                                         "proxy_artifacts.architectures, no DVC stage)"),
    ("proxy_artifacts/corpus.py", "sig", "documents(seed)"): "a corpus split's own seed (splits stay disjoint), not a knob",
    ("proxy_artifacts/corpus.py", "sig", "task_windows(seed)"): "a corpus split's own seed (splits stay disjoint), not a knob",
    ("proxy_artifacts/corpus.py", "sig", "category_windows(seed)"): "a corpus split's own seed (splits stay disjoint), not a knob",
    ("proxy_artifacts/cost.py", "sig", "measure_side_by_side(base)"): "the name of the base among measured models, not proxy.base",
    ("proxy_artifacts/cost.py", "sig", "ratio_margin(base)"): "the name of the base among measured models, not proxy.base",
    ("proxy_artifacts/cost.py", "sig", "cpu_cause(base)"): "the name of the base among measured models, not proxy.base",
    ("proxy_artifacts/cost.py", "sig", "write_cost(base)"): "the name of the base among measured models, not proxy.base",
    ("proxy_artifacts/prune.py", "sig", "output_merge(batch_size)"): ("windows per forward pass of the output merge; "
                                                                      "proxy.prune.calibration has no batch_size"),
    ("proxy_artifacts/config.py", "sig", "proxy_params(path)"): "the block's dotted path in errors, not proxy.model.path",
    ("proxy_artifacts/controls.py", "const", "LOG_FLOOR"): ("the least value a log10 compares (1e-12), not "
                                                            "proxy.fidelity.controls.log_floor (a tolerance in decades)"),
}

#: (file, kind, name): second homes in files another engineer owns (reported, not changed here)
OWNED_ELSEWHERE_DEFAULTS = {
}


def config_classes() -> set[type]:
    """Every registered config class, nested ones and their dataclass bases (``TimingConfig`` under
    ``ProtocolTimingConfig``); every family's config imported first."""
    import passnet_common.summary  # noqa: F401, PLC0415  (registers the core's `summary` block)

    for fam in FAMILIES:
        importlib.import_module(f"{fam}.config")
    out: set[type] = set()

    def walk(cls: type) -> None:
        out.update(b for b in cls.__mro__ if dataclasses.is_dataclass(b))
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            sub = C._config_type(hints[f.name]) or C._list_item_config(hints[f.name])
            if sub is not None:
                walk(sub)

    for cls in C.CONFIGS.values():
        walk(cls)
    return out


def family_knobs() -> dict[str, dict[str, list]]:
    """family (top-level package) -> knob or block name -> the defaults that name has in that family's configs."""
    out: dict[str, dict[str, list]] = {}
    for cls in config_classes():
        fam = cls.__module__.split(".")[0]
        for f in dataclasses.fields(cls):
            d = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
            if d is not dataclasses.MISSING:
                out.setdefault(fam, {}).setdefault(f.name, []).append(d.to_params() if isinstance(d, C.ParamsConfig) else d)
            else:
                out.setdefault(fam, {}).setdefault(f.name, [])
        out.setdefault(fam, {}).update({name: [] for name, c in C.CONFIGS.items() if c is cls and name not in out[fam]})
    return out


def config_module_files() -> set[str]:
    """Repository paths of the modules that define a config class (their constants are the config's own)."""
    return {cls.__module__.replace(".", "/") + ".py" for cls in config_classes()}


def _plain(value):
    """``value`` with tuples as lists (a constant's tuple equals a knob's list default)."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def second_homes(source: str, knobs: dict[str, list], config_names: set[str] = frozenset(),
                 constants: bool = True) -> list[tuple[int, str, str]]:
    """``(line, kind, name)`` of every second home in ``source`` (module docstring, scans 2-4):
    ``sig`` ``func(param)``, ``field`` ``Class.field``, ``const`` ``NAME``. ``knobs``: knob name ->
    its defaults (:func:`family_knobs`); ``config_names``: class names of the file that are config
    classes (their fields are the home); ``constants``: False for a config module."""
    out = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            pos = a.posonlyargs + a.args
            pairs = list(zip(pos[len(pos) - len(a.defaults):], a.defaults))
            pairs += [(p, d) for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
            out += [(d.lineno, "sig", f"{node.name}({p.arg})") for p, d in pairs if p.arg in knobs and _literal(d)]
        elif isinstance(node, ast.ClassDef) and node.name not in config_names \
                and any("dataclass" in ast.unparse(d) for d in node.decorator_list):
            for st in node.body:
                if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.value is not None \
                        and st.target.id in knobs:
                    v = st.value
                    if isinstance(v, ast.Call):  # field(default=...)
                        v = next((k.value for k in v.keywords if k.arg == "default"), None)
                    if v is not None and _literal(v):
                        out.append((st.lineno, "field", f"{node.name}.{st.target.id}"))
    if constants:
        for st in tree.body:
            targets = st.targets if isinstance(st, ast.Assign) else [st.target] if isinstance(st, ast.AnnAssign) and st.value else []
            for t in targets:
                if not isinstance(t, ast.Name) or not _literal(st.value):
                    continue
                name = t.id.lower().lstrip("_").removeprefix("default_")
                if name not in knobs:
                    continue
                if isinstance(st.value, (ast.Dict, ast.List, ast.Tuple, ast.Set)):
                    try:
                        value = _plain(ast.literal_eval(st.value))
                    except ValueError:
                        continue
                    if not any(value == _plain(d) for d in knobs[name]):
                        continue
                out.append((st.lineno, "const", t.id))
    return sorted(out)


def test_no_knob_default_in_a_signature_dataclass_or_constant() -> None:
    knobs = family_knobs()
    classes = config_classes()
    config_files = config_module_files()
    found, bad = set(), []
    for pkg in PACKAGES:
        for f in sorted((ROOT / pkg).rglob("*.py")):
            rel = f.relative_to(ROOT).as_posix()
            names = {c.__name__ for c in classes if c.__module__.replace(".", "/") + ".py" == rel}
            for line, kind, name in second_homes(f.read_text(encoding="utf-8"), knobs.get(pkg, {}), names,
                                                 constants=rel not in config_files):
                found.add((rel, kind, name))
                if (rel, kind, name) not in NOT_KNOBS and (rel, kind, name) not in OWNED_ELSEWHERE_DEFAULTS:
                    bad.append(f"{rel}:{line} {kind} {name}")
    assert not bad, "params defaults outside their config (read the config's value, or take it with no default):\n" \
        + "\n".join(bad)
    stale = sorted((set(NOT_KNOBS) | set(OWNED_ELSEWHERE_DEFAULTS)) - found)
    assert not stale, f"allow-list entries that no longer match any code (remove them): {stale}"


def test_the_widened_scan_flags_each_pattern_and_passes_a_config_read() -> None:
    """Known right values on synthetic source, with the curate family's knobs: a signature default
    (positional and keyword-only), a dataclass field (plain and ``field(default=...)``), a scalar
    constant under a knob's name (``MAX_VARIANT_S``, ``DEFAULT_TASK_SIZE``, ``_SEED``) and a container
    constant equal to the knob's default are flagged; defaults read from the config, ``None``, names
    that are no knob, a container unequal to the default, a config class's own fields and a config
    module's constants are not."""
    knobs = family_knobs()["curate"]
    assert knobs["task_size"] == [10] and ["float32", "bfloat16"] in knobs["dtypes"]
    src = ("from dataclasses import dataclass, field\n"
           "def group(rows, task_size=10, *, rule='compiler'):\n"                 # 2: two sig hits
           "    pass\n"
           "def ok(rows, task_size=SelectConfig.task_size, rule=None, width=3):\n"  # 4: none
           "    pass\n"
           "@dataclass\n"
           "class Knobs:\n"
           "    warmup: int = 3\n"                                                 # 8: field
           "    trials: int = field(default=15)\n"                                 # 9: field
           "    retries: int = ScoreTimingConfig.retries\n"                        # 10: none
           "    width: int = 3\n"                                                  # 11: none (no knob)
           "@dataclass\n"
           "class ProfileConfig:\n"
           "    seed: int = 0\n"                                                   # 14: none (a config class)
           "MAX_VARIANT_S = 15.0\n"                                                # 15: const
           "DEFAULT_TASK_SIZE = 10\n"                                              # 16: const
           "_SEED = 0\n"                                                           # 17: const
           "DTYPES = ('float32', 'bfloat16')\n"                                    # 18: const (equals the default)
           "SIZES = ('catalog', 'mid', 'workload')\n"                              # 19: none (unequal to SizesConfig)
           "RULE = SelectConfig.rule\n")                                           # 20: none
    assert second_homes(src, knobs, {"ProfileConfig"}) == [
        (2, "sig", "group(rule)"), (2, "sig", "group(task_size)"), (8, "field", "Knobs.warmup"),
        (9, "field", "Knobs.trials"), (15, "const", "MAX_VARIANT_S"), (16, "const", "DEFAULT_TASK_SIZE"),
        (17, "const", "_SEED"), (18, "const", "DTYPES")]
    assert [h for h in second_homes(src, knobs, {"ProfileConfig"}, constants=False) if h[1] == "const"] == []
    assert second_homes(src, {}, set()) == []  # another family's knobs: nothing


def test_a_partly_written_timing_block_takes_its_own_defaults() -> None:
    """Known right values: each profile timing block fills a missing key from its own defaults,
    not TimingConfig's (the scorer's): the screen with only ``trials`` set keeps warm-up 1 and
    n_boot 500; the CUDA path with only ``trials`` keeps warm-up 25 and the wall clock."""
    from curate.profile.config import ProfileConfig
    from curate.timing import TimingConfig

    cfg = ProfileConfig.from_params({"screen_timing": {"trials": 5}, "cuda_timing": {"trials": 50},
                                     "timing": {"warmup": 2}}, "curate.profile")
    assert (cfg.screen_timing.warmup, cfg.screen_timing.trials, cfg.screen_timing.n_boot) == (1, 5, 500)
    assert (cfg.cuda_timing.warmup, cfg.cuda_timing.trials, cfg.cuda_timing.clock) == (25, 50, "wall")
    assert (cfg.timing.warmup, cfg.timing.trials, cfg.timing.clock) == (2, 100, "thread_cpu")
    assert TimingConfig().warmup == 3 and TimingConfig().clock == "wall"  # what a block used to fall back to
