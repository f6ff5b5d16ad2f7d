"""Run every benchmark script in turn (``make bench``), each with its default arguments.

A script that ends with ``raise SystemExit(main())`` (or ``sys.exit``) would otherwise end this loop too:
its exit is caught here, a non-zero code reported, and the next script runs. Exits 1 when any script
failed, naming them."""

import runpy
import sys

MODULES = ("benchmarks.bench_graphs", "benchmarks.bench_capture", "benchmarks.bench_hash", "benchmarks.bench_proxy_stats",
           "benchmarks.bench_curate", "benchmarks.bench_crawl", "benchmarks.bench_executor",
           "benchmarks.bench_hash_spellings", "benchmarks.bench_hash_metamorphic")


def run(modules=MODULES) -> list[str]:
    """Run ``modules`` as ``python -m <module>`` one after another; returns those that failed (with why)."""
    failed = []
    for mod in modules:
        try:
            sys.argv = [mod]
            runpy.run_module(mod, run_name="__main__")
        except ModuleNotFoundError as exc:
            print(f"skipping {mod}: {exc}")
        except SystemExit as exc:
            if exc.code not in (None, 0):
                failed.append(f"{mod} (exit {exc.code})")
        except Exception as exc:  # noqa: BLE001 - one benchmark that breaks does not stop the others
            failed.append(f"{mod} ({type(exc).__name__}: {exc})")
    return failed


if __name__ == "__main__":
    bad = run()
    if bad:
        print("failed: " + "; ".join(bad), file=sys.stderr)
    sys.exit(1 if bad else 0)
