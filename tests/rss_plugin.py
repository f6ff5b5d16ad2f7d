"""Peak resident memory per test, for finding the suite's largest consumers (not loaded by default).

    PASSNET_RSS_LOG=/tmp/rss.jsonl python -m pytest -p tests.rss_plugin -m "not slow" -q

After each test one JSON line: ``nodeid``, ``self_peak_kb`` (the pytest process's peak RSS so
far, ``getrusage(RUSAGE_SELF).ru_maxrss``), ``children_peak_kb`` (the largest reaped child's
peak RSS so far: forked captures, spawned workers) and ``self_now_kb`` (the current RSS, from
``/proc/self/statm``). A file whose tests raise ``self_peak_kb`` or ``children_peak_kb`` is what
set the suite's peak. No line is written without ``PASSNET_RSS_LOG``.
"""

from __future__ import annotations

import json
import os
import resource


def _rss_now_kb() -> int | None:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    except (OSError, ValueError, IndexError):
        return None


def pytest_runtest_logfinish(nodeid, location):
    path = os.environ.get("PASSNET_RSS_LOG")
    if not path:
        return
    rec = {"nodeid": nodeid, "self_peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
           "children_peak_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "self_now_kb": _rss_now_kb()}
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(rec) + "\n")


def summarize(lines: list[dict], top: int = 8) -> dict:
    """Per test file, how much it raised the pytest process's peak RSS (``self_gain_mb``) and the
    largest child's (``child_gain_mb``), from the lines of one run in order; the ``top`` files by
    the larger of the two, and the run's final peaks. MB = 2**20 bytes."""
    files: dict[str, dict] = {}
    prev_self = prev_child = 0
    for r in lines:
        f = files.setdefault(r["nodeid"].split("::")[0], {"self_gain_mb": 0.0, "child_gain_mb": 0.0, "tests": 0})
        f["self_gain_mb"] += max(0, r["self_peak_kb"] - prev_self) / 1024
        f["child_gain_mb"] += max(0, r["children_peak_kb"] - prev_child) / 1024
        f["tests"] += 1
        prev_self, prev_child = max(prev_self, r["self_peak_kb"]), max(prev_child, r["children_peak_kb"])
    ranked = sorted(files.items(), key=lambda kv: -max(kv[1]["self_gain_mb"], kv[1]["child_gain_mb"]))[:top]
    return {"self_peak_mb": round(prev_self / 1024), "children_peak_mb": round(prev_child / 1024),
            "tests": len(lines), "top": {k: {n: round(v) if isinstance(v, float) else v for n, v in d.items()}
                                         for k, d in ranked}}


if __name__ == "__main__":  # python -m tests.rss_plugin RSS.jsonl [--out metrics/bench/test_rss.json]
    import argparse

    ap = argparse.ArgumentParser(description="summarize a PASSNET_RSS_LOG file")
    ap.add_argument("log")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    with open(a.log, encoding="utf-8") as fh:
        s = summarize([json.loads(x) for x in fh if x.strip()])
    print(json.dumps(s, indent=1))
    if a.out:
        from pathlib import Path

        from passnet_common.io import atomic_write_json

        atomic_write_json(Path(a.out), s)
