"""The canonical order: a topological order of data and ordering edges whose ties are
broken by Merkle hashes (rules in :mod:`passnet_common.canonical`)."""

from __future__ import annotations

import array
import hashlib
import heapq

from passnet_common.canonical import compiled

_label_ids: dict[str, int] = {}


_KIND = {"placeholder": 1, "output": 2}


def has_ties(a: list[int], b: list[int]) -> bool:
    """Whether two nodes have equal keys ``(a[i], b[i])`` (the structure Merkle hashes: then the
    exact labels break the ties), by ``_cmerkle.has_ties`` where the seam has it on."""
    c = compiled.cmerkle
    if c is not None:
        try:
            return c.has_ties(a, b)
        except (ValueError, TypeError, OverflowError):
            pass
    return has_ties_py(a, b)


def has_ties_py(a: list[int], b: list[int]) -> bool:
    """The definition of :func:`has_ties`."""
    return len(set(zip(a, b))) < len(a)


def label_id(label: str) -> int:
    """A 64-bit integer digest of a label (blake2b), the same in every process."""
    try:
        return _label_ids[label]
    except KeyError:
        v = int.from_bytes(hashlib.blake2b(label.encode(), digest_size=8).digest(), "little")
        if len(_label_ids) < 1_000_000:
            _label_ids[label] = v
        return v


def label_ids(labels: list[str]) -> list[int]:
    """:func:`label_id` of every label (cached ones looked up in one pass)."""
    ids = list(map(_label_ids.get, labels))
    if None in ids:
        ids = [label_id(t) if v is None else v for t, v in zip(labels, ids)]
    return ids


def merkle(ids: list[int], inputs: list[list[int]], extra: list[list[int]]) -> tuple[list[int], list[int]]:
    """Up (cone) and down Merkle hashes of every node: :func:`merkle_py`, by ``_cmerkle.merkle``
    where the seam has it on (it reproduces CPython's ``hash`` of ints and tuples; the seam's
    agreement check finds out whether it does on this interpreter)."""
    c = compiled.cmerkle
    if c is not None:
        try:
            return c.merkle(list(map(hash, ids)), inputs, extra)
        except (ValueError, TypeError, OverflowError):
            pass  # an index the compiled loop does not take (not earlier in the order): the Python loop decides
    return merkle_py(ids, inputs, extra)


def merkle_py(ids: list[int], inputs: list[list[int]], extra: list[list[int]]) -> tuple[list[int], list[int]]:
    """Up (cone) and down Merkle hashes of every node (pure Python).

    ``cone[i]`` hashes the node's label id, its data inputs' cones in argument order and
    the sorted cones of its ordering dependencies; ``down[i]`` hashes ``cone[i]`` with the
    sorted ``(down[user], argument position)`` of its consumers. Python's tuple hash of ints
    is deterministic (no hash randomisation for ints), so these are equal across processes;
    they only break ties, the hashes themselves are sha256 of the canonical text.
    """
    n = len(ids)
    cone = [0] * n
    consumers: list = [None] * n
    for i, lab, ins, ex in zip(range(n), ids, inputs, extra):
        k = len(ins)
        if not ex and k == 1:  # the most common node: one data input, no ordering edge
            j = ins[0]
            cone[i] = hash((lab, cone[j]))
            c = consumers[j]
            if c is None:
                consumers[j] = [(i, 0)]
            else:
                c.append((i, 0))
            continue
        if ex:
            if len(ex) == 1:
                if k == 1:
                    cone[i] = hash((lab, cone[ins[0]], -1, cone[ex[0]]))
                else:
                    cone[i] = hash((lab, *[cone[j] for j in ins], -1, cone[ex[0]]))
            else:
                cone[i] = hash((lab, *[cone[j] for j in ins], -1, *sorted([cone[j] for j in ex])))
        elif k == 2:
            cone[i] = hash((lab, cone[ins[0]], cone[ins[1]]))
        elif k == 0:
            cone[i] = hash((lab,))
            continue
        else:
            cone[i] = hash((lab, *[cone[j] for j in ins]))
        p = 0
        for j in ins:
            c = consumers[j]
            if c is None:
                consumers[j] = [(i, p)]
            else:
                c.append((i, p))
            p += 1
    down = [0] * n
    for i, c, ci in zip(range(n - 1, -1, -1), reversed(consumers), reversed(cone)):
        if c is None:
            down[i] = hash((ci, 0))
        elif len(c) == 1:
            u, p = c[0]
            down[i] = hash((ci, hash((down[u], p))))
        else:
            down[i] = hash((ci, *sorted([hash((down[u], p)) for u, p in c])))
    return cone, down


