"""One CLI pattern (docs/layout.md): every family's ``__main__`` is a table of
:class:`passnet_common.cli.Command` and one ``cli_main`` call; each command's module defines
``add_args`` and ``run``; no ``__main__`` builds its own parser."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from passnet_common.cli import Command

ROOT = Path(__file__).resolve().parents[1]
FAMILIES = ("extract", "dedupe", "curate", "proxy_artifacts", "fullscale")


@pytest.mark.parametrize("family", FAMILIES)
def test_main_is_a_command_table(family: str) -> None:
    main = importlib.import_module(f"{family}.__main__")
    assert main.COMMANDS and all(isinstance(c, Command) for c in main.COMMANDS)
    tree = ast.parse((ROOT / family / "__main__.py").read_text(encoding="utf-8"))
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert "argparse" not in imported, f"{family}/__main__.py builds its own parser"
    for cmd in main.COMMANDS:
        path = ROOT / (cmd.module.replace(".", "/") + ".py")
        assert path.is_file(), f"{cmd.name}: no module {cmd.module}"
        defs = {n.name for n in ast.parse(path.read_text(encoding="utf-8")).body if isinstance(n, ast.FunctionDef)}
        assert {"add_args", "run"} <= defs, f"{cmd.module} lacks add_args / run"


@pytest.mark.parametrize("argv,named", [
    (["grpo", "--model", "{tmp}/no_model", "--name", "x", "--out", "{tmp}/out"], "--model {tmp}/no_model"),
    (["cost", "--models", "base={tmp}/no_model", "--metrics", "{tmp}/cost.json"], "--models {tmp}/no_model"),
    (["control", "--kind", "reinit", "--stats", "{tmp}/no_stats", "--proxy", "{tmp}/no_model", "--out", "{tmp}/out"],
     "--stats {tmp}/no_stats"),
])
def test_a_missing_model_folder_is_one_error_line_and_exit_2(tmp_path, capsys, argv, named) -> None:
    """Bad input to the proxy commands ends with exit status 2 and one ``error:`` line naming the flag and
    the path, before any work (no run records written, no traceback)."""
    from passnet_common.cli import cli_main, run_cli
    from proxy_artifacts.__main__ import COMMANDS

    argv = [a.format(tmp=tmp_path) for a in argv]
    assert run_cli(lambda: cli_main("python -m proxy_artifacts", None, COMMANDS, argv)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("error: " + named.format(tmp=tmp_path)) and "Traceback" not in "\n".join(err)
    assert not (tmp_path / "out").exists() and not (tmp_path / "cost.json").exists()


def test_fullscale_words_a_missing_params_file_like_every_family(tmp_path) -> None:
    from fullscale.params import merged_params

    with pytest.raises(FileNotFoundError, match=r"params file .*nope\.yaml not found \(give --params PATH\)"):
        merged_params(tmp_path / "nope.yaml")
