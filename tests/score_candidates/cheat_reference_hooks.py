"""Cheat: forward pre-hooks on the evaluator's own eager / Dynamo-only references (found through
``torch.sys.modules``), so that the references run slower than the candidate. Refused statically
(attributes ``sys``, ``modules``, ``__dict__``); the references run in another process."""
import torch


def slow(module, args):
    for _ in range(50):
        torch.mm(torch.ones(64, 64), torch.ones(64, 64))


def backend(gm, example_inputs):
    for mod in list(torch.sys.modules.values()):
        for value in list(getattr(mod, "__dict__", {}).values()):
            if isinstance(value, torch.fx.GraphModule) and value is not gm:
                value.register_forward_pre_hook(slow)
    return gm
