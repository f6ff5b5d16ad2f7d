"""Config dedupe at capture time, keyed by what an architecture's capture actually read.

The catalog merges rows whose configs are equal (:func:`extract.sources.catalog.dedupe_key`:
the whole config, provenance strings left out). Configs of one architecture that differ only in
attributes its model never reads (a tokenizer field, a generation setting, a label name) are
merged here, in the capture stage, from the record of a capture of that architecture
(:mod:`extract.capture.config_reads`, written to ``config_reads.json`` of the attempt's work
folder): a row ``X`` is a duplicate of a captured row ``R`` of the same library, architecture
and model type when ``X``'s config holds the same value as ``R``'s at every attribute ``R``'s
capture read (:func:`extract.capture.config_reads.reads_key` of both, built the way the capture
builds them). Then ``X``'s capture would run ``R``'s code path exactly; ``X`` gets ``R``'s graphs
(``duplicate_of``). No record (a row alone in its architecture, a capture that failed or timed
out, an eager run that did not finish): nothing is merged on it, the whole config decides.

Waves (:class:`ReadsDedupe`): the first wave captures every row except the later rows of an
architecture with several configs; after a wave each pending row is merged into a recorded
representative when it agrees with it, and of the rest one row per class of equal values on the
union of the recorded reads is captured next (those sharing a class wait for its record). A
group without any record captures all its pending rows at once. Everything depends on the
catalog and the captures only (model_id order), never on timing or on earlier work-folder
contents, so two runs make the same merges.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from extract.capture.build import hf_config
from extract.capture.config_reads import reads_key
from extract.runs.attempts import attempt_key, work_dir
from passnet_common.io import atomic_write_json

READS_FILE = "config_reads.json"


def reads_group(row: dict) -> tuple | None:
    """The architecture a capturable transformers row is deduped within
    (``(library, architecture, model_type)``); None for every other row (other libraries key on
    their whole config in the catalog; unreadable, custom-code and catalog-duplicate rows are
    never captured)."""
    if (row.get("library") != "transformers" or row.get("duplicate_of") or row.get("catalog_error_class")
            or row.get("trust_remote_code") or not row.get("config_json")):
        return None
    return (row["library"], row.get("architecture"), row.get("model_type"))


def recorded_reads(wd: Path) -> list[str] | None:
    """The reads recorded in work folder ``wd`` when they can represent other configs: the capture
    finished (``result.json`` status ``ok`` / ``incomplete``) and its eager run of forward ran to
    the end (``forward_runs`` > 0); None otherwise."""
    res, rd = Path(wd) / "result.json", Path(wd) / READS_FILE
    if not (res.exists() and rd.exists()):
        return None
    try:
        if json.loads(res.read_text())["status"] not in ("ok", "incomplete"):
            return None
        rec = json.loads(rd.read_text())
    except (ValueError, KeyError):
        return None
    return list(rec["reads"]) if rec.get("forward_runs", 0) > 0 and isinstance(rec.get("reads"), list) else None


def _built_config(row: dict):
    return hf_config(json.loads(row["config_json"]))


class ReadsDedupe:
    """The waves of one capture stage over ``rows`` (catalog rows, sorted by model_id).

    ``duplicate_of``: ``model_id -> model_id`` of the captured row whose graphs it receives."""

    def __init__(self, rows: list[dict]):
        groups: dict[tuple, list[dict]] = {}
        for r in rows:
            g = reads_group(r)
            if g is not None:
                groups.setdefault(g, []).append(r)
        self._multi = {g: rs for g, rs in groups.items() if len(rs) > 1}
        in_multi = {r["model_id"] for rs in self._multi.values() for r in rs}
        self._first = [r for r in rows if r["model_id"] not in in_multi]
        self._reps: dict[tuple, list[tuple[dict, list[str]]]] = {g: [] for g in self._multi}
        self._pending: dict[tuple, list[dict]] = {}
        self._wave: dict[tuple, list[dict]] = {}
        for g, rs in self._multi.items():
            self._wave[g] = rs[:1]
            self._pending[g] = rs[1:]
            self._first.append(rs[0])
        self._configs: dict[str, object] = {}
        self.duplicate_of: dict[str, str] = {}
        self.waves = 0

    def first_wave(self) -> list[dict]:
        """Rows to capture first (catalog order kept)."""
        self.waves = 1
        order = {id(r): i for i, r in enumerate(self._first)}
        return sorted(self._first, key=lambda r: (r["model_id"], order[id(r)]))

    def _key(self, row: dict, reads) -> str:
        mid = row["model_id"]
        if mid not in self._configs:
            try:
                self._configs[mid] = _built_config(row)
            except Exception as exc:  # noqa: BLE001 - a config that does not build is merged with nothing
                self._configs[mid] = exc
        cfg = self._configs[mid]
        return f"unbuildable:{mid}" if isinstance(cfg, Exception) else reads_key(cfg, reads)

    def next_wave(self, reads_of: Callable[[dict], list[str] | None]) -> list[dict]:
        """After a wave: record the reads of its captured rows (``reads_of(row)``, e.g. via
        :func:`recorded_reads`), merge the pending rows that agree with a representative, and
        return the rows to capture next (empty when none is left)."""
        out = []
        for g, captured in self._wave.items():
            for r in captured:
                reads = reads_of(r)
                if reads is not None:
                    self._reps[g].append((r, reads))
            still = []
            for x in self._pending[g]:
                rep = next((r for r, reads in self._reps[g] if self._key(r, reads) == self._key(x, reads)), None)
                if rep is not None:
                    self.duplicate_of[x["model_id"]] = rep["model_id"]
                else:
                    still.append(x)
            if not self._reps[g]:
                nxt, still = still, []  # no record to merge on: each config is captured
            else:
                union = sorted({p for _, reads in self._reps[g] for p in reads})
                seen: set[str] = set()
                nxt, wait = [], []
                for x in still:
                    k = self._key(x, union)
                    (wait if k in seen else nxt).append(x)
                    seen.add(k)
                still = wait
            self._wave[g] = nxt
            self._pending[g] = still
            out.extend(nxt)
        if out:
            self.waves += 1
        return sorted(out, key=lambda r: r["model_id"])


MERGE_FILE = "duplicate_of.json"


def write_merge(wd: Path, rep_id: str, rep_key: str) -> None:
    """Record in the work folder ``wd`` of a merged row that it receives the graphs of ``rep_id``
    (whose attempt key is ``rep_key``); read back by :func:`with_duplicates`."""
    Path(wd).mkdir(parents=True, exist_ok=True)
    atomic_write_json(Path(wd) / MERGE_FILE, {"duplicate_of": rep_id, "attempt_key": rep_key})


def clear_merge(wd: Path) -> None:
    """Remove a merge record of an earlier run from ``wd`` (the row is captured now)."""
    (Path(wd) / MERGE_FILE).unlink(missing_ok=True)


def with_duplicates(rows: list[dict], capture: dict, work: Path) -> list[dict]:
    """``rows`` with ``duplicate_of`` set on every row the capture stage merged
    (:func:`write_merge` in the row's work folder, valid while the representative's attempt key
    is the one recorded, i.e. the same config and code). New dicts; order kept."""
    keys = {r["model_id"]: attempt_key(r, capture) for r in rows if reads_group(r) is not None}
    out = []
    for r in rows:
        if r["model_id"] in keys:
            f = work_dir(Path(work), keys[r["model_id"]]) / MERGE_FILE
            if f.exists() and not (f.parent / "result.json").exists():
                m = json.loads(f.read_text())
                if keys.get(m.get("duplicate_of")) == m.get("attempt_key"):
                    r = {**r, "duplicate_of": m["duplicate_of"]}
        out.append(r)
    return out
