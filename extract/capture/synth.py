"""Input synthesis primitives: the input spec entry, seeded tensors, config look-ups.

Every input is described by a spec entry ``{name, shape, dtype, kind, low, high}`` (token ids
are drawn uniformly from ``[low, high)``); the spec is stored with the extraction so a stored
graph can be fed again. :class:`UnsupportedInput` names an input no rule can build.
"""

from __future__ import annotations

from typing import Any

import torch


class UnsupportedInput(ValueError):
    """The model requires an input this synthesiser does not know how to build."""


def _size2(value: Any, default: int = 224) -> tuple[int, int]:
    if value is None:
        return default, default
    if isinstance(value, (list, tuple)):
        if len(value) >= 2:
            return int(value[-2]), int(value[-1])
        return int(value[0]), int(value[0])
    if isinstance(value, dict):
        h = value.get("height") or value.get("shortest_edge") or default
        w = value.get("width") or value.get("shortest_edge") or default
        return int(h), int(w)
    return int(value), int(value)


# Sub-configs searched for sizes, in this order, after the config itself.
SUB_CONFIG_KEYS = ("vision_config", "text_config", "audio_config", "encoder_config", "model_config")


def _get(config: Any, *names: str, default: Any = None) -> Any:
    for sub in (config, *(getattr(config, k, None) for k in SUB_CONFIG_KEYS)):
        if sub is None:
            continue
        for n in names:
            v = getattr(sub, n, None)
            if v is not None:
                return v
    return default


def _make(spec: list, name: str, shape: list[int], dtype: torch.dtype, kind: str, device, low=None, high=None, fill=None, gen=None):
    spec.append({"name": name, "shape": list(shape), "dtype": str(dtype).replace("torch.", ""), "kind": kind, "low": low, "high": high})
    return synth_tensor(shape, dtype, device, low=low, high=high, fill=fill, gen=gen)


def synth_tensor(shape, dtype, device, low=None, high=None, fill=None, gen=None) -> torch.Tensor:
    """A tensor of ``shape``/``dtype`` on ``device``: ``fill`` constant, ints uniform in
    ``[low, high)``, floats standard normal. On the meta device only metadata exists."""
    if str(device) == "meta":
        return torch.empty(shape, dtype=dtype, device="meta")
    if fill is not None:
        return torch.full(shape, fill, dtype=dtype, device=device)
    if dtype.is_floating_point:
        return torch.randn(shape, dtype=dtype, device=device, generator=gen)
    if dtype == torch.bool:
        return torch.ones(shape, dtype=dtype, device=device)
    return torch.randint(int(low or 0), int(high or 2), shape, dtype=dtype, device=device, generator=gen)
