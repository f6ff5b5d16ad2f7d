"""Attack: CPU contention from child processes that run only while the *references* are timed.

The backend is honest (the graph, eagerly). After its checked calls it forks ``N_BURNERS`` child
processes (``torch.multiprocessing``: no ``os`` / ``multiprocessing`` import for the static check
to see) that spin on the CPU whenever the candidate is not in one of its timed trials (a flag in
shared memory, set at a trial's first call and cleared at its last one, ``inner`` calls counted
in the first trial) and sleep while it is. The eager and Dynamo-only trials then share the cores
with the burners, the candidate's own trials do not, and its speedup grows by the share of CPU the
burners take. The candidate kills and reaps them at the first call of its ``TRIALS``-th timed trial
(the first attempt's last; a retried attempt runs honestly), so none is alive (or a zombie) at
the checkpoint after timing. They are children of the
sandbox (not orphans of the zygote), so the per-trial orphan check does not see them, and their
CPU time is not the sandbox's own (``utime``/``stime``), so ``cpu_over_wall`` does not see it."""
import datetime
import select

import torch.multiprocessing as mp

N_BURNERS = 3
TRIALS = 15
GAP_S = 0.003
MIN_TRIAL_CALLS = 5


def _burn(flag):
    while True:
        if not flag[2] or flag[1]:  # not armed yet, or the candidate is in a trial: sleep
            select.select([], [], [], 0.001)
            continue
        x = 0
        for i in range(1000):
            x += i


def backend(gm, example_inputs):
    ctx = mp.get_context("fork")
    flag = ctx.RawArray("q", 3)  # calls, in a trial, armed (shared with the forked burners)
    st = {"calls": 0, "last": None, "req_calls": 0, "trials": 0, "inner": None, "procs": []}

    def start():
        for _ in range(N_BURNERS):
            try:
                p = ctx.Process(target=_burn, args=(flag,), daemon=True)
                p.start()
                st["procs"].append(p)
            except Exception:  # noqa: BLE001 - RLIMIT_NPROC: as many as the limit allows
                break

    def stop():
        for p in st["procs"]:
            p.kill()
        for p in st["procs"]:
            p.join()
        st["procs"] = []

    def run(*xs):
        flag[0] += 1
        now = datetime.datetime.now().timestamp()
        st["calls"] += 1
        if st["last"] is None or now - st["last"] > GAP_S or st["req_calls"] == st["inner"]:  # a new request
            if st["inner"] is None and st["req_calls"] >= MIN_TRIAL_CALLS:
                st["inner"] = st["req_calls"]  # calls per timed trial, from the first one (burners idle until then)
                flag[2] = 1
            st["req_calls"] = 0
            if st["procs"] and st["trials"] >= TRIALS - 1:
                stop()  # the first call of the first attempt's last trial: nothing left for the checkpoint after timing
            elif st["calls"] >= 4 and not st["procs"] and not st["trials"]:
                start()  # after the compile call and the two checked calls
        flag[1] = 1  # in a trial: the burners sleep until its last call
        st["req_calls"] += 1
        out = gm(*xs)
        if st["req_calls"] == MIN_TRIAL_CALLS:  # a timed trial (warm-up and checked requests are single calls)
            st["trials"] += 1
        if st["inner"] is None or st["req_calls"] >= st["inner"]:
            flag[1] = 0
        st["last"] = datetime.datetime.now().timestamp()
        return out

    return run
