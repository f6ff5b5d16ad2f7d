"""A local stand-in of the Hugging Face Hub HTTP API (no network; 127.0.0.1): the one stand-in the
tests, the benchmarks and a user trying publish / pull offline share.

``python -m passnet_common.hub_standin [--port 8765]`` serves until interrupted; set
``HF_ENDPOINT=http://127.0.0.1:8765`` (and any ``HF_TOKEN``) for the ``huggingface_hub`` client,
``python -m proxy_artifacts publish|pull`` included. Repositories live in memory: they are gone when the
server stops. Tests start it on a random port (:class:`HubStandIn`, a context manager).

It speaks the subset ``huggingface_hub`` uses (read from its 2.x sources: ``HfApi.list_models`` ->
``utils._pagination``, ``hf_hub_download`` -> ``file_download``, ``create_repo`` / ``upload_folder`` ->
``hf_api``, ``snapshot_download``):

- upload, for models and datasets: ``POST /api/repos/create``, ``/api/validate-yaml`` (README metadata
  must parse as YAML), ``/api/<type>s/<repo>/preupload/<rev>`` (every file ``uploadMode: regular``: contents
  travel base64 inside the commit; no LFS / xet), ``/api/<type>s/<repo>/commit/<rev>`` (NDJSON);
  ``GET /api/<type>s/<repo>[/revision/<rev>]``, ``.../tree/<rev>`` and ``resolve`` of uploaded files.
  Commits are immutable snapshots (sha1 of the parent and the file set); ``main`` follows the latest.
- a model listing, when a ``listing`` is given (:class:`Listing`: e.g.
  ``extract.sources.hub_configs.Listing``, a synthetic Hub of any size): ``GET /api/models?limit=&cursor=``
  pages with the next page in a ``Link`` header (``<url>; rel="next"``, like the Hub), and
  ``HEAD|GET /<org>/<name>/resolve/<rev>/config.json`` with ``X-Repo-Commit`` and ``ETag``;
- errors with the Hub's ``X-Error-Code``: 401 ``GatedRepo`` (gated, no token), 403 ``GatedRepo`` (token
  without access), 401 ``RepoNotFound`` (private / unknown listed repo), 404 ``RepoNotFound`` (unknown
  uploaded repo), 404 ``EntryNotFound``, 404 ``RevisionNotFound``;
- injected faults (:class:`Faults`, live on a running server): a storm of 429 with ``Retry-After``, 503
  for chosen repos, slow answers, one malformed listing page, pagination loops (a next link pointing back
  to the first page; a page serving the previous page's items), config bodies that trickle one byte at a
  time (a TCP stall below the read timeout).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import parse_qs, unquote, urlencode, urlparse

import yaml


class Listing(Protocol):
    """What the stand-in reads of a model listing (``extract.sources.hub_configs.Listing`` is one)."""

    n: int

    def repo(self, i: int, with_config: bool = True) -> dict[str, Any]:
        """Repo ``i``: id, sha, private, gated, downloads, likes, library_name, pipeline_tag, tags, config,
        config_bytes, param_total, fault."""

    def index_of(self, repo_id: str) -> int | None:
        """Position of ``repo_id`` in the listing, or None."""


class _NoListing:
    n = 0

    def repo(self, i: int, with_config: bool = True) -> dict[str, Any]:
        raise IndexError(i)

    def index_of(self, repo_id: str) -> int | None:
        return None


@dataclass
class Faults:
    """Mutable fault plan of a running stand-in (thread-safe through ``lock``)."""

    storm_429: int = 0  # answer the next N requests with 429
    retry_after: int = 0  # seconds in Retry-After (huggingface_hub sleeps this + 1 s)
    fail_5xx: dict = field(default_factory=dict)  # repo id -> number of 503 answers left
    slow: dict = field(default_factory=dict)  # repo id -> seconds to sleep before answering
    bad_page_once: set = field(default_factory=set)  # listing cursors answered once with broken JSON
    loop_next: dict = field(default_factory=dict)  # listing cursor -> times its next link points back to cursor 0
    repeat_page: dict = field(default_factory=dict)  # listing cursor -> times it serves the previous page's items
    drip: dict = field(default_factory=dict)  # repo id -> seconds between body bytes of its config.json (a stall)
    stop: threading.Event = field(default_factory=threading.Event)  # set on shutdown: dripping answers end
    lock: threading.Lock = field(default_factory=threading.Lock)


class UnsupportedCommit(ValueError):
    """A commit body the stand-in cannot apply (non-base64 file, LFS, folder ops)."""


def apply_commit(parent: str | None, files: dict[str, bytes] | None, body: str) -> tuple[str, dict[str, bytes]]:
    """Apply a ``/commit`` NDJSON body (the Hub's commit API) to ``files`` at ``parent``.

    Returns:
        ``(sha, files)``: a deterministic sha1 of the parent and the resulting files.
    Raises:
        UnsupportedCommit: an operation this stand-in does not support.
    """
    files = dict(files or {})
    for line in body.splitlines():
        item = json.loads(line)
        if item["key"] == "file":
            v = item["value"]
            if v.get("encoding") != "base64":
                raise UnsupportedCommit("stand-in accepts base64 regular files only")
            files[v["path"]] = base64.b64decode(v["content"])
        elif item["key"] == "deletedFile":
            files.pop(item["value"]["path"], None)
        elif item["key"] in ("lfsFile", "deletedFolder", "copyFile"):
            raise UnsupportedCommit(f"stand-in does not support {item['key']}")
    h = hashlib.sha1(str(parent).encode())
    for k in sorted(files):
        h.update(k.encode() + hashlib.sha1(files[k]).digest())
    return h.hexdigest(), files


class HubState:
    """Everything a running stand-in holds: the listing, faults, counters, uploaded repos, request log."""

    def __init__(self, listing: Listing | None, page_size: int, tokens_with_gated_access: set[str]):
        self.listing = listing if listing is not None else _NoListing()
        self.has_listing = listing is not None
        self.page_size = page_size
        self.tokens = tokens_with_gated_access
        self.faults = Faults()
        self.counts = {"requests": 0, "429": 0, "503": 0, "list_pages": 0, "resolve": 0}
        self.repos: dict[tuple[str, str], dict] = {}  # (type, id) -> {"commits": {sha: files}, "main": sha | None}
        self.requests: list[tuple[str, str]] = []  # (method, path) of every request
        self.lock = threading.Lock()


def _handler(st: HubState):
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def _send(self, code, body=b"", headers=None, ctype="application/json"):
            if isinstance(body, (dict, list)):
                body = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _err(self, code, xcode, msg):
            self._send(code, {"error": msg}, {"X-Error-Code": xcode, "X-Error-Message": msg})

        def _token(self):
            auth = self.headers.get("Authorization") or ""
            return auth[7:] if auth.startswith("Bearer ") else None

        def _injected(self, repo: str | None) -> bool:
            f = st.faults
            with f.lock:
                st.counts["requests"] += 1
                if f.storm_429 > 0:
                    f.storm_429 -= 1
                    st.counts["429"] += 1
                    storm = True
                else:
                    storm = False
                fail = repo is not None and f.fail_5xx.get(repo, 0) > 0
                if fail:
                    f.fail_5xx[repo] -= 1
                    st.counts["503"] += 1
                delay = f.slow.get(repo, 0) if repo else 0
            if storm:
                self._send(429, {"error": "rate limited"}, {"Retry-After": str(f.retry_after)})
                return True
            if fail:
                self._send(503, {"error": "service unavailable"})
                return True
            if delay:
                time.sleep(delay)
            return False

        # ---------------------------------------------------------------- GET / HEAD
        def do_HEAD(self):
            self._get()

        def do_GET(self):
            self._get()

        def _get(self):
            url = urlparse(self.path)
            path = unquote(url.path)
            st.requests.append((self.command, path))
            parts = path.split("/")
            if path == "/api/models":
                if self._injected(None):
                    return
                return self._list(parse_qs(url.query))
            if len(parts) >= 4 and parts[1] == "api" and parts[2] in ("models", "datasets"):
                return self._api_info(parts)
            if len(parts) >= 6 and parts[1] == "datasets" and parts[4] == "resolve":
                return self._resolve_uploaded("dataset", f"{parts[2]}/{parts[3]}", parts[5], "/".join(parts[6:]))
            if len(parts) >= 6 and parts[3] == "resolve":
                repo, rev, fname = f"{parts[1]}/{parts[2]}", parts[4], "/".join(parts[5:])
                if ("model", repo) in st.repos:
                    return self._resolve_uploaded("model", repo, rev, fname)
                if not st.has_listing:
                    return self._err(404, "RepoNotFound", f"repo {repo} not found")
                if self._injected(repo):
                    return
                return self._resolve(repo, rev, fname)
            return self._err(404, "Unknown", f"stand-in: unsupported {self.command} {path}")

        def _list(self, q):
            cursor = int(q.get("cursor", ["0"])[0])
            limit = int(q.get("limit", [str(st.page_size)])[0])
            size = max(1, min(limit, st.page_size))
            end = min(cursor + size, st.listing.n)
            with st.faults.lock:
                broken = cursor in st.faults.bad_page_once
                st.faults.bad_page_once.discard(cursor)
                st.counts["list_pages"] += 1
                loop = st.faults.loop_next.get(cursor, 0) > 0
                if loop:
                    st.faults.loop_next[cursor] -= 1
                repeat = st.faults.repeat_page.get(cursor, 0) > 0
                if repeat:
                    st.faults.repeat_page[cursor] -= 1
            if broken:
                return self._send(200, b'[{"id": "truncated', ctype="application/json")
            items = []
            first = max(0, cursor - size) if repeat else cursor
            for i in range(first, min(first + size, st.listing.n)):
                r = st.listing.repo(i, with_config=False)
                item = {"id": r["id"], "modelId": r["id"], "sha": r["sha"], "private": r["private"],
                        "gated": r["gated"], "downloads": r["downloads"], "likes": r["likes"],
                        "library_name": r["library_name"], "pipeline_tag": r["pipeline_tag"], "tags": r["tags"],
                        "createdAt": "2024-01-01T00:00:00.000Z"}
                if r["fault"] != "no_config":  # the Hub's expand=config comes from config.json
                    item["config"] = r["config"]
                if r["param_total"]:
                    item["safetensors"] = {"parameters": {"BF16": r["param_total"]}, "total": r["param_total"]}
                items.append(item)
            headers = {}
            if end < st.listing.n:
                nq = {k: v for k, v in q.items() if k != "cursor"}
                nq["cursor"] = [str(0 if loop else end)]
                host = f"http://{self.headers['Host']}"
                headers["Link"] = f'<{host}/api/models?{urlencode(nq, doseq=True)}>; rel="next"'
            return self._send(200, items, headers)

        def _resolve(self, repo, rev, fname):
            with st.lock:
                st.counts["resolve"] += 1
            i = st.listing.index_of(repo)
            if i is None:
                return self._err(401, "RepoNotFound", f"Repository not found: {repo}")
            r = st.listing.repo(i)
            token = self._token()
            if r["private"]:
                return self._err(401, "RepoNotFound", f"Repository not found: {repo}")
            if r["gated"]:
                if token is None:
                    return self._err(401, "GatedRepo", f"Access to model {repo} is restricted. You must be authenticated.")
                if token not in st.tokens:
                    return self._err(403, "GatedRepo", f"Access to model {repo} is restricted and you are not in the authorized list.")
            if rev not in ("main", r["sha"]):
                return self._err(404, "RevisionNotFound", f"Invalid rev id: {rev}")
            if fname != "config.json" or r["config_bytes"] is None:
                return self._err(404, "EntryNotFound", f"{fname} does not exist in {repo}@{rev}")
            data = r["config_bytes"]
            etag = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # git blob id, like the Hub
            drip = st.faults.drip.get(repo, 0)
            if drip and self.command == "GET":
                return self._drip(data, {"X-Repo-Commit": r["sha"], "ETag": f'"{etag}"'}, drip)
            return self._send(200, data, {"X-Repo-Commit": r["sha"], "ETag": f'"{etag}"'}, ctype="application/json")

        def _drip(self, data, headers, every_s):
            """Headers at once, then one body byte every ``every_s`` s until done or shutdown."""
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            try:
                for i in range(len(data)):
                    if st.faults.stop.wait(every_s):
                        break
                    self.wfile.write(data[i:i + 1])
                    self.wfile.flush()
            except OSError:
                pass
            self.close_connection = True

        # ------------------------------------------------------------ uploaded repos
        def _resolve_rev(self, key, rev):
            r = st.repos.get(key)
            if r is None:
                return None, None
            sha = r["main"] if rev in ("main", None) else rev if rev in r["commits"] else None
            return sha, (r["commits"].get(sha) if sha else None)

        def _api_info(self, parts):
            rtype = parts[2][:-1]
            repo = f"{parts[3]}/{parts[4]}" if len(parts) >= 5 else parts[3]
            key = (rtype, repo)
            if key not in st.repos:
                return self._err(404, "RepoNotFound", f"repo {repo} not found")
            if len(parts) >= 7 and parts[5] == "tree":
                sha, files = self._resolve_rev(key, parts[6])
                if files is None:
                    return self._err(404, "RevisionNotFound", "revision not found")
                return self._send(200, [{"type": "file", "path": k, "size": len(v), "oid": hashlib.sha1(v).hexdigest()}
                                        for k, v in sorted(files.items())])
            rev = "/".join(parts[6:]) if len(parts) >= 7 and parts[5] == "revision" else "main"
            sha, files = self._resolve_rev(key, rev)
            if files is None and sha is None and st.repos[key]["main"] is not None:
                return self._err(404, "RevisionNotFound", "revision not found")
            return self._send(200, {"id": repo, "modelId": repo, "sha": sha, "private": False,
                                    "siblings": [{"rfilename": k, "size": len(v)} for k, v in sorted((files or {}).items())]})

        def _resolve_uploaded(self, rtype, repo, rev, fname):
            sha, files = self._resolve_rev((rtype, repo), rev)
            if files is None:
                return self._err(404, "RevisionNotFound", "revision not found")
            if fname not in files:
                return self._err(404, "EntryNotFound", f"{fname} not found")
            data = files[fname]
            return self._send(200, data, {"X-Repo-Commit": sha, "ETag": f'"{hashlib.sha1(data).hexdigest()}"'},
                              ctype="application/octet-stream")

        def do_POST(self):
            path = unquote(urlparse(self.path).path)
            st.requests.append(("POST", path))
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n else b""
            with st.lock:
                if path == "/api/validate-yaml":
                    text = json.loads(body)["content"]
                    try:
                        meta = yaml.safe_load(text.split("---")[1]) if text.startswith("---") else {}
                        assert isinstance(meta, dict)
                    except Exception as exc:  # noqa: BLE001 - reported to the client like the Hub does
                        return self._send(400, {"errors": [{"message": f"invalid YAML: {exc}"}], "warnings": []})
                    return self._send(200, {"errors": [], "warnings": []})
                if path == "/api/repos/create":
                    p = json.loads(body)
                    repo = f"{p['organization']}/{p['name']}" if p.get("organization") else p["name"]
                    key = (p.get("type") or "model", repo)
                    if key in st.repos:
                        return self._send(409, {"error": "You already created this repo", "url": f"/{repo}"})
                    st.repos[key] = {"commits": {}, "main": None}
                    host = f"http://{self.headers['Host']}"
                    return self._send(200, {"url": f"{host}/{repo}", "name": repo, "id": repo})
                parts = path.split("/")
                if len(parts) >= 7 and parts[1] == "api" and parts[2] in ("models", "datasets"):
                    key = (parts[2][:-1], f"{parts[3]}/{parts[4]}")
                    op, rev = parts[5], "/".join(parts[6:])
                    if key not in st.repos:
                        return self._err(404, "RepoNotFound", f"repo {key[1]} not found")
                    if op == "preupload":
                        files = json.loads(body)["files"]
                        return self._send(200, {"files": [{"path": f["path"], "uploadMode": "regular",
                                                           "shouldIgnore": False, "oid": None} for f in files]})
                    if op == "commit":
                        parent, files = self._resolve_rev(key, rev)
                        try:
                            sha, files = apply_commit(parent, files, body)
                        except UnsupportedCommit as exc:
                            return self._send(400, {"error": str(exc)})
                        st.repos[key]["commits"][sha] = files
                        st.repos[key]["main"] = sha
                        host = f"http://{self.headers['Host']}"
                        return self._send(200, {"commitOid": sha, "commitUrl": f"{host}/{key[1]}/commit/{sha}",
                                                "pullRequestUrl": None, "success": True})
            return self._err(404, "Unknown", f"stand-in: unsupported POST {path}")

    return H


class HubStandIn:
    """``with HubStandIn() as hub: hub.endpoint`` ("http://127.0.0.1:<port>").

    Args:
        port: 0 = a free port.
        listing: a model listing to serve (:class:`Listing`); None = uploads only.
        page_size: most listing items per page.
        tokens_with_gated_access: bearer tokens that may read gated repos.

    ``hub.faults`` is the live fault plan, ``hub.counts`` the request counters, ``hub.state.requests`` every
    ``(method, path)``, ``hub.files(type, repo)`` the files of an uploaded repo at ``main``.
    """

    def __init__(self, port: int = 0, listing: Listing | None = None, page_size: int = 1000,
                 tokens_with_gated_access: set[str] | None = None):
        self.state = HubState(listing, page_size, set(tokens_with_gated_access or ()))
        self.server = ThreadingHTTPServer(("127.0.0.1", port), _handler(self.state))
        self.server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def faults(self) -> Faults:
        return self.state.faults

    @property
    def counts(self) -> dict:
        return self.state.counts

    def files(self, rtype: str, repo: str) -> dict[str, bytes]:
        """Files of uploaded repo ``repo`` (``rtype``: model or dataset) at ``main``."""
        r = self.state.repos[(rtype, repo)]
        return dict(r["commits"].get(r["main"], {}))

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.state.faults.stop.set()
        self.server.shutdown()
        self.server.server_close()
        return False


def serve(hub: HubStandIn) -> None:
    """Print the endpoint and serve until Ctrl-C."""
    with hub:
        print(f"stand-in Hub at {hub.endpoint} (export HF_ENDPOINT={hub.endpoint} HF_TOKEN=standin); Ctrl-C stops it",
              flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


def main(argv: list[str] | None = None) -> int:
    """Serve the stand-in (uploads only) on 127.0.0.1 until Ctrl-C (``--port``, default 8765)."""
    ap = argparse.ArgumentParser(prog="python -m passnet_common.hub_standin", description=main.__doc__)
    ap.add_argument("--port", type=int, default=8765)
    args = ap.parse_args(argv)
    serve(HubStandIn(args.port))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
