"""Full-scale params: ``params.yaml`` with an override file deep-merged over it.

The stage CLIs read their blocks from one params file; a shard gets a merged copy
(``<work>/shards/<id>/params.yaml``) so that ``python -m extract capture --params ...`` and the rest
run unchanged. The ``fullscale`` block is the orchestrator's and is dropped from that copy.
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import yaml

from fullscale.config import FullScaleConfig, fullscale_config
from passnet_common.params import validate_params


def deep_merge(base: dict, over: dict) -> dict:
    """``base`` with ``over`` merged in: mappings recursively, every other value (lists included) replaced.

    Returns a new mapping; neither argument is changed.
    """
    out = copy.deepcopy(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def _params_file(path: str | Path, flag: str = "--params") -> Path:
    """``path`` when it is a file; else FileNotFoundError worded as every family's params loader words it,
    naming the option that gave it (``flag``)."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"params file {path} not found (give {flag} PATH)")
    return Path(path)


def merged_params(base: str | Path = "params.yaml", *overrides: str | Path | dict) -> tuple[dict, FullScaleConfig]:
    """The stage params (``base`` with each override merged in order, ``fullscale`` removed) and the
    validated ``fullscale`` config.

    Raises:
        FileNotFoundError: a params file is missing.
        passnet_common.spec.ParamsError: a registered block of the merge is invalid.
    """
    params = yaml.safe_load(_params_file(base).read_text()) or {}
    for o in overrides:
        over = o if isinstance(o, dict) else (yaml.safe_load(_params_file(o, "--full / --override").read_text()) or {})
        params = deep_merge(params, over)
    cfg = fullscale_config(params.pop("fullscale", None))
    validate_params(params, "merged params")
    return params, cfg


def params_digest(params: dict) -> str:
    """sha256 of the canonical JSON of ``params`` (recorded in every shard manifest)."""
    return hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()


def write_params(params: dict, path: Path) -> Path:
    """``params`` as YAML at ``path`` (parents created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(params, sort_keys=False))
    return path


def stage_block(params: dict, dotted: str) -> Any:
    """``params["a"]["b"]`` for ``"a.b"`` (None when absent)."""
    cur: Any = params
    for k in dotted.split("."):
        if not isinstance(cur, dict) or k not in cur:
            return None
        cur = cur[k]
    return cur
