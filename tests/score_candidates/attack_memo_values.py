"""Attack: a result cache keyed on the inputs' data pointers *and* a few of their values.

The boundary writes fresh values every trial, but a trial of ``inner`` calls cycles over ``nv``
input sets (``inner > nv`` on fast graphs: at most 64 sets, or fewer when ``pool_mb`` is reached),
so within a trial the same set comes back ``inner / nv`` times. Keyed on the slot's address and
two of its elements, a repeat returns the output computed for that set a moment ago: correct
values (every check passes), a fraction ``nv / inner`` of the work."""


def backend(gm, example_inputs):
    memo = {}

    def run(*xs):
        key = tuple((x.data_ptr(), x.view(-1)[0].item(), x.view(-1)[-1].item()) for x in xs)
        out = memo.get(key)
        if out is None:
            out = gm(*xs)
            if len(memo) >= 512:
                memo.clear()
            memo[key] = out
        return out

    return run
