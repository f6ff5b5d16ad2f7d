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


def size2(value: Any, default: int = 224) -> tuple[int, int]:
    """``(height, width)`` of a config size: an int (square), a list / tuple (its last two, or
    its one value), a ``{height, width}`` / ``{shortest_edge}`` dict, or ``default`` for None."""
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


def config_attr(config: Any, *names: str, default: Any = None) -> Any:
    """The first of ``names`` that is set (not None) on ``config``, then on its sub-configs
    (:data:`SUB_CONFIG_KEYS`, in that order); ``default`` when none is."""
    for sub in (config, *(getattr(config, k, None) for k in SUB_CONFIG_KEYS)):
        if sub is None:
            continue
        for n in names:
            v = getattr(sub, n, None)
            if v is not None:
                return v
    return default


def make_input(spec: list, name: str, shape: list[int], dtype: torch.dtype, kind: str, device, low=None, high=None, fill=None, gen=None):
    """Append the spec entry of input ``name`` to ``spec`` and return its tensor
    (:func:`synth_tensor`, drawn from ``gen``)."""
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
