"""Every ``dvc.yaml`` stage lists the code its command runs, so an edit cannot leave a stale output
that ``dvc status`` calls up to date.

For each stage whose command is ``python -m PACKAGE [SUBCOMMAND]``, the entry modules are the
package's ``__main__`` and, where that ``__main__`` holds a :class:`passnet_common.cli.Command`
table, the module of the subcommand the stage runs (the only one ``cli_main`` imports). From
there the static import closure over the project's packages is followed (every ``import`` /
``from ... import`` in a file, at any depth: an import inside a function runs too; the parent
packages' ``__init__.py`` as well). Each file of that closure must be a dep of the stage, itself or
through a listed folder.

Imports are not the only way a stage reaches a repository file: it runs some by path (a sandbox
script, the dispatch guard, a task folder's runner) and reads others as data (the stdlib corpus, the
committed Hub configs, expected-seconds priors). :func:`referenced_files` finds those: every string
constant of a closure module that names a repository file of the stage families or the core (a
repo-relative path such as ``curate/profile/variant.py``, or a bare file name such as
``"sandbox.py"`` / ``"stdlib_py311.json.gz"`` joined to ``Path(__file__)`` -- resolved from the
module's folder up to its package, else the one file of that name in the package); a ``.py`` file
found so is followed like an imported module. String values of the params blocks a stage reads that
name such a file (``score.candidates``: ``module:curate/score/candidates/broken_backend.py``) count
too. Each of those files must be a dep of the stage as well.
"""

from __future__ import annotations

import ast
import importlib
import re
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


#: file names a module may name as a repository file it runs or reads
FILE_NAME = re.compile(r"^[\w.-]+\.(py|json|jsonl|gz|txt|yaml|csv)$")


def _package_files(package: str, name: str) -> list[Path]:
    return sorted(p for p in (ROOT / package).rglob(name) if p.is_file() and "__pycache__" not in p.parts)


def resolve_reference(text: str, path: Path) -> Path | None:
    """The repository file (absolute) a string constant of module file ``path`` names, or None.

    ``a/b/c.py`` (a path under one of :data:`PACKAGES`): that file. ``c.py`` (a bare name): the
    first ``c.py`` found from the module's folder up to its top-level package folder (what
    ``Path(__file__).parent / ...`` / ``.with_name`` / ``.parents[n] / ...`` reach), else the only
    file of that name in the package (under a subfolder: ``parent / "corpus_files" / name``)."""
    if "/" in text:
        if text.split("/")[0] in PACKAGES and FILE_NAME.match(text.rsplit("/", 1)[1]):
            f = ROOT / text
            return f if f.is_file() else None
        return None
    if not FILE_NAME.match(text) or text == "__init__.py":
        return None
    package = path.relative_to(ROOT).parts[0]
    d = path.parent
    while True:
        if (d / text).is_file() and d / text != path:
            return d / text
        if d == ROOT / package:
            break
        d = d.parent
    found = _package_files(package, text)
    return found[0] if len(found) == 1 else None


