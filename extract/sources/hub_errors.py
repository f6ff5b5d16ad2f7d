"""Download errors of the Hub crawl (:mod:`extract.sources.hub_crawl`): classing a failed
``hf_hub_download`` by the Hub's answer and the HTTP status in its exception chain, the
crawl-wide back-off, the hard wall-clock limit around a download, and the skip reasons an
offline run takes from the listing.
"""

from __future__ import annotations

import threading
import time

from extract.config import HubConfig


def _chain(exc: BaseException):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


class WallTimeout(TimeoutError):
    """A download outlived its wall-clock limit (``download_wall_s``), e.g. a stalled TCP stream
    that trickles bytes below the read timeout."""


def http_status(exc: BaseException) -> int | None:
    """The HTTP status anywhere in the exception chain: huggingface_hub wraps a failed HEAD
    (429, 5xx, ...) into ``LocalEntryNotFoundError`` when the file is not cached, the
    ``HfHubHTTPError`` with its response is its ``__cause__``."""
    import httpx2  # noqa: PLC0415  (env: reads HF_HUB_OFFLINE at import; python -m extract sets it first)
    from huggingface_hub.errors import HfHubHTTPError  # noqa: PLC0415  (env: reads HF_HUB_OFFLINE at import; python -m extract sets it first)

    for e in _chain(exc):
        resp = getattr(e, "response", None) if isinstance(e, (HfHubHTTPError, httpx2.HTTPStatusError)) else None
        if resp is not None and getattr(resp, "status_code", None):
            return int(resp.status_code)
    return None


def classify_download_error(exc: BaseException, item: dict) -> tuple[str, str, bool]:
    """(status, reason, retryable) of a failed ``hf_hub_download``: the Hub's own answers
    (gated, private, no config, missing revision) first, then the HTTP status found in the
    exception chain (``http_429``, ``http_5xx``, ``http_<code>``), timeouts and transport errors,
    and ``not_in_cache`` only when no request reached the Hub (offline)."""
    import httpx2  # noqa: PLC0415  (env: reads HF_HUB_OFFLINE at import; python -m extract sets it first)
    from huggingface_hub.errors import (  # noqa: PLC0415  (env: reads HF_HUB_OFFLINE at import; python -m extract sets it first)
        GatedRepoError,
        LocalEntryNotFoundError,
        RemoteEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    for e in _chain(exc):
        if isinstance(e, (httpx2.TimeoutException, WallTimeout)):
            return "error", "timeout", True
    if isinstance(exc, GatedRepoError):
        return "skipped", "gated_no_access", False
    if isinstance(exc, RepositoryNotFoundError):
        return ("skipped", "private_no_access", False) if item.get("private") else ("error", "repo_not_found", False)
    if isinstance(exc, RevisionNotFoundError):
        return "error", "revision_not_found", False
    if isinstance(exc, RemoteEntryNotFoundError):
        return "skipped", "no_config", False
    code = http_status(exc)
    if code is not None:
        if code == 429:
            return "error", "http_429", True
        if code >= 500:
            return "error", "http_5xx", True
        return "error", f"http_{code}", code == 408
    for e in _chain(exc):
        if isinstance(e, httpx2.TransportError):
            return "error", "connection", True
    if isinstance(exc, LocalEntryNotFoundError):
        return "error", "not_in_cache", True
    return "error", f"exception:{type(exc).__name__}", False


class Backoff:
    """Back-off shared by every download thread of a crawl: a rate-limited or failing answer
    (``http_429``, ``http_5xx``, timeout, connection) makes ALL threads wait before their next
    request, ``base_s * 2**streak`` seconds (capped at ``max_s``; the Hub's ``Retry-After`` when
    longer), the streak growing with each such answer and reset by a success. Thread-safe."""

    def __init__(self, base_s: float = HubConfig.backoff_s, max_s: float = HubConfig.backoff_max_s):
        self.base_s, self.max_s = float(base_s), float(max_s)
        self.until = 0.0
        self.streak = 0
        self.hits = 0
        self.lock = threading.Lock()

    def wait(self) -> None:
        """Sleep until the crawl-wide back-off has passed."""
        while True:
            with self.lock:
                left = self.until - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(left, 1.0))

    def hit(self, retry_after_s: float | None = None) -> None:
        """Record a rate-limited / failed answer and push the crawl-wide pause out."""
        with self.lock:
            delay = min(self.base_s * 2 ** self.streak, self.max_s)
            if retry_after_s:
                delay = max(delay, min(float(retry_after_s), self.max_s))
            self.streak += 1
            self.hits += 1
            self.until = max(self.until, time.monotonic() + delay)

    def ok(self) -> None:
        """A success: the next failure starts the back-off from ``base_s`` again."""
        with self.lock:
            self.streak = 0


def retry_after(exc: BaseException) -> float | None:
    """Seconds of the ``Retry-After`` header of a Hub HTTP error, else None."""
    from huggingface_hub.errors import HfHubHTTPError  # noqa: PLC0415  (env: reads HF_HUB_OFFLINE at import; python -m extract sets it first)

    for e in _chain(exc):
        resp = getattr(e, "response", None) if isinstance(e, HfHubHTTPError) else None
        if resp is not None:
            try:
                return float(resp.headers.get("Retry-After"))
            except (TypeError, ValueError):
                return None
    return None


def bounded(fn, wall_s: float):
    """``fn()`` with a hard wall-clock limit: run in a daemon thread, abandoned after ``wall_s``
    seconds (a thread cannot be killed; the stalled socket is left to its own read timeout).

    Raises:
        WallTimeout: ``fn`` did not return within ``wall_s``. Whatever ``fn`` raised.
    """
    box: dict = {}

    def run():
        try:
            box["v"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["e"] = exc

    t = threading.Thread(target=run, daemon=True, name="hub-download")
    t.start()
    t.join(wall_s)
    if t.is_alive():
        raise WallTimeout(f"download did not finish within {wall_s} s wall clock")
    if "e" in box:
        raise box["e"]
    return box["v"]


def from_listing(item: dict) -> tuple[str, str] | None:
    """Offline and not in the cache: the reason the listing already gives (gated, private, no
    ``config.json``), or None."""
    gated = str(item.get("gated") or "False")
    if gated not in ("False", "false", "0", ""):
        return "skipped", "gated_no_access"
    if item.get("private"):
        return "skipped", "private_no_access"
    if item.get("has_config") is False:
        return "skipped", "no_config"
    return None
