"""``make bench``'s runner (``benchmarks/run_all.py``)."""

import sys


def test_run_all_goes_on_past_a_script_that_exits_and_names_the_failures(tmp_path, monkeypatch, capsys):
    """A script ending in ``raise SystemExit(main())`` once ended the whole loop with status 0, so the
    benchmarks listed after ``bench_curate`` never ran. Every script runs; a non-zero exit or an exception
    is named (a benchmark module that is not there too), one whose optional package is missing is skipped."""
    from benchmarks.run_all import run

    pkg = tmp_path / "fakebench"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "ok_exit.py").write_text("import pathlib\npathlib.Path(__file__).with_suffix('.ran').write_text('1')\n"
                                    "raise SystemExit(0)\n")
    (pkg / "bad_exit.py").write_text("raise SystemExit(3)\n")
    (pkg / "boom.py").write_text("raise RuntimeError('broken')\n")
    (pkg / "needs_pkg.py").write_text("import passnet_no_such_package\n")
    (pkg / "last.py").write_text("import pathlib\npathlib.Path(__file__).with_suffix('.ran').write_text('1')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    argv = list(sys.argv)
    try:
        failed = run(("fakebench.ok_exit", "fakebench.bad_exit", "fakebench.boom", "fakebench.missing", "fakebench.needs_pkg",
                      "fakebench.last"))
    finally:
        sys.argv = argv
    assert (pkg / "ok_exit.ran").is_file() and (pkg / "last.ran").is_file()
    assert failed[:2] == ["fakebench.bad_exit (exit 3)", "fakebench.boom (RuntimeError: broken)"]
    assert len(failed) == 3 and failed[2].startswith("fakebench.missing (ImportError")
    assert "skipping fakebench.needs_pkg: No module named 'passnet_no_such_package'" in capsys.readouterr().out
