"""The 100,000-repo Hub crawl end to end against the local stand-in (passnet_common/hub_standin.py),
killed and resumed, feeding the extract stage's catalog. Writes ``metrics/bench/crawl_100k.json``.

Phases (each a child process; the stand-in server runs in its own process):

1. Download speedup of the thread pool: the first ``--speedup-repos`` repos listed and their
   ``config.json`` downloaded with ``workers=1`` (the baseline, measured in the same run) and
   with ``workers=<hub.workers>``; ms per repo and the ratio.
2. The full crawl, ``python -m extract crawl`` exactly as a user runs it, SIGKILLed at seeded
   random points (``--kills``: the first during the listing, the others during the downloads,
   by rows written) and restarted until it exits 0. Wall time of every segment, peak RSS of
   every segment (``wait4`` rusage of the crawl process) and of the server.
3. Check against ground truth computed independently from the listing generator
   (:class:`extract.sources.hub_configs.Listing`): every position present once, with the repo id, sha,
   status, reason and graph config hash the generator implies (faults by kind, configs through
   :func:`extract.sources.hub_crawl.classify_config`); the set of distinct graph configs equal.
4. Feed the extract stage: ``python -m extract catalog`` with ``catalog.hub_dir`` set to the
   crawl's work folder (and no other source): one ``models`` row per distinct graph config.

    nice -n 15 python -m benchmarks.crawl_100k [--repos 100000] [--kills 3] [--keep DIR]
    nice -n 15 python -m benchmarks.crawl_100k --speedup-only --speedup-repos 1000 \
        --out metrics/bench/crawl_download_speedup.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FAULT_REASON = {"gated": ("skipped", "gated_no_access"), "private": ("skipped", "private_no_access"),
                "no_config": ("skipped", "no_config"), "malformed": ("error", "malformed_json"),
                "remote_code": ("skipped", "remote_code"), "unknown_model_type": ("skipped", "unknown_model_type")}


class LineCounter:
    """Newlines of a growing file, read incrementally (cheap to poll)."""

    def __init__(self, path: Path):
        self.path, self.offset, self.lines = path, 0, 0

    def poll(self) -> int:
        if not self.path.exists():
            return 0
        size = self.path.stat().st_size
        if size < self.offset:  # cut by a restart: recount
            self.offset, self.lines = 0, 0
        with open(self.path, "rb") as fh:
            fh.seek(self.offset)
            data = fh.read()
        self.offset += len(data)
        self.lines += data.count(b"\n")
        return self.lines


def _run_segment(cmd: list[str], env: dict, kill_at: tuple[Path, int] | None) -> dict:
    """Run ``cmd``; SIGKILL it when ``kill_at`` = (file, lines) is reached. Returns rc, wall
    seconds, peak RSS (MiB, from wait4), and the line count seen at the kill."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    counter = LineCounter(kill_at[0]) if kill_at else None
    killed_at = None
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if counter is not None and killed_at is None and counter.poll() >= kill_at[1]:
            killed_at = counter.lines
            os.kill(p.pid, signal.SIGKILL)
        time.sleep(0.2)
    p.returncode = os.waitstatus_to_exitcode(status)
    out = p.stdout.read()
    return {"rc": p.returncode, "wall_s": round(time.perf_counter() - t, 2), "peak_rss_mib": round(ru.ru_maxrss / 1024, 1),
            "killed_at_lines": killed_at, "file": kill_at[0].name if kill_at else None,
            "tail": out.strip().splitlines()[-3:]}


