"""The committed ``dvc.lock`` was made by the committed code and params.

A stage's lock entry holds the hash of every dep it ran with. When code or params a stage reads change
and the stage is not re-run, the lock still describes outputs of the old code: ``dvc status`` on a built
checkout then calls the stage changed, and the committed output hashes (what a rebuild is compared with)
belong to code nobody can check out any more. :func:`stale_deps` asks DVC itself (``Repo.status``, the
same comparison ``dvc status`` makes) and keeps the deps no stage produces (code, params, committed data
such as the catalog's configs): a stage output missing or rebuilt in this checkout is not staleness of
the lock.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


def stage_outputs(repo) -> set[str]:
    """Repository-relative paths of every output of every stage (``outs``, ``metrics``, ``plots``)."""
    return {str(Path(o.fs_path).relative_to(repo.root_dir)) for stage in repo.index.stages for o in stage.outs}


def stale_deps(repo) -> dict[str, dict]:
    """``{stage: {dep: change}}`` for what the lock does not hold of the checkout: deps that are no stage's
    output and differ from the lock (a file or folder ``modified`` / ``deleted`` / ``new``, or a params file
    with the changed keys, ``{key: change}``), an edited command (``{"cmd": "changed command"}``), a stage
    with no lock entry (``{"dvc.lock": "no entry"}``) and a frozen stage (``{"frozen": True}``: DVC reports
    nothing of a frozen stage, so its lock could be stale unseen). Paths are the repository's (DVC names
    them relative to the working directory: the caller runs from the repository root)."""
    outs = stage_outputs(repo)
    stale: dict[str, dict] = {}
    for stage, changes in repo.status().items():
        for change in changes:
            if change == "changed command":
                stale.setdefault(stage, {})["cmd"] = change
            if not isinstance(change, dict):
                continue
            for path, what in (change.get("changed deps") or {}).items():
                if path not in outs and not any(path.startswith(o + "/") for o in outs):
                    stale.setdefault(stage, {})[path] = what
    lock_file = Path(repo.root_dir) / "dvc.lock"
    lock = (yaml.safe_load(lock_file.read_text()) if lock_file.is_file() else None) or {}
    locked = set(lock.get("stages") or {})
    for stage in repo.index.stages:
        if stage.cmd and stage.name not in locked:
            stale.setdefault(stage.name, {})["dvc.lock"] = "no entry"
        if stage.frozen:
            stale.setdefault(stage.name, {})["frozen"] = True
    return stale


def test_the_lock_holds_the_hash_of_every_dep_in_the_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    dvc_repo = pytest.importorskip("dvc.repo")
    monkeypatch.chdir(ROOT)  # DVC names paths relative to the working directory
    with dvc_repo.Repo(str(ROOT)) as repo:
        stale = stale_deps(repo)
    assert not stale, ("dvc.lock is stale: these stages ran with other code or params than the checkout's "
                       f"(re-run them with `dvc repro <stage>`): {stale}")


def test_an_edited_dep_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a throwaway DVC project: a stage run, then its code edited, is reported with that file; an output
    deleted is not."""
    dvc_repo = pytest.importorskip("dvc.repo")
    import subprocess  # noqa: PLC0415  (test-only)

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    monkeypatch.chdir(tmp_path)  # DVC resolves stage targets against the working directory
    (tmp_path / "code.py").write_text("print(1)\n")
    (tmp_path / "params.yaml").write_text("a: 1\n")
    (tmp_path / "dvc.yaml").write_text(
        "stages:\n  make:\n    cmd: cp code.py out.txt\n    deps: [code.py]\n    params: [a]\n    outs: [out.txt]\n"
        "  use:\n    cmd: cp out.txt used.txt\n    deps: [out.txt]\n    outs: [used.txt]\n")
    repo = dvc_repo.Repo.init(str(tmp_path))
    with repo:
        repo.reproduce()
        assert stale_deps(repo) == {}
        (tmp_path / "used.txt").unlink()
        (tmp_path / "out.txt").unlink()
        assert stale_deps(repo) == {}  # missing outputs (a fresh clone's state) are not staleness
        (tmp_path / "code.py").write_text("print(2)\n")
        (tmp_path / "params.yaml").write_text("a: 2\n")
    with dvc_repo.Repo(str(tmp_path)) as repo:
        stale = stale_deps(repo)
    assert set(stale) == {"make"}
    assert stale["make"]["code.py"] == "modified"
    assert stale["make"]["params.yaml"] == {"a": "modified"}

    # an edited command, a stage never run (its deps all another stage's outputs), a frozen stage
    (tmp_path / "code.py").write_text("print(1)\n")
    (tmp_path / "params.yaml").write_text("a: 1\n")
    (tmp_path / "dvc.yaml").write_text(
        "stages:\n  make:\n    cmd: cp code.py out.txt\n    deps: [code.py]\n    params: [a]\n    outs: [out.txt]\n"
        "  use:\n    cmd: cp out.txt used2.txt\n    deps: [out.txt]\n    outs: [used2.txt]\n"
        "  new:\n    cmd: cp out.txt new.txt\n    deps: [out.txt]\n    outs: [new.txt]\n"
        "  held:\n    cmd: cp code.py held.txt\n    deps: [code.py]\n    outs: [held.txt]\n    frozen: true\n")
    with dvc_repo.Repo(str(tmp_path)) as repo:
        stale = stale_deps(repo)
    assert stale == {"use": {"cmd": "changed command"}, "new": {"dvc.lock": "no entry"},
                     "held": {"dvc.lock": "no entry", "frozen": True}}
