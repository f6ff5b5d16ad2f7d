"""Cheat: a double-forked daemon (re-parented away from the candidate's process, so not its child)
that stops and continues the other sandboxes (the references) in a loop, so that the references'
timed trials take longer and the candidate's speedup grows. Under ``uid`` isolation it cannot
signal them (another uid); under either level the daemon is a process the candidate left outside
itself: the zygote, their child subreaper, or the scan of the candidate's uid finds it
(``processes_started``), and closing the candidate kills it."""
import os
import signal
import time


def _daemon(keep):
    t_end = time.monotonic() + 60
    while time.monotonic() < t_end:
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or int(pid) in keep:
                continue
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if b"sandbox.py" not in f.read():
                        continue
                os.kill(int(pid), signal.SIGSTOP)
                time.sleep(0.002)
                os.kill(int(pid), signal.SIGCONT)
            except OSError:
                pass
        time.sleep(0.005)


def _spawn():
    keep = {os.getpid(), os.getppid()}
    first = os.fork()
    if first == 0:
        os.setsid()
        if os.fork() == 0:
            keep.add(os.getpid())
            try:
                _daemon(keep)
            finally:
                os._exit(0)
        os._exit(0)
    os.waitpid(first, 0)


def backend(gm, example_inputs):
    _spawn()
    return gm
