"""A local stand-in of the Hugging Face Hub HTTP API (no network; 127.0.0.1).

For trying publish/pull offline: ``python -m passnet_common.hub_standin [--port 8765]`` serves until
interrupted; set ``HF_ENDPOINT=http://127.0.0.1:8765`` (and any ``HF_TOKEN``) for the
``huggingface_hub`` client, ``python -m proxy_artifacts publish|pull`` included. Repositories live in
memory: they are gone when the server stops. The tests start it on a random port
(:class:`HubStandIn`).

It speaks the subset ``huggingface_hub`` uses for ``create_repo`` / ``upload_folder`` and
``snapshot_download`` / ``hf_hub_download`` (read from huggingface_hub 2.x sources):

- ``POST /api/repos/create``                               -> {"url", "name", "id"}
- ``POST /api/validate-yaml``                              -> README metadata must parse as YAML
- ``POST /api/models/<repo>/preupload/<rev>``              -> every file ``uploadMode: regular``
  (the simplest path the client supports: contents travel base64 inside the commit; no LFS/xet)
- ``POST /api/models/<repo>/commit/<rev>`` (NDJSON)        -> {"commitOid", "commitUrl"}
- ``GET  /api/models/<repo>[/revision/<rev>]``             -> {"id", "sha", "siblings"}
- ``GET  /api/models/<repo>/tree/<rev>``                   -> file list (one page)
- ``HEAD|GET /<repo>/resolve/<rev>/<path>``                -> bytes, ``X-Repo-Commit``, ``ETag``

Commits are immutable snapshots (sha1 of the parent and the file set), ``main`` follows the
latest; unknown repos/revisions/files give 404 with the Hub's ``X-Error-Code`` header.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlparse


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
    def __init__(self):
        self.repos: dict[str, dict] = {}  # repo -> {"commits": {sha: files}, "main": sha|None}
        self.requests: list[tuple[str, str]] = []
        self.lock = threading.Lock()


def _handler(state: HubState):
    class H(BaseHTTPRequestHandler):
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

        def _404(self, code="EntryNotFound", msg="not found"):
            self._send(404, {"error": msg}, {"X-Error-Code": code, "X-Error-Message": msg})

        def _body(self):
            n = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(n) if n else b""

        def _resolve(self, repo, rev):
            r = state.repos.get(repo)
            if r is None:
                return None, None
            sha = r["main"] if rev in ("main", None) else rev if rev in r["commits"] else None
            return sha, (r["commits"].get(sha) if sha else None)

        def do_POST(self):
            path = unquote(urlparse(self.path).path)
            state.requests.append(("POST", path))
            body = self._body()
            with state.lock:
                if path == "/api/validate-yaml":  # model-card metadata check of upload_folder
                    import yaml

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
                    if repo in state.repos:
                        return self._send(409, {"error": "You already created this model repo", "url": f"/{repo}"})
                    state.repos[repo] = {"commits": {}, "main": None}
                    host = f"http://{self.headers['Host']}"
                    return self._send(200, {"url": f"{host}/{repo}", "name": repo, "id": repo})
                parts = path.split("/")
                # /api/models/<org>/<name>/<op>/<rev>
                if len(parts) >= 7 and parts[1] == "api" and parts[2] == "models":
                    repo, op, rev = f"{parts[3]}/{parts[4]}", parts[5], "/".join(parts[6:])
                    if repo not in state.repos:
                        return self._404("RepoNotFound", f"repo {repo} not found")
                    if op == "preupload":
                        files = json.loads(body)["files"]
                        return self._send(200, {"files": [{"path": f["path"], "uploadMode": "regular",
                                                           "shouldIgnore": False, "oid": None} for f in files]})
                    if op == "commit":
                        parent, files = self._resolve(repo, rev)
                        try:
                            sha, files = apply_commit(parent, files, body)
                        except UnsupportedCommit as exc:
                            return self._send(400, {"error": str(exc)})
                        state.repos[repo]["commits"][sha] = files
                        state.repos[repo]["main"] = sha
                        host = f"http://{self.headers['Host']}"
                        return self._send(200, {"commitOid": sha, "commitUrl": f"{host}/{repo}/commit/{sha}",
                                                "pullRequestUrl": None, "success": True})
            return self._404("Unknown", f"stand-in: unsupported POST {path}")

        def do_GET(self):
            self._get()

        def do_HEAD(self):
            self._get()

        def _get(self):
            path = unquote(urlparse(self.path).path)
            state.requests.append((self.command, path))
            parts = path.split("/")
            if len(parts) >= 7 and parts[1] == "api" and parts[2] == "models" and parts[5] == "tree":
                repo, rev = f"{parts[3]}/{parts[4]}", parts[6]
                sha, files = self._resolve(repo, rev)
                if files is None:
                    return self._404("RevisionNotFound", f"{repo}@{rev} not found")
                return self._send(200, [{"type": "file", "path": k, "size": len(v), "oid": hashlib.sha1(v).hexdigest()}
                                        for k, v in sorted(files.items())])
            if len(parts) >= 5 and parts[1] == "api" and parts[2] == "models":
                repo = f"{parts[3]}/{parts[4]}"
                rev = "/".join(parts[6:]) if len(parts) >= 7 and parts[5] == "revision" else "main"
                sha, files = self._resolve(repo, rev)
                if repo not in state.repos:
                    return self._404("RepoNotFound", f"repo {repo} not found")
                if files is None:
                    return self._404("RevisionNotFound", f"revision {rev} not found")
                return self._send(200, {"id": repo, "modelId": repo, "sha": sha, "private": False,
                                        "siblings": [{"rfilename": k, "size": len(v)} for k, v in sorted(files.items())]})
            # /<org>/<name>/resolve/<rev>/<file...>
            if len(parts) >= 6 and parts[3] == "resolve":
                repo, rev, fname = f"{parts[1]}/{parts[2]}", parts[4], "/".join(parts[5:])
                if repo not in state.repos:
                    return self._404("RepoNotFound", f"repo {repo} not found")
                sha, files = self._resolve(repo, rev)
                if files is None:
                    return self._404("RevisionNotFound", f"revision {rev} not found")
                if fname not in files:
                    return self._404("EntryNotFound", f"{fname} not in {repo}@{rev}")
                data = files[fname]
                etag = hashlib.sha1(data).hexdigest()
                return self._send(200, data, {"X-Repo-Commit": sha, "ETag": f'"{etag}"'},
                                  ctype="application/octet-stream")
            return self._404("Unknown", f"stand-in: unsupported {self.command} {path}")

    return H


class HubStandIn:
    """Context manager: ``with HubStandIn() as hub: hub.endpoint`` ("http://127.0.0.1:<port>")."""

    def __init__(self, port: int = 0):
        self.state = HubState()
        self.server = ThreadingHTTPServer(("127.0.0.1", port), _handler(self.state))
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
        return False


def main(argv: list[str] | None = None) -> int:
    """Serve the stand-in on 127.0.0.1 until Ctrl-C (``--port``, default 8765)."""
    import argparse
    import time

    ap = argparse.ArgumentParser(prog="python -m passnet_common.hub_standin", description=main.__doc__)
    ap.add_argument("--port", type=int, default=8765)
    args = ap.parse_args(argv)
    with HubStandIn(args.port) as hub:
        print(f"stand-in Hub at {hub.endpoint} (export HF_ENDPOINT={hub.endpoint} HF_TOKEN=standin); Ctrl-C stops it",
              flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
