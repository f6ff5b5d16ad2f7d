"""The release on the Hugging Face Hub: publish it as a dataset repo, fetch it into a clone.

    python -m fullscale publish --repo org/passnet-full            # prints the commit sha
    python -m fullscale fetch                                       # verify the committed copy (a fresh clone)
    python -m fullscale fetch --repo org/passnet-full@<sha>         # or download one from the Hub, then verify

Both use ``huggingface_hub`` (``create_repo(repo_type="dataset")`` + ``upload_folder``;
``snapshot_download(repo_type="dataset")``), so ``HF_ENDPOINT`` points them at any Hub, e.g. the
local stand-in (``python -m passnet_common.hub_standin``). The held-out split is never uploaded:
it is not in the release folder (:mod:`fullscale.release`).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from huggingface_hub import HfApi, snapshot_download
from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

from fullscale.release import describe_check, verify_release


def publish_release(release: str | Path, repo_id: str, private: bool = False, message: str | None = None) -> str:
    """Upload ``release`` (a finished release folder) as dataset ``repo_id``; returns the commit sha.

    Raises:
        FileNotFoundError: ``release`` has no ``manifest.json``.
        ValueError: a file differs from the manifest (a damaged release is not published).
    """
    v = verify_release(release)
    if v["bad"]:
        raise ValueError(f"{release}: {describe_check(v)}")
    api = HfApi()
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    info = api.upload_folder(folder_path=str(release), repo_id=repo_id, repo_type="dataset",
                             commit_message=message or f"PassNet full-scale release ({v['tasks']} tasks)")
    return info.oid


def fetch_release(repo: str, dest: str | Path) -> dict:
    """Download dataset ``repo`` (``org/name`` or ``org/name@<revision>``) into ``dest`` (replaced) and
    verify it against its manifest. Returns :func:`fullscale.release.verify_release`'s report.

    Raises:
        ValueError: the Hub has no such repository or revision, or cannot be reached (offline), or a
            downloaded file differs from the manifest; ``dest`` is left as it was. ``dest`` is a link
            (refused before anything is downloaded: replacing it would write through the link).
    """
    repo_id, _, rev = repo.partition("@")
    dest = Path(dest)
    if dest.is_symlink():
        raise ValueError(f"{dest}: the release folder is a link; give a plain folder (or remove the link)")
    tmp = dest.with_name(f".{dest.name}.download")
    if tmp.exists():
        shutil.rmtree(tmp)
    try:
        try:
            snapshot_download(repo_id, repo_type="dataset", revision=rev or None, local_dir=str(tmp))
        except (HfHubHTTPError, LocalEntryNotFoundError) as exc:  # unknown repo / revision, offline, server error
            raise ValueError(f"{repo}: cannot download dataset {repo_id!r} at revision {rev or 'main'!r} "
                             f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})") from exc
        shutil.rmtree(tmp / ".cache", ignore_errors=True)  # huggingface_hub's download bookkeeping
        if not (tmp / "manifest.json").is_file():
            raise ValueError(f"{repo}: the dataset has no manifest.json (not a PassNet release)")
        try:
            v = verify_release(tmp)
        except ValueError as exc:
            raise ValueError(f"{repo}: {str(exc).replace(str(tmp), 'the dataset')}") from exc
        if v["bad"]:
            raise ValueError(f"{repo}: {describe_check(v)}")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)  # nothing half-downloaded stays beside the release
        raise
    if dest.exists():
        shutil.rmtree(dest)
    tmp.rename(dest)
    return v
