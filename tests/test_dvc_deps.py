"""Every ``dvc.yaml`` stage lists the code its command runs, so an edit cannot leave a stale output
that ``dvc status`` calls up to date.

For each stage whose command is ``python -m PACKAGE [SUBCOMMAND]``, the entry modules are the
package's ``__main__`` and, where that ``__main__`` holds a :class:`passnet_common.cli.Command`
table, the module of the subcommand the stage runs (the only one ``cli_main`` imports). From
there the static import closure over the project's packages is followed (every ``import`` /
``from ... import`` in a file, at any depth: an import inside a function runs too; the parent
packages' ``__init__.py`` as well). Each file of that closure must be a dep of the stage, itself or
through a listed folder.
"""

from __future__ import annotations

import ast
import importlib
import shlex
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("passnet_common", "extract", "dedupe", "curate", "proxy_artifacts")


def module_file(name: str) -> Path | None:
    """The source file of project module ``name`` (a package's ``__init__.py``), or None."""
    base = ROOT / name.replace(".", "/")
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


def imported_modules(path: Path, module: str) -> set[str]:
    """Project modules named by the imports of ``path`` (the file of ``module``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)  # `from pkg import module`
    return {m for m in out if m.split(".")[0] in PACKAGES and module_file(m) is not None}


def closure(entries: list[str]) -> set[Path]:
    """Files of the static import closure of ``entries`` (with every parent package's ``__init__``)."""
    seen: set[str] = set()
    todo = list(entries)
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        parts = m.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))
        todo.extend(imported_modules(module_file(m), m))
    return {module_file(m).relative_to(ROOT) for m in seen}


def stage_entries(cmd: str) -> list[str]:
    """Entry modules of a stage command ``python -m PKG [SUB] ...`` (see module docstring)."""
    argv = shlex.split(cmd)
    assert argv[:2] == ["python", "-m"], f"stage command is not `python -m ...`: {cmd}"
    target = argv[2]
    entries = [target]
    main = f"{target}.__main__"
    if module_file(main) is not None:
        entries.append(main)
        commands = getattr(importlib.import_module(main), "COMMANDS", None)
        if commands:
            chosen = [c.module for c in commands if c.name == argv[3]]
            assert chosen, f"{cmd}: {argv[3]!r} is not a subcommand of {main}"
            entries.extend(chosen)
    if target == "passnet_common.check_params" and "--families" in argv:
        i = argv.index("--families") + 1
        while i < len(argv) and not argv[i].startswith("--"):
            entries.append(f"{argv[i]}.config")
            i += 1
    return [e for e in entries if module_file(e) is not None]


def stages() -> list[tuple[str, str, list[str]]]:
    """``(name, cmd, deps)`` of every dvc.yaml stage (a matrix stage once)."""
    spec = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    out = []
    for name, st in spec.items():
        deps = [d if isinstance(d, str) else next(iter(d)) for d in st.get("deps", [])]
        out.append((name, " ".join(st["cmd"].split()), deps))
    return out


def covered(path: Path, deps: list[str]) -> bool:
    p = path.as_posix()
    return any(p == d.rstrip("/") or p.startswith(d.rstrip("/") + "/") for d in deps)


@pytest.mark.parametrize("name,cmd,deps", stages(), ids=[s[0] for s in stages()])
def test_stage_deps_cover_imported_code(name: str, cmd: str, deps: list[str]) -> None:
    if "${" in cmd:  # a matrix stage: the template's module part has no ${...}
        cmd = " ".join(w for w in cmd.split() if "${" not in w)
    files = closure(stage_entries(cmd))
    missing = sorted(str(f) for f in files if not covered(f, deps))
    assert not missing, f"stage {name}: deps miss modules its command imports: {missing}"


def test_closure_follows_imports_inside_functions(tmp_path: Path) -> None:
    """The closure walks function-level imports (a module whose only import sits inside a function
    still brings its target in), the top-level imports of ``curate.select.cli`` and every parent package."""
    probe = tmp_path / "probe.py"  # read as if it were proxy_artifacts/probe.py
    probe.write_text("def f():\n    from .rl import run_grpo_all  # noqa: PLC0415\n    return run_grpo_all\n")
    assert "proxy_artifacts.rl" in imported_modules(probe, "proxy_artifacts.probe")
    files = closure(["curate.select.cli"])
    assert Path("curate/select/longtail.py") in files
    assert Path("curate/__init__.py") in files and Path("curate/select/__init__.py") in files


def test_a_missing_dep_is_reported() -> None:
    """Known right value: the dedupe stage's command writes Parquet through passnet_common.io, so
    a deps list without it is reported."""
    name, cmd, deps = next(s for s in stages() if s[0] == "dedupe")
    files = closure(stage_entries(cmd))
    assert Path("passnet_common/io.py") in files
    assert not all(covered(f, [d for d in deps if d not in ("passnet_common/io.py", "passnet_common")]) for f in files)


def code_deps(files: set[Path]) -> list[str]:
    """``files`` as dvc deps: a folder where the closure holds every ``.py`` file under it, else files."""
    chosen: set[str] = set()
    for f in sorted(files):
        best = f.as_posix()
        for parent in reversed(f.parents[:-1]):  # the highest folder whose every .py file is in the closure
            if all(p.relative_to(ROOT) in files for p in (ROOT / parent).rglob("*.py")):
                best = parent.as_posix()
                break
        chosen.add(best)
    return sorted(chosen)


def rewrite_dvc_yaml(text: str) -> str:
    """``dvc.yaml`` text with each stage's missing code deps added (:func:`code_deps` of the closure
    files no listed dep covers) after its last listed code dep; nothing is removed."""
    missing = {}
    for name, cmd, deps in stages():
        files = closure(stage_entries(" ".join(w for w in cmd.split() if "${" not in w)))
        missing[name] = code_deps({f for f in files if not covered(f, deps)})
    out, stage, in_deps, last_code = [], None, False, None
    lines = text.splitlines()
    inserts: dict[int, list[str]] = {}
    for i, line in enumerate(lines):
        stripped = line.strip()
        if line.startswith("  ") and not line.startswith("   ") and stripped.endswith(":") and stripped[:-1] in missing:
            stage, in_deps = stripped[:-1], False
        elif stage and stripped == "deps:":
            in_deps, last_code = True, i
        elif in_deps and stripped.startswith("- "):
            if stripped[2:].split("/")[0].split("#")[0].strip() in PACKAGES:
                last_code = i
        elif in_deps:
            in_deps = False
            if missing[stage]:
                inserts[last_code] = missing[stage]
    for i, line in enumerate(lines):
        out.append(line)
        out.extend(f"      - {d}" for d in inserts.get(i, []))
    return "\n".join(out) + "\n"


if __name__ == "__main__":  # `python tests/test_dvc_deps.py --write` rewrites dvc.yaml's code deps
    import sys

    if "--write" in sys.argv:
        path = ROOT / "dvc.yaml"
        path.write_text(rewrite_dvc_yaml(path.read_text()))
    for name, cmd, _ in stages():
        print(name, code_deps(closure(stage_entries(" ".join(w for w in cmd.split() if "${" not in w)))))
