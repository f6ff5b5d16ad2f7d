"""One ``dvc repro`` of the whole default pipeline, timed per stage from DVC's own output.

What the README promises is the wall time of one ``dvc repro``; ``benchmarks/repro_budget.sh``
with ``MODE=single`` (its default) records that, not the sum of one ``dvc repro <stage>`` per
stage (each of which pays DVC's start-up and re-checks the upstream stages, ~2-4 s a stage).

This script starts ``dvc repro`` (arguments passed through), echoes its output, and at every
``Running stage '<name>':`` line (``dvc/stage/run.py``) reads the wall clock, the 1-minute load
average and the CPU seconds of DVC's process tree so far (``/proc/<pid>/stat``: user + system
of DVC itself plus ``cutime`` / ``cstime``, the CPU of every stage command DVC has waited for).
A stage's wall and CPU seconds are the differences to the next stage's line (the last stage: to
DVC's exit), so each includes DVC's own work around the command (hashing outputs, the lock);
a first row ``dvc_start`` holds DVC's start-up and status checks before its first stage, so the
rows sum to the run's wall time.
``foreach`` entries (``proxy_grpo@0`` ...) are summed under their stage name. Peak RSS is only
known for the whole run (``wait4``): per stage it is written as -1.

Writes the TSV of ``repro_budget.sh`` (stage, wall_s, user_s, sys_s, maxrss_kb, load1_before,
load1_after, rc) to the path given by ``--tsv`` plus a ``total`` file beside it
(``<tsv>.total.json``: the whole run's wall, user, system, peak RSS, exit code). Exit code: DVC's.

    python -m benchmarks.repro_budget_run --tsv metrics/bench/repro_budget.tsv [-- dvc repro args]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time

STAGE_LINE = re.compile(r"Running stage '([^']+)':")
_TICK = os.sysconf("SC_CLK_TCK")


def tree_cpu(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds of ``pid`` and every child it has waited for (``/proc/<pid>/stat``
    fields utime, stime, cutime, cstime). Raises OSError when the process is gone."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ut, st, cut, cst = (int(x) for x in fields[11:15])
    return (ut + cut) / _TICK, (st + cst) / _TICK


def load1() -> float:
    """The 1-minute load average."""
    return os.getloadavg()[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tsv", required=True)
    ap.add_argument("dvc_args", nargs="*", help="extra arguments for `dvc repro`")
    a = ap.parse_args(argv)
    t_start, l_start = time.perf_counter(), load1()
    proc = subprocess.Popen(["dvc", "repro", *a.dvc_args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            bufsize=1)
    marks: list[tuple[str, float, float, float, float]] = []  # (stage, wall, user, sys, load)
    for line in proc.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        m = STAGE_LINE.search(line)
        if m:
            try:
                u, s = tree_cpu(proc.pid)
            except OSError:
                u = s = float("nan")
            marks.append((m.group(1).split("@")[0], time.perf_counter(), u, s, load1()))
    _, status, ru = os.wait4(proc.pid, 0)
    rc = os.waitstatus_to_exitcode(status)
    t_end = time.perf_counter()
    user_end, sys_end = ru.ru_utime, ru.ru_stime  # DVC + every descendant it waited for
    rows: dict[str, list[float]] = {}
    order: list[str] = []
    for k, (name, t, u, s, ld) in enumerate(marks):
        t2, u2, s2, ld2 = (marks[k + 1][1:5] if k + 1 < len(marks) else (t_end, user_end, sys_end, load1()))
        if name not in rows:
            rows[name] = [0.0, 0.0, 0.0, ld, ld2]
            order.append(name)
        r = rows[name]
        r[0] += t2 - t
        r[1] += u2 - u
        r[2] += s2 - s
        r[4] = ld2
    lines = ["stage\twall_s\tuser_s\tsys_s\tmaxrss_kb\tload1_before\tload1_after\trc"]
    if marks:  # DVC's start-up and status checks before its first stage: part of the run's wall time
        lines.append(f"dvc_start\t{marks[0][1] - t_start:.2f}\t{marks[0][2]:.2f}\t{marks[0][3]:.2f}\t-1\t{l_start:.2f}"
                     f"\t{marks[0][4]:.2f}\t{rc}")
    for name in order:
        w, u, s, lb, la = rows[name]
        lines.append(f"{name}\t{w:.2f}\t{u:.2f}\t{s:.2f}\t-1\t{lb:.2f}\t{la:.2f}\t{rc}")
    tmp = a.tsv + ".part"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, a.tsv)
    total = {"wall_s": round(t_end - t_start, 2), "user_s": round(user_end, 2), "sys_s": round(sys_end, 2),
             "maxrss_kb": ru.ru_maxrss, "rc": rc, "load1_start": l_start, "load1_end": load1(),
             "before_first_stage_s": round(marks[0][1] - t_start, 2) if marks else None,
             "dvc_args": a.dvc_args}
    with open(a.tsv + ".total.json.part", "w") as f:
        json.dump(total, f, indent=1, sort_keys=True)
    os.replace(a.tsv + ".total.json.part", a.tsv + ".total.json")
    return rc


if __name__ == "__main__":
    sys.exit(main())
