"""The scorer reads the curate stage's task folders (curate.select.tasks format) and runs candidates on them."""

import torch
import torch.fx as fx
from torch.fx.passes.shape_prop import ShapeProp

from curate.score.evaluate import evaluate_subgraph, load_task_set, parse_candidate
from curate.score.scoring import score_curve
from curate.score.synthetic_tasks import rmsnorm, softmax
from curate.select.tasks import group_tasks, write_task_folders
from passnet_common.record import CapturedGraph, describe_graph
from passnet_common.store import store_path, write_graph


def _task_folders(tmp_path):
    lt = []
    for fn, inputs, pat in ((rmsnorm, [torch.randn(1, 16, 128), torch.randn(128)], "rms"),
                            (softmax, [torch.randn(1, 16, 128)], "softmax")):
        gm = fx.symbolic_trace(fn)
        ShapeProp(gm).propagate(*inputs)
        rec = describe_graph(0, CapturedGraph(gm, ["input"] * len(inputs), inputs, None), with_stats=True)
        write_graph(tmp_path / "store", rec)
        f = store_path(tmp_path / "store", rec["graph_hash"])
        # one labelled run-0 variant row per subgraph, in the curate stage's shape (curate.select.tasks.group_tasks)
        lt.append({"subgraph_hash": f.name, "size": "catalog", "dtype": "float32", "pattern": pat,
                   "speedup_e2e": 0.5, "speedup_e2e_ci_low": 0.4, "speedup_e2e_ci_high": 0.6,
                   "speedup_compiler": 0.5, "speedup_compiler_ci_low": 0.4, "speedup_compiler_ci_high": 0.6,
                   "eager_median_ms": 1.0, "dynamo_median_ms": 1.1, "inductor_median_ms": 2.0,
                   "model_ids": ["m"], "anchor": ""})
    write_task_folders(group_tasks(lt, task_size=10, max_tasks=10), tmp_path / "store", tmp_path / "tasks", -5, {"cpu_model": "x"})
    return tmp_path / "tasks"


def test_curate_task_folders_are_scored(tmp_path):
    subs = load_task_set(str(_task_folders(tmp_path)))
    assert [s.task_id for s in subs] == ["t000", "t001"]
    a, b = subs[0].make_inputs(0), subs[0].make_inputs(1)
    assert not torch.equal(a[0], b[0])  # a new seed gives fresh inputs
    fp = parse_candidate("fusion_pass=pass:curate/score/candidates/fusion_pass.py")
    rows = [evaluate_subgraph(s, fp, {"timing": False}) for s in subs]
    assert [r["matches"] for r in rows] == [1, 1]  # the pass matches the stored (Dynamo-style) graphs
    assert all(r["status"] == "ok" and r["min_pass_t"] <= -5 for r in rows)
    eager = [evaluate_subgraph(s, parse_candidate("eager"), {"timing": False}) for s in subs]
    assert all(d["ES_t"] == 1.0 for d in score_curve(eager))


def test_fusion_pass_fuses_bloom_gelu_as_recorded_by_dynamo():
    from curate.score.synthetic_tasks import TaskSubgraph

    def bloom_gelu(x):  # the form of transformers' Bloom GELU in the corpus (decompose pattern linear>mul>add>mul>tanh>add>mul)
        return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))

    sub = TaskSubgraph("t", "bloom", lambda: fx.symbolic_trace(bloom_gelu),
                       lambda s: [torch.randn(2, 8, 64, generator=torch.Generator().manual_seed(s))])
    r = evaluate_subgraph(sub, parse_candidate("fp=pass:curate/score/candidates/fusion_pass.py"), {"timing": False})
    assert r["matches"] == 1 and r["status"] == "ok" and r["min_pass_t"] <= -5


def test_fusion_pass_folds_conv_batchnorm_as_recorded_by_dynamo():
    """The corpus' commonest pattern (conv2d>batch_norm, Dynamo's positional form) is matched; the
    fold is taken when the weight is smaller than the output (3x3x16x3 weight, 16x32x32 output)."""
    import torch.nn.functional as F

    from curate.score.synthetic_tasks import TaskSubgraph

    g = fx.Graph()
    x, w, mean, var, gamma, beta = (g.placeholder(n) for n in ("x", "w", "mean", "var", "gamma", "beta"))
    y = g.call_function(torch.conv2d, (x, w, None, (1, 1), (1, 1), (1, 1), 1))
    bn = g.call_function(F.batch_norm, (y, mean, var, gamma, beta, False, 0.1, 1e-05))
    g.output((g.call_function(F.relu, (bn,)),))
    gm = fx.GraphModule(torch.nn.Module(), g)

    def make(s):
        gen = torch.Generator().manual_seed(s)
        return [torch.randn(1, 3, 32, 32, generator=gen), torch.randn(16, 3, 3, 3, generator=gen), torch.randn(16, generator=gen),
                torch.rand(16, generator=gen) + 0.5, torch.randn(16, generator=gen), torch.randn(16, generator=gen)]

    r = evaluate_subgraph(TaskSubgraph("t", "convbn", lambda: gm, make),
                          parse_candidate("fp=pass:curate/score/candidates/fusion_pass.py"), {"timing": False})
    assert r["matches"] == 1 and r["status"] == "ok" and r["min_pass_t"] <= -5, r
