"""Integrity defenses of the scorer: each catches a small cheating candidate, lets an honest one through."""


import pytest

from curate.score.defenses.integrity import check_source
from curate.score.evaluate import evaluate_subgraph, parse_candidate, run_candidate, static_violations
from curate.score.scoring import score_curve
from curate.score.synthetic_tasks import builtin_task_set
from tests.score_fixtures import cand

FAST = {"timing": False, "share_sandbox": True}  # correctness and integrity only (timing has its own protocol tests)
TIMED = {"warmup": 1, "trials": 3, "min_trial_ms": 0.5, "retries": 0, "share_sandbox": True}


@pytest.fixture(scope="module")
def subs():
    return {s.subgraph_id: s for s in builtin_task_set(include_trivial=True)}


def test_static_check_reports_lines():
    v = static_violations(cand("static_cheat"))
    found = {(x.line, x.rule) for x in v}
    assert (2, "import") in found and (3, "import") in found and (4, "import") in found  # time, threading, curate
    assert (7, "patch") in found  # torch.matmul = ...
    assert (11, "attribute") in found and (12, "name") in found  # perf_counter, open
    assert static_violations(cand("honest_backend")) == []
    assert check_source("import torch\nx = torch.cuda.Stream()\n")[0].line == 2
    assert check_source("def f(:\n")[0].rule == "syntax"


@pytest.mark.parametrize("src, rule, detail", [
    ("from collections import _sys\n", "import", "_sys"),  # a module's private alias of sys
    ("from random import _os\n", "import", "_os"),
    ("from _pickle import loads\n", "import", "_pickle"),  # a top-level private module
    ("import torch\ntorch.jit._fork(print)\n", "attribute", "_fork"),
    ("import numpy as np\nv = np.lib.stride_tricks\n", "attribute", "stride_tricks"),  # views past a tensor's bytes
    ("class A:\n    pass\nA.__array_interface__ = {}\n", "attribute", "__array_interface__"),  # any address as an array
    ("import torch\nt = torch.frombuffer(bytearray(4), dtype=torch.uint8)\n", "attribute", "frombuffer"),
    ("def f(sys_mod):\n    sys_mod.setprofile(print)\n", "attribute", "setprofile"),  # a hook sees the sandbox loop
    ("def f(m):\n    m.settrace(print)\n", "attribute", "settrace"),
])
def test_static_check_refuses_private_aliases_hooks_and_raw_views(src, rule, detail):
    """Routes a candidate used past the static check (a profile hook on the sandbox loop reached
    through ``from collections import _sys``, which deferred its work past the timed calls): each
    is refused with the rule that names it; ``from torch import _dynamo`` and ``torch.as_strided``,
    which honest passes use, are not."""
    found = [(v.rule, v.detail) for v in check_source(src)]
    assert any(r == rule and detail in d for r, d in found), found
    assert check_source("from torch import _dynamo\nfrom torch._inductor.compile_fx import compile_fx\n") == []
    assert check_source("import torch\ny = torch.as_strided(torch.zeros(4), (2,), (1,))\n") == []