def referenced_files(path: Path) -> set[Path]:
    """Repository files (absolute) that module file ``path`` names in a string constant (module
    docstring); docstrings excluded: a file a docstring mentions is not one the code opens."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            f = resolve_reference(node.value.strip(), path)
            if f is not None:
                out.add(f)
    return out


def module_of(f: Path) -> str | None:
    """The dotted module name of repository ``.py`` file ``f`` (absolute) under :data:`PACKAGES`, else None."""
    rel = f.relative_to(ROOT)
    if f.suffix != ".py" or rel.parts[0] not in PACKAGES:
        return None
    parts = list(rel.with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def closure(entries: list[str], files_too: bool = False) -> set[Path]:
    """Files of the static import closure of ``entries`` (with every parent package's ``__init__``);
    with ``files_too`` also every file a closure module names (:func:`referenced_files`), a ``.py``
    file of them followed like an import."""
    seen: set[str] = set()
    data: set[Path] = set()
    todo = list(entries)
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        parts = m.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))
        todo.extend(imported_modules(module_file(m), m))
        if files_too:
            for f in referenced_files(module_file(m)):
                name = module_of(f)
                if name is not None and module_file(name) == f:
                    todo.append(name)
                else:
                    data.add(f.relative_to(ROOT))
    return {module_file(m).relative_to(ROOT) for m in seen} | data


def params_files(blocks: list[str]) -> set[Path]:
    """Repository files named by string values of the params blocks ``blocks`` (dotted paths of
    params.yaml), after an optional ``kind:`` prefix (``module:curate/score/candidates/x.py``)."""
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    out: set[Path] = set()

    def walk(v):
        if isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, str):
            text = v.split(":", 1)[1] if ":" in v and "/" in v.split(":", 1)[1] else v
            if "/" in text and text.split("/")[0] in PACKAGES and (ROOT / text).is_file():
                out.add(Path(text))

    for block in blocks:
        v = params
        for key in block.split("."):
            v = v.get(key) if isinstance(v, dict) else None
        walk(v)
    return out


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


def stage_params(name: str) -> list[str]:
    """The params blocks (dotted) stage ``name`` of dvc.yaml reads."""
    st = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"][name]
    out = []
    for p in st.get("params", []):
        out.extend([p] if isinstance(p, str) else [k for v in p.values() for k in v] if isinstance(p, dict) else [])
    return out


def stage_files(name: str, cmd: str) -> set[Path]:
    """Every repository file stage ``name`` runs or reads: the closure of its command with the files
    its modules name (:func:`closure` with ``files_too``) and those its params blocks name."""
    return closure(stage_entries(cmd), files_too=True) | params_files(stage_params(name))


def covered(path: Path, deps: list[str]) -> bool:
    p = path.as_posix()
    return any(p == d.rstrip("/") or p.startswith(d.rstrip("/") + "/") for d in deps)


@pytest.mark.parametrize("name,cmd,deps", stages(), ids=[s[0] for s in stages()])
def test_stage_deps_cover_imported_code(name: str, cmd: str, deps: list[str]) -> None:
    if "${" in cmd:  # a matrix stage: the template's module part has no ${...}
        cmd = " ".join(w for w in cmd.split() if "${" not in w)
    files = stage_files(name, cmd)
    missing = sorted(str(f) for f in files if not covered(f, deps))
    assert not missing, f"stage {name}: deps miss files its command imports, runs or reads: {missing}"


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


def test_files_run_by_path_or_read_are_reported() -> None:
    """Known right values: the score stage runs the sandbox script and the dispatch guard by path
    (``curate/score/boundary/parent.py``: ``SANDBOX``, ``GUARD``) and its params name the built-in
    candidates' files; the stats stage reads the committed stdlib corpus (``corpus.CORPUS_FILE``).
    None of them is imported, and a deps list without them is reported."""
    name, cmd, deps = next(s for s in stages() if s[0] == "score")
    files = stage_files(name, cmd)
    for f in ("curate/score/boundary/sandbox.py", "curate/score/defenses/dispatch_guard.py",
              "curate/score/candidates/fusion_pass.py", "curate/select/task_runner.py"):
        assert Path(f) in files and Path(f) not in closure(stage_entries(cmd)), f
    assert not all(covered(f, [d for d in deps if not d.startswith("curate")]) for f in files)
    name, cmd, deps = next(s for s in stages() if s[0] == "proxy_stats")
    corpus_file = Path("proxy_artifacts/corpus_files/stdlib_py311.json.gz")
    assert corpus_file in stage_files(name, cmd)
    assert not covered(corpus_file, [d for d in deps if d != corpus_file.as_posix()])


def test_reference_resolution(tmp_path: Path) -> None:
    """A bare name resolves from the module's folder upwards (``parents[1] / "timing.py"`` in
    curate/select/tasks.py is curate/timing.py); a name no repository file has, a docstring's
    mention and a path outside the packages resolve to nothing."""
    tasks = ROOT / "curate/select/tasks.py"
    assert resolve_reference("timing.py", tasks) == ROOT / "curate/timing.py"
    assert resolve_reference("task_runner.py", tasks) == ROOT / "curate/select/task_runner.py"
    assert resolve_reference("no_such_file.py", tasks) is None
    assert resolve_reference("data/curate/tasks/x.json", tasks) is None
    probe = tmp_path / "probe.py"
    probe.write_text('"""Reads sandbox.py."""\nX = "curate/score/boundary/sandbox.py"\n')
    assert referenced_files(probe) == {ROOT / "curate/score/boundary/sandbox.py"}


def test_check_params_names_the_families_with_a_config() -> None:
    """The check_params stage's ``--families`` in dvc.yaml and in its module's docstring are the
    same list, and each family has the ``config`` module that list imports (``dedupe`` has none)."""
    name, cmd, _ = next(s for s in stages() if s[0] == "check_params")

    def families(text: str) -> list[str]:
        words = text.replace("\\", " ").split()
        i = words.index("--families") + 1
        out = []
        while i < len(words) and not words[i].startswith("--"):
            out.append(words[i])
            i += 1
        return out

    doc = importlib.import_module("passnet_common.check_params").__doc__
    assert families(cmd) == families(doc)
    assert all((ROOT / f / "config.py").is_file() for f in families(cmd))
    assert not (ROOT / "dedupe" / "config.py").exists() and "dedupe" not in families(doc)


def code_deps(files: set[Path]) -> list[str]:
    """``files`` as dvc deps: a folder where the closure holds every ``.py`` file under it, else files."""
    chosen: set[str] = set()
    for f in sorted(files):
        best = f.as_posix()
        for parent in reversed(f.parents[:-1]):  # the highest folder whose every .py file is in the closure
            py = list((ROOT / parent).rglob("*.py"))
            if py and all(p.relative_to(ROOT) in files for p in py):
                best = parent.as_posix()
                break
        chosen.add(best)
    return sorted(chosen)


def rewrite_dvc_yaml(text: str) -> str:
    """``dvc.yaml`` text with each stage's missing code deps added (:func:`code_deps` of the closure
    files no listed dep covers) after its last listed code dep; nothing is removed."""
    missing = {}
    for name, cmd, deps in stages():
        files = stage_files(name, " ".join(w for w in cmd.split() if "${" not in w))
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
