"""Publish proxies to and pull them from the Hugging Face Hub (``huggingface_hub`` only).

``publish`` checks the folder's lineage, (re)writes the card with ``ModelCard`` metadata,
then ``create_repo(exist_ok=True)`` + ``upload_folder``; ``pull`` resolves
``repo_id@revision`` with ``snapshot_download`` into the Hub cache and verifies
``lineage.json`` against the downloaded files. Both take ``endpoint`` (default: the
``HF_ENDPOINT`` environment variable / the real Hub) and ``token``; nothing here is specific
to the offline stand-in the tests use.
"""

from __future__ import annotations

from pathlib import Path

from .checkpoint import verify_lineage


def parse_spec(spec: str) -> tuple[str, str | None]:
    """``"org/name@rev"`` -> ("org/name", "rev"); no ``@``: revision None.

    Raises:
        ValueError: not of the form ``owner/name[@revision]``.
    """
    repo, _, rev = spec.partition("@")
    if repo.count("/") != 1 or not all(repo.split("/")) or (_ and not rev):
        raise ValueError(f"bad proxy spec {spec!r}; expected owner/name[@revision]")
    return repo, rev or None


def publish(folder: str | Path, repo_id: str, *, endpoint: str | None = None, token: str | None = None,
            private: bool = False, commit_message: str | None = None) -> str:
    """Upload a proxy folder to ``repo_id``; returns the commit sha (pin it in ``pull``).

    Raises:
        FileNotFoundError / ValueError: the folder fails :func:`checkpoint.verify_lineage`.
        huggingface_hub.errors.HfHubHTTPError: the Hub refused (auth, name, ...).
    """
    from huggingface_hub import HfApi

    folder = Path(folder)
    lin = verify_lineage(folder)
    api = HfApi(endpoint=endpoint, token=token)
    api.create_repo(repo_id, repo_type="model", private=private, exist_ok=True)
    info = api.upload_folder(
        repo_id=repo_id, folder_path=str(folder), repo_type="model",
        commit_message=commit_message or f"proxy of {lin['base_model_id']} (keep {lin['keep_ratio']}, {lin['method']})",
    )
    return info.oid


def pull(spec: str, *, endpoint: str | None = None, token: str | None = None, cache_dir: str | Path | None = None,
         expect_base: str | None = None) -> Path:
    """Download ``owner/name@revision`` into the Hub cache and verify its lineage; returns the folder.

    Raises:
        ValueError: bad spec, or the downloaded files do not match ``lineage.json``.
        FileNotFoundError: the snapshot has no lineage.json.
    """
    from huggingface_hub import snapshot_download

    repo, rev = parse_spec(spec)
    path = Path(snapshot_download(repo_id=repo, revision=rev, repo_type="model", endpoint=endpoint, token=token,
                                  cache_dir=str(cache_dir) if cache_dir else None))
    verify_lineage(path, expect_base)
    return path
