"""The canonical order: a topological order of data and ordering edges whose ties are
broken by Merkle hashes (rules in :mod:`passnet_common.canonical`)."""

from __future__ import annotations

import hashlib
import heapq

_label_ids: dict[str, int] = {}


def label_id(label: str) -> int:
    """A 64-bit integer digest of a label (blake2b), the same in every process."""
    try:
        return _label_ids[label]
    except KeyError:
        v = int.from_bytes(hashlib.blake2b(label.encode(), digest_size=8).digest(), "little")
        if len(_label_ids) < 1_000_000:
            _label_ids[label] = v
        return v


def merkle(ids: list[int], inputs: list[list[int]], extra: list[list[int]]) -> tuple[list[int], list[int]]:
    """Up (cone) and down Merkle hashes of every node.

    ``cone[i]`` hashes the node's label id, its data inputs' cones in argument order and
    the sorted cones of its ordering dependencies; ``down[i]`` hashes ``cone[i]`` with the
    sorted ``(down[user], argument position)`` of its consumers. Python's tuple hash of ints
    is deterministic (no hash randomisation for ints), so these are equal across processes;
    they only break ties, the hashes themselves are sha256 of the canonical text.
    """
    n = len(ids)
    cone = [0] * n
    for i in range(n):
        ins = inputs[i]
        ex = extra[i]
        if ex:
            cone[i] = hash((ids[i], *[cone[j] for j in ins], -1, *sorted(cone[j] for j in ex)))
        elif len(ins) == 1:
            cone[i] = hash((ids[i], cone[ins[0]]))
        else:
            cone[i] = hash((ids[i], *[cone[j] for j in ins]))
    consumers: list[list] = [[] for _ in range(n)]
    for i in range(n):
        p = 0
        for j in inputs[i]:
            consumers[j].append((i, p))
            p += 1
    down = [0] * n
    for i in range(n - 1, -1, -1):
        c = consumers[i]
        if not c:
            down[i] = hash((cone[i], 0))
        elif len(c) == 1:
            u, p = c[0]
            down[i] = hash((cone[i], hash((down[u], p))))
        else:
            down[i] = hash((cone[i], *sorted([hash((down[u], p)) for u, p in c])))
    return cone, down


def canonical_order(ops: list[str], inputs: list[list[int]], extra: list[list[int]], keys: list[tuple],
                    placeholder_keys: list | None = None, ties: bool = True) -> list[int]:
    """Deterministic topological order (original indexes in canonical order).

    Placeholders come first, sorted by ``placeholder_keys[i]`` (their Merkle keys, or their
    original position when the calling convention is fixed); the output node comes last;
    everything else is popped from a heap of ready nodes by ``keys[i]``, then (when
    ``ties``: some keys are equal) by the canonical positions of the node's data inputs
    and ordering dependencies, all placed before it becomes ready. Without this second
    key, nodes with equal Merkle keys but different inputs -- dead nodes such as
    ``tanh(x)`` and ``tanh(y)`` on two placeholders, whose keys cannot tell ``x`` from
    ``y`` -- would keep their recording order. Only nodes equal in both keep it, and
    those compute the same value from the same inputs.

    Raises:
        ValueError: the dependencies have a cycle.
    """
    n = len(ops)
    indeg = [0] * n
    users: list[list[int]] = [[] for _ in range(n)]
    for i in range(n):
        deps = set(inputs[i])
        deps.update(extra[i])
        indeg[i] = len(deps)
        for j in deps:
            users[j].append(i)
    phs = [i for i in range(n) if ops[i] == "placeholder"]
    phs.sort(key=lambda i: placeholder_keys[i] if placeholder_keys is not None else keys[i])
    order = list(phs)
    outs = [i for i in range(n) if ops[i] == "output"]
    for i in phs:
        for u in users[i]:
            indeg[u] -= 1
    if ties:
        pos = [-1] * n
        for k, i in enumerate(order):
            pos[i] = k

        def entry(i):
            return (keys[i], [pos[j] for j in inputs[i]], sorted(pos[j] for j in extra[i]), i)
    else:
        pos = None

        def entry(i):
            return (keys[i], i)

    heap = [entry(i) for i in range(n) if indeg[i] == 0 and ops[i] not in ("placeholder", "output")]
    heapq.heapify(heap)
    while heap:
        i = heapq.heappop(heap)[-1]
        if pos is not None:
            pos[i] = len(order)
        order.append(i)
        for u in users[i]:
            indeg[u] -= 1
            if indeg[u] == 0 and ops[u] != "output":
                heapq.heappush(heap, entry(u))
    order.extend(outs)
    if len(order) != n:
        raise ValueError("graph has a cycle or dangling dependencies; not a valid FX graph")
    return order
