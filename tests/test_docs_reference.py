"""The README, docs/ and the benchmark scripts' prose describe the code as it is: build logs, per-build
comparisons, commit hashes and issue numbers belong to ``docs/history.md`` (or to git), nowhere else.
Metrics files are records and may name the commit they measured; the docs' tables rendered from them
must not."""

from __future__ import annotations

import ast
import io
import re
import subprocess
import tokenize
from pathlib import Path

import pytest

from passnet_common.docs import METRICS, metrics_table

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
HISTORY = ROOT / "docs" / "history.md"
BENCHMARKS = sorted([*(ROOT / "benchmarks").glob("*.py"), *(ROOT / "benchmarks").glob("*.md")])

_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"

#: phrases of a build log or of work in progress, not of a reference
NARRATIVE = re.compile(
    r"\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|previous|earlier|last) build\b"
    r"|\bthe build (?:before|that)\b|\buntil the build\b|\bthis round\b|\bthe round before\b"
    r"|\bissue \d+\b|\bissues? #\d+\b|\(issue \d+\)"
    r"|\b(?:previous|earlier) (?:path|version|machine|lock|record|way)\b|\bthe record before\b|\bbefore this change\b"
    r"|\bthe issue's\b|\bnot re-measured yet\b"
    # the work told as a story: who did what, in which session or build
    r"|\bwe (?:re-?ran|ran|re-?measured|changed|fixed|added|removed|moved|switched|tried|rewrote|replaced)\b"
    r"|\b(?:in |during )?this session\b|\b(?:this|that) (?:build|rebuild)\b"
    r"|\bthe next (?:clean[- ]clone |clean )?(?:build|rebuild)\b"
    # before / after a change of the code ("after the fix", "as before", "the old ...", "Before, ...")
    r"|\b(?:after|before|since|until) (?:the|this|that) (?:fix|change|refactor|rewrite)\b"
    r"|\b(?:after|before|since|until) (?:these|those) (?:fix(?:es)?|changes|rules|commits)\b"
    r"|\b(?:measured|taken|run) (?:after|before) the (?:fix(?:es)?|changes?|rules)\b"
    r"|\b(?:than|as) before\b(?!\s+(?:the|a|an|it|its|any|each|every|this|that|their)\b)"
    r"|\bthe (?:code|revision|scorer) before(?=\s*(?:[;:,.)]|$))|\bthe old\b(?!\s+(?:and|or)\b)"
    r"|(?:(?<=\()|(?<=[.;:] )|(?<=^))before,"
    r"|\bwent from\b|\btoday\b"
    # what the code did once ("used to", "was changed to", "had been", "no longer runs", "now stops")
    r"|\b(?:it|this|that|which|they|we) used to\b|\bhad been\b"
    r"|\b(?:was|were) (?:changed|renamed|rewritten|switched|reverted|quoted)\b|\bstopped (?:matching|working|passing)\b"
    r"|\bno longer (?:[a-z]+s|need|have|do|use|run|read|write|take|make|keep|call|count|work|hold|apply|exist|are)\b"
    r"|\b(?:it|they|this|that|which|stage|code|parent|child|scorer|test|form|benchmark|pipeline|record|page) now\b"
    r"|\bnow (?:it|they)\b|\bas (?:it|they) (?:is|are) now\b"
    # work done or pending ("fixed earlier", "not done here", "what was done", "no rule yet", "leaks are closed")
    r"|\b(?:fixed|done) (?:earlier|here|since|so far)\b|\bwhat was (?:done|changed|fixed)\b"
    r"|\bnot yet (?:derived|done|fixed|measured|implemented|supported|closed|known|tested|re-?measured)\b|\bno \w+ yet\b"
    r"|\b(?:leaks?|bugs?|sources? of (?:difference|error)) (?:are|is|were|was|have been|has been) (?:closed|fixed|removed)\b"
    # dates: a reference has none (2025-03-14, 14 March 2025, March 14, 2025, March 2025)
    r"|\b20\d\d-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])\b"
    rf"|\b\d{{1,2}} {_MONTH} 20\d\d\b|\b{_MONTH} \d{{1,2}},? 20\d\d\b"
    r"|\b(?:january|february|march|april|june|july|august|september|october|november|december) 20\d\d\b",
    re.IGNORECASE,
)
#: a hex token of 7-40 digits standing alone, or either side of a git range ``a..b`` / ``a...b``
HEX = re.compile(r"(?:(?<![0-9a-zA-Z_./-])|(?<=\.\.))[0-9a-f]{7,40}(?![0-9a-zA-Z_])")


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


