"""The ``hub`` catalog source: a resumable crawl of the Hugging Face Hub with huggingface_hub.

    crawl(params, work)  ->  work/hub_repos.parquet   one row per listed repo (schema ``hub_repos``)
                             work/hub_configs.jsonl   one line per distinct graph config
    hub_catalog(work)    ->  ``models`` rows (``hf:org/name@sha``), one per distinct graph config

Steps (each resumable; killing the process at any moment and re-running gives the same
final files, no duplicates, nothing missing):

1. Listing: ``HfApi.list_models`` (filter/library, pipeline tag, sort, limit, ``expand`` for
   sha/config/gated/private/downloads/likes/library/pipeline tag/tags/safetensors) appends one
   JSON line per repo to ``listing.jsonl``; ``listing.done`` is written last. On restart the
   partial last line is cut and the listing is re-iterated, skipping the rows already written
   (the id of the last kept row must match, else the listing moved under us and the run stops
   with an error naming the position). Pages retry 429/5xx with huggingface_hub's own
   ``http_backoff`` (it honours ``Retry-After``); a broken page restarts the iteration, bounded.
2. Downloads: for each listed repo in order, ``hf_hub_download(repo, "config.json",
   revision=<sha>)`` into the Hub cache (a cached pinned file costs no request; identical files
   share one blob). Results append to ``results.jsonl`` in listing order (line i = repo i) in
   chunks fetched by a thread pool; a partial last line is cut on restart. Timeouts and 5xx that
   outlive huggingface_hub's retries get ``max_retries`` more tries with exponential backoff,
   then an error row. Nothing from a repo is executed: configs are parsed as JSON only.
3. Finalize: stream both files into ``hub_repos.parquet`` (batches; memory holds only the
   distinct config hashes) and write one line per distinct :func:`graph_config_hash` with the
   first (most-listed-first) repo's config as the representative that gets captured.

Skip reasons (status ``skipped``): ``gated_no_access``, ``private_no_access``, ``no_config``,
``remote_code`` (``auto_map``), ``unknown_model_type`` (absent, or not shipped by
transformers), ``unknown_architecture`` (class not in transformers). Errors (status
``error``): ``malformed_json``, ``timeout``, ``http_<code>``, ``repo_not_found``,
``revision_not_found``, ``not_in_cache`` (offline), ``exception:<Type>``.

``HF_TOKEN`` is optional (sent when set); ``offline=True`` (or ``HF_HUB_OFFLINE=1``) crawls
from the stored listing and the Hub cache alone.
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

from extract.sources.hub_configs import graph_config_hash

CRAWL_KEYS = {"endpoint", "filter", "pipeline_tag", "sort", "limit", "workers", "chunk", "max_retries",
              "timeout_s", "listing_restarts"}
EXPAND = ["sha", "config", "gated", "private", "downloads", "likes", "library_name", "pipeline_tag", "tags",
          "safetensors"]
CRAWL_VERSION = 1  # bump when the meaning of a result line changes (results of other versions are redone)


def _cut_partial_line(path: Path) -> int:
    """Drop a trailing line without ``\\n`` (a write cut by a kill); return the number of lines."""
    if not path.exists():
        return 0
    with open(path, "rb+") as fh:
        data = fh.read()
        keep = data.rfind(b"\n") + 1
        if keep != len(data):
            fh.truncate(keep)
        return data.count(b"\n", 0, keep)


def _last_line(path: Path) -> dict | None:
    with open(path, "rb") as fh:
        fh.seek(0, 2)
        size = fh.tell()
        fh.seek(max(0, size - 65536))
        lines = fh.read().splitlines()
    return json.loads(lines[-1]) if lines else None


def _item_row(m) -> dict:
    cfg = m.config or {}
    archs = cfg.get("architectures") or []
    st = m.safetensors
    total = getattr(st, "total", None) if st is not None else None
    if total is None and isinstance(st, dict):
        total = st.get("total")
    return {"repo_id": m.id, "sha": m.sha, "private": bool(m.private), "gated": str(m.gated or False),
            "downloads": m.downloads, "likes": m.likes, "library": m.library_name, "pipeline_tag": m.pipeline_tag,
            "tags": list(m.tags or []), "listed_model_type": cfg.get("model_type"),
            "listed_architecture": archs[0] if archs else None, "param_count": total}


def _list(params: dict, work: Path, endpoint: str | None, token) -> int:
    """Step 1; returns the number of listed repos."""
    from huggingface_hub import HfApi

    listing, done = work / "listing.jsonl", work / "listing.done"
    if done.exists():
        return _cut_partial_line(listing)
    api = HfApi(endpoint=endpoint, token=token)
    limit = params.get("limit")
    restarts = int(params.get("listing_restarts", 5))
    for attempt in range(restarts + 1):
        have = _cut_partial_line(listing)
        last = _last_line(listing) if have else None
        try:
            it = api.list_models(filter=params.get("filter"), pipeline_tag=params.get("pipeline_tag"),
                                 sort=params.get("sort", "downloads"), limit=limit, expand=EXPAND)
            with open(listing, "a", encoding="utf-8") as fh:
                for pos, m in enumerate(it):
                    if pos < have:
                        if pos == have - 1 and last is not None and m.id != last["repo_id"]:
                            raise RuntimeError(f"hub listing changed under the crawl: position {pos} was "
                                               f"{last['repo_id']!r}, now {m.id!r}; delete {listing} to start over")
                        continue
                    fh.write(json.dumps({"pos": pos, **_item_row(m)}, sort_keys=True) + "\n")
                    if pos % 1000 == 999:
                        fh.flush()
                fh.flush()
                os.fsync(fh.fileno())
            break
        except (ValueError, OSError) as exc:  # a broken page (JSON) or transport error after retries
            if attempt == restarts:
                raise RuntimeError(f"hub listing failed after {restarts} restarts at row {have}: {exc}") from exc
            time.sleep(min(2 ** attempt * 0.2, 5))
    n = _cut_partial_line(listing)
    done.write_text(json.dumps({"rows": n}) + "\n")
    return n


def _chain(exc: BaseException):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def _classify_download_error(exc: BaseException, item: dict) -> tuple[str, str, bool]:
    """(status, reason, retryable) of a failed ``hf_hub_download``."""
    import httpx2
    from huggingface_hub.errors import (GatedRepoError, HfHubHTTPError, LocalEntryNotFoundError,
                                        RemoteEntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError)

    for e in _chain(exc):
        if isinstance(e, httpx2.TimeoutException):
            return "error", "timeout", True
    if isinstance(exc, GatedRepoError):
        return "skipped", "gated_no_access", False
    if isinstance(exc, RepositoryNotFoundError):
        return ("skipped", "private_no_access", False) if item.get("private") else ("error", "repo_not_found", False)
    if isinstance(exc, RevisionNotFoundError):
        return "error", "revision_not_found", False
    if isinstance(exc, RemoteEntryNotFoundError):
        return "skipped", "no_config", False
    if isinstance(exc, HfHubHTTPError) and exc.response is not None:
        code = exc.response.status_code
        return "error", f"http_{code}", code >= 500 or code == 429
    if isinstance(exc, LocalEntryNotFoundError):
        for e in _chain(exc.__cause__):
            if isinstance(e, (httpx2.TransportError,)):
                return "error", "timeout" if isinstance(e, httpx2.TimeoutException) else "connection", True
        return "error", "not_in_cache", False
    return "error", f"exception:{type(exc).__name__}", False


@lru_cache(maxsize=1)
def _transformers_names() -> tuple[frozenset, frozenset]:
    """(model types, public names) transformers ships; ``dir()`` of its lazy module lists
    every class without importing the modeling code (``hasattr`` would import it)."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES
    import transformers

    return frozenset(CONFIG_MAPPING_NAMES), frozenset(dir(transformers))


