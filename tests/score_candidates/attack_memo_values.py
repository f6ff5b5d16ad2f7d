"""Attack: a result cache keyed on the inputs' data pointers *and* a few of their values.

Keyed on the slot's address and two of its elements (the first and the last), a call whose inputs
look the same to that key returns the output computed for an earlier call: correct values where
inputs repeat, a fraction of the work. The boundary gives every timed call its own fresh input set
(no repeat within a trial), so the cache never hits there; the checked calls before timing include
a near repeat (the first call's inputs, in the same slot, with about half their inner elements
changed and the ends kept), on which the cache replays the first call's output:
``near_repeat_mismatch``."""


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
