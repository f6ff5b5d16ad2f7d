"""The README and docs/ describe the code as it is: build logs, per-build comparisons, commit hashes
and issue numbers belong to ``docs/history.md`` (or to git), nowhere else."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
HISTORY = ROOT / "docs" / "history.md"

#: phrases of a build log or of work in progress, not of a reference
NARRATIVE = re.compile(
    r"\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|previous|earlier|last) build\b"
    r"|\bthe build (?:before|that)\b|\buntil the build\b|\bthis round\b|\bthe round before\b"
    r"|\bissue \d+\b|\bissues? #\d+\b|\(issue \d+\)"
    r"|\b(?:previous|earlier) (?:path|version|machine|lock|record)\b|\bthe record before\b|\bbefore this change\b"
    r"|\bthe issue's\b|\bnot re-measured yet\b",
    re.IGNORECASE,
)
HEX = re.compile(r"(?<![0-9a-zA-Z_./-])[0-9a-f]{7,40}(?![0-9a-zA-Z_])")


def commits() -> set[str]:
    """Abbreviation-free set of every commit id reachable in this clone (empty without git)."""
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "rev-list", "--all"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return set()
    return set(out.stdout.split())


def commit_tokens(text: str, ids: set[str]) -> list[str]:
    """Hex tokens of ``text`` that name a commit of ``ids`` (a prefix of >= 7 hex digits)."""
    return sorted({t for t in HEX.findall(text) if any(c.startswith(t) for c in ids)})


@pytest.mark.parametrize("page", [p for p in PAGES if p != HISTORY], ids=lambda p: p.name)
def test_page_has_no_build_narrative_or_commit_ids(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    phrases = sorted({m.group(0) for m in NARRATIVE.finditer(text)})
    assert not phrases, f"{page.name}: build narrative belongs in docs/history.md: {phrases}"
    ids = commits()
    if not ids:
        pytest.skip("no git history in this checkout")
    found = commit_tokens(text, ids)
    assert not found, f"{page.name}: commit ids belong in docs/history.md: {found}"


def test_detectors_find_what_they_name() -> None:
    """Known right values: a commit id of this clone and a build-log phrase are found, a graph hash
    prefix that is no commit and an ordinary sentence are not."""
    ids = commits()
    if ids:
        some = sorted(ids)[0]
        assert commit_tokens(f"measured on {some[:7]} here", ids) == [some[:7]]
    assert commit_tokens("graph 92e6014f0b7e0000", {"aaaaaaa"}) == []
    assert NARRATIVE.search("the Ninth build (x) measured") and NARRATIVE.search("see issue 17")
    assert not NARRATIVE.search("the build writes one folder per task")