@pytest.mark.parametrize("src, detail", [
    # the reviewer's bypass: torch.load of a pickle whose REDUCE is builtins.exec, BytesIO through torch.serialization.io
    ("import torch\ntorch.load(torch.serialization.io.BytesIO(b''), weights_only=False)\n", "torch...serialization"),
    ("import torch\nf = torch.load\n", "torch...load (a loader)"),
    ("from torch import load\n", "from torch import load"),
    ("from torch.serialization import _load\n", "torch.serialization (not an allowed module)"),
    ("import torch.serialization\n", "torch.serialization (not an allowed module)"),
    ("import torch\nm = torch.jit.load\n", "torch...load"),
    ("import torch.jit as j\nm = getattr(j, 'load')\n", "getattr"),
    ("import torch\np = torch.package.PackageImporter\n", "PackageImporter"),
    ("import torch.package\n", "torch.package (not an allowed module)"),
    ("import torch\nh = torch.hub.load\n", "torch...hub (a denied module)"),
    ("import numpy as np\nnp.load(b, allow_pickle=True)\n", "keyword allow_pickle"),
    ("import numpy as np\nf = np.load\n", "np...load"),
    ("import numpy as np\nr = np.lib.format.read_array\n", "np.lib.format resolves to module numpy.lib.format"),
    ("from numpy.lib import format as fm\n", "numpy.lib.format is module numpy.lib.format"),
    ("import io\n", "import: io"), ("import marshal\n", "import: marshal"), ("import copyreg\n", "import: copyreg"),
    ("import dill\n", "import: dill"), ("import cloudpickle\n", "import: cloudpickle"), ("import shelve\n", "import: shelve"),
    ("import json\n", "json (not an allowed module)"), ("import pickletools\n", "import: pickletools"),
    ("import torch\nb = torch._utils._import_dotted_name\n", "torch..._utils"),
    ("import torch\nx = torch.storage._load_from_bytes\n", "torch...storage"),
    ("import torch\nx = torch._C._pickle_load_obj\n", "_pickle_load_obj (a loader)"),
    ("import torch\nx = torch._C.import_ir_module\n", "import_ir_module (a loader)"),
    ("import torch\ntorch.ops.load_library('x.so')\n", "load_library"),
    ("import torch.fx\nf = torch.fx.graph_module._forward_from_src\n", "_forward_from_src"),
    ("from torch._inductor.codecache import PyCodeCache\n", "torch._inductor.codecache (not an allowed module)"),
    ("import torch\nx = torch.utils.cpp_extension.load_inline\n", "cpp_extension"),
    ("import torch\ns = torch.serialization\nb = s.io\n", "torch...serialization"),
    ("import torch\nu = torch._dynamo\nb = u.utils.io\n", "u...io (a forbidden module)"),
    ("from torch._dynamo import utils as u\nb = u.uuid\n", "u.uuid resolves to module uuid"),
    ("import torch\nu = torch._dynamo\nb = u.utils.dis\n", "u.utils.dis resolves to module dis"),
    ("import torch\nb = torch._dynamo.utils.inspect\n", "inspect"),
    ("import random\nx = random._os\n", "random..._os (a forbidden module's private alias)"),
    ("import torch\nx = torch.load(f, **{'weights_only': False})\n", "the string 'weights_only'"),
    ("class A:\n    def __reduce__(self):\n        return (print, ())\n", "definition of __reduce__"),
    ("class A:\n    def __reduce_ex__(self, p):\n        return (print, ())\n", "definition of __reduce_ex__"),
    ("class A:\n    def __setstate__(self, s):\n        pass\n", "definition of __setstate__"),
    ("import torch\nr = torch.zeros(1).__reduce_ex__(2)\n", "__reduce_ex__"),
    ("class A:\n    __reduce__ = print\n", "__reduce__ (a pickle hook)"),
    ("A = type('A', (), {'__setstate__': print})\n", "the string '__setstate__'"),
    ("from torch import *\n", "import *"),
    ("import torch\nx = (torch,)[0].serialization\n", "?...serialization"),
])
def test_static_check_refuses_every_deserialiser_and_code_loader(src, detail):
    """Every deserialisation / code-loading entry point reachable from an allowed module is refused,
    whichever name or route reaches it (the reviewer's ``torch.load(torch.serialization.io.BytesIO(p),
    weights_only=False)`` with a pickle whose REDUCE is ``builtins.exec`` among them)."""
    found = [str(v) for v in check_source(src)]
    assert any(detail in f for f in found), found


def test_static_check_resolves_module_attributes_systematically():
    """Every module-valued attribute of every loaded torch / numpy module a candidate may import
    names a module the candidate may reach, or is refused when reached as an attribute, whatever
    its name (``torch.serialization.difflib``, ``torch._utils._compat_pickle``,
    ``torch._dynamo.utils.linecache``): the chain is resolved against the real modules
    (:func:`curate.score.defenses.integrity.resolve_chain`)."""
    import sys
    import types

    from curate.score.defenses.integrity import module_allowed, resolve_chain

    resolve_chain(["torch"])  # the zygote's modules imported here
    tried = refused = 0
    for name, mod in sorted(sys.modules.items()):
        if not isinstance(mod, types.ModuleType) or not module_allowed(name) or name.split(".")[0] not in ("torch", "numpy"):
            continue
        for attr, v in sorted(vars(mod).items()):
            if not isinstance(v, types.ModuleType) or module_allowed(v.__name__) or not attr.isidentifier():
                continue
            tried += 1
            found = check_source(f"import {name} as m\ny = m.{attr}\n")
            refused += bool(found)
            assert found, f"{name}.{attr} -> {v.__name__}"
    assert tried > 100 and refused == tried


def test_static_check_allows_what_honest_backends_use():
    src = ("import torch, math, functools, operator\nimport numpy as np\nimport torch.nn.functional as F\n"
           "from torch import fx\nfrom torch._inductor.compile_fx import compile_fx\nfrom torch.utils._pytree import tree_map\n"
           "from torch.fx.subgraph_rewriter import replace_pattern\nimport torch.nn as nn\n\n"
           "def backend(gm, ex):\n    torch._dynamo.reset()\n    s = torch.jit.trace(gm, ex)\n"
           "    y = torch.ops.aten.add.Tensor\n    a = np.asarray([1.0]).astype(np.float32)\n"
           "    m = nn.Linear(2, 2)\n    m.load_state_dict(m.state_dict())\n    c = gm.code\n"
           "    return torch.compile(gm, backend='inductor')\n")
    assert check_source(src) == []


