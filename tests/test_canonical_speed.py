"""What the speed work on the canonical form (hashing speed) promises besides identical
outputs (those: ``tests/test_canonical_identity.py``): no cyclic garbage collection runs during
the form, the collector's state is restored, and a caller's frozen objects stay frozen. No
timing is asserted (speed is measured by ``benchmarks/bench_hash.py``)."""

from __future__ import annotations

import gc

import pytest

from benchmarks.bench_hash import synthetic_chain
from passnet_common.canonical import canonicalize, graph_hashes


@pytest.fixture()
def chain():
    return synthetic_chain(1_000)


def _collections_during(fn) -> list[int]:
    seen: list[int] = []

    def cb(phase, info):
        if phase == "start":
            seen.append(info["generation"])

    gc.collect()
    gc.callbacks.append(cb)
    try:
        fn()
    finally:
        gc.callbacks.remove(cb)
    return seen


@pytest.mark.parametrize("form", ["canonicalize", "graph_hashes"])
def test_no_collection_runs_during_the_form(chain, form):
    """A 1K-node form allocates far more than the generation-0 threshold (700 containers), yet
    the only collection in the call is the one of the young generations on entry (before the
    form allocates anything): none starts inside, also not the generation-0 one that the first
    allocation after re-enabling the collector would start (the form's objects are moved to
    the oldest generation instead)."""
    fn = (lambda: canonicalize(chain, with_wl=False)) if form == "canonicalize" else (lambda: graph_hashes(chain))
    assert gc.get_threshold()[0] < 1_000
    assert _collections_during(fn) == [1]
    assert gc.isenabled()
    assert gc.get_count()[0] < 100  # the young generation was emptied, not left for the caller


def test_collector_state_is_restored(chain):
    """Disabled before: still disabled after (and nothing moved); enabled before: enabled after,
    also when the form raises."""
    gc.disable()
    try:
        canonicalize(chain, with_wl=False)
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(AttributeError):
        canonicalize(object())  # not a graph
    assert gc.isenabled()


def _tracked_ids() -> set[int]:
    """ids of the objects in the collector's three generations (``gc.get_objects()`` leaves out
    the permanent generation that ``gc.freeze()`` fills)."""
    return {id(o) for o in gc.get_objects()}


def test_frozen_objects_of_the_caller_stay_frozen(chain):
    """With objects of its own in the permanent generation (``gc.freeze()``, e.g. before a fork)
    the caller keeps them there: the form neither collects on entry nor unfreezes. Checked on
    containers the test holds alive (the freeze count itself may drop when some other frozen
    object dies by reference count during the call)."""

    class Held:
        pass

    held = [Held() for _ in range(8)]
    gc.freeze()
    try:
        assert not any(id(o) in _tracked_ids() for o in held)  # frozen: outside the generations
        h = canonicalize(chain, with_wl=False).graph_hash
        assert not any(id(o) in _tracked_ids() for o in held)
        assert gc.isenabled()
    finally:
        gc.unfreeze()
    assert all(id(o) in _tracked_ids() for o in held)  # the check above can fail: unfrozen, they are seen
    assert h == canonicalize(chain, with_wl=False).graph_hash


def test_callers_young_garbage_cycles_are_not_kept(chain):
    """A reference cycle the caller dropped just before the call is collected by the young
    collection on entry, not moved to the oldest generation with the form's objects (where it
    would wait for a full collection)."""
    import weakref

    class Cycle:
        pass

    gc.collect()
    a = Cycle()
    a.self = a
    alive = weakref.ref(a)
    del a
    assert alive() is not None  # only the cyclic collector can free it
    canonicalize(chain, with_wl=False)
    assert alive() is None


def test_subclass_torch_function_is_off_inside_and_restored_after(chain):
    """Inside the form ``__torch_function__`` of tensor subclasses is skipped (the property reads
    of every FakeTensor example value then skip the override lookup); after it -- also when it
    raises -- the caller's state is back, and a caller that had it off keeps it off. The form of
    a graph whose example values are FakeTensors is the same with and without the switch."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    from passnet_common.canonical import form as F

    seen = []
    real_core = F._core

    def spy(*a, **k):
        seen.append(torch._C._is_torch_function_enabled())
        return real_core(*a, **k)

    F._core = spy
    try:
        canonicalize(chain, with_wl=False)
    finally:
        F._core = real_core
    assert seen == [False]
    assert torch._C._is_torch_function_enabled()
    with pytest.raises(AttributeError):
        canonicalize(object())
    assert torch._C._is_torch_function_enabled()
    with torch._C.DisableTorchFunctionSubclass():
        canonicalize(chain, with_wl=False)
        assert not torch._C._is_torch_function_enabled()
    assert torch._C._is_torch_function_enabled()

    with FakeTensorMode() as mode:
        fake = {n: mode.from_tensor(torch.empty(n.meta["example_value"].shape))
                for n in chain.graph.nodes if isinstance(n.meta.get("example_value"), torch.Tensor)}
    for n, v in fake.items():
        n.meta["example_value"] = v
    on = canonicalize(chain, with_wl=False)

    class Plain(F._NoGC):  # the block without the switch
        __slots__ = ()

        def __enter__(self):
            self.was, self.promote = gc.isenabled(), False
            gc.disable()

        def __exit__(self, *exc):
            if self.was:
                gc.enable()
            return False

    saved = F._NoGC
    F._NoGC = Plain
    try:
        off = canonicalize(chain, with_wl=False)
    finally:
        F._NoGC = saved
    assert (on.graph_hash, on.structure_hash, on.text, on.nodes) == (off.graph_hash, off.structure_hash, off.text, off.nodes)
