"""The metamorphic generator of the canonical hashes (:mod:`tests.canonical_metamorphic`) on a long
seeded run: random programs rewritten (another valid order, other spellings: must hash equal)
and mutated (a literal's sign, two random draws swapped, a read moved across an in-place write,
a buffer's values: must hash apart when the eager outputs differ). CI runs seeds 0-999
(``tests/test_canonical_metamorphic.py``); this runs ``--start`` .. ``--start + --programs``.

    python -m benchmarks.bench_hash_metamorphic [--programs 5000] [--start 1000]
        [--out metrics/bench/bench_hash_metamorphic.json]

Writes the counts (programs, false merges, false splits, oracle faults, mutations by kind, the
failing seeds), the CPU seconds, the load average at start and end and the command.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--programs", type=int, default=5000)
    ap.add_argument("--start", type=int, default=1000, help="first seed (CI runs 0-999)")
    ap.add_argument("--out", default=str(ROOT / "metrics" / "bench" / "bench_hash_metamorphic.json"))
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    import torch

    from passnet_common.canonical import CANONICAL_VERSION
    from tests.canonical_metamorphic import run

    torch.set_num_threads(1)
    load_start = os.getloadavg()
    t0 = time.process_time()
    res = run(range(a.start, a.start + a.programs))
    rec = {
        "command": " ".join(["python -m benchmarks.bench_hash_metamorphic", *(argv if argv is not None else sys.argv[1:])]),
        "machine": platform.platform(), "python": platform.python_version(), "torch": torch.__version__,
        "canonical_version": CANONICAL_VERSION, "first_seed": a.start,
        "cpu_s": round(time.process_time() - t0, 1), **res,
        "false_merge_count": len(res["false_merges"]), "false_split_count": len(res["false_splits"]),
        "loadavg_start": list(load_start), "loadavg_end": list(os.getloadavg()),
    }
    print(json.dumps({k: v for k, v in rec.items() if k != "machine"}, indent=1))
    if a.out:
        Path(a.out).write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")
    return rec


if __name__ == "__main__":
    main()
