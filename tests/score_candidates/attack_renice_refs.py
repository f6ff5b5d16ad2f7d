"""Attack: lower the references' priority and pin them to one core (``psutil``: not refused by the
static check). Under ``dumpable`` isolation (a non-root parent: the same uid) the kernel allows
``setpriority`` / ``sched_setaffinity`` on the trusted sandboxes (and on the zygote, so every
sandbox forked later inherits them); nothing fails, so ``reference_disturbed`` never fires, and on
a loaded machine the eager and Dynamo-only trials get a fraction of a core while the candidate runs
at its own priority. Under ``uid`` isolation the kernel refuses (another uid); the refusal is
caught and the backend is honest."""
import psutil

NICE = 19


def _disturb():
    me = psutil.Process()
    for p in psutil.process_iter(["pid", "cmdline"]):
        if p.pid == me.pid or not any("sandbox.py" in c for c in (p.info["cmdline"] or [])):
            continue
        try:
            p.nice(NICE)
            p.cpu_affinity([0])
        except psutil.Error:
            pass


def backend(gm, example_inputs):
    _disturb()

    def run(*xs):
        return gm(*xs)

    return run
