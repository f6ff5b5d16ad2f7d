"""The ``hub`` catalog source: a resumable crawl of the Hugging Face Hub with huggingface_hub.

    crawl(params, work)  ->  work/hub_repos.parquet   one row per listed repo (schema ``hub_repos``)
                             work/hub_configs.jsonl   one line per distinct graph config
    hub_catalog(work)    ->  ``models`` rows (``hf:org/name@sha``), one per distinct graph config

Steps (each resumable; killing the process at any moment and re-running gives the same
final files, no duplicates, nothing missing):

1. Listing: ``GET /api/models`` with ``HfApi.list_models``' query (filter, pipeline tag, sort,
   page limit, ``expand`` for sha/config/gated/private/downloads/likes/library/pipeline
   tag/tags/safetensors), pages followed by their ``Link: rel="next"`` cursor, one JSON line per
   repo appended to ``listing.jsonl``, the cursor checkpointed after each page
   (``listing.cursor.json``), ``listing.done`` last. A restart resumes at the checkpointed
   cursor. Pages retry 429/5xx with huggingface_hub's own ``http_backoff`` (it honours
   ``Retry-After``). A pagination loop (a next cursor seen before, or a page listing repo ids
   already listed) keeps nothing of the bad page and re-reads the last good page for a fresh
   cursor, bounded by ``listing_restarts``; then the run stops with :class:`ListingLoop`
   naming the row and cursor (never a short or duplicated listing with exit 0).
2. Downloads: for each listed repo in order, ``hf_hub_download(repo, "config.json",
   revision=<sha>)`` into the Hub cache (a cached pinned file costs no request; identical files
   share one blob), each call under a hard wall-clock limit (``download_wall_s``: a stalled TCP
   stream that trickles bytes below the read timeout cannot hang the crawl). Results append to
   ``results.jsonl`` in listing order (line i = repo i) in chunks fetched by a thread pool; a
   partial last line is cut on restart. Failures are classed by the Hub's answer and the HTTP
   status found in huggingface_hub's exception chain (:mod:`extract.sources.hub_errors`); a
   429/5xx/timeout pauses every thread (:class:`Backoff`, crawl-wide, exponential from
   ``backoff_s`` to ``backoff_max_s``) and gets ``max_retries`` more tries, then an error row.
   Rows with a reason of :data:`RETRY_REASONS` are redone at the start of the next run.
   Nothing from a repo is executed: configs are parsed as JSON only.
3. Finalize: stream both files into ``hub_repos.parquet`` (batches; memory holds only the
   distinct config hashes) and write one line per distinct :func:`graph_config_hash` with the
   first (most-listed-first) repo's config as the representative that gets captured.

Skip reasons (status ``skipped``): ``gated_no_access``, ``private_no_access``, ``no_config``,
``remote_code`` (``auto_map``), ``unknown_model_type`` (absent, or not shipped by
transformers), ``unknown_architecture`` (class not in transformers). Errors (status
``error``): ``malformed_json``, ``http_429`` and ``http_5xx`` (rate limit / server error that
outlived the retries; the code is in ``message``), ``timeout`` (read timeout or the wall-clock
limit), ``connection``, ``http_<code>`` (other statuses), ``repo_not_found``,
``revision_not_found``, ``not_in_cache`` (offline), ``exception:<Type>``; the first four and
``not_in_cache`` are retried by the next run.

``HF_TOKEN`` is optional (sent when set); ``offline=True`` (or ``HF_HUB_OFFLINE=1``) crawls
from the stored listing and the Hub cache alone; a repo not in the cache keeps the reason the
listing gives (gated, private, no ``config.json``), else ``not_in_cache``.
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

import pyarrow.parquet as pq

from extract.config import HubConfig, hub_config
from extract.sources.hub_configs import graph_config_hash
from extract.sources.hub_errors import Backoff, WallTimeout, bounded, classify_download_error, from_listing, http_status, retry_after  # noqa: F401 - Backoff, WallTimeout public through this module
from extract.sources.rows import row_from_hf_config
from passnet_common.io import atomic_write_json
from passnet_common.schema import schema_of, to_table

# Reasons of an error row that the next run retries (the Hub's answer may differ next time); every
# other reason is the Hub's (or the file's) true answer and is kept.
RETRY_REASONS = frozenset({"http_429", "http_5xx", "timeout", "connection", "not_in_cache"})
EXPAND = ["sha", "config", "gated", "private", "downloads", "likes", "library_name", "pipeline_tag", "tags",
          "safetensors"]
# _HUB_IMPORTS: huggingface_hub (and transformers, which imports it) read HF_HUB_OFFLINE,
# HF_ENDPOINT and the timeouts once, when first imported; they are imported inside the functions
# that call the Hub, after ``python -m extract`` and the tests have set that environment, and
# never by the catalog stage, which imports this module only for :func:`hub_catalog`.
CRAWL_VERSION = 2  # bump when the meaning of a result line changes (results of other versions are redone)


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
            "listed_architecture": archs[0] if archs else None, "param_count": total,
            "has_config": bool(m.config)}  # expand=config asked: no config = no config.json


class ListingLoop(RuntimeError):
    """The listing's pagination repeats itself (a next-page cursor seen before, or repo ids
    already listed) and re-reading from the last good cursor did not cure it."""


def _list_params(params: HubConfig) -> dict:
    """Query of ``GET /api/models`` as ``HfApi.list_models`` builds it (filter list, pipeline
    tag, sort, page limit, expand)."""
    q: dict = {"sort": params.sort, "expand": EXPAND}
    if params.filter:
        q["filter"] = [params.filter]
    if params.pipeline_tag:
        q["pipeline_tag"] = params.pipeline_tag
    if params.limit:
        q["limit"] = min(params.limit, 1000)  # the Hub's page size cap
    return q


def _rel(url: str) -> str:
    """A next-page link without scheme and host (path + query): the cursor is resumed against
    the endpoint of the current run."""
    u = urlsplit(url)
    return u.path + ("?" + u.query if u.query else "")


def _get_page(endpoint: str, rel: str | None, params: HubConfig, headers: dict, timeout: float):
    """(items, next link or None) of one listing page; ``rel`` None = the first page. 429/5xx are
    retried by huggingface_hub's ``http_backoff`` (it honours ``Retry-After``).

    Raises:
        ValueError: the page is not a JSON list. HfHubHTTPError: after the backoff's retries.
    """
    from huggingface_hub.utils import hf_raise_for_status, http_backoff  # noqa: PLC0415  (env: see _HUB_IMPORTS)

    if rel is None:
        r = http_backoff("GET", f"{endpoint}/api/models", params=_list_params(params), headers=headers, timeout=timeout)
    else:
        r = http_backoff("GET", f"{endpoint}{rel}", headers=headers, timeout=timeout)
    hf_raise_for_status(r)
    items = r.json()
    if not isinstance(items, list):
        raise ValueError(f"listing page is a {type(items).__name__}, expected a JSON list")
    nxt = r.links.get("next", {}).get("url")
    return items, (_rel(nxt) if nxt else None)


def _list(params: HubConfig, work: Path, endpoint: str | None, token) -> int:
    """Step 1; returns the number of listed repos.

    Pages are followed by their ``Link: rel="next"`` cursor. After each page is appended and
    fsync'ed, ``listing.cursor.json`` (atomic) records the rows, bytes, the page's own cursor and
    its next cursor: a killed listing resumes at the next cursor (rows past the recorded bytes are
    cut). A page whose next cursor was already visited, or that lists a repo id already listed, is
    a pagination loop: nothing of it is kept and the last good page is read again for a fresh next
    cursor, up to ``listing_restarts`` times per position (also for broken pages and transport
    errors); then :class:`ListingLoop` / RuntimeError names the row and cursor.
    """
    from huggingface_hub import HfApi  # noqa: PLC0415  (env: see _HUB_IMPORTS)
    from huggingface_hub.hf_api import ModelInfo  # noqa: PLC0415  (env: see _HUB_IMPORTS)

    listing, done, cpath = work / "listing.jsonl", work / "listing.done", work / "listing.cursor.json"
    if done.exists():
        return _cut_partial_line(listing)
    api = HfApi(endpoint=endpoint, token=token)
    endpoint = api.endpoint.rstrip("/")
    headers = api._build_hf_headers(token=token)
    limit = params.limit
    restarts = params.listing_restarts
    timeout = float(params.timeout_s)
    state = json.loads(cpath.read_text()) if cpath.exists() else {"rows": 0, "bytes": 0, "page": None,
                                                                    "next": None, "visited": []}
    with open(listing, "ab") as fh:  # cut what the cursor does not cover (a kill between append and cursor)
        fh.truncate(state["bytes"])
    seen = set()
    with open(listing, encoding="utf-8") as fh:
        for line in fh:
            seen.add(json.loads(line)["repo_id"])
    visited = set(state["visited"])
    n, nbytes, page_rel, next_rel = state["rows"], state["bytes"], state["page"], state["next"]
    first = n == 0 and page_rel is None
    fails = 0
    with open(listing, "a", encoding="utf-8") as fh:
        while (first or next_rel is not None) and (limit is None or n < limit):
            target = None if first else next_rel
            try:
                if target is not None and target in visited:
                    raise ListingLoop(f"next-page cursor {target!r} was already visited")
                items, nxt = _get_page(endpoint, target, params, headers, timeout)
                ids = [it.get("id") for it in items]
                rep = [i for i in ids if i in seen]
                if rep or len(set(ids)) != len(ids):
                    raise ListingLoop(f"page at cursor {target!r} repeats {len(rep) or len(ids) - len(set(ids))} "
                                      f"listed repo id(s), e.g. {(rep or ids)[0]!r}")
            except (ListingLoop, ValueError, OSError) as exc:
                fails += 1
                if fails > restarts:
                    kind = ListingLoop if isinstance(exc, ListingLoop) else RuntimeError
                    raise kind(f"hub listing failed at row {n} (cursor {target!r}) after {restarts} re-reads from "
                               f"the last good cursor {page_rel!r}: {exc}") from exc
                time.sleep(min(2 ** fails * 0.1, 5))
                if isinstance(exc, ListingLoop) and page_rel is not None:
                    # read the last good page again for a fresh next cursor (its rows are kept)
                    try:
                        _, nxt2 = _get_page(endpoint, page_rel or None, params, headers, timeout)
                        next_rel = nxt2
                    except (ValueError, OSError):
                        pass
                continue
            fails = 0
            for it in items:
                if limit is not None and n >= limit:
                    break
                it.setdefault("siblings", None)
                line = json.dumps({"pos": n, **_item_row(ModelInfo(**it))}, sort_keys=True) + "\n"
                fh.write(line)
                nbytes += len(line.encode("utf-8"))
                seen.add(it["id"])
                n += 1
            fh.flush()
            os.fsync(fh.fileno())
            if target is not None:
                visited.add(target)
            first, page_rel, next_rel = False, target if target is not None else "", nxt  # "" = the first page
            atomic_write_json(cpath, {"rows": n, "bytes": nbytes, "page": page_rel, "next": next_rel,
                                      "visited": sorted(visited)})
    n = _cut_partial_line(listing)
    done.write_text(json.dumps({"rows": n}) + "\n")
    return n


@lru_cache(maxsize=1)
def _transformers_names() -> tuple[frozenset, frozenset]:
    """(model types, public names) transformers ships; ``dir()`` of its lazy module lists
    every class without importing the modeling code (``hasattr`` would import it)."""
    # import-order: the auto mappings first, then the package, whose dir() then lists every class
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES  # noqa: I001, PLC0415  (env: see _HUB_IMPORTS)
    import transformers  # noqa: PLC0415  (env: see _HUB_IMPORTS)

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


def _process(item: dict, *, endpoint, token, cache_dir, offline: bool, max_retries: int, timeout_s: float,
             wall_s: float = 60.0, backoff: Backoff | None = None) -> dict:
    from huggingface_hub import hf_hub_download  # noqa: PLC0415  (env: see _HUB_IMPORTS)

    out = {"pos": item["pos"], "repo_id": item["repo_id"], "v": CRAWL_VERSION, "status": None, "reason": None,
           "message": None, "graph_config_hash": None, "model_type": None, "architecture": None}
    if not item.get("sha"):
        out.update(status="error", reason="no_sha", message="listing gave no commit sha; cannot pin")
        return out
    for attempt in range(max_retries + 1):
        if backoff is not None and not offline:
            backoff.wait()
        try:
            path = bounded(lambda: hf_hub_download(
                item["repo_id"], "config.json", revision=item["sha"], cache_dir=cache_dir, endpoint=endpoint,
                token=token, etag_timeout=timeout_s, local_files_only=offline), wall_s)
            if backoff is not None:
                backoff.ok()
            break
        except Exception as exc:  # noqa: BLE001 - classified into a row
            status, reason, retry = classify_download_error(exc, item)
            if offline and reason == "not_in_cache" and from_listing(item):
                status, reason = from_listing(item)
                out.update(status=status, reason=reason, message="offline, not in the Hub cache: reason from the listing")
                return out
            if offline:
                retry = False  # nothing to wait for; the next online run retries it
            if retry and backoff is not None and reason != "not_in_cache":
                backoff.hit(retry_after(exc))
            if retry and attempt < max_retries:
                if backoff is None:
                    time.sleep(min(0.25 * 2 ** attempt, 8))
                continue
            msg = f"{type(exc).__name__}: {exc}"
            code = http_status(exc)
            if code is not None and f"{code}" not in msg[:200]:
                msg = f"HTTP {code}; {msg}"
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


def _retry_failed(work: Path, done: int, pool, process, offline: bool) -> int:
    """Re-run the rows of earlier runs whose reason is in :data:`RETRY_REASONS` (rate limits,
    5xx, timeouts, connection errors, ``not_in_cache``) and rewrite ``results.jsonl`` atomically
    with their new results; offline runs retry only ``not_in_cache``. Returns the number retried."""
    listing, results = work / "listing.jsonl", work / "results.jsonl"
    want = RETRY_REASONS if not offline else {"not_in_cache"}
    redo = []
    with open(results, encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            if i >= done:
                break
            if json.loads(line).get("reason") in want:
                redo.append(i)
    if not redo:
        return 0
    items = {}
    wanted = set(redo)
    with open(listing, encoding="utf-8") as lf:
        for i, line in enumerate(lf):
            if i in wanted:
                items[i] = json.loads(line)
            if i >= redo[-1]:
                break
    new = {r["pos"]: r for r in pool.map(process, [items[i] for i in redo])}
    tmp = results.with_name(results.name + ".tmp")
    with open(results, encoding="utf-8") as src, open(tmp, "w", encoding="utf-8") as dst:
        for i, line in enumerate(src):
            if i >= done:
                break
            dst.write(json.dumps(new[i], sort_keys=True) + "\n" if i in new else line)
        dst.flush()
        os.fsync(dst.fileno())
    os.replace(tmp, results)
    return len(redo)


def _download(params: HubConfig, work: Path, n_listed: int, endpoint, token, cache_dir, offline: bool) -> int:
    """Step 2; returns the number of repos processed before this call. Rows of earlier runs
    with a retryable reason are redone first (:func:`_retry_failed`)."""
    listing, results = work / "listing.jsonl", work / "results.jsonl"
    done = _cut_partial_line(results)
    if done:
        first = json.loads(open(results, encoding="utf-8").readline())
        if first.get("v") != CRAWL_VERSION:
            results.unlink()
            done = 0
    before = done
    chunk = params.chunk
    backoff = Backoff(float(params.backoff_s), float(params.backoff_max_s))
    kw = dict(endpoint=endpoint, token=token, cache_dir=cache_dir, offline=offline,
              max_retries=params.max_retries, timeout_s=float(params.timeout_s),
              wall_s=float(params.download_wall_s), backoff=backoff)

    def process(it):
        return _process(it, **kw)

    with ThreadPoolExecutor(max_workers=params.workers) as pool:
        if done:
            _retry_failed(work, done, pool, process, offline)
        with open(listing, encoding="utf-8") as lf, open(results, "a", encoding="utf-8") as rf:
            for _ in range(done):
                lf.readline()
            while done < n_listed:
                items = []
                for _ in range(min(chunk, n_listed - done)):
                    items.append(json.loads(lf.readline()))
                for res in pool.map(process, items):
                    if res["pos"] != done:
                        raise RuntimeError(f"results out of order at {done}: got position {res['pos']}")
                    rf.write(json.dumps(res, sort_keys=True) + "\n")
                    done += 1
                rf.flush()
                os.fsync(rf.fileno())
    return before


def _finalize(work: Path, cache_dir, batch: int = 10000) -> dict:
    """Step 3: ``hub_repos.parquet`` and ``hub_configs.jsonl`` (atomic writes)."""
    from huggingface_hub import hf_hub_download  # noqa: PLC0415  (env: see _HUB_IMPORTS)

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


def crawl(params: HubConfig | dict, work: str | Path, cache_dir: str | Path | None = None, endpoint: str | None = None,
          token: str | None = None, offline: bool | None = None) -> dict:
    """Run (or resume) the crawl described by the ``hub`` params block (:class:`extract.config.HubConfig`
    or its mapping) into ``work``.

    ``endpoint`` defaults to ``params.endpoint`` then huggingface_hub's (``HF_ENDPOINT``);
    ``token`` to ``HF_TOKEN`` (optional: public repos need none; ``False`` sends none);
    ``offline`` to ``HF_HUB_OFFLINE``: then the stored listing and the Hub cache alone are used.
    Returns the summary (``listed``, ``distinct_configs``, ``by_status`` counts).

    Raises:
        ValueError: an unknown params key or a wrong type (``ParamsError``).
        RuntimeError: offline without a complete stored listing; the listing changed between
            runs; the listing failed after its restarts.
    """
    from huggingface_hub import constants  # noqa: PLC0415  (env: see _HUB_IMPORTS)

    params = hub_config(params)
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    cache_dir = str(cache_dir) if cache_dir else None
    endpoint = endpoint or params.endpoint
    if token is None:
        token = os.environ.get("HF_TOKEN") or False
    offline = constants.HF_HUB_OFFLINE if offline is None else offline
    if offline and not (work / "listing.done").exists():
        raise RuntimeError(f"offline crawl needs a complete stored listing in {work} (listing.done); run online once")
    saved = constants.HF_HUB_OFFLINE, constants.HF_HUB_DOWNLOAD_TIMEOUT, constants.HF_HUB_ETAG_TIMEOUT
    constants.HF_HUB_OFFLINE = bool(offline)  # an explicit choice of the caller wins over the env for this call
    timeout_s = float(params.timeout_s)
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
