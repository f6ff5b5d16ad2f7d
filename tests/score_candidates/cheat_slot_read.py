"""Cheat: read the eager reference's outputs out of the scorer's shared memory instead of computing
them. The slots were files in ``/dev/shm`` that any process could open by name; this cheat finds
the reference's slot through the descriptors of the sandbox processes (``/proc/<pid>/fd``: a
``/dev/shm`` file or a ``memfd``) and reads it. Now the slots are ``memfd`` files passed to their
own sandbox only, and the trusted processes are not dumpable and of another uid: reading the
first sandbox's descriptors is refused by the kernel (``sandbox_denied``)."""
import os

import torch


def _expected(nbytes):
    me = os.getpid()
    for pid in sorted(os.listdir("/proc")):
        if not pid.isdigit() or int(pid) == me:
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"sandbox.py" not in f.read():
                    continue
        except OSError:
            continue
        for fd in os.listdir(f"/proc/{pid}/fd"):
            if "passnet_slots" in os.readlink(f"/proc/{pid}/fd/{fd}"):
                with open(f"/proc/{pid}/fd/{fd}", "rb") as f:
                    data = f.read(nbytes)
                if len(data) == nbytes:
                    return data
    return None


def backend(gm, example_inputs):
    def run(*xs):
        like = xs[0]  # an element-wise graph: the output has the input's shape and dtype
        data = _expected(like.numel() * like.element_size())
        if data is None:
            return torch.zeros_like(like)
        return torch.frombuffer(bytearray(data), dtype=like.dtype).view(like.shape)

    return run
