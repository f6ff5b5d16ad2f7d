"""The garbage collector's permanent generation, frozen and thawed through one place that remembers it.

``gc.get_freeze_count()`` walks the whole permanent generation in CPython (a linked list): 35 ms
for the ~0.5 M objects of a process that imported torch and transformers. Code that only needs to
know *whether* the heap is frozen (:class:`passnet_common.canonical.form._NoGC`, around every
``canonicalize``) paid that walk on every call in each forked capture child of
:func:`passnet_common.worker.run_isolated`, whose parent freezes its heap before forking: 14x the
form's own time on the 14-layer Llama cut (``benchmarks/bench_hash_frozen.py``).

:func:`freeze` / :func:`unfreeze` do what ``gc.freeze`` / ``gc.unfreeze`` do and record it in this
module, which forked children inherit; :func:`heap_frozen` answers from that record in O(1) and
walks the generation only where the record says nothing was frozen here (a freeze by other code,
or none: then the walk is of an empty list). The pipeline's own freezers (``passnet_common.worker``,
``curate.profile.run``) go through here.
"""

from __future__ import annotations

import gc

_frozen_here = False
"""True between :func:`freeze` and :func:`unfreeze` (inherited by forked children)."""


def freeze() -> None:
    """``gc.collect()`` then ``gc.freeze()``: every live object into the permanent generation (the
    CPython-documented recipe before forking), recorded for :func:`heap_frozen`."""
    global _frozen_here
    gc.collect()
    gc.freeze()
    _frozen_here = True


def unfreeze() -> None:
    """``gc.unfreeze()``: the permanent generation back into the oldest one; the record cleared."""
    global _frozen_here
    gc.unfreeze()
    _frozen_here = False


def heap_frozen() -> bool:
    """Whether the permanent generation holds objects: O(1) after :func:`freeze`, else
    ``gc.get_freeze_count() > 0`` (O(1) on an empty generation, a walk of it where other code froze
    objects)."""
    return _frozen_here or gc.get_freeze_count() > 0
