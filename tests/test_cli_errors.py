"""Bad input to the extract CLI and the params check ends with one ``error:`` line."""

from __future__ import annotations

from passnet_common.cli import run_cli


def _run(capsys, argv, monkeypatch=None):
    from extract.__main__ import main

    code = run_cli(lambda: main(argv))
    err = capsys.readouterr().err.strip().splitlines()
    return code, err


def test_malformed_yaml_is_one_line(tmp_path, capsys):
    bad = tmp_path / "params.yaml"
    bad.write_text("extract:\n  workers: 2\n   timeout_s: [\n")
    code, err = _run(capsys, ["capture", "--params", str(bad), "--catalog", str(tmp_path / "c.parquet")])
    assert code == 2 and len(err) == 1
    assert err[0].startswith("error: ") and "not valid YAML" in err[0] and "line 3" in err[0]


def test_missing_params_and_catalog_name_the_input(tmp_path, capsys):
    code, err = _run(capsys, ["capture", "--params", str(tmp_path / "nope.yaml")])
    assert code == 2 and err == [f"error: params file {tmp_path / 'nope.yaml'} not found (give --params PATH)"]
    good = tmp_path / "params.yaml"
    good.write_text("extract:\n  workers: 1\n")
    code, err = _run(capsys, ["capture", "--params", str(good), "--catalog", "/nonexistent/models.parquet"])
    assert code == 2 and len(err) == 1 and "--catalog /nonexistent/models.parquet: no such catalog file" in err[0]


def test_a_failed_dvc_stage_says_how_to_restore(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("DVC_STAGE", "extract")
    code, err = _run(capsys, ["capture", "--params", str(tmp_path / "nope.yaml")])
    assert code == 2 and err[0].startswith("error: ") and "`dvc checkout extract`" in err[1]


def test_params_check_stage_rejects_a_typo(tmp_path, capsys):
    from passnet_common.check_params import main

    p = tmp_path / "params.yaml"
    p.write_text("extract:\n  workerz: 2\n")
    assert run_cli(lambda: main([str(p), "--out", str(tmp_path / "ok.txt")])) == 2
    assert "workerz" in capsys.readouterr().err and not (tmp_path / "ok.txt").exists()
    p.write_text("extract:\n  workers: 2\n  cpu_budget_s: 300\n  hang_s: 60\n  retries: 1\n")
    assert run_cli(lambda: main([str(p), "--out", str(tmp_path / "ok.txt")])) == 0
    assert (tmp_path / "ok.txt").read_text().endswith("valid\n")
