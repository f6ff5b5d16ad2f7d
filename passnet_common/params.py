"""Reading and validating ``params.yaml``: one namespaced block per stage family (DVC
convention).

Each top-level block may register a schema (:func:`register_block`); :func:`load_params`
validates every registered block it returns, so a typo (``extract.capture.seqlen``) or a
value of the wrong type (``extract.workers: "two"``) is an error naming the key and what
it expects, never silently ignored. Every block of the committed ``params.yaml`` is
registered here (``curate``, ``score``, ``proxy``, ``summary``); other
stage families may register theirs from their own package (a schema
spec or any callable ``(value, path) -> None`` raising :class:`ParamsError`), or extend a
registered block with new keys (:func:`extend_block`).

Schema specs (types, :class:`~passnet_common.spec.Block`, validators) and the check that applies
them are in :mod:`passnet_common.spec`; they are handed on from here too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from passnet_common.spec import (
    AnyOf, Block, Choice, DictOf, ListOf, Optional, ParamsError, check, interval, non_negative, positive,
)


BLOCKS: dict[str, Any] = {}


def register_block(name: str, spec: Any) -> None:
    """Register the schema of top-level block ``name`` (replaces an earlier one)."""
    BLOCKS[name] = spec


def extend_block(name: str, fields: dict[str, Any]) -> None:
    """Add keys to a registered :class:`Block` schema (e.g. a new catalog source's switches)."""
    spec = BLOCKS[name]
    if not isinstance(spec, Block):
        raise TypeError(f"params block {name!r} is not a Block schema")
    spec.fields.update(fields)


# --- graph stages -----------------------------------------------------------------------
# The ``catalog``, ``extract`` and ``hub`` blocks are typed configs: extract/config.py (registered
# when that module is imported; ``check_params --families extract``).


# --- curation stages (curate/__main__.py: decompose, profile, curate) --------------------
# Keys of curate.timing.TimingConfig that the score block reads (the curate block derives its own from the class).
TIMING_SCHEMA = Block({
    "warmup": non_negative(int),
    "trials": positive(int),
    "min_trials": positive(int),
    "check_every": positive(int),
    "min_trial_ms": non_negative(float),
    "max_inner": positive(int),
    "max_iqr_ratio": positive(float),
    "retries": non_negative(int),
    "seed": int,
    "ci_level": interval(float, 0, 1, lo_open=True, hi_open=True),
    "n_boot": positive(int),
    "decided_width": non_negative(float),
    "min_effect": non_negative(float),
    "gate": Choice(("iqr", "ci")),
    "stop": Choice(("decided", "label")),  # what settles an interval (curate.timing.TimingConfig.stop)
    "max_ci_width": positive(float),
    "l2_flush_mb": non_negative(float),
    "max_variant_s": Optional(positive(float)),  # timing cap of one variant, all sides and trials (s)
})
# The ``curate`` block is a typed config: curate/curate_config.py (registered by curate/config.py).

# The ``score`` block is a typed config: curate/score/config.py (ScoreConfig, registered by curate/config.py).

# --- proxy stages (proxy_artifacts/__main__.py) --------------------------------------------
# Names owned by proxy_artifacts (cluster.METHODS / VIEWS, corpus.CATEGORIES, rl.FAULTS),
# repeated here so that validating params never imports torch; tests/test_params.py checks
# that they agree.
PROXY_METHODS = ("cluster", "usage_cluster", "frequency", "reap", "random")
PROXY_VIEWS = ("act", "router", "weights", "frequency")
PROXY_CATEGORIES = ("text", "code", "reverse")
PROXY_FAULTS = ("none", "logprob_bf16", "skip_actor_update", "lr_spike", "fp16_no_loss_scaling", "no_load_balancing",
                "swapped_operator")
_SHARE = interval(float, 0, 1)
_VIEWS_SCHEMA = Block({v: non_negative(float) for v in PROXY_VIEWS})
_USAGE_SCHEMA = Block({
    "dead_share": _SHARE,
    "cluster_share": interval(float, 0, 1, lo_open=True),
    "slots_by": Choice(("frequency", "reap_mass")),
    "representative": Choice(("reap", "frequency")),
})
_KEEP_RATIO = interval(float, 0, 1, lo_open=True)
# prune merge: false/true (none / frequency) or a merge mode name; ``output`` and
# ``calibration`` belong to the output-space merge being added in proxy_artifacts (issue 8).
_MERGE = AnyOf((bool, Choice(("none", "frequency", "output"))))
register_block("proxy", Block({
    "base": Block({
        "model_type": str,
        "hidden_size": positive(int),
        "moe_intermediate_size": positive(int),
        "num_layers": positive(int),
        "num_heads": positive(int),
        "num_kv_heads": positive(int),
        "num_experts": positive(int),
        "top_k": positive(int),
        "aux_loss_coef": non_negative(float),
        "seq_len": positive(int),
        "batch_size": positive(int),
        "steps": positive(int),
        "lr": positive(float),
        "train_windows_per_category": positive(int),
        "category_mix": Optional(Block({c: non_negative(float) for c in PROXY_CATEGORIES})),
        "spec_windows": positive(int),
        "task_problems": non_negative(int),
        "seed": int,
        "threads": positive(int),
    }),
    "model": Block({"path": str, "revision": Optional(str)}),
    "stats": Block({
        "dataset": str,  # builtin, or a folder of <category>.txt files
        "categories": ListOf(str),
        "num_samples": positive(int),
        "seq_len": positive(int),
        "batch_size": positive(int),
        "char_tokens_per_batch": non_negative(int),
        "seed": int,
        "threads": positive(int),
    }),
    "prune": Block({
        "method": Choice(PROXY_METHODS),
        "views": _VIEWS_SCHEMA,
        "representative": Choice(("frequency", "medoid")),
        "usage": _USAGE_SCHEMA,
        "merge": _MERGE,
        "calibration": Block({"windows_per_category": positive(int), "seq_len": positive(int),
                              "ridge": non_negative(float)}),
        "categories": AnyOf((Choice(("all",)), ListOf(str))),
        "new_top_k": Optional(positive(int)),
        "seed": int,
        "threads": positive(int),
    }),
    "eval": Block({
        "windows_per_category": positive(int),
        "seq_len": positive(int),
        "batch_size": positive(int),
        "task_problems": non_negative(int),
    }),
    "compare": Block({
        "keep_ratios": ListOf(_KEEP_RATIO),
        "reference_ratio": Optional(_KEEP_RATIO),
        "methods": ListOf(Block({"name": str, "method": Choice(PROXY_METHODS), "views": _VIEWS_SCHEMA,
                                 "usage": _USAGE_SCHEMA, "merge": _MERGE}, required=("name", "method"))),
        "random_seeds": ListOf(int),
        "workers": positive(int),
    }),
    "grpo": Block({
        "steps": positive(int),
        "prompts_per_step": positive(int),
        "num_generations": positive(int),
        "max_completion_length": positive(int),
        "lr": positive(float),
        "beta": non_negative(float),
        "temperature": positive(float),
        "max_grad_norm": positive(float),
        "aux_loss_coef": non_negative(float),
        "eval_problems": non_negative(int),
        "seed": int,
        "threads": positive(int),
        "workers": positive(int),
        "fault_step": non_negative(int),
        "lr_spike_factor": positive(float),
        "lr_spike_steps": positive(int),
        "fp16_grad_scale": positive(float),
        "router_lr_factor": positive(float),
        "faults": ListOf(Choice(PROXY_FAULTS)),
        "healthy_seeds": ListOf(int),
        "heldout_healthy_seeds": ListOf(int),
        "fault_seeds": ListOf(int),
        "eval_fault_runs": bool,
    }),
    "fidelity": Block({
        "step_tolerance": non_negative(int),
        "device_memory_gb": positive(float),
        "usable_share": interval(float, 0, 1, lo_open=True),
        "cost": Block({"seq_len": positive(int), "steps": positive(int), "rounds": positive(int)}),
        "detector": Block({
            "grad_spike_factor": positive(float),
            "kl_blowup_factor": positive(float),
            "kl_blowup_min": non_negative(float),
            "reward_window": positive(int),
            "reward_collapse_frac": _SHARE,
            "reward_min": non_negative(float),
            "expert_collapse_share": _SHARE,
            "update_frozen": non_negative(float),
            "grad_collapse_factor": positive(float),
            "grad_collapse_steps": positive(int),
            "logprob_mismatch_factor": positive(float),
            "logprob_mismatch_min": non_negative(float),
            "divergence_rel": positive(float),
            "divergence_factor": positive(float),
            "divergence_steps": positive(int),
            "divergence_floor": non_negative(float),
        }),
    }),
}))

def validate_params(params: dict, source: str = "params") -> None:
    """Validate every registered block present in ``params``.

    Raises:
        ParamsError: the first mismatch, prefixed with ``source`` (the file).
    """
    for name, spec in BLOCKS.items():
        if name in params:
            try:
                check(params[name], spec, name)
            except ParamsError as exc:
                raise ParamsError(f"{source}: {exc}") from None



def load_params(path: str | Path = "params.yaml", section: str | None = None) -> dict[str, Any]:
    """Return the whole params file, or one top-level ``section`` of it, validated
    against the registered schemas (:func:`validate_params`).

    Raises:
        FileNotFoundError: the params file does not exist.
        KeyError: ``section`` is not a top-level key of the file.
        ParamsError: an unknown key or a value of the wrong type in a registered block.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"params file {path} not found (give --params PATH)")
    with open(path, encoding="utf-8") as fh:
        try:
            params = yaml.safe_load(fh) or {}
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
            raise ParamsError(f"{path}:{where} not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
    if not isinstance(params, dict):
        raise ParamsError(f"{path}: expected a mapping of blocks, got {type(params).__name__}")
    if section is None:
        validate_params(params, str(path))
        return params
    if section not in params:
        raise KeyError(f"{path}: no section {section!r} (has: {sorted(params)})")
    validate_params({section: params[section]}, str(path))
    return params[section]