def narrative(text: str) -> list[str]:
    """The build-log phrases of ``text``, its line breaks read as spaces (a phrase may wrap)."""
    return sorted({m.group(0) for m in NARRATIVE.finditer(" ".join(text.split()))})


def python_prose(source: str) -> str:
    """The docstrings and comments of a Python source, one per line (string literals that are code stay out)."""
    tree = ast.parse(source)
    docs = [
        ast.get_docstring(n, clean=False)
        for n in ast.walk(tree)
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    comments = [tok.string for tok in tokenize.generate_tokens(io.StringIO(source).readline) if tok.type == tokenize.COMMENT]
    return "\n".join([d for d in docs if d] + comments)


def rendered_metrics(text: str) -> list[tuple[str, str]]:
    """``(metrics file, table)`` for every ``<!-- metrics ... -->`` block of ``text``, rendered afresh from the
    metrics file as ``python -m passnet_common.docs`` would (paths relative to the current folder)."""
    return [(m.group("args").split()[0], metrics_table(m.group("args"))) for m in METRICS.finditer(text)]


@pytest.mark.parametrize("page", [p for p in PAGES if p != HISTORY], ids=lambda p: p.name)
def test_page_has_no_build_narrative_or_commit_ids(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    phrases = narrative(text)
    assert not phrases, f"{page.name}: build narrative belongs in docs/history.md: {phrases}"
    ids = commits()
    if not ids:
        pytest.skip("no git history in this checkout")
    found = commit_tokens(text, ids)
    assert not found, f"{page.name}: commit ids belong in docs/history.md: {found}"


@pytest.mark.parametrize("page", [p for p in PAGES if "<!-- metrics " in p.read_text(encoding="utf-8")], ids=lambda p: p.name)
def test_rendered_metrics_name_no_commit(page: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the page's metrics blocks render from the current metrics files (a ``note``, ``measured_on`` or
    ``command`` string included) names no commit: the file may, as a record; the page must not show it."""
    ids = commits()
    if not ids:
        pytest.skip("no git history in this checkout")
    monkeypatch.chdir(ROOT)
    found = {path: commit_tokens(table, ids) for path, table in rendered_metrics(page.read_text(encoding="utf-8"))}
    found = {path: tokens for path, tokens in found.items() if tokens}
    assert not found, (
        f"{page.name} renders commit ids from {found}: leave those keys out of its <!-- metrics --> block (or name the keys to render)"
    )


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda p: p.name)
def test_benchmark_prose_has_no_commit_ids(script: Path) -> None:
    """Docstrings and comments of ``benchmarks/*.py`` (and any page there) name no commit: a benchmark's
    reference revision is an argument or a default, recorded in its metrics file, not in its prose."""
    ids = commits()
    if not ids:
        pytest.skip("no git history in this checkout")
    source = script.read_text(encoding="utf-8")
    found = commit_tokens(python_prose(source) if script.suffix == ".py" else source, ids)
    assert not found, f"benchmarks/{script.name}: commit ids belong in git or the metrics record: {found}"


def test_detectors_find_what_they_name() -> None:
    """Known right values: a commit id of this clone (alone and as both sides of a range) and a build-log
    phrase are found, a graph hash prefix that is no commit and an ordinary sentence are not."""
    ids = commits()
    if ids:
        some, other = sorted(ids)[:2]
        assert commit_tokens(f"measured on {some[:7]} here", ids) == [some[:7]]
        assert commit_tokens(f"git log {some[:7]}..{other[:9]}", ids) == sorted([some[:7], other[:9]])
    assert commit_tokens("graph 92e6014f0b7e0000", {"aaaaaaa"}) == []
    assert NARRATIVE.search("the Ninth build (x) measured") and NARRATIVE.search("see issue 17")
    assert not NARRATIVE.search("the build writes one folder per task")


def test_hex_finds_both_sides_of_a_git_range() -> None:
    """``a..b`` and ``a...b`` name two commits: each side is found; a single dot (a file suffix) still hides
    a token, and a range of hashes that are no commits is nothing."""
    ids = {"abcdef1234567890", "0123456789abcdef"}
    assert commit_tokens("git diff abcdef1..0123456789", ids) == ["0123456789", "abcdef1"]
    assert commit_tokens("git log abcdef12...0123456 -- docs", ids) == ["0123456", "abcdef12"]
    assert commit_tokens("HEAD~3..abcdef1", ids) == ["abcdef1"]
    assert commit_tokens("file.abcdef1 and metrics/0123456.json", ids) == []
    assert commit_tokens("aaaaaaa..bbbbbbb", ids) == []


@pytest.mark.parametrize(
    "phrase",
    [
        "we re-ran the stage",
        "after the fix the stage",
        "measured in this session",
        "now faster than before",
        "which used to fork",
        "it used to fork",
        "the key was changed to v3",
        "the lock had been rewritten",
        "the stage no longer reaps",
        "on this build",
        "that build's cache",
        "measured on 2025-03-14",
        "on 14 March 2025",
        "on March 14, 2025",
        "in March 2025",
        "as before.",
        "the old 16-expert model",
        "The stage now stops",
        "now it is refused",
        "with the rule as it is now",
        "Today the zygote",
        "(before, the first type)",
        "x. Before, each child",
        "went from 5.15 to 3.33",
        "fixed earlier by a repair",
        "None of them is fixed here.",
        "not done here",
        "and what was done:",
        "no rule yet: Jev",
        "the key is not yet derived",
        "Two environment leaks are closed",
        "figures were quoted for the other",
        "patterns stopped matching",
        "runs of the code before; with",
        "In the next clean-clone build",
        "measured after the rules",
        "rows measured before these rules",
        "the previous way",
    ],
)
def test_narrative_finds_history_phrases(phrase: str) -> None:
    assert NARRATIVE.search(phrase), phrase


@pytest.mark.parametrize(
    "sentence",
    [
        "the previous node's output feeds the next",
        "the previous graph's hashes just before",
        "serving the previous page's items",
        "inputs drawn after the previous trial",
        "models whose earlier attempt failed are re-run",
        "its experts are no longer bit-identical to the base's",
        "the tiny base extrapolates to no longer word",
        "the held-out runs, never used to set a threshold",
        "the code used to build the model",
        "the sandbox is closed when its run ends",
        "the same as before the call",
        "done before the copy returns",
        "a trial not yet timed stays pending",
        "the next run redoes those rows",
        "runs.old / runs.new alternated",
        "the old and the new form alternated",
        "Lasby et al. 2025, Eq. 4",
        "arXiv 2510.26788",
        "a 2-D tensor of 2024 rows",
        "the rewritten graph runs eagerly",
        "read the record's load columns before comparing two records",
        "version 3, the revision before version 4",
        "the stage stops and reaps the server",
    ],
)
def test_narrative_leaves_reference_prose_alone(sentence: str) -> None:
    assert not NARRATIVE.search(sentence), NARRATIVE.search(sentence)


def test_narrative_reads_a_wrapped_phrase() -> None:
    """Known right value: a phrase broken over two lines is found; the same words in two sentences are not."""
    assert narrative("pass patterns stopped\n    matching") == ["stopped matching"]
    assert narrative("Before, each child\nwas fresh") == ["Before,"]
    assert narrative("the run stopped.\nMatching rows are kept") == []


def test_benchmark_prose_is_docstrings_and_comments() -> None:
    """Known right value: a docstring's and a comment's ids are prose, a string constant's is code."""
    source = '"""Compare with abcdef1."""\nREV = "abcdef2"  # the last abcdef3\n\n\ndef f():\n    """At abcdef4."""\n'
    prose = python_prose(source)
    assert commit_tokens(prose, {"abcdef1000", "abcdef2000", "abcdef3000", "abcdef4000"}) == ["abcdef1", "abcdef3", "abcdef4"]


def test_rendered_metrics_show_what_a_block_names(tmp_path: Path) -> None:
    """Known right value: a block without keys renders every top-level scalar, a ``note`` naming a commit
    included; a block naming its keys renders only those."""
    record = tmp_path / "m.json"
    record.write_text('{"note": "measured on abcdef1", "speedup": 1.5, "nested": {"x": 1}}')
    ids = {"abcdef1234"}
    every = rendered_metrics(f"<!-- metrics {record} -->\n<!-- /metrics -->\n")
    named = rendered_metrics(f"<!-- metrics {record} speedup nested.x -->\nold\n<!-- /metrics -->\n")
    assert [commit_tokens(table, ids) for _, table in every] == [["abcdef1"]]
    assert [commit_tokens(table, ids) for _, table in named] == [[]]
    assert named[0][0] == str(record) and "| `nested.x` | 1 |" in named[0][1]