def test_statically_rejected_candidate_is_not_run():
    rows, rejected = run_candidate(cand("static_cheat"), "builtin", {"timing": False})
    assert rows == [] and any("line 2" in r for r in rejected)


def test_honest_candidate_passes(subs):
    for sid in ("rmsnorm:0", "softmax:1"):
        r = evaluate_subgraph(subs[sid], cand("honest_backend"), TIMED)
        assert r["status"] == "ok" and r["violations"] == [] and r["min_pass_t"] == -10
        assert r["speedup"] > 0 and r["scored"]


def test_cached_outputs_caught(subs):
    r = evaluate_subgraph(subs["gelu_tanh:0"], cand("cached_backend"), FAST)
    assert r["status"] == "violation" and r["error_code"] == 1 and r["min_pass_t"] is None
    kinds = {v.split(":")[0] for v in r["violations"]}
    assert {"input_independent", "fresh_input_mismatch"} <= kinds  # outputs are copied out: no alias to see


def test_input_mutation_caught(subs):
    r = evaluate_subgraph(subs["gelu_tanh:0"], cand("mutating_backend"), FAST)
    kinds = {v.split(":")[0] for v in r["violations"]}
    assert r["status"] == "violation" and {"input_mutation", "output_alias"} <= kinds


def test_timer_patching_is_refused_and_decides_nothing_at_runtime(subs):
    import time

    real = time.perf_counter
    assert static_violations(cand("timer_backend"))  # the static check refuses it ...
    r = evaluate_subgraph(subs["softmax:0"], cand("timer_backend"), TIMED)  # ... and run anyway, it patches only its sandbox
    assert r["status"] == "ok" and r["violations"] == [] and "clock_parent" in r["flags"]
    assert time.perf_counter is real  # the parent's clock, the only one that decides, is untouched


def test_skipped_computation_on_near_zero_reference_is_excluded(subs):
    r = evaluate_subgraph(subs["tiny:near_zero"], cand("skip_backend"), FAST)
    assert r["status"] == "excluded" and not r["scored"] and r["out_trivial"] == ["near_zero"]
    # on a normal subgraph the same skip is a violation at every level (zeros pass loose tolerances)
    r2 = evaluate_subgraph(subs["rmsnorm:0"], cand("skip_backend"), FAST)
    kinds = {v.split(":")[0] for v in r2["violations"]}
    assert r2["status"] == "violation" and r2["min_pass_t"] is None and {"zero_output", "input_independent"} <= kinds


def test_pass_that_matches_nothing_scores_exactly_one(subs):
    c = cand("nomatch_pass", kind="pass")
    rows = [evaluate_subgraph(subs[s], c, TIMED) for s in ("rmsnorm:0", "swiglu:0")]
    assert all(r["matches"] == 0 and r["speedup"] == 1.0 and r["flags"][0] == "no_match" for r in rows)
    assert all(d["ES_t"] == 1.0 for d in score_curve(rows))
    # against Dynamo-only the unchanged graph is eager itself, timed (both sides ours) for its own figure
    assert all(r["flags"][1:] == ["reference_timing"] and r["speedup_vs_dynamo"] > 0 for r in rows)


def test_real_fusion_pass_matches_and_is_correct(subs):
    c = parse_candidate("fusion_pass=pass:curate/score/candidates/fusion_pass.py")
    for sid in ("rmsnorm:0", "gelu_tanh:0", "swiglu:0", "softmax:0"):
        r = evaluate_subgraph(subs[sid], c, FAST)
        assert r["matches"] >= 1 and r["status"] == "ok" and r["min_pass_t"] is not None and r["min_pass_t"] <= -5, r


def test_eager_scores_one_at_every_level(subs):
    rows = [evaluate_subgraph(s, parse_candidate("eager=eager"), FAST) for s in subs.values()]
    scored = [r for r in rows if r["scored"]]
    assert len(scored) == len(rows) - 1  # the near-zero one is excluded
    for conv in ("paper", "graphnet"):
        assert all(d["S_t"] == 1.0 and d["ES_t"] == 1.0 for d in score_curve(scored, convention=conv))


@pytest.mark.slow  # spawns children that import torch (about 20-50 s on 2 busy cores)
def test_crashing_child_is_a_runtime_crash_and_the_run_goes_on():
    rows, rejected = run_candidate(cand("dying_backend"), "builtin",
                                   {"timing": False, "static_check": False, "max_subgraphs": 2, "timeout_s": 120})
    assert rejected == [] and len(rows) == 2
    assert all(r["status"] == "runtime_crash" and r["error_code"] == 2 for r in rows)