def canonical_order(ops: list[str], inputs: list[list[int]], extra: list[list[int]], keys: list[tuple],
                    placeholder_keys: list | None = None, ties: bool = True) -> list[int]:
    """Deterministic topological order (original indexes in canonical order).

    ``keys[i]`` is a tuple of Python hash values (Merkle keys), or the same packed into one
    non-negative int per node (:func:`_pack`), which orders alike.

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
    for i, ins, ex in zip(range(n), inputs, extra):
        if not ex and len(ins) == 1:  # the most common node
            indeg[i] = 1
            users[ins[0]].append(i)
            continue
        if len(ins) <= 1 and len(ex) <= 1:
            if ins and ex and ins[0] != ex[0]:
                indeg[i] = 2
                users[ins[0]].append(i)
                users[ex[0]].append(i)
            elif ins or ex:
                indeg[i] = 1
                users[ins[0] if ins else ex[0]].append(i)
            continue
        deps = set(ins)
        deps.update(ex)
        indeg[i] = len(deps)
        for j in deps:
            users[j].append(i)
    # One int per node that orders like ``keys[i]`` (a tuple of Python hash values, each in
    # [-2**63, 2**63)): the fields packed side by side, most significant first. Heap entries
    # are then ints (``packed << shift | i``) or short tuples, compared in C.
    packed = keys if keys and type(keys[0]) is int else _pack(keys)
    phs = [i for i in range(n) if ops[i] == "placeholder"]
    if placeholder_keys is not None:
        phs.sort(key=lambda i: placeholder_keys[i])
    else:
        phs.sort(key=packed.__getitem__)
    order = list(phs)
    outs = [i for i in range(n) if ops[i] == "output"]
    for i in phs:
        for u in users[i]:
            indeg[u] -= 1
    heappush, heappop = heapq.heappush, heapq.heappop
    if ties:
        # Only nodes whose key another node shares need the second key (the canonical
        # positions of their inputs): a unique key decides every comparison on its own.
        seen: dict[int, int] = {}
        for k in packed:
            seen[k] = seen.get(k, 0) + 1
        tied = [seen[k] > 1 for k in packed]
        pos = [-1] * n
        for k, i in enumerate(order):
            pos[i] = k

        def entry(i):
            if tied[i]:
                ex = extra[i]
                return (packed[i], [pos[j] for j in inputs[i]], sorted([pos[j] for j in ex]) if ex else [], i)
            return (packed[i], i)

        heap = [entry(i) for i in range(n) if indeg[i] == 0 and ops[i] != "placeholder" and ops[i] != "output"]
        heapq.heapify(heap)
        while heap:
            i = heappop(heap)[-1]
            pos[i] = len(order)
            order.append(i)
            for u in users[i]:
                indeg[u] -= 1
                if indeg[u] == 0 and ops[u] != "output":
                    heappush(heap, entry(u))
    else:
        shift = max(n, 1).bit_length()
        mask = (1 << shift) - 1
        ent = [(k << shift) | i for i, k in enumerate(packed)]
        heap = [ent[i] for i in range(n) if indeg[i] == 0 and ops[i] != "placeholder" and ops[i] != "output"]
        heapq.heapify(heap)
        append = order.append
        while heap:
            i = heappop(heap) & mask
            append(i)
            for u in users[i]:
                d = indeg[u] - 1
                indeg[u] = d
                if d == 0 and ops[u] != "output":
                    heappush(heap, ent[u])
    order.extend(outs)
    if len(order) != n:
        raise ValueError("graph has a cycle or dangling dependencies; not a valid FX graph")
    return order



_OFF = 1 << 63


def _pack(keys: list[tuple]) -> list[int]:
    """Per key tuple of ints in [-2**63, 2**63) (Python hash values), one non-negative int
    with the same order: ``_pack(keys)[a] < _pack(keys)[b]`` iff ``keys[a] < keys[b]``."""
    if not keys:
        return []
    width = len(keys[0])
    if width == 2:
        return [((a + _OFF) << 64) | (b + _OFF) for a, b in keys]
    out = []
    for key in keys:
        v = 0
        for x in key:
            v = (v << 64) | (x + _OFF)
        out.append(v)
    return out


def canonical_order_of(ops: list[str], inputs: list[list[int]], extra: list[list[int]], cols: list[list[int]],
                       keep_positions: bool) -> list[int]:
    """:func:`canonical_order` for the keys ``keys[i] = (cols[0][i], cols[1][i], ...)`` (Python
    hash values), placeholders sorted by those keys or (``keep_positions``) kept in calling
    order: the compiled loop (``_cmerkle.canonical_order``) where the seam has it on, else the
    Python one (the same order).

    Raises:
        ValueError: the dependencies have a cycle.
    """
    c = compiled.cmerkle
    if c is not None:
        try:
            return c.canonical_order([_KIND.get(op, 0) for op in ops], inputs, extra, cols, not keep_positions)
        except (TypeError, OverflowError):
            pass
        except ValueError as exc:
            if "cycle" in str(exc):
                raise
    keys = _pack(list(zip(*cols)))
    return canonical_order(ops, inputs, extra, keys, list(range(len(ops))) if keep_positions else None,
                           ties=len(set(keys)) < len(keys))


def input_rows_py(inputs: list[list[int]]) -> bytes:
    """The data inputs of a graph (per node a list of node indexes in ``[0, n)``) packed for the
    compiled passes (the definition; ``_cform.input_rows`` is the compiled copy): native int64
    words ``n``, the total count, ``start[0..n]``, then the indexes, node ``i``'s being
    ``idx[start[i]:start[i + 1]]``. Raises ValueError for an index outside ``[0, n)``."""
    n = len(inputs)
    starts, idx = [0], []
    for row in inputs:
        for j in row:
            if not 0 <= j < n:
                raise ValueError("input_rows: an input index outside the graph")
        idx.extend(row)
        starts.append(len(idx))
    return array.array("q", [n, len(idx), *starts, *idx]).tobytes()


def input_rows(inputs: list[list[int]]) -> bytes | None:
    """:func:`input_rows_py` by the compiled copy, or None where that is not built (or ``inputs``
    holds an index outside the graph, or a row that is not a list): the compiled side-effect pass,
    order and texts read these words instead of the lists when given them, and the lists otherwise."""
    c = compiled.cform
    if c is None:
        return None
    try:
        return c.input_rows(inputs)
    except (ValueError, TypeError, OverflowError):
        return None


def order_of_labels(struct_ids: list[int], exact: list[str], inputs: list[list[int]], extra: list[list[int]],
                    ops: list[str], keep_positions: bool, ints: list[int] | None = None,
                    rows: bytes | None = None) -> list[int]:
    """The canonical order of a graph from its labels (what :func:`passnet_common.canonical.form.canonicalize`
    orders by): the Merkle keys of the structure labels (``struct_ids``, :func:`label_ids`), and
    -- only when two nodes have equal structure keys (:func:`has_ties`) -- of the exact labels
    ``exact`` too, then :func:`canonical_order_of`. By ``_cmerkle.order_of_labels`` (the same passes
    over C arrays in one call, filling the order with the ints of ``ints``, ``ints[i] == i``, and
    reading ``rows``, :func:`input_rows` of ``inputs``, when given) where the seam has it on, else
    step by step.

    Raises:
        ValueError: the dependencies have a cycle.
    """
    c = compiled.cmerkle
    if c is not None and ints is not None:
        try:
            cf = compiled.cform
            kinds = cf.op_kinds(ops, _KIND) if cf is not None else [_KIND.get(op, 0) for op in ops]
            return c.order_of_labels(struct_ids, lambda: label_ids(exact), inputs, extra, kinds,
                                     not keep_positions, ints, rows)[0]
        except (TypeError, OverflowError):
            pass
        except ValueError as exc:
            if "cycle" in str(exc):
                raise
    return order_of_labels_py(struct_ids, exact, inputs, extra, ops, keep_positions)


def order_of_labels_py(struct_ids, exact, inputs, extra, ops, keep_positions) -> list[int]:
    """:func:`order_of_labels` step by step (the definition)."""
    s_cone, s_down = merkle(struct_ids, inputs, extra)
    cols = [s_cone, s_down]  # the Merkle key of node i: (s_cone[i], s_down[i], ...)
    if has_ties(s_cone, s_down):
        # Nodes with equal structure keys: break their ties with the exact labels (computed
        # only when needed: most graphs have none).
        e_cone, e_down = merkle(label_ids(exact), inputs, extra)
        cols += [e_cone, e_down]
    return canonical_order_of(ops, inputs, extra, cols, keep_positions)
