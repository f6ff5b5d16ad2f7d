"""What the scorer scores and on what: candidate specs, their static check, task sets.

A *candidate* is given as ``name=spec`` with spec one of ``eager`` (the reference itself),
``backend:<name>`` (a registered ``torch.compile`` backend), ``module:<file.py>`` (a file exposing
``backend(gm, example_inputs) -> callable``) or ``pass:<file.py>`` (a file exposing
``PATTERNS = [(pattern, replacement), ...]`` or ``pattern`` / ``replacement`` for
``torch.fx.subgraph_rewriter.replace_pattern``). See :mod:`curate.score.evaluate`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from curate.score.defenses import integrity
from curate.score.synthetic_tasks import TaskSubgraph, builtin_task_set
from curate.select.tasks import load_task_set as load  # the curate stage's loader


@dataclass(frozen=True)
class Candidate:
    """A parsed candidate: ``name`` (row label), ``kind`` (eager|backend|module|pass), ``target``."""

    name: str
    kind: str
    target: str

    @property
    def spec(self) -> str:
        return self.kind if self.kind == "eager" else f"{self.kind}:{self.target}"


def parse_candidate(text: str) -> Candidate:
    """Parse ``name=spec`` (or a bare spec, named after it). Raises ValueError on a bad spec or a
    missing file."""
    name, _, spec = text.partition("=") if "=" in text else (text, "", text)
    if spec == "eager":
        return Candidate(name, "eager", "")
    kind, _, target = spec.partition(":")
    if kind not in ("backend", "module", "pass") or not target:
        raise ValueError(f"candidate {text!r}: spec must be eager, backend:<name>, module:<file.py> or pass:<file.py>")
    if kind != "backend" and not Path(target).is_file():
        raise ValueError(f"candidate {name!r}: file {target} not found")
    return Candidate(name, kind, target)


def static_violations(cand: Candidate) -> list[integrity.Violation]:
    """Static check of a module/pass candidate's file (empty for eager/backend names)."""
    if cand.kind in ("module", "pass"):
        return integrity.check_source(Path(cand.target).read_text(), cand.target)
    return []


def load_task_set(spec: str, include_trivial: bool = False) -> list:
    """Subgraphs of a task set: ``builtin`` (:mod:`curate.score.synthetic_tasks`), ``builtin-heldout``
    (the same tasks at held-out shapes) or a folder written by the ``curate`` stage (loaded by
    ``curate.select.tasks.load_task_set``).

    Raises:
        ValueError: unknown spec / a folder without a loader.
    """
    if spec in ("builtin", "builtin-heldout"):
        return builtin_task_set(include_trivial=include_trivial and spec == "builtin", held_out=spec == "builtin-heldout")
    if not Path(spec).is_dir():
        raise ValueError(f"task set {spec!r}: not 'builtin' and not a folder")

    out = []
    for task_id, sub_hash, gm, make_inputs in load(spec, seed=0):
        out.append(TaskSubgraph(str(task_id), str(sub_hash), lambda gm=gm: gm, lambda s, mi=make_inputs: list(mi(seed=s))))
    if not out:
        raise ValueError(f"task set {spec!r} holds no subgraphs")
    return out


def candidate_source(cand: Candidate) -> str:
    """The text of a module/pass candidate's file (the spec itself for eager / backend names)."""
    return Path(cand.target).read_text() if cand.kind in ("module", "pass") else cand.spec


def source_hash(text: str) -> str:
    """sha256 hex digest of a candidate's source text (the key of its trajectories and resume rows)."""
    return hashlib.sha256(text.encode()).hexdigest()