def classify_config(config) -> tuple[str, str | None, str | None]:
    """(status, reason, architecture) for a parsed config: ``ok`` or a skip reason."""
    model_types, names = _transformers_names()
    if not isinstance(config, dict):
        return "error", "malformed_json", None
    archs = config.get("architectures") or []
    arch = archs[0] if archs and isinstance(archs[0], str) else None
    if config.get("auto_map"):
        return "skipped", "remote_code", arch
    mt = config.get("model_type")
    if not mt or mt not in model_types:
        return "skipped", "unknown_model_type", arch
    if arch is not None and arch not in names:
        return "skipped", "unknown_architecture", arch
    return "ok", None, arch


def _process(item: dict, *, endpoint, token, cache_dir, offline: bool, max_retries: int, timeout_s: float) -> dict:
    from huggingface_hub import hf_hub_download

    out = {"pos": item["pos"], "repo_id": item["repo_id"], "v": CRAWL_VERSION, "status": None, "reason": None,
           "message": None, "graph_config_hash": None, "model_type": None, "architecture": None}
    if not item.get("sha"):
        out.update(status="error", reason="no_sha", message="listing gave no commit sha; cannot pin")
        return out
    for attempt in range(max_retries + 1):
        try:
            path = hf_hub_download(item["repo_id"], "config.json", revision=item["sha"], cache_dir=cache_dir,
                                   endpoint=endpoint, token=token, etag_timeout=timeout_s, local_files_only=offline)
            break
        except Exception as exc:  # noqa: BLE001 - classified into a row
            status, reason, retry = _classify_download_error(exc, item)
            if retry and attempt < max_retries:
                time.sleep(min(0.25 * 2 ** attempt, 8))
                continue
            msg = f"{type(exc).__name__}: {exc}"
            if endpoint:
                msg = msg.replace(endpoint.rstrip("/"), "<endpoint>")  # same table whichever mirror served it
            out.update(status=status, reason=reason, message=msg[:500])
            return out
    try:
        raw = Path(path).read_bytes()
        config = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        out.update(status="error", reason="malformed_json", message=f"config.json of {item['repo_id']}@{item['sha']}: {exc}"[:500])
        return out
    status, reason, arch = classify_config(config)
    out.update(status=status, reason=reason, architecture=arch,
               model_type=config.get("model_type") if isinstance(config, dict) else None)
    if status == "ok":
        out["graph_config_hash"] = graph_config_hash(config)
    return out


