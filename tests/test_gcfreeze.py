"""A frozen heap (``gc.freeze``, as the pipeline's forking parents leave it in their children) neither
slows the canonical form down nor is thawed by it: :func:`passnet_common.gcfreeze.heap_frozen` answers
without walking the permanent generation after :func:`passnet_common.gcfreeze.freeze`, and
``canonicalize`` leaves a caller's frozen objects frozen (by our freeze or by plain ``gc.freeze``)."""

from __future__ import annotations

import gc

import pytest
import torch
import torch.fx as fx

from passnet_common import gcfreeze
from passnet_common.canonical import canonicalize


def _graph() -> fx.GraphModule:
    g = fx.Graph()
    x = g.placeholder("x")
    x.meta["example_value"] = torch.empty(2, 3, device="meta")
    y = g.call_function(torch.relu, (x,))
    y.meta["example_value"] = torch.empty(2, 3, device="meta")
    g.output((y,))
    return fx.GraphModule(torch.nn.Module(), g)


def _frozen(obj) -> bool:
    """Whether ``obj`` (a GC-tracked object) is in the permanent generation: ``gc.get_objects()`` lists
    generations 0-2 only. (``gc.get_freeze_count()`` is no test of it: frozen objects that die -- a warnings
    registry cleared, a cache entry replaced -- lower the count without any thaw.)"""
    return not any(o is obj for o in gc.get_objects())


@pytest.fixture
def thawed():
    assert gc.get_freeze_count() == 0 and not gcfreeze._frozen_here
    yield
    if gc.get_freeze_count():
        gc.unfreeze()
    gcfreeze._frozen_here = False


def test_a_recorded_freeze_is_known_without_walking_the_heap(thawed, monkeypatch):
    gm = _graph()
    want = canonicalize(gm, None, with_wl=False)
    sentinel = [object()]
    gcfreeze.freeze()
    assert gc.get_freeze_count() > 0 and _frozen(sentinel)

    def walk():
        raise AssertionError("gc.get_freeze_count walked the frozen heap")

    monkeypatch.setattr(gc, "get_freeze_count", walk)
    assert gcfreeze.heap_frozen()
    got = canonicalize(gm, None, with_wl=False)  # _NoGC asks heap_frozen, never the walk
    monkeypatch.undo()
    assert (got.graph_hash, got.text, got.nodes) == (want.graph_hash, want.text, want.nodes)
    assert _frozen(sentinel) and _frozen(gm)  # the caller's frozen objects stay frozen
    gcfreeze.unfreeze()
    assert gc.get_freeze_count() == 0 and not gcfreeze.heap_frozen() and not _frozen(sentinel)


def test_a_freeze_by_other_code_is_found_and_kept(thawed):
    gm = _graph()
    sentinel = [object()]
    gc.freeze()  # not through gcfreeze: heap_frozen walks the generation and finds it
    assert gc.get_freeze_count() > 0 and gcfreeze.heap_frozen() and not gcfreeze._frozen_here
    assert _frozen(sentinel)
    canonicalize(gm, None, with_wl=False)
    assert _frozen(sentinel) and _frozen(gm)


def test_an_unfrozen_heap_takes_the_forms_objects_out_of_the_young_generations(thawed):
    """Without a freeze the form moves what it allocated to the oldest generation on exit (the freeze /
    unfreeze pair): nothing stays frozen, and the young generations hold none of the returned node list."""
    got = canonicalize(_graph(), None, with_wl=False)
    assert gc.get_freeze_count() == 0 and not gcfreeze.heap_frozen()
    young = {id(o) for o in gc.get_objects(generation=0)} | {id(o) for o in gc.get_objects(generation=1)}
    assert not any(id(d) in young for d in got.nodes)
