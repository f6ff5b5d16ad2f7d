"""Executors for isolated tasks: ``local`` (default) or ``ray``; one interface for every stage.

    run = get_executor(cfg.executor, cfg.ray)          # cfg: extract.config.ExtractConfig
    run(tasks, fn, workers=cfg.workers, timeout_s=cfg.timeout_s, mem_cap_bytes=cap, on_done=cb)

``tasks``, ``fn`` and ``on_done`` mean what they mean for :func:`passnet_common.worker.run_isolated`
(``(key, arg, out_dir)`` triples; ``fn(arg, out_dir)`` writes its results under ``out_dir``;
``on_done(Outcome)`` in the caller as each task ends).

``ray``: each task becomes one Ray task (``num_cpus=1``) that itself calls
:func:`passnet_common.worker.run_isolated` on that single task, so isolation (a forked child per
model), the timeout, the memory cap and the ``result.json``-last resume protocol are exactly
the local ones; ``workers`` bounds the tasks in flight. Results land in ``out_dir``, so the
cluster needs the work folder on a shared filesystem (NFS, or a local ``ray.init`` as in the
tests). Outcomes are reported in completion order like the local executor; the tables are
assembled afterwards from the work folders, sorted, so they do not depend on the executor.

Pointing it at a real cluster: ``executor: ray`` and ``ray: {address: "ray://head:10001"}``
(or ``RAY_ADDRESS``), with this repository and its virtualenv at the same path on every node
(or a ``runtime_env``: ``ray: {runtime_env: {working_dir: ".", excludes: ["data"]}}``) and the
work folder on shared storage.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from passnet_common.worker import run_isolated

EXECUTORS = ("local", "ray")


def _ray_one(key: str, arg: Any, out_dir: str, fn: Callable, timeout_s: float, mem_cap_bytes: int | None,
             threads_per_worker: int, limits: dict | None = None):
    outs = run_isolated([(key, arg, Path(out_dir))], fn, workers=1, timeout_s=timeout_s, mem_cap_bytes=mem_cap_bytes,
                        threads_per_worker=threads_per_worker, **(limits or {}))
    return outs[0]


def run_ray(tasks: list[tuple[str, Any, Path]], fn: Callable[[Any, Path], None], *, workers: int,
            timeout_s: float, mem_cap_bytes: int | None, threads_per_worker: int = 1,
            on_done: Callable | None = None, ray_params: dict | None = None,
            cpu_budget_s: float | None = None, hang_s: float | None = None) -> list:
    """:func:`passnet_common.worker.run_isolated` on a Ray cluster (see the module docstring).

    ``workers``, ``timeout_s`` and ``mem_cap_bytes`` are the caller's (``extract.workers``, ``extract.timeout_s``,
    ``extract.mem_cap_gb``): no default here. ``ray_params``: ``address`` (default: ``RAY_ADDRESS`` or a local instance),
    ``num_cpus`` (local instance only), ``runtime_env``. An already initialised Ray is reused.

    Raises:
        ImportError: ray is not installed.
    """
    import ray  # noqa: PLC0415  (optional: ray is installed only with the ray extra)

    rp = dict(ray_params or {})
    if not ray.is_initialized():
        init = {k: rp[k] for k in ("address", "num_cpus", "runtime_env") if rp.get(k) is not None}
        ray.init(include_dashboard=False, log_to_driver=False, **init)
    remote = ray.remote(num_cpus=1, max_retries=0)(_ray_one)
    pending = list(tasks)
    in_flight: dict = {}
    outcomes = []
    while pending or in_flight:
        while pending and len(in_flight) < max(1, workers):
            key, arg, out_dir = pending.pop(0)
            Path(out_dir).mkdir(parents=True, exist_ok=True)
            ref = remote.remote(key, arg, str(out_dir), fn, timeout_s, mem_cap_bytes, threads_per_worker,
                                {"cpu_budget_s": cpu_budget_s, "hang_s": hang_s})
            in_flight[ref] = key
        done, _ = ray.wait(list(in_flight), num_returns=1)
        for ref in done:
            in_flight.pop(ref)
            o = ray.get(ref)
            outcomes.append(o)
            if on_done is not None:
                on_done(o)
    return outcomes


def get_executor(name: str = "local", ray_params: dict | None = None) -> Callable:
    """The ``run_isolated``-shaped callable of executor ``name`` (``local`` or ``ray``).

    Raises:
        ValueError: unknown executor name.
    """
    if name == "local":
        return run_isolated
    if name == "ray":
        def run(tasks, fn, **kw):
            return run_ray(tasks, fn, ray_params=ray_params, **kw)

        return run
    raise ValueError(f"extract.runs.executor must be one of {EXECUTORS}, got {name!r}")