def _download(params: dict, work: Path, n_listed: int, endpoint, token, cache_dir, offline: bool) -> int:
    """Step 2; returns the number of repos processed before this call."""
    listing, results = work / "listing.jsonl", work / "results.jsonl"
    done = _cut_partial_line(results)
    if done:
        first = json.loads(open(results, encoding="utf-8").readline())
        if first.get("v") != CRAWL_VERSION:
            results.unlink()
            done = 0
    before = done
    chunk = int(params.get("chunk", 256))
    kw = dict(endpoint=endpoint, token=token, cache_dir=cache_dir, offline=offline,
              max_retries=int(params.get("max_retries", 3)), timeout_s=float(params.get("timeout_s", 10)))
    with open(listing, encoding="utf-8") as lf, open(results, "a", encoding="utf-8") as rf, \
            ThreadPoolExecutor(max_workers=int(params.get("workers", 8))) as pool:
        for _ in range(done):
            lf.readline()
        while done < n_listed:
            items = []
            for _ in range(min(chunk, n_listed - done)):
                items.append(json.loads(lf.readline()))
            for res in pool.map(lambda it: _process(it, **kw), items):
                if res["pos"] != done:
                    raise RuntimeError(f"results out of order at {done}: got position {res['pos']}")
                rf.write(json.dumps(res, sort_keys=True) + "\n")
                done += 1
            rf.flush()
            os.fsync(rf.fileno())
    return before


