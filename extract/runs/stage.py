"""The extract stage (``python -m extract capture``): the catalog's rows captured, the tables assembled.

:func:`run_capture` reads the catalog table, captures every row not already done
(:func:`extract.runs.scheduler.capture_all`, under the work folder's lock) and writes the
``models`` / ``extractions`` / ``graphs`` tables and the graph store
(:func:`extract.runs.assemble.assemble`), all with the ``extract`` params block
(:class:`extract.config.ExtractConfig`). :func:`capture_lines` is the stage's summary for a person.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from extract.config import ExtractConfig, extract_config
from extract.runs.assemble import assemble
from extract.runs.scheduler import capture_all
from passnet_common.worker import work_lock


def capture_rows(rows: list[dict], cfg: ExtractConfig | dict, work: Path, progress: bool = True) -> dict:
    """Capture every row of ``rows`` not already done in ``work`` with the ``extract`` params
    (workers, limits, retries, executor: :func:`extract.runs.scheduler.capture_all`); returns its counts."""
    cfg = extract_config(cfg)
    return capture_all(rows, cfg.capture, Path(work), workers=cfg.workers, timeout_s=float(cfg.timeout_s),
                       mem_cap_gb=cfg.mem_cap_gb, retry_failed=cfg.retry_failed, retry_transient=cfg.retry_transient,
                       progress=progress, executor=cfg.executor, ray_params=cfg.ray, cpu_budget_s=cfg.cpu_budget_s,
                       hang_s=cfg.hang_s, retries=cfg.retries)


def run_capture(cfg: ExtractConfig | dict, catalog: Path, out: Path, store: Path, work: Path,
                progress: bool = True) -> tuple[dict, dict]:
    """The extract stage: capture the rows of the ``catalog`` table (:func:`capture_rows`) under
    ``work``'s lock, then write the tables to ``out`` and the graph store to ``store``.

    Returns:
        (capture counts, assemble summary).

    Raises:
        FileNotFoundError: no catalog file.
        passnet_common.worker.WorkFolderBusy: another run holds ``work``.
    """
    cfg = extract_config(cfg)
    if not Path(catalog).is_file():
        raise FileNotFoundError(f"--catalog {catalog}: no such catalog file (run `python -m extract catalog` "
                                f"or `dvc repro catalog` first)")
    rows = pq.read_table(catalog).to_pylist()
    with work_lock(Path(work)):  # a second run on this work folder refuses (one error line)
        counts = capture_rows(rows, cfg, Path(work), progress)
        summary = assemble(rows, cfg.capture, Path(work), Path(out), Path(store))
    return counts, summary


def capture_lines(counts: dict, summary: dict) -> list[str]:
    """The stage's summary lines: what ran, what was reused, what was captured, and every model
    that is not ``ok`` by status and error class (8 ids per class at most)."""
    lines = [f"capture: {counts['ran']} run now ({counts['failed']} failed, {counts['retried']} retried), "
             f"{counts['skipped']} recorded without running (custom code / unreadable config), "
             f"{counts.get('duplicates', 0)} duplicate configs, {counts.get('retried_in_run', 0)} retried in this run, "
             f"{counts['done_before']} done before; "
             f"{summary['captured']}/{summary['models']} models captured complete, {summary['graphs']} graphs"]
    for status, classes in summary["not_ok"].items():
        for error_class, ids in classes.items():
            lines.append(f"  {status} [{error_class}] {len(ids)}: {', '.join(ids[:8])}{' ...' if len(ids) > 8 else ''}")
    return lines
