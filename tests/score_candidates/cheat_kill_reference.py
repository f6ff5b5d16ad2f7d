"""Cheat: kill the reference sandboxes (every other ``sandbox.py`` process but the zygote, this
process's parent) while it is scored, so that the subgraph becomes ``reference_failed`` and is
left out of its scores instead of being charged to it. Under ``uid`` isolation the kill is
refused by the kernel (``sandbox_denied``); where it is not (``dumpable`` isolation: the same
uid), the reference failure is charged to the candidate (``reference_disturbed``) once the
reference runs again without it."""
import os
import signal


def _kill_references():
    keep = {os.getpid(), os.getppid()}
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) in keep:
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"sandbox.py" not in f.read():
                    continue
        except OSError:
            continue
        os.kill(int(pid), signal.SIGKILL)


def backend(gm, example_inputs):
    def run(*xs):
        _kill_references()
        return gm(*xs)

    return run