def _finalize(work: Path, cache_dir, batch: int = 10000) -> dict:
    """Step 3: ``hub_repos.parquet`` and ``hub_configs.jsonl`` (atomic writes)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from huggingface_hub import hf_hub_download

    from passnet_common.schema import schema_of, to_table

    reps: dict[str, dict] = {}
    counts: dict[str, int] = {}
    tmp = work / "hub_repos.parquet.tmp"
    writer = pq.ParquetWriter(tmp, schema_of("hub_repos"), compression="zstd")
    rows = []
    n = 0
    with open(work / "listing.jsonl", encoding="utf-8") as lf, open(work / "results.jsonl", encoding="utf-8") as rf:
        for lline, rline in zip(lf, rf):
            item, res = json.loads(lline), json.loads(rline)
            assert item["pos"] == res["pos"] == n, (item["pos"], res["pos"], n)
            n += 1
            key = res["status"] + (":" + res["reason"] if res["reason"] else "")
            counts[key] = counts.get(key, 0) + 1
            h = res["graph_config_hash"]
            if h is not None:
                rep = reps.setdefault(h, {"graph_config_hash": h, "repo_id": item["repo_id"], "sha": item["sha"],
                                          "pos": item["pos"], "pipeline_tag": item["pipeline_tag"], "members": 0})
                rep["members"] += 1
            rows.append({
                "position": item["pos"], "repo_id": item["repo_id"], "sha": item["sha"],
                "model_id": f"hf:{item['repo_id']}@{item['sha']}", "status": res["status"], "reason": res["reason"],
                "message": res["message"], "graph_config_hash": h,
                "captured_as": f"hf:{reps[h]['repo_id']}@{reps[h]['sha']}" if h else None,
                "model_type": res["model_type"] or item["listed_model_type"],
                "architecture": res["architecture"] or item["listed_architecture"],
                "pipeline_tag": item["pipeline_tag"], "library": item["library"], "downloads": item["downloads"],
                "likes": item["likes"], "tags_json": json.dumps(item["tags"]), "gated": item["gated"],
                "private": item["private"], "param_count": item["param_count"],
            })
            if len(rows) >= batch:
                writer.write_table(to_table("hub_repos", rows))
                rows = []
    if rows:
        writer.write_table(to_table("hub_repos", rows))
    writer.close()
    os.replace(tmp, work / "hub_repos.parquet")
    tmpc = work / "hub_configs.jsonl.tmp"
    with open(tmpc, "w", encoding="utf-8") as fh:
        for rep in sorted(reps.values(), key=lambda r: r["pos"]):
            path = hf_hub_download(rep["repo_id"], "config.json", revision=rep["sha"], cache_dir=cache_dir,
                                   local_files_only=True)
            rep["config"] = json.loads(Path(path).read_text(encoding="utf-8"))
            fh.write(json.dumps(rep, sort_keys=True) + "\n")
    os.replace(tmpc, work / "hub_configs.jsonl")
    summary = {"listed": n, "distinct_configs": len(reps), "by_status": dict(sorted(counts.items()))}
    (work / "crawl_summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
    return summary


def crawl(params: dict, work: str | Path, cache_dir: str | Path | None = None, endpoint: str | None = None,
          token: str | None = None, offline: bool | None = None) -> dict:
    """Run (or resume) the crawl described by the ``hub`` params block into ``work``.

    ``endpoint`` defaults to ``params["endpoint"]`` then huggingface_hub's (``HF_ENDPOINT``);
    ``token`` to ``HF_TOKEN`` (optional: public repos need none; ``False`` sends none);
    ``offline`` to ``HF_HUB_OFFLINE``: then the stored listing and the Hub cache alone are used.
    Returns the summary (``listed``, ``distinct_configs``, ``by_status`` counts).

    Raises:
        ValueError: unknown params key.
        RuntimeError: offline without a complete stored listing; the listing changed between
            runs; the listing failed after its restarts.
    """
    from huggingface_hub import constants

    unknown = sorted(set(params) - CRAWL_KEYS)
    if unknown:
        raise ValueError(f"hub params: unknown key(s) {unknown}; known: {sorted(CRAWL_KEYS)}")
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    cache_dir = str(cache_dir) if cache_dir else None
    endpoint = endpoint or params.get("endpoint")
    if token is None:
        token = os.environ.get("HF_TOKEN") or False
    offline = constants.HF_HUB_OFFLINE if offline is None else offline
    if offline and not (work / "listing.done").exists():
        raise RuntimeError(f"offline crawl needs a complete stored listing in {work} (listing.done); run online once")
    saved = constants.HF_HUB_OFFLINE, constants.HF_HUB_DOWNLOAD_TIMEOUT, constants.HF_HUB_ETAG_TIMEOUT
    constants.HF_HUB_OFFLINE = bool(offline)  # an explicit choice of the caller wins over the env for this call
    timeout_s = float(params.get("timeout_s", 10))
    constants.HF_HUB_DOWNLOAD_TIMEOUT = constants.HF_HUB_ETAG_TIMEOUT = timeout_s
    try:
        n = _cut_partial_line(work / "listing.jsonl") if offline else _list(params, work, endpoint, token)
        _download(params, work, n, endpoint, token, cache_dir, bool(offline))
        return _finalize(work, cache_dir)
    finally:
        constants.HF_HUB_OFFLINE, constants.HF_HUB_DOWNLOAD_TIMEOUT, constants.HF_HUB_ETAG_TIMEOUT = saved


def hub_catalog(work: str | Path) -> list[dict]:
    """``models`` rows of a finished crawl: one per distinct graph config, built from the
    representative repo's ``config.json`` through :func:`extract.sources.rows.row_from_hf_config`.

    Raises:
        FileNotFoundError: ``work/hub_configs.jsonl`` is missing (crawl not finished).
    """
    from extract.sources.rows import row_from_hf_config

    path = Path(work) / "hub_configs.jsonl"
    if not path.exists():
        raise FileNotFoundError(f"{path} missing: run `python -m extract crawl` first")
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            rep = json.loads(line)
            mid = f"hf:{rep['repo_id']}@{rep['sha']}"
            rows.append(row_from_hf_config(rep["config"], mid, rep["repo_id"], "hf", task=rep.get("pipeline_tag")))
    return rows
