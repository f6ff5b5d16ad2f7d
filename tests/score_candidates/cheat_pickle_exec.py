"""Cheat (static-check bypass, a reviewer's): ``torch.load`` of a protocol-0 pickle whose REDUCE
calls ``builtins.exec`` runs any code in the candidate's process: ``torch.serialization.io``
reaches the ``io`` module that cannot be imported, and ``weights_only=False`` takes the legacy
unpickler. Here the code it runs only defines a helper (the reviewer's used it to reach the
sandbox loop's frames, ``sys.modules['__main__']`` and the reply pipe). Refused by the static
check: ``torch...serialization`` (a denied module), ``torch...load`` (a loader), ``weights_only``."""
import torch

_CODE = r'''
import torch
torch._pickle_exec_ran = lambda gm: gm.forward
'''


def _escape():
    payload = b"cbuiltins\nexec\n(S" + repr(_CODE).encode() + b"\n(dtR."
    try:
        torch.load(torch.serialization.io.BytesIO(payload), weights_only=False)
    except Exception:
        pass
    return torch._pickle_exec_ran


def backend(gm, example_inputs):
    return _escape()(gm)
