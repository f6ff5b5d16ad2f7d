"""Publish proxies to and pull them from the Hugging Face Hub (``huggingface_hub`` only).

``publish`` checks the folder's lineage; given the fidelity record (and the base's metrics, its Hub
id) it uploads a copy whose card carries them (:func:`checkpoint.refresh_card`: accuracy before /
after RL, fault rates with the base's and the controls' columns, task and chance level, licence and
``base_model`` metadata); then ``create_repo(exist_ok=True)`` + ``upload_folder`` whose
``delete_patterns`` name every file of the repo's ``main`` that the folder does not have (e.g. the
shards of an earlier proxy with another shard count; ``.gitattributes`` is kept), so the published
commit holds exactly the folder's files and passes ``lineage.json``'s check; ``pull`` resolves
``repo_id@revision`` with ``snapshot_download`` into the Hub cache and verifies
``lineage.json`` against the downloaded files. Both take ``endpoint`` (default: the
``HF_ENDPOINT`` environment variable / the real Hub) and ``token``; nothing here is specific
to the offline stand-in the tests use.

Before anything is uploaded ``publish`` refuses: a proxy name that is not the folder's proxy in the
fidelity record (:func:`check_proxy_name`: e.g. the keep-0.25 folder under ``--name r0.5``), and a
``base_model`` that the card's metadata could not honestly carry (:func:`check_base_model`: the Hub's
``base_model`` must be a Hub repo id, so for a local base the repo must exist and hold the very weights
the proxy was pruned from; for a Hub base it must be the lineage's repo).
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from pathlib import Path
from typing import Mapping

from huggingface_hub import HfApi, hf_hub_download, snapshot_download
from huggingface_hub.errors import HfHubHTTPError, RevisionNotFoundError

from passnet_common.io import sha256_file

from .checkpoint import refresh_card, verify_lineage

_REPO_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_REVISION = re.compile(r"^[A-Za-z0-9._/-]+$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


def parse_spec(spec: str) -> tuple[str, str | None]:
    """``"org/name@rev"`` -> ("org/name", "rev"); no ``@``: revision None.

    Raises:
        ValueError: not of the form ``owner/name[@revision]`` (owner and name of letters, digits,
            ``._-``; a revision of letters, digits, ``._/-``: e.g. ``org/p@@x`` is refused).
    """
    repo, at, rev = spec.partition("@")
    parts = repo.split("/")
    if len(parts) != 2 or not all(_REPO_PART.match(p) for p in parts) or (at and not _REVISION.match(rev)):
        raise ValueError(f"bad proxy spec {spec!r}; expected owner/name[@revision]")
    return repo, rev or None


def is_pinned(revision: str | None) -> bool:
    """True iff ``revision`` is a full 40-hex commit sha (branches and tags move)."""
    return bool(revision) and bool(_COMMIT.match(revision))


def _hub_error(action: str, target: str, exc: Exception) -> ValueError:
    first = (str(exc).strip().splitlines() or [""])[0]
    return ValueError(f"{action} {target}: {type(exc).__name__}: {first}")


_RATIO_NAME = re.compile(r"^r(\d+(?:\.\d+)?)$")


def check_proxy_name(lineage: Mapping, name: str, fidelity: Mapping | None = None, record: str = "the record") -> None:
    """Refuse to publish the proxy of ``lineage`` under ``name`` when the name is another proxy's.

    Checked: a pipeline name ``r<ratio>`` must be the folder's requested or effective keep ratio; with a
    fidelity record, ``name`` must be one of its ``proxies``, the record must name the weights its runs
    loaded (``proxies.<name>.proxy_weights_sha256``) and they must be the folder's
    (``lineage.proxy_weights_sha256``): a record of another build or another proxy is refused; where the
    record has the proxy's parameter count (``proxies.<name>.cost.params``), it must equal the folder's
    (``lineage.card_metrics.params_proxy``).

    Raises:
        ValueError: a mismatch, naming the folder's proxy (keep ratio, parameters) and the named one.
    """
    keep = (lineage.get("keep_ratio_requested"), lineage.get("keep_ratio_effective"))
    params = (lineage.get("card_metrics") or {}).get("params_proxy")
    this = f"the folder holds the keep-{keep[0]} proxy" + (f" ({params:,} parameters)" if params else "")
    m = _RATIO_NAME.match(name)
    if m and not any(k is not None and float(m.group(1)) == float(k) for k in keep):
        raise ValueError(f"--name {name} names the keep-{m.group(1)} proxy, but {this}: publish it as "
                         f"r{keep[0]} or publish the {name} folder")
    if fidelity is None:
        return
    proxies = fidelity.get("proxies") or {}
    if name not in proxies:
        raise ValueError(f"--name {name} is not a proxy of {record} (it has {sorted(proxies)})")
    sha, have = (proxies[name] or {}).get("proxy_weights_sha256"), lineage.get("proxy_weights_sha256")
    if sha is None:
        raise ValueError(f"{record} does not name the weights of {name} (no proxies.{name}.proxy_weights_sha256: "
                         f"a record of an older fidelity stage); re-run `dvc repro proxy_fidelity` on this build")
    if have is not None and sha != have:
        raise ValueError(f"{record} judged {name} with weights {sha[:12]}, but the folder holds {have[:12]}: "
                         f"a record of another build or another proxy")
    want = ((proxies[name] or {}).get("cost") or {}).get("params")
    if want is not None and params is not None and int(want) != int(params):
        raise ValueError(f"--name {name} names a proxy of {int(want):,} parameters in {record}, but {this}: "
                         f"publish the folder of {name}, or the name of this folder's proxy")


def hub_weights_sha256(api: HfApi, repo_id: str, revision: str | None = None) -> str:
    """:func:`checkpoint.weights_sha256` of a Hub repo's top-level ``*.safetensors`` at ``revision``
    (the LFS sha256 the Hub lists for each file; a file without one is downloaded and hashed).

    Raises:
        FileNotFoundError: the repo has no top-level ``*.safetensors``.
        huggingface_hub.errors.HfHubHTTPError: the repo or revision is not on the Hub.
    """
    info = api.model_info(repo_id, revision=revision, files_metadata=True)
    files = sorted((s for s in info.siblings or [] if s.rfilename.endswith(".safetensors") and "/" not in s.rfilename),
                   key=lambda s: s.rfilename)
    if not files:
        raise FileNotFoundError(f"{repo_id} has no *.safetensors")
    h = hashlib.sha256()
    for f in files:
        sha = getattr(f.lfs, "sha256", None) if f.lfs else None
        if not sha:
            sha = sha256_file(hf_hub_download(repo_id, f.rfilename, revision=info.sha, endpoint=api.endpoint,
                                              token=api.token))
        h.update(f.rfilename.encode())
        h.update(sha.encode())
    return h.hexdigest()


def check_base_model(lineage: Mapping, base_model: str, api: HfApi) -> None:
    """Refuse a ``base_model`` the card's metadata cannot carry: the spec takes a Hub repo id only.
    For an ``hf:`` base it must be the lineage's repo; for a local base (``local:<sha256[:16] of its
    weights>``) the repo must exist on the Hub and hold the same weights (:func:`hub_weights_sha256`
    equal to ``lineage.base_revision``) at its ``main``.

    Raises:
        ValueError: not a repo id, another repo than the lineage's, not on the Hub, or other weights
            (the message names both).
    """
    parse_spec(base_model)
    if "@" in base_model:
        raise ValueError(f"base model {base_model!r}: give the Hub repo id alone (the card's base_model has no revision)")
    base = str(lineage.get("base_model_id", ""))
    if base.startswith("hf:"):
        repo = base[3:].split("@")[0]
        if repo != base_model:
            raise ValueError(f"base model {base_model!r} is not the proxy's base {base!r}")
        return
    try:
        got = hub_weights_sha256(api, base_model)
    except (HfHubHTTPError, OSError) as exc:
        raise ValueError(f"base model {base_model!r} is not a model repo with weights on {api.endpoint} "
                         f"({type(exc).__name__}): publish the base ({base}) there first") from exc
    if got != lineage.get("base_revision"):
        raise ValueError(f"base model {base_model!r} on {api.endpoint} holds other weights (sha256 {got[:16]}...) "
                         f"than the proxy's base {base} (sha256 {str(lineage.get('base_revision'))[:16]}...)")


def check_base_metrics(lineage: Mapping, base_metrics: Mapping, path: str) -> None:
    """Refuse base metrics of another base: ``base_metrics['weights_sha256']`` (written by the
    ``proxy_base`` stage, :func:`base_model.write_base_metrics`) must be the lineage's ``base_revision``
    (for a local base the sha256 of its weights, :func:`checkpoint.weights_sha256`).

    Raises:
        ValueError: the metrics record no weights sha256, or another one (the message names both).
    """
    got, want = base_metrics.get("weights_sha256"), lineage.get("base_revision")
    if not got:
        raise ValueError(f"base metrics {path} record no weights_sha256, so they cannot be checked against the "
                         f"proxy's base {lineage.get('base_model_id')}: give the proxy_base stage's metrics of that "
                         "base (metrics/proxy_base.json)")
    if got != want:
        raise ValueError(f"base metrics {path} are of the base with weights sha256 {str(got)[:16]}..., but the proxy's "
                         f"base {lineage.get('base_model_id')} has revision {str(want)[:16]}...: metrics of another base")


def publish(folder: str | Path, repo_id: str, *, endpoint: str | None = None, token: str | None = None,
            private: bool = False, commit_message: str | None = None, fidelity: str | Path | None = None,
            proxy_name: str | None = None, base_metrics: str | Path | None = None,
            base_model: str | None = None) -> str:
    """Upload a proxy folder to ``repo_id``; returns the commit sha (pin it in ``pull``).

    The commit replaces the repo's files: files of the repo's ``main`` that the folder does not have
    (``.gitattributes`` aside) are deleted in the same commit (``upload_folder(delete_patterns=...)``),
    so republishing to a repo that holds an earlier proxy leaves no stale file that ``lineage.json``
    does not cover.

    Args:
        fidelity / proxy_name: ``metrics/fidelity.json`` and the proxy's name in it (``r0.5``): the
            uploaded card shows its RL and fault figures. base_metrics: ``metrics/proxy_base.json``
            (task, word lengths, base accuracy; the card names the file as given), refused unless its
            ``weights_sha256`` is the lineage's base revision (:func:`check_base_metrics`).
            base_model: the base's Hub id for the card metadata when the lineage names a local base
            (:func:`check_base_model`: the repo must hold the base's weights). With none of these the
            folder is uploaded as it is.

    Raises:
        FileNotFoundError / ValueError: the folder fails :func:`checkpoint.verify_lineage`; ``proxy_name``
            is not this folder's proxy (:func:`check_proxy_name`); ``base_metrics`` are another base's
            (:func:`check_base_metrics`); ``base_model`` is refused
            (:func:`check_base_model`).
        huggingface_hub.errors.HfHubHTTPError: the Hub refused (auth, name, ...).
    """
    folder = Path(folder)
    lin = verify_lineage(folder)
    parse_spec(repo_id)
    if fidelity is not None and not proxy_name:
        raise ValueError("publish with a fidelity record needs the proxy's name in it (e.g. r0.5)")
    fid = json.loads(Path(fidelity).read_text()) if fidelity else None
    if proxy_name:
        check_proxy_name(lin, proxy_name, fid, str(fidelity) if fidelity else "the record")
    bm = json.loads(Path(base_metrics).read_text()) if base_metrics else None
    if bm is not None:
        check_base_metrics(lin, bm, str(base_metrics))
    api = HfApi(endpoint=endpoint, token=token)
    if base_model is not None:
        check_base_model(lin, base_model, api)
    tmp = None
    if fidelity is not None or base_metrics is not None or base_model is not None:
        tmp = tempfile.TemporaryDirectory(prefix="proxy_publish_")
        folder = refresh_card(folder, Path(tmp.name) / "proxy", fidelity=fid, proxy_name=proxy_name,
                              base_model=base_model, base_metrics=bm,
                              base_metrics_name=str(base_metrics) if base_metrics else None)
    try:
        api.create_repo(repo_id, repo_type="model", private=private, exist_ok=True)
        try:
            remote = set(api.list_repo_files(repo_id, repo_type="model"))
        except RevisionNotFoundError:  # a repo without a commit yet
            remote = set()
        local = {f.relative_to(folder).as_posix() for f in folder.rglob("*") if f.is_file()}
        stale = sorted(remote - local - {".gitattributes"})
        info = api.upload_folder(
            repo_id=repo_id, folder_path=str(folder), repo_type="model", delete_patterns=stale or None,
            commit_message=commit_message or f"proxy of {lin['base_model_id']} (keep {lin['keep_ratio_effective']}, "
                                             f"{lin['method']})",
        )
    except (HfHubHTTPError, OSError) as exc:
        raise _hub_error("publish to", repo_id, exc) from exc
    finally:
        if tmp is not None:
            tmp.cleanup()
    return info.oid


def pull(spec: str, *, endpoint: str | None = None, token: str | None = None, cache_dir: str | Path | None = None,
         expect_base: str | None = None, allow_unpinned: bool = False) -> Path:
    """Download ``owner/name@revision`` into the Hub cache and verify its lineage; returns the folder.

    The revision must be a full commit sha (:func:`is_pinned`) unless ``allow_unpinned``: a
    branch or tag can move between two pulls, so an unpinned pull is not reproducible.

    Raises:
        ValueError: bad or unpinned spec; the Hub refused or could not be reached (repository or
            revision not found, HTTP or connection error: one line naming the spec); the
            downloaded files do not match ``lineage.json``.
        FileNotFoundError: the snapshot has no lineage.json.
    """
    repo, rev = parse_spec(spec)
    if not allow_unpinned and not is_pinned(rev):
        raise ValueError(f"unpinned proxy spec {spec!r}: give owner/name@<40-hex commit sha> "
                         "(or allow_unpinned / --allow-unpinned)")
    try:
        path = Path(snapshot_download(repo_id=repo, revision=rev, repo_type="model", endpoint=endpoint, token=token,
                                      cache_dir=str(cache_dir) if cache_dir else None))
    except (HfHubHTTPError, OSError) as exc:
        raise _hub_error("pull", spec, exc) from exc
    verify_lineage(path, expect_base)
    return path
