"""Honest twin of ``attack_memo_values.py``: the same key computed every call, never looked up."""


def backend(gm, example_inputs):
    seen = {}

    def run(*xs):
        key = tuple((x.data_ptr(), x.view(-1)[0].item(), x.view(-1)[-1].item()) for x in xs)
        out = gm(*xs)
        seen[0] = key
        return out

    return run
