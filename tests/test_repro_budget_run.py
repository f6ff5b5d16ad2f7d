"""benchmarks/repro_budget_run.py: per-stage wall / CPU seconds of one `dvc repro` read from DVC's
own "Running stage" lines, on a two-stage DVC project (one plain stage, one foreach of 2)."""

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("dvc") is None and not (Path(sys.executable).parent / "dvc").exists(),
                                reason="dvc not installed")

BUSY = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.6:\n    pass\n"


def test_stage_rows_sum_to_the_run_and_the_busy_stage_holds_its_cpu(tmp_path, monkeypatch):
    from benchmarks.repro_budget_run import main

    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    subprocess.run(["dvc", "init", "--no-scm", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "busy.py").write_text(BUSY)
    (tmp_path / "idle.py").write_text("import time\ntime.sleep(0.3)\n")
    (tmp_path / "dvc.yaml").write_text(f"""stages:
  busy:
    cmd: {sys.executable} busy.py && echo 1 > busy.txt
    outs: [busy.txt]
  idle:
    foreach: [a, b]
    do:
      cmd: {sys.executable} idle.py && echo ${{item}} > idle_${{item}}.txt
      deps: [busy.txt]
      outs: ["idle_${{item}}.txt"]
""")
    monkeypatch.chdir(tmp_path)
    assert main(["--tsv", str(tmp_path / "b.tsv")]) == 0
    rows = list(csv.DictReader(open(tmp_path / "b.tsv"), delimiter="\t"))
    assert [r["stage"] for r in rows] == ["dvc_start", "busy", "idle"]  # foreach entries summed under the name
    total = json.loads((tmp_path / "b.tsv.total.json").read_text())
    assert abs(sum(float(r["wall_s"]) for r in rows) - total["wall_s"]) < 0.05
    busy, idle = rows[1], rows[2]
    assert float(busy["user_s"]) + float(busy["sys_s"]) >= 0.6  # the stage command's CPU, waited for by DVC
    assert float(idle["wall_s"]) >= 0.6  # two sleeps of 0.3 s
    assert total["rc"] == 0 and all(r["rc"] == "0" and r["maxrss_kb"] == "-1" for r in rows)
