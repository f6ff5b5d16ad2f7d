"""Cheat: read the eager reference's outputs out of the scorer's shared memory instead of computing
them: the slots were files in ``/dev/shm`` any process could open by name; failing that, the
descriptors of the other processes (``/proc/<pid>/fd``). Now the slots are ``memfd`` files passed
to their own sandbox only, and the trusted processes are another uid's and not dumpable: the
first ``/proc/<pid>/fd`` it lists is refused by the kernel (``sandbox_denied``)."""
import glob
import os

import torch


def _expected(nbytes):
    for path in sorted(glob.glob("/dev/shm/passnet_slots_*")):
        if os.path.getsize(path) >= nbytes:
            with open(path, "rb") as f:
                return f.read(nbytes)
    for pid in sorted(os.listdir("/proc")):
        if not pid.isdigit() or int(pid) in (os.getpid(), 1):
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
