"""A shard entry without stages for the executor tests (importable by Ray workers: module level)."""

import json


def stub_shard_entry(spec: dict) -> dict:
    """Shard ``spec["shard"]`` with one model and no files but its manifest; shard 2 raises."""
    man = {"shard": spec["shard"], "models": [f"m{spec['shard']}"], "counts": {"models": 1, "tasks": 0}, "phases": [],
           "machine": {}, "code": {}, "finished_utc": "t"}
    if spec["shard"] == 2:
        raise RuntimeError("shard 2 breaks")
    return {"shard": spec["shard"], "ok": True, "manifest": man, "files": {"manifest.json": json.dumps(man).encode()}}
