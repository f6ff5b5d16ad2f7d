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

A stage's ``params:`` must cover the params its code reads (:func:`params_reads`): the dotted paths
named by literal (``Cfg.from_params(x, "curate.profile")``, ``load_params(f, "curate").get("profile")``)
in the functions reachable from the command's ``run`` / ``main``, and the keys read from a params
mapping followed through names, calls and ``self`` attributes (:class:`ParamsFlow`: the proxy stages
pass the ``proxy`` block around as a mapping). A declared block covers every path under it.
"""

from __future__ import annotations

import ast
import functools
import importlib
import re
import shlex
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("passnet_common", "extract", "dedupe", "curate", "proxy_artifacts", "fullscale")


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
    out |= named_modules(tree)
    return {m for m in out if m.split(".")[0] in PACKAGES and module_file(m) is not None}


#: calls that load a module named by their first argument
LOADERS = ("import_module", "__import__", "run_module", "find_spec")


def named_modules(tree: ast.AST) -> set[str]:
    """Project modules a module loads by name rather than by an import statement: the literal first
    argument of ``importlib.import_module`` / ``__import__`` / ``runpy.run_module`` /
    ``importlib.util.find_spec``, and the literal after ``"-m"`` in a list or tuple (a command line,
    ``[sys.executable, "-m", "curate.tolerance"]``). A string that is not such an argument (a params
    block name, a Command table's entry, which :func:`stage_entries` resolves per subcommand) is not
    one. A name that is not a project module file is dropped by the caller."""
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and n.args and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str):
            f = n.func
            if (f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None) in LOADERS:
                out.add(n.args[0].value)
        elif isinstance(n, (ast.List, ast.Tuple)):
            for a, b in zip(n.elts, n.elts[1:]):
                if isinstance(a, ast.Constant) and a.value == "-m" and isinstance(b, ast.Constant) and isinstance(b.value, str):
                    out.add(b.value)
    return out


def _docstring_ids(tree: ast.AST) -> set[int]:
    return {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}


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
        if not FILE_NAME.match(text.rsplit("/", 1)[1]):
            return None
        f = ROOT / text
        if text.split("/")[0] in PACKAGES or (f.is_file() and not _is_output(text)):
            return f if f.is_file() else None  # a committed file outside the packages too (not a stage's output)
        return None
    if not FILE_NAME.match(text) or text == "__init__.py":
        return None
    if text not in ROOT_NAMES_NOT_DEPS and (ROOT / text).is_file():
        return ROOT / text  # a file at the repository root (params_full.yaml)
    package = path.relative_to(ROOT).parts[0]
    d = path.parent
    while True:
        if (d / text).is_file() and d / text != path:
            return d / text
        if d == ROOT / package:
            break
        d = d.parent
    found = _package_files(package, text)
    if not found:  # a file of another package (Path(__file__).parents[2] / "extract" / ... / name)
        found = [f for p in PACKAGES for f in _package_files(p, text)]
    return found[0] if len(found) == 1 else None


#: root files every stage names without depending on them through deps: params (``params:``) and DVC's own
ROOT_NAMES_NOT_DEPS = ("params.yaml", "dvc.yaml", "dvc.lock")


@functools.cache
def _declared_outputs() -> tuple[str, ...]:
    """Every output path dvc.yaml declares (outs, metrics, plots; matrix templates left out), read once."""
    outs = [o if isinstance(o, str) else next(iter(o))
            for st in yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"].values()
            for key in ("outs", "metrics", "plots") for o in st.get(key, []) or []]
    return tuple(o.rstrip("/") for o in outs if "${" not in o)


def _is_output(text: str) -> bool:
    """Whether repository path ``text`` is (inside) an output some dvc.yaml stage declares."""
    return any(text == o or text.startswith(o + "/") for o in _declared_outputs())


def referenced_files(path: Path) -> set[Path]:
    """Repository files (absolute) that module file ``path`` names in a string constant (module
    docstring); docstrings excluded: a file a docstring mentions is not one the code opens."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstring_ids(tree)
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


def test_modules_loaded_by_name_are_imports(tmp_path: Path) -> None:
    """Known right values: a module loaded through ``importlib.import_module``, ``__import__``,
    ``runpy.run_module`` or run as ``python -m`` in a command list is in the closure like an import;
    a dotted string that only names a params block (``"curate.profile"`` passed to a config) is not."""
    probe = tmp_path / "probe.py"  # read as if it were curate/probe.py
    probe.write_text(
        "import importlib, runpy, sys, subprocess\n"
        "def f(cfg):\n"
        "    importlib.import_module('curate.timing')\n"
        "    __import__('curate.tolerance')\n"
        "    runpy.run_module('curate.select.plots')\n"
        "    subprocess.run([sys.executable, '-m', 'curate.passbench.check'])\n"
        "    return cfg.from_params({}, 'curate.profile')\n")
    got = imported_modules(probe, "curate.probe")
    assert {"curate.timing", "curate.tolerance", "curate.select.plots", "curate.passbench.check"} <= got
    assert "curate.profile" not in got


def test_files_outside_the_packages_resolve_unless_they_are_outputs() -> None:
    """A committed root file (``params_full.yaml``) and a package file named from another package
    (``expected_seconds.json`` of extract/runs, reached by ``parents[n] / ...``) resolve; a stage's
    output (``metrics/curate.json``), params.yaml and a missing file do not."""
    tasks = ROOT / "curate/select/tasks.py"
    assert resolve_reference("params_full.yaml", tasks) == ROOT / "params_full.yaml"
    assert resolve_reference("expected_seconds.json", tasks) == ROOT / "extract/runs/expected_seconds.json"
    assert resolve_reference("metrics/curate.json", tasks) is None
    assert resolve_reference("params.yaml", tasks) is None
    assert resolve_reference("metrics/no_such.json", tasks) is None


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


# --- params reads ---------------------------------------------------------------------------------

_FUNC = (ast.FunctionDef, ast.AsyncFunctionDef)
_INDEX: dict[str, tuple] = {}


def module_index(mod: str) -> tuple[dict[str, ast.AST], dict[str, tuple]]:
    """``(defs, names)`` of project module ``mod``: its top-level functions and classes by name, and
    each imported name -> ``("mod", module)`` or ``("attr", module, name)``."""
    if mod not in _INDEX:
        path = module_file(mod)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        defs = {n.name: n for n in tree.body if isinstance(n, (*_FUNC, ast.ClassDef))}
        names: dict[str, tuple] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
                for a in node.names:
                    full = f"{base}.{a.name}"
                    names[a.asname or a.name] = ("mod", full) if module_file(full) else ("attr", base, a.name)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    names[a.asname or a.name.split(".")[0]] = ("mod", a.name if a.asname else a.name.split(".")[0])
        _INDEX[mod] = (defs, names)
    return _INDEX[mod]


def _project(mod: str) -> bool:
    return mod.split(".")[0] in PACKAGES and module_file(mod) is not None


def function_def(mod: str, name: str) -> ast.AST | None:
    """The definition of function ``name`` (``f`` or ``Cls.method``) in module ``mod``, else None."""
    defs = module_index(mod)[0]
    head, _, meth = name.partition(".")
    node = defs.get(head)
    if not meth:
        return node if isinstance(node, _FUNC) else None
    if isinstance(node, ast.ClassDef):
        return next((st for st in node.body if isinstance(st, _FUNC) and st.name == meth), None)
    return None


def resolve_call(mod: str, func: ast.expr) -> tuple[str, str] | None:
    """``(module, function)`` of the project function (a class: its ``__init__``) that a call's
    ``func`` in module ``mod`` names (``f``, ``imported_f``, ``module.f``), else None."""
    defs, names = module_index(mod)
    target = None
    if isinstance(func, ast.Name):
        if func.id in defs:
            target = (mod, func.id)
        else:
            r = names.get(func.id)
            if r and r[0] == "attr" and _project(r[1]):
                target = (r[1], r[2])
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        r = names.get(func.value.id)
        if r and r[0] == "mod" and _project(r[1]):
            target = (r[1], func.attr)
    if target is None:
        return None
    if function_def(*target) is not None:
        return target
    if function_def(target[0], f"{target[1]}.__init__") is not None:
        return target[0], f"{target[1]}.__init__"
    return None


def _str(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _key(node: ast.AST) -> tuple[str | None, ast.AST | None]:
    """``("k", X)`` of ``X["k"]`` or ``X.get("k", ...)``, else ``(None, None)``."""
    if isinstance(node, ast.Subscript):
        return _str(node.slice), node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args:
        return _str(node.args[0]), node.func.value
    return None, None


_RETURNS: dict[tuple[str, str], str | None] = {}
_SELF: dict[tuple[str, str], dict[str, str]] = {}


def returned_block(mod: str, name: str) -> str | None:
    """The params path function ``name`` of ``mod`` returns a mapping of (``load_proxy_params``:
    ``proxy``), else None."""
    if (mod, name) not in _RETURNS:
        _RETURNS[(mod, name)] = None
        f = function_def(mod, name)
        for node in ast.walk(f):
            if isinstance(node, ast.Return) and node.value is not None:
                path = ParamsFlow(mod, f).path(node.value)
                if path:
                    _RETURNS[(mod, name)] = path
                    break
    return _RETURNS[(mod, name)]


class ParamsFlow:
    """The params paths one function reads, following params mappings (``handles``) by name.

    A handle is ``load_params(f, "block")`` (not indexed in place), the return value of a function
    that returns one (:func:`returned_block`), ``h["k"]`` / ``h.get("k")`` of a handle (path + ``.k``),
    ``dict(h, ...)`` / ``x_params(h)`` (a normaliser: same path), ``h or {}``, a name or ``self.x``
    assigned one, or a parameter a caller passed one to. A read is a handle used other than by
    indexing it further, passing it to a project function (followed: :meth:`run` returns the
    calls), ``dict`` or ``from_params``, or assigning it."""

    def __init__(self, mod: str, func: ast.AST, bound: dict[str, str] | None = None, cls: str | None = None):
        self.mod, self.func, self.vars, self.cls = mod, func, dict(bound or {}), cls
        self.parent = {id(c): n for n in ast.walk(func) for c in ast.iter_child_nodes(n)}

    def path(self, e: ast.AST) -> str | None:
        if isinstance(e, ast.Name):
            return self.vars.get(e.id) if isinstance(e.ctx, ast.Load) else None
        if isinstance(e, ast.BoolOp):
            return self.path(e.values[0])
        if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self" and self.cls:
            return _SELF.get((self.mod, self.cls), {}).get(e.attr) if isinstance(e.ctx, ast.Load) else None
        k, inner = _key(e)
        if k is not None:
            h = self.path(inner)
            return f"{h}.{k}" if h else None
        if isinstance(e, ast.Call):
            fn = e.func.attr if isinstance(e.func, ast.Attribute) else getattr(e.func, "id", None)
            if fn == "load_params" and len(e.args) > 1 and _str(e.args[1]):
                return _str(e.args[1])
            if fn == "dict" and e.args:
                return self.path(e.args[0])
            r = resolve_call(self.mod, e.func)
            if r is not None:
                if r[1].endswith("_params") and e.args and self.path(e.args[0]):
                    return self.path(e.args[0])
                return returned_block(*r)
        return None

    def _assign(self) -> None:
        for _ in range(2):  # an assignment may read a name assigned further down (loops)
            for node in ast.walk(self.func):
                if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
                    continue
                t, h = node.targets[0], self.path(node.value)
                if h and isinstance(t, ast.Name):
                    self.vars[t.id] = h
                elif h and isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self" and self.cls:
                    _SELF.setdefault((self.mod, self.cls), {})[t.attr] = h
                elif isinstance(t, ast.Tuple) and isinstance(node.value, ast.Tuple):
                    for tt, v in zip(t.elts, node.value.elts):
                        if isinstance(tt, ast.Name) and self.path(v):
                            self.vars[tt.id] = self.path(v)

    def _passed(self, node: ast.AST) -> bool:
        p = self.parent.get(id(node))
        if (isinstance(p, ast.Subscript) and p.value is node) or (isinstance(p, ast.Attribute) and p.value is node) \
                or (isinstance(p, ast.Assign) and p.value is node) or isinstance(p, ast.Tuple) \
                or (isinstance(p, ast.BoolOp) and p.values[0] is node):
            return True
        if isinstance(p, ast.keyword):
            p = self.parent.get(id(p))
        elif not (isinstance(p, ast.Call) and node in p.args):
            return False
        fn = p.func.attr if isinstance(p.func, ast.Attribute) else getattr(p.func, "id", None)
        return fn in ("dict", "from_params") or resolve_call(self.mod, p.func) is not None

    def run(self) -> tuple[set[str], list[tuple[str, str, tuple]]]:
        """``(reads, calls)``: the params paths read here, and ``(module, function, bound handles)``
        of the project calls that receive a handle."""
        self._assign()
        reads, calls = set(), []
        for node in ast.walk(self.func):
            if isinstance(node, ast.Call) and (r := resolve_call(self.mod, node.func)) is not None:
                a = function_def(*r).args
                names = [p.arg for p in a.posonlyargs + a.args][1 if "." in r[1] else 0:]
                bound = {names[i]: h for i, x in enumerate(node.args) if i < len(names) and (h := self.path(x))}
                bound.update({k.arg: h for k in node.keywords if k.arg and (h := self.path(k.value))})
                if bound:
                    calls.append((r[0], r[1], tuple(sorted(bound.items()))))
            if isinstance(node, (ast.Name, ast.Subscript, ast.Call, ast.Attribute)) and not self._passed(node):
                h = self.path(node)
                if h:
                    reads.add(h)
        return reads, calls


def _entry_functions(entries: list[str]) -> list[tuple[str, str]]:
    return [(m, n) for m in entries for n in ("run", "main") if function_def(m, n) is not None]


def typed_reads(entries: list[str]) -> set[str]:
    """Params paths named by literal in the functions reachable from the entries' ``run`` / ``main``
    (a reference to a project function or class reaches it, ``self.m`` reaches the classes with
    such a method): ``Cfg.from_params(x, "a.b")`` and ``load_params(f, "a").get("b")`` -> ``a.b``."""
    todo = list(_entry_functions(entries))
    seen: set[tuple[str, str]] = set()
    out: set[str] = set()
    while todo:
        m, n = todo.pop()
        if (m, n) in seen:
            continue
        seen.add((m, n))
        defs, names = module_index(m)
        node = defs[n]
        for x in ast.walk(node):
            if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load):
                r = names.get(x.id)
                if x.id in defs:
                    todo.append((m, x.id))
                elif r and r[0] == "attr" and _project(r[1]) and r[2] in module_index(r[1])[0]:
                    todo.append((r[1], r[2]))
            elif isinstance(x, ast.Attribute) and isinstance(x.value, ast.Name):
                r = names.get(x.value.id)
                if r and r[0] == "mod" and _project(r[1]) and x.attr in module_index(r[1])[0]:
                    todo.append((r[1], x.attr))
                elif x.value.id == "self":
                    todo += [(m, c) for c, d in defs.items() if isinstance(d, ast.ClassDef)
                             and any(isinstance(st, _FUNC) and st.name == x.attr for st in d.body)]
            if isinstance(x, ast.Call):
                fn = x.func.attr if isinstance(x.func, ast.Attribute) else getattr(x.func, "id", None)
                if fn == "from_params":
                    path = _str(x.args[1]) if len(x.args) > 1 else next((_str(k.value) for k in x.keywords if k.arg == "path"), None)
                    if path:
                        out.add(path)
                elif fn == "load_params" and len(x.args) > 1 and _str(x.args[1]):
                    parent = {id(c): p for p in ast.walk(node) for c in ast.iter_child_nodes(p)}.get(id(x))
                    if isinstance(parent, ast.Attribute) and parent.attr == "get":
                        call = {id(c): p for p in ast.walk(node) for c in ast.iter_child_nodes(p)}.get(id(parent))
                        if isinstance(call, ast.Call) and call.args and _str(call.args[0]):
                            out.add(f"{_str(x.args[1])}.{_str(call.args[0])}")
    return out


def flow_reads(entries: list[str]) -> set[str]:
    """Params paths read through mappings (:class:`ParamsFlow`) from the entries' ``run`` / ``main``;
    a class's ``__init__`` that receives a handle brings in its other methods (``self.x`` handles)."""
    todo = [(m, n, ()) for m, n in _entry_functions(entries)]
    seen: set = set()
    out: set[str] = set()
    while todo:
        item = todo.pop()
        if item in seen:
            continue
        seen.add(item)
        m, n, bound = item
        cls = n.split(".")[0] if "." in n else None
        reads, calls = ParamsFlow(m, function_def(m, n), dict(bound), cls).run()
        out |= reads
        todo += calls
        if n.endswith(".__init__"):
            todo += [(m, f"{cls}.{st.name}", ()) for st in module_index(m)[0][cls].body
                     if isinstance(st, _FUNC) and st.name != "__init__"]
    return out


def params_reads(cmd: str) -> set[str]:
    """The params paths (dotted) the code of stage command ``cmd`` reads: :func:`typed_reads` and
    :func:`flow_reads` from its entry modules (:func:`stage_entries`)."""
    entries = stage_entries(cmd)
    return typed_reads(entries) | flow_reads(entries)


def params_covered(path: str, declared: list[str]) -> bool:
    """A read of ``path`` is declared: ``path`` or a block above it is in the stage's ``params``."""
    return any(path == d or path.startswith(d + ".") for d in declared)


@pytest.mark.parametrize("name,cmd,deps", stages(), ids=[s[0] for s in stages()])
def test_stage_declares_the_params_its_code_reads(name: str, cmd: str, deps: list[str]) -> None:
    if "params.yaml" in deps:  # the whole file is a dep (check_params validates every block)
        return
    cmd = " ".join(w for w in cmd.split() if "${" not in w)
    missing = sorted(p for p in params_reads(cmd) if not params_covered(p, stage_params(name)))
    assert not missing, f"stage {name}: its code reads params it does not declare under params: in dvc.yaml: {missing}"


def test_params_reads_known_values() -> None:
    """Known right values: the profile stage reads ``curate.profile`` (``ProfileConfig.from_params``)
    and ``curate.curate.build_spread`` (where the label's edge sits) and nothing else of another block;
    proxy_control reads ``proxy.eval`` through ``build_control`` -> ``run_prune`` (``params["eval"]`` of
    the mapping ``load_proxy_params`` returned), so a params list without it is reported; proxy_cost reads
    ``proxy.fidelity.device_memory_gb`` through ``write_cost``'s ``(fidelity_params or {}).get(...)``."""
    assert params_reads("python -m curate profile") == {"curate.profile", "curate.curate.build_spread"}
    name, cmd, _ = next(s for s in stages() if s[0] == "proxy_control")
    reads = params_reads(" ".join(w for w in cmd.split() if "${" not in w))
    assert "proxy.eval.batch_size" in reads and "proxy.fidelity.controls.seed" in reads
    assert not all(params_covered(p, [d for d in stage_params(name) if d != "proxy.eval"]) for p in reads)
    assert "proxy.fidelity.device_memory_gb" in params_reads("python -m proxy_artifacts cost")


def test_params_flow_follows_a_mapping(tmp_path: Path) -> None:
    """On synthetic source: a block loaded whole, indexed through names, ``or {}``, ``dict(...)``
    and a chained ``.get``; a record's key that is no params mapping is not a read."""
    src = ("def run(args):\n"
           "    prm = load_params(args.params, 'proxy')\n"
           "    ep = dict(prm['eval'], x=1)\n"
           "    n = ep['batch_size'] + (prm.get('grpo') or {}).get('seed', 0)\n"
           "    rec = {'base': 1}\n"
           "    return rec['base'] + n\n")
    func = ast.parse(src).body[0]
    reads, calls = ParamsFlow("proxy_artifacts.commands.stats", func).run()
    assert reads == {"proxy.eval.batch_size", "proxy.grpo.seed"} and calls == []


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
