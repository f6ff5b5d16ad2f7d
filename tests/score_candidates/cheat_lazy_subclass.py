"""Cheat: return at once a tensor subclass that computes only when the evaluator first touches it
(the compute then falls outside the timed call). Caught: ``output_type`` (the boundary copies
each output into a plain buffer inside the timed request and refuses subclasses)."""
import torch


class Deferred(torch.Tensor):
    thunk = None

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        def real(a):
            return a.thunk() if isinstance(a, Deferred) and a.thunk is not None else a

        args = tuple(real(a) for a in args)
        kwargs = {k: real(v) for k, v in (kwargs or {}).items()}
        with torch._C.DisableTorchFunctionSubclass():
            return func(*args, **kwargs)


def backend(gm, example_inputs):
    def run(*xs):
        out = torch.Tensor._make_subclass(Deferred, torch.empty_like(xs[0]))
        out.thunk = lambda: gm(*xs)[0]  # a backend's graph returns a tuple of outputs
        return (out,)

    return run
