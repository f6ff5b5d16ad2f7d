"""Cheat: code run from a string through ``torch.library.infer_schema``, which evals a string
annotation with the function's globals (the real builtins). The annotation is set by assigning
the function's ``__annotations__`` at run time, so no annotation in the source holds a string.
The payload is attack_fx_thread_split.py's: a second thread per call, started and joined inside
the call, for half of the rows. Its twin computes both halves in this thread."""
import torch


def _proto(x):
    return x


_proto.__annotations__ = {"x": "[globals().__setitem__('Worker', __import__('threading').Thread), torch.Tensor][1]",
                          "return": "torch.Tensor"}


def backend(gm, example_inputs):
    torch.library.infer_schema(_proto, mutates_args=())
    worker = Worker  # noqa: F821  (bound by the annotation's payload)

    def part(xs, lo, hi, res, k):
        res[k] = gm(*[x[..., lo:hi, :] if x.dim() >= 2 else x for x in xs])

    def run(*xs):
        n = next(x.shape[-2] for x in xs if x.dim() >= 2)
        h = n // 2
        res = [None, None]
        t = worker(target=part, args=(xs, h, n, res, 1))
        t.start()
        part(xs, 0, h, res, 0)
        t.join()
        a, b = res
        if isinstance(a, torch.Tensor):
            return torch.cat([a, b], dim=-2)
        return type(a)(torch.cat([u, v], dim=-2) for u, v in zip(a, b))

    return run