def _speedup(endpoint: str, n: int, workers: int, tmp: str, order: tuple = (1, None)) -> dict:
    """ms/repo of listing-ordered config downloads of ``n`` repos with 1 thread and with
    ``workers`` threads, each on a fresh work folder and Hub cache, in ``order`` (``None`` =
    ``workers``; a repeated order such as (1, W, W, 1) averages out load drift)."""
    order = [workers if w is None else w for w in order]
    code = f"""
import json, sys, time
from pathlib import Path
from huggingface_hub import constants
constants.HF_HUB_OFFLINE = False
from extract.sources import hub_crawl
hub_crawl._transformers_names()
res = []
for k, w in enumerate({order!r}):
    work = Path({tmp!r}) / f"speedup_{{k}}_w{{w}}"; work.mkdir(parents=True)
    params = {{"limit": {n}, "workers": w, "chunk": 256}}
    hub_crawl._list(params, work, {endpoint!r}, False)
    t = time.perf_counter()
    hub_crawl._download(params, work, {n}, {endpoint!r}, False, str(work / "cache"), False)
    res.append([w, time.perf_counter() - t])
print(json.dumps(res))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    runs = json.loads(out.stdout.strip().splitlines()[-1])
    mean = {w: sum(t for ww, t in runs if ww == w) / sum(1 for ww, _ in runs if ww == w) for w in (1, workers)}
    return {"repos": n, "workers": workers, "order": order, "ms_per_repo_workers_1": round(1000 * mean[1] / n, 2),
            f"ms_per_repo_workers_{workers}": round(1000 * mean[workers] / n, 2),
            "speedup_vs_workers_1": round(mean[1] / mean[workers], 2)}


def _ground_truth_check(work: Path, n: int) -> dict:
    import pyarrow.parquet as pq

    from extract.sources.hub_configs import Listing, graph_config_hash
    from extract.sources.hub_crawl import classify_config

    t = time.perf_counter()
    tab = pq.read_table(work / "hub_repos.parquet", columns=["position", "repo_id", "sha", "status", "reason",
                                                              "graph_config_hash"]).to_pylist()
    listing = Listing(n)
    mismatches, expected_hashes, matching = [], set(), 0
    positions = [r["position"] for r in tab]
    for i in range(n):
        r = listing.repo(i)
        if r["fault"] in ("gated", "private", "no_config", "malformed"):  # refused or unreadable before any parse
            st, reason, h = *FAULT_REASON[r["fault"]], None
        else:  # served configs (remote_code / unknown_model_type faults too): the crawler's classification
            cfg = json.loads(r["config_bytes"])
            st, reason, _ = classify_config(cfg)
            h = graph_config_hash(cfg) if st == "ok" else None
        if h:
            expected_hashes.add(h)
        got = tab[i] if i < len(tab) else None
        want = {"position": i, "repo_id": r["id"], "sha": r["sha"], "status": st, "reason": reason, "graph_config_hash": h}
        if got == want:
            matching += 1
        elif len(mismatches) < 5:
            mismatches.append({"want": want, "got": got})
    crawled = {json.loads(line)["graph_config_hash"] for line in open(work / "hub_configs.jsonl", encoding="utf-8")}
    return {"rows": len(tab), "positions_unique": len(set(positions)) == len(positions),
            "rows_matching_ground_truth": matching,
            "mismatch_examples": mismatches, "distinct_configs_ground_truth": len(expected_hashes),
            "distinct_configs_equal_ground_truth": crawled == expected_hashes, "check_s": round(time.perf_counter() - t, 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repos", type=int, default=100_000)
    ap.add_argument("--kills", type=int, default=3, help="SIGKILLs: 1 during the listing, the rest during downloads")
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--speedup-repos", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", default=None, help="work folder to keep (default: a temporary one)")
    ap.add_argument("--out", default="metrics/bench/crawl_100k.json")
    ap.add_argument("--speedup-only", action="store_true",
                    help="only the thread-pool download speedup, 1/W/W/1 threads (writes --out)")
    args = ap.parse_args()
    if args.speedup_only:
        server = subprocess.Popen([sys.executable, "-m", "benchmarks.hub_listing", str(args.repos)], stdout=subprocess.PIPE,
                                  text=True)
        try:
            with tempfile.TemporaryDirectory() as tmp:
                res = _speedup(server.stdout.readline().strip(), args.speedup_repos, args.workers, tmp,
                               order=(1, None, None, 1))
        finally:
            server.terminate()
            server.wait()
        print(json.dumps(res))
        Path(args.out).write_text(json.dumps(res, indent=1, sort_keys=True) + "\n")
        return
    t_all = time.perf_counter()
    tmp_ctx = tempfile.TemporaryDirectory()
    root = Path(args.keep) if args.keep else Path(tmp_ctx.name)
    root.mkdir(parents=True, exist_ok=True)
    work = root / "hub"
    server = subprocess.Popen([sys.executable, "-m", "benchmarks.hub_listing", str(args.repos)], stdout=subprocess.PIPE, text=True)
    res: dict = {"repos": args.repos, "workers": args.workers, "seed": args.seed}
    try:
        endpoint = server.stdout.readline().strip()
        res["download_speedup"] = _speedup(endpoint, args.speedup_repos, args.workers, str(root))
        print("speedup:", res["download_speedup"], flush=True)
        params = root / "params.yaml"
        import yaml

        params.write_text(yaml.safe_dump({
            "hub": {"endpoint": endpoint, "filter": "transformers", "pipeline_tag": None, "sort": "downloads",
                    "limit": args.repos, "workers": args.workers, "chunk": 256, "max_retries": 3, "timeout_s": 10,
                    "listing_restarts": 5},
            "catalog": {"mode": "default", "default": [], "hub_dir": str(work)}}))
        rng = random.Random(args.seed)
        n = args.repos
        kills = []
        if args.kills >= 1:
            kills.append((work / "listing.jsonl", rng.randrange(n // 10, 9 * n // 10)))
        dl_points = sorted(rng.randrange(n // 20, 19 * n // 20) for _ in range(max(0, args.kills - 1)))
        kills += [(work / "results.jsonl", k) for k in dl_points]
        env = dict(os.environ, HF_HUB_DISABLE_TELEMETRY="1", HF_HUB_DISABLE_PROGRESS_BARS="1")
        env.pop("HF_HUB_OFFLINE", None)
        cmd = [sys.executable, "-m", "extract", "crawl", "--params", str(params), "--work", str(work),
               "--cache", str(root / "cache")]
        segments = []
        t_crawl = time.perf_counter()
        while True:
            kill_at = kills[len(segments)] if len(segments) < len(kills) else None
            seg = _run_segment(cmd, env, kill_at)
            segments.append(seg)
            print("segment:", json.dumps(seg), flush=True)
            if seg["rc"] == 0:
                break
            if seg["killed_at_lines"] is None:
                raise RuntimeError(f"crawl failed without a kill: {seg}")
            if len(segments) > len(kills) + 2:
                raise RuntimeError("crawl does not finish")
        res["crawl_wall_s"] = round(time.perf_counter() - t_crawl, 1)
        res["segments"] = segments
        res["kills"] = sum(1 for s in segments if s["killed_at_lines"] is not None)
        res["resumes"] = len(segments) - 1
        res["crawl_peak_rss_mib"] = max(s["peak_rss_mib"] for s in segments)
        summary = json.loads((work / "crawl_summary.json").read_text())
        res["listed"] = summary["listed"]
        res["distinct_configs"] = summary["distinct_configs"]
        res["by_status"] = summary["by_status"]
        res["skipped_by_reason"] = {k.split(":", 1)[1]: v for k, v in summary["by_status"].items() if k.startswith("skipped:")}
        res["errors_by_reason"] = {k.split(":", 1)[1]: v for k, v in summary["by_status"].items() if k.startswith("error:")}
        t = time.perf_counter()
        cat = subprocess.run([sys.executable, "-m", "extract", "catalog", "--params", str(params), "--out",
                              str(root / "models.parquet")], capture_output=True, text=True, env=env)
        if cat.returncode != 0:
            raise RuntimeError(f"catalog failed: {cat.stdout[-2000:]} {cat.stderr[-2000:]}")
        import pyarrow.parquet as pq

        models = pq.read_table(root / "models.parquet", columns=["model_id", "source", "trust_remote_code"]).to_pylist()
        res["extract_catalog"] = {"models_rows": len(models), "hf_rows": sum(1 for m in models if m["source"] == "hf"),
                                  "trust_remote_code_rows": sum(1 for m in models if m["trust_remote_code"]),
                                  "wall_s": round(time.perf_counter() - t, 1),
                                  "equals_distinct_configs": len(models) == summary["distinct_configs"]}
        res["ground_truth"] = _ground_truth_check(work, n)
    finally:
        server.terminate()
        try:
            _, _, ru = os.wait4(server.pid, 0)
            res["server_peak_rss_mib"] = round(ru.ru_maxrss / 1024, 1)
        except ChildProcessError:
            pass
        if not args.keep:
            tmp_ctx.cleanup()
    res["total_wall_s"] = round(time.perf_counter() - t_all, 1)
    print(f"{'metric':40s} value")
    for k, v in res.items():
        if k not in ("segments", "by_status"):
            print(f"{k:40s} {v}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(args.out).with_suffix(".tmp")
    tmp.write_text(json.dumps(res, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
