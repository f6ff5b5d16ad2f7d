"""The Hub crawl under injected faults loses nothing (extract/sources/hub_crawl.py against
passnet_common/hub_standin.py).

Three crawls of the same ``--repos``-repo listing in this run:

1. clean: the reference table;
2. faulted: a 429 storm of ``--storm`` requests (``Retry-After: 0``) starting after the listing,
   a persistent 500-class answer (503) on ``--fail`` repos that are ok in the clean crawl, and a
   pagination loop (the page at cursor 200 links back to the first page once, the page at cursor
   100 serves the previous page's items once);
3. the re-run of 2 after the faults are gone (the crawl's own retry of retryable rows).

Reports the rows of 2 by reason, the ok configs of the clean crawl that 2 did not get, and what
3 still differs from 1 (``lost_after_rerun``: the figure that must be 0). Wall times depend on
load; nothing is asserted.

    nice -n 10 python -m benchmarks.crawl_faults [--repos 400] [--storm 600] [--fail 8]

Writes ``metrics/bench/crawl_faults.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repos", type=int, default=400)
    ap.add_argument("--storm", type=int, default=600)
    ap.add_argument("--fail", type=int, default=8)
    ap.add_argument("--out", type=Path, default=Path("metrics/bench/crawl_faults.json"))
    a = ap.parse_args(argv)
    import pyarrow.parquet as pq

    from extract.sources import hub_crawl
    from extract.sources.hub_configs import Listing
    from passnet_common.hub_standin import HubStandIn
    from passnet_common.io import atomic_write_json

    params = {"limit": a.repos, "workers": 8, "chunk": 64, "max_retries": 3, "timeout_s": 5,
              "backoff_s": 0.05, "backoff_max_s": 1.0}
    listing = Listing(a.repos, seed=0)

    def key(r):
        return r["status"] + (":" + r["reason"] if r["reason"] else "")

    with tempfile.TemporaryDirectory() as tmp, HubStandIn(listing=listing, page_size=100) as hub:
        tmp = Path(tmp)
        t0 = time.time()
        hub_crawl.crawl(params, tmp / "clean", cache_dir=tmp / "cache_clean", endpoint=hub.endpoint, token=False,
                        offline=False)
        clean = pq.read_table(tmp / "clean" / "hub_repos.parquet").to_pylist()
        t_clean = time.time() - t0
        ok_ids = [r["repo_id"] for r in clean if r["status"] == "ok"]
        victims = ok_ids[:: max(1, len(ok_ids) // a.fail)][: a.fail]
        hub.faults.loop_next[200] = 1
        hub.faults.repeat_page[100] = 1
        real_list = hub_crawl._list

        def list_then_storm(*args, **kw):
            n = real_list(*args, **kw)
            with hub.faults.lock:
                hub.faults.storm_429, hub.faults.retry_after = a.storm, 0
                for rid in victims:
                    hub.faults.fail_5xx[rid] = 10 ** 9
            return n

        hub_crawl._list = list_then_storm
        t0 = time.time()
        try:
            hub_crawl.crawl(params, tmp / "f", cache_dir=tmp / "cache_f", endpoint=hub.endpoint, token=False,
                            offline=False)
        finally:
            hub_crawl._list = real_list
        t_fault = time.time() - t0
        faulted = pq.read_table(tmp / "f" / "hub_repos.parquet").to_pylist()
        n429 = hub.counts["429"]
        with hub.faults.lock:
            hub.faults.storm_429 = 0
            hub.faults.fail_5xx.clear()
        t0 = time.time()
        hub_crawl.crawl(params, tmp / "f", cache_dir=tmp / "cache_f", endpoint=hub.endpoint, token=False,
                        offline=False)
        t_rerun = time.time() - t0
        rerun = pq.read_table(tmp / "f" / "hub_repos.parquet").to_pylist()
    by_reason = Counter(key(r) for r in faulted)
    ok_clean = {r["repo_id"] for r in clean if r["status"] == "ok"}
    ok_fault = {r["repo_id"] for r in faulted if r["status"] == "ok"}
    out = {"command": "python -m benchmarks.crawl_faults " + " ".join(argv if argv is not None else sys.argv[1:]),
           "repos": a.repos, "storm_429_requests": a.storm, "answered_429": n429, "persistent_5xx_repos": len(victims),
           "clean_ok": len(ok_clean), "clean_s": round(t_clean, 1),
           "faulted_rows": len(faulted), "faulted_unique_repo_ids": len({r["repo_id"] for r in faulted}),
           "faulted_ok_missing": len(ok_clean - ok_fault), "faulted_s": round(t_fault, 1),
           **{f"faulted_{k.replace(':', '_')}": v for k, v in sorted(by_reason.items()) if not k.startswith("ok")},
           "rerun_s": round(t_rerun, 1),
           "lost_after_rerun": sum(1 for x, y in zip(clean, rerun) if x != y) + abs(len(clean) - len(rerun))}
    atomic_write_json(a.out, out, indent=1)
    print(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
