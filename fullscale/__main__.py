r"""CLI of the full-scale build (docs/full_scale.md).

    python -m fullscale plan                      # the committed catalog and how it is cut into shards
    python -m fullscale run [--max-shards N] [--shards 3,7] [--executor ray] [--commit] [--stop-after 17:30]
                            [--deadline 17:45]
    python -m fullscale summary                   # metrics/full/summary.json from the committed shards
    python -m fullscale release                   # <out>/release/ from the committed shards (no build)
    python -m fullscale publish --repo org/name   # the release as a Hub dataset (HF_ENDPOINT honoured)
    python -m fullscale fetch [--repo org/name@sha]   # verify the committed release, or download one

Every command takes ``--params params.yaml --full params_full.yaml`` (the override file merged over
the default params) and ``--override FILE`` (more overrides, e.g. a smoke run's).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pyarrow.parquet as pq

from fullscale.hub import fetch_release, publish_release
from fullscale.params import merged_params, write_params
from fullscale.pipeline import ROOT
from fullscale.release import build_release, verify_release
from fullscale.runner import commit_shard, ensure_catalog, make_specs, pending_shards, run_local, run_ray
from fullscale.shards import split_catalog
from fullscale.summary import write_summary


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--full", default="params_full.yaml", help="override file merged over --params")
    p.add_argument("--override", action="append", default=[], help="more override files, merged in order")
    p.add_argument("--metrics", default="metrics/full/summary.json")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fullscale", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("plan", "run", "summary", "release", "publish", "fetch"):
        _common(sub.add_parser(name))
    r = sub.choices["run"]
    r.add_argument("--shards", default=None, help="comma-separated shard ids (default: every pending shard)")
    r.add_argument("--max-shards", type=int, default=None, help="run at most this many pending shards")
    r.add_argument("--executor", choices=("local", "ray"), default=None, help="default: fullscale.executor")
    r.add_argument("--commit", action="store_true", help="git-commit each finished shard (its folder + the summary)")
    r.add_argument("--stop-after", default=None, help="HH:MM UTC: start no shard after it (default: fullscale.stop_after_utc)")
    r.add_argument("--deadline", default=None, help="HH:MM UTC: stop a running stage then; its shard is recorded as failed "
                                                    "(the phase it stopped in) and runs again next time")
    sub.choices["publish"].add_argument("--repo", required=True)
    sub.choices["publish"].add_argument("--private", action="store_true")
    sub.choices["fetch"].add_argument("--repo", default=None, help="org/name[@revision]: download instead of verifying")
    args = ap.parse_args(argv)

    params, cfg = merged_params(args.params, *[f for f in [args.full, *args.override] if f])
    out, work = Path(cfg.out), Path(cfg.work)
    params_path = write_params(params, work / "params.yaml")
    command = "python -m fullscale " + " ".join(sys.argv[1:] if argv is None else argv)
    if args.cmd in ("plan", "run"):
        catalog = ensure_catalog(params_path, out)
        rows = pq.read_table(catalog).select(["model_id", "duplicate_of"]).to_pylist()
        sizes = {k: len(v) for k, v in split_catalog(rows, cfg.num_shards).items()}
        pending = pending_shards(out, cfg.num_shards, [int(s) for s in args.shards.split(",")] if getattr(args, "shards", None) else None)
        if args.cmd == "plan":
            print(json.dumps({"catalog": str(catalog), "models": len(rows), "num_shards": cfg.num_shards,
                              "models_per_shard": {"min": min(sizes.values()), "max": max(sizes.values())},
                              "pending": len(pending)}, indent=1))
            return 0
        if args.max_shards is not None:
            pending = pending[: args.max_shards]
        specs = make_specs(pending, cfg, params, catalog, out, work, args.deadline)

        def on_done(res: dict) -> None:
            s = write_summary(out, cfg.num_shards, args.metrics, command=command)
            state = "done" if res["ok"] else f"failed in {res['failure']['phase']}"
            c = res.get("manifest", {}).get("counts", {})
            print(f"shard {res['shard']}: {state}; {c.get('models', '-')} models, {c.get('captured', '-')} captured, "
                  f"{c.get('tasks', '-')} tasks; build {s['shards_done']}/{s['shards_total']} shards", flush=True)
            if args.commit:
                commit_shard(out, res["shard"], f"fullscale: shard {res['shard']} {state} "
                   f"({c.get('models', '-')} models, {c.get('captured', '-')} captured, {c.get('tasks', '-')} tasks); "
                   f"summary {s['shards_done']}/{s['shards_total']}")
        executor = args.executor or cfg.executor
        if executor == "ray":
            run_ray(specs, out, on_done=on_done, ray_options=cfg.ray, cpus_per_shard=cfg.cpus_per_shard)
        else:
            run_local(specs, out, on_done=on_done, stop_after_utc=args.stop_after or cfg.stop_after_utc)
        return 0
    if args.cmd == "summary":
        s = write_summary(out, cfg.num_shards, args.metrics, command=command)
        print(json.dumps({k: s[k] for k in ("complete", "shards_done", "shards_total", "models", "captured",
                                              "unique_graphs", "families", "tasks")}))
        return 0
    if args.cmd == "release":
        s = write_summary(out, cfg.num_shards, args.metrics, command=command)
        man = build_release(out, cfg, s)
        s = write_summary(out, cfg.num_shards, args.metrics, release_tasks=man["tasks"], command=command)
        print(f"release: {man['tasks']} tasks ({man['held_out_variants']} variants held out), "
              f"{len(man['files'])} files, {man['total_bytes'] / 1e6:.1f} MB -> {out / 'release'}")
        return 0
    if args.cmd == "publish":
        print(publish_release(out / "release", args.repo, private=args.private))
        return 0
    if args.cmd == "fetch":
        if args.repo:
            v = fetch_release(args.repo, out / "release")
        else:
            v = verify_release(ROOT / out / "release" if not out.is_absolute() else out / "release")
        state = "all match manifest.json" if not v["bad"] else f"{len(v['bad'])} differ: {v['bad'][:5]}"
        print(f"release: {v['files']} files, {v['tasks']} tasks, {v['total_bytes'] / 1e6:.1f} MB; {state}")
        return 1 if v["bad"] else 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
