"""The profile stage's sample of subgraphs (``curate.profile.sample_size`` / ``sample_seed``)."""

from __future__ import annotations

import random


def select_sample(rows: list[dict], size: int | None, seed: int) -> list[dict]:
    """Stratified seeded sample of profilable subgraphs: every structure family (``pattern``)
    gets one subgraph first (families in a seeded order; when ``size`` is below the number of
    families, a seeded subset of them), the rest is filled by a seeded draw over the remaining
    subgraphs (so large families keep their weight). Sorted by hash; ``size`` None = all."""
    ok = sorted((r for r in rows if r["status"] == "ok"), key=lambda r: r["subgraph_hash"])
    if size is None or size >= len(ok):
        return ok
    rng = random.Random(seed)
    fams: dict[str, list[dict]] = {}
    for r in ok:
        fams.setdefault(r.get("pattern") or "", []).append(r)
    order = sorted(fams)
    rng.shuffle(order)
    picked = [rng.choice(fams[f]) for f in order[:size]]
    seen = {r["subgraph_hash"] for r in picked}
    rest = [r for r in ok if r["subgraph_hash"] not in seen]
    picked += rng.sample(rest, max(0, size - len(picked)))
    return sorted(picked, key=lambda r: r["subgraph_hash"])