@pytest.mark.slow  # spawns two children
def test_suspicious_speedup_is_retimed_in_a_fresh_process():
    rows, _ = run_candidate(cand("honest_backend"), "builtin",
                            {**TIMED, "max_subgraphs": 1, "retime_above": 0.0, "timeout_s": 120})
    (r,) = rows
    assert r["retimed"] and r["speedup_first"] > 0 and r["speedup"] > 0 and r["status"] == "ok"


def test_compile_failure_and_runtime_crash_codes(subs):
    broken = parse_candidate("broken=module:curate/score/candidates/broken_backend.py")
    r3 = evaluate_subgraph(subs["gelu_tanh:0"], broken, FAST)  # 8 call nodes: raises while compiling
    r2 = evaluate_subgraph(subs["softmax:0"], broken, FAST)  # 5 call nodes: raises when run
    assert (r3["status"], r3["error_code"]) == ("compile_failure", 3)
    assert (r2["status"], r2["error_code"]) == ("runtime_crash", 2)


@pytest.mark.parametrize("name,rule,detail", [
    ("cheat_typing_threads", "annotation", "string annotation"),  # typing.get_type_hints evals a string annotation
    ("cheat_typing_threads", "attribute", "get_type_hints"),
    ("cheat_forwardref_gap", "attribute", "ForwardRef"),  # typing.ForwardRef(...)._evaluate
    ("cheat_forwardref_gap", "attribute", "_evaluate"),
    ("cheat_sympy_sigcont", "import", "sympy.parsing.sympy_parser"),  # parse_expr("exec(P, N)")
    ("cheat_sympy_sigcont", "name", "parse_expr"),
    ("cheat_cfg_alias_threads", "patch", "cfg.cpp.threads"),  # a patch through an alias of torch._inductor.config
])
def test_static_check_refuses_string_evaluators_and_aliased_patches(name, rule, detail):
    """Allowed modules whose API evaluates a string (typing's type-hint resolver and ForwardRef,
    sympy's parser, dataclasses' function factory) return the real builtins, and a patch of
    ``torch._inductor.config`` can go through an alias: the static check refuses each route."""
    found = [(v.rule, v.detail) for v in static_violations(cand(name))]
    assert any(r == rule and detail in d for r, d in found), found


@pytest.mark.parametrize("src,detail", [
    ("import typing\nOS = typing.ForwardRef('x').__forward_code__\n", "__forward_code__"),
    ("import typing\nf = typing.List['__import__(\"os\")'].__args__[0]._evaluate\n", "_evaluate"),
    ("from typing import get_type_hints\n", "get_type_hints"),
    ("import typing_extensions as te\nh = te.get_type_hints\n", "get_type_hints"),
    ("import dataclasses\nf = dataclasses._create_fn('f', (), ['return 1'], globals={})\n", "dataclasses"),
    ("from dataclasses import dataclass\n", "dataclasses"),
    ("import sympy\nx = sympy.S('1')\n", "sympy"),
    ("import torch.fx.experimental.symbolic_shapes as s\nx = s.sympy\n", "sympy"),
    ("import torch.utils._sympy.functions as f\n", "torch.utils._sympy"),
    ("from __future__ import annotations\n", "__future__ import annotations"),
    ("def f(x) -> 'int':\n    return x\n", "string annotation"),
    ("import typing\ny: typing.Optional['int'] = None\n", "string annotation"),
    ("from torch._inductor import config\nconfig.cpp.threads = 2\n", "config.cpp.threads"),
    ("import torch\nc = torch._inductor.config\nc.cpp.threads = 2\n", "c.cpp.threads"),
    ("import torch._inductor.config as cfg\nsetattr(cfg.cpp, 'threads', 2)\n", "setattr on cfg.cpp"),
    ("import numpy as np\nnp.add = None\n", "np.add"),
])
def test_static_check_refuses_each_string_eval_route(src, detail):
    assert any(detail in str(v) for v in check_source(src)), [str(v) for v in check_source(src)]


def test_static_check_still_allows_plain_annotations_and_local_attributes():
    """The twins of the routes above: plain (non-string) annotations, typing's generics, Inductor
    as configured, and attributes of the candidate's own objects stay allowed."""
    assert static_violations(cand("honest_cfg_alias_twin")) == []
    src = ("import typing\nimport torch\n\n"
           "def backend(gm: torch.fx.GraphModule, ex: typing.List[torch.Tensor]) -> typing.Callable:\n"
           "    m = torch.nn.Linear(2, 2)\n    m.weight.requires_grad = False\n    gm.meta = {}\n    return gm.forward\n")
    assert check_source(src) == []
