# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled :func:`passnet_common.canonical.order.merkle` (speed only, no rule): the same cone
and down hashes, bit for bit, computed over C arrays instead of Python tuples.

The Python version hashes tuples of ints with CPython's ``hash``; this module reproduces
CPython 3.11's hash of an int (``long_hash``: the value modulo the Mersenne prime
``2**61 - 1`` with the sign kept, -1 mapped to -2) and of a tuple (``tuplehash``: the
xxHash-style lane mixing of ``Objects/tupleobject.c``) on 64-bit builds. The Python module
only uses it where :data:`HASH_CHECK` holds on the running interpreter (checked at import on
sample values against the built-in ``hash``), and falls back to the Python loop otherwise.
"""

from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport malloc, free, qsort

cdef uint64_t _P = (<uint64_t>1 << 61) - 1
cdef uint64_t _X1 = 11400714785074694791ULL
cdef uint64_t _X2 = 14029467366897019727ULL
cdef uint64_t _X5 = 2870177450012600261ULL


cdef inline int64_t _hash_i64(int64_t v) noexcept nogil:
    """CPython's hash of the int ``v`` (|v| < 2**63)."""
    cdef uint64_t a
    cdef int64_t h
    if v >= 0:
        h = <int64_t>(<uint64_t>v % _P)
    else:
        a = <uint64_t>(-(v + 1)) + 1  # |v| without overflow at -2**63
        h = -<int64_t>(a % _P)
    if h == -1:
        h = -2
    return h


cdef inline uint64_t _lane(uint64_t acc, int64_t item_hash) noexcept nogil:
    acc += <uint64_t>item_hash * _X2
    acc = (acc << 31) | (acc >> 33)
    return acc * _X1


cdef inline int64_t _finish(uint64_t acc, Py_ssize_t n) noexcept nogil:
    acc += <uint64_t>n ^ (_X5 ^ 3527539ULL)
    if acc == <uint64_t>-1:
        return 1546275796
    return <int64_t>acc


cdef int _cmp_i64(const void *a, const void *b) noexcept nogil:
    cdef int64_t x = (<const int64_t *>a)[0]
    cdef int64_t y = (<const int64_t *>b)[0]
    return (x > y) - (x < y)


def merkle(list lab_hashes, list inputs, list extra):
    """``(cone, down)`` as :func:`passnet_common.canonical.order.merkle` computes them;
    ``lab_hashes[i]`` is ``hash(label id of node i)`` (the caller maps ``hash`` over the
    ids). Every argument index must be < the node's own index (a topological FX order),
    as the Python version assumes."""
    cdef Py_ssize_t n = len(lab_hashes)
    cdef Py_ssize_t i, j, k, p, m, e_tot = 0, in_tot = 0, c_n, u
    cdef list ins, ex
    cdef int64_t *lab = <int64_t *>malloc(max(n, 1) * sizeof(int64_t))
    cdef int64_t *cone = <int64_t *>malloc(max(n, 1) * sizeof(int64_t))
    cdef int64_t *down = <int64_t *>malloc(max(n, 1) * sizeof(int64_t))
    cdef Py_ssize_t *in_start = <Py_ssize_t *>malloc((n + 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t *in_idx = NULL
    cdef Py_ssize_t *c_start = NULL
    cdef Py_ssize_t *c_fill = NULL
    cdef int64_t *c_val = NULL  # per consumer edge: (user, position) as a (user << 32 | position) pair
    cdef int64_t *tmp = NULL
    cdef uint64_t acc
    cdef Py_ssize_t tmp_cap = 0
    try:
        if lab == NULL or cone == NULL or down == NULL or in_start == NULL:
            raise MemoryError()
        for i in range(n):
            lab[i] = lab_hashes[i]
            in_tot += len(<list?>inputs[i])
        in_idx = <Py_ssize_t *>malloc(max(in_tot, 1) * sizeof(Py_ssize_t))
        c_start = <Py_ssize_t *>malloc((n + 1) * sizeof(Py_ssize_t))
        c_fill = <Py_ssize_t *>malloc(max(n, 1) * sizeof(Py_ssize_t))
        c_val = <int64_t *>malloc(max(in_tot, 1) * sizeof(int64_t))
        if in_idx == NULL or c_start == NULL or c_fill == NULL or c_val == NULL:
            raise MemoryError()
        for i in range(n + 1):
            c_start[i] = 0
        k = 0
        for i in range(n):
            in_start[i] = k
            ins = <list?>inputs[i]
            for p in range(len(ins)):
                j = ins[p]
                if j < 0 or j >= i:
                    raise ValueError("merkle: an input index that is not earlier in the order")
                in_idx[k] = j
                c_start[j + 1] += 1
                k += 1
        in_start[n] = k
        for i in range(n):
            c_start[i + 1] += c_start[i]
            c_fill[i] = c_start[i]
        # cones, in index order; consumer edges in (user, position) order per producer
        for i in range(n):
            ex = <list?>extra[i]
            m = len(ex)
            acc = _X5
            acc = _lane(acc, _hash_i64(lab[i]))
            for k in range(in_start[i], in_start[i + 1]):
                acc = _lane(acc, _hash_i64(cone[in_idx[k]]))
                j = in_idx[k]
                c_val[c_fill[j]] = (<int64_t>i << 32) | (k - in_start[i])
                c_fill[j] += 1
            c_n = 1 + (in_start[i + 1] - in_start[i])
            if m:
                if m > tmp_cap:
                    free(tmp)
                    tmp = <int64_t *>malloc(m * sizeof(int64_t))
                    if tmp == NULL:
                        raise MemoryError()
                    tmp_cap = m
                for p in range(m):
                    j = ex[p]
                    if j < 0 or j >= i:
                        raise ValueError("merkle: an ordering dependency that is not earlier in the order")
                    tmp[p] = cone[j]
                qsort(tmp, m, sizeof(int64_t), _cmp_i64)
                acc = _lane(acc, -2)  # hash(-1)
                for p in range(m):
                    acc = _lane(acc, _hash_i64(tmp[p]))
                c_n += 1 + m
            cone[i] = _finish(acc, c_n)
        # down hashes, from the last node back
        for i in range(n - 1, -1, -1):
            m = c_start[i + 1] - c_start[i]
            acc = _X5
            acc = _lane(acc, _hash_i64(cone[i]))
            if m == 0:
                acc = _lane(acc, 0)  # hash(0)
                down[i] = _finish(acc, 2)
                continue
            if m > tmp_cap:
                free(tmp)
                tmp = <int64_t *>malloc(m * sizeof(int64_t))
                if tmp == NULL:
                    raise MemoryError()
                tmp_cap = m
            for p in range(m):
                u = c_val[c_start[i] + p] >> 32
                k = c_val[c_start[i] + p] & 0xFFFFFFFF
                tmp[p] = _finish(_lane(_lane(_X5, _hash_i64(down[u])), _hash_i64(k)), 2)
            if m > 1:
                qsort(tmp, m, sizeof(int64_t), _cmp_i64)
            for p in range(m):
                acc = _lane(acc, _hash_i64(tmp[p]))
            down[i] = _finish(acc, 1 + m)
        return [cone[i] for i in range(n)], [down[i] for i in range(n)]
    finally:
        free(lab)
        free(cone)
        free(down)
        free(in_start)
        free(in_idx)
        free(c_start)
        free(c_fill)
        free(c_val)
        free(tmp)


# --- the canonical order (speed only: the order of passnet_common.canonical.order.canonical_order) ---

cdef struct _Ord:
    Py_ssize_t w            # key words per node
    uint64_t *key           # n * w words, most significant first
    Py_ssize_t *in_start    # data inputs (CSR, argument order)
    Py_ssize_t *in_idx
    Py_ssize_t *ex_start    # ordering dependencies (CSR); ex_pos: their canonical positions, sorted at push
    Py_ssize_t *ex_idx
    Py_ssize_t *ex_pos
    Py_ssize_t *pos


cdef inline int _less(_Ord *o, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """The order of the Python heap entries ``(packed key, input positions, sorted
    dependency positions, index)`` (the list parts only compared on equal keys)."""
    cdef Py_ssize_t t, la, lb, ka, kb, x, y
    cdef uint64_t *pa = o.key + a * o.w
    cdef uint64_t *pb = o.key + b * o.w
    for t in range(o.w):
        if pa[t] != pb[t]:
            return pa[t] < pb[t]
    ka, kb = o.in_start[a], o.in_start[b]
    la, lb = o.in_start[a + 1] - ka, o.in_start[b + 1] - kb
    for t in range(min(la, lb)):
        x, y = o.pos[o.in_idx[ka + t]], o.pos[o.in_idx[kb + t]]
        if x != y:
            return x < y
    if la != lb:
        return la < lb
    ka, kb = o.ex_start[a], o.ex_start[b]
    la, lb = o.ex_start[a + 1] - ka, o.ex_start[b + 1] - kb
    for t in range(min(la, lb)):
        x, y = o.ex_pos[ka + t], o.ex_pos[kb + t]
        if x != y:
            return x < y
    if la != lb:
        return la < lb
    return a < b


cdef void _sift_down(_Ord *o, Py_ssize_t *heap, Py_ssize_t size, Py_ssize_t p) noexcept nogil:
    cdef Py_ssize_t c, item = heap[p]
    while True:
        c = 2 * p + 1
        if c >= size:
            break
        if c + 1 < size and _less(o, heap[c + 1], heap[c]):
            c += 1
        if not _less(o, heap[c], item):
            break
        heap[p] = heap[c]
        p = c
    heap[p] = item


cdef void _sift_up(_Ord *o, Py_ssize_t *heap, Py_ssize_t p) noexcept nogil:
    cdef Py_ssize_t q, item = heap[p]
    while p > 0:
        q = (p - 1) >> 1
        if not _less(o, item, heap[q]):
            break
        heap[p] = heap[q]
        p = q
    heap[p] = item


cdef Py_ssize_t _copy_deps(list src, Py_ssize_t n, Py_ssize_t *dst, Py_ssize_t at, Py_ssize_t *deps,
                           str what) except -1:
    """Copy the node indices of ``src`` to ``dst[at:]`` and ``deps[0:]``; returns ``at + len(src)``.
    ValueError when an index is outside ``[0, n)``."""
    cdef Py_ssize_t k, j
    for k in range(len(src)):
        j = src[k]
        if j < 0 or j >= n:
            raise ValueError(f"canonical_order: {what} index out of range")
        dst[at + k] = j
        deps[k] = j
    return at + len(src)


cdef void _sort_small(Py_ssize_t *a, Py_ssize_t m) noexcept nogil:
    cdef Py_ssize_t i, j, v
    for i in range(1, m):
        v = a[i]
        j = i - 1
        while j >= 0 and a[j] > v:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = v


def canonical_order(list kinds, list inputs, list extra, list key_cols, bint placeholders_by_key):
    """The order :func:`passnet_common.canonical.order.canonical_order` returns for
    ``keys[i] = (key_cols[0][i], key_cols[1][i], ...)`` (Python hash values, each in
    [-2**63, 2**63)); ``kinds[i]``: 1 placeholder, 2 output, 0 other; placeholders sorted by
    their keys (``placeholders_by_key``) or kept in index order. Raises ValueError on a
    cycle (the Python message) and on an index out of range."""
    cdef Py_ssize_t n = len(kinds), w = len(key_cols)
    cdef Py_ssize_t i, j, k, p, q, m, tot_in = 0, tot_ex = 0, tot_u = 0, size = 0, placed = 0
    cdef list col, ins, ex, order = []
    cdef _Ord o
    cdef char *kind = <char *>malloc(max(n, 1))
    cdef Py_ssize_t *indeg = <Py_ssize_t *>malloc(max(n, 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t *u_start = <Py_ssize_t *>malloc((n + 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t *u_fill = <Py_ssize_t *>malloc(max(n, 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t *u_idx = NULL
    cdef Py_ssize_t *deps = NULL
    cdef Py_ssize_t *heap = <Py_ssize_t *>malloc(max(n, 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t *phs = <Py_ssize_t *>malloc(max(n, 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t n_ph = 0, d, nd
    o.w = w
    o.key = <uint64_t *>malloc(max(n * w, 1) * sizeof(uint64_t))
    o.in_start = <Py_ssize_t *>malloc((n + 1) * sizeof(Py_ssize_t))
    o.ex_start = <Py_ssize_t *>malloc((n + 1) * sizeof(Py_ssize_t))
    o.pos = <Py_ssize_t *>malloc(max(n, 1) * sizeof(Py_ssize_t))
    o.in_idx = NULL
    o.ex_idx = NULL
    o.ex_pos = NULL
    try:
        if (kind == NULL or indeg == NULL or u_start == NULL or u_fill == NULL or heap == NULL or phs == NULL
                or o.key == NULL or o.in_start == NULL or o.ex_start == NULL or o.pos == NULL):
            raise MemoryError()
        for k in range(w):
            col = <list?>key_cols[k]
            if len(col) != n:
                raise ValueError("canonical_order: a key column of another length")
            for i in range(n):
                o.key[i * w + k] = (<uint64_t><int64_t>col[i]) ^ (<uint64_t>1 << 63)
        for i in range(n):
            kind[i] = <char>(<int>kinds[i])
            tot_in += len(<list?>inputs[i])
            tot_ex += len(<list?>extra[i])
        o.in_idx = <Py_ssize_t *>malloc(max(tot_in, 1) * sizeof(Py_ssize_t))
        o.ex_idx = <Py_ssize_t *>malloc(max(tot_ex, 1) * sizeof(Py_ssize_t))
        o.ex_pos = <Py_ssize_t *>malloc(max(tot_ex, 1) * sizeof(Py_ssize_t))
        u_idx = <Py_ssize_t *>malloc(max(tot_in + tot_ex, 1) * sizeof(Py_ssize_t))
        deps = <Py_ssize_t *>malloc(max(tot_in + tot_ex, 1) * sizeof(Py_ssize_t))
        if o.in_idx == NULL or o.ex_idx == NULL or o.ex_pos == NULL or u_idx == NULL or deps == NULL:
            raise MemoryError()
        p = q = 0
        for i in range(n + 1):
            u_start[i] = 0
        # distinct dependencies per node (data inputs and ordering edges): indegree and users
        d = 0
        for i in range(n):
            o.in_start[i] = p
            o.ex_start[i] = q
            ins = <list>inputs[i]
            ex = <list>extra[i]
            nd = d
            p = _copy_deps(ins, n, o.in_idx, p, deps + d, "an input")
            d = nd + len(ins)
            q = _copy_deps(ex, n, o.ex_idx, q, deps + d, "a dependency")
            d += len(ex)
            _sort_small(deps + nd, d - nd)
            m = nd
            for k in range(nd, d):
                if k == nd or deps[k] != deps[k - 1]:
                    deps[m] = deps[k]
                    m += 1
            indeg[i] = m - nd
            for k in range(nd, m):
                u_start[deps[k] + 1] += 1
            d = m
        o.in_start[n] = p
        o.ex_start[n] = q
        for i in range(n):
            u_start[i + 1] += u_start[i]
            u_fill[i] = u_start[i]
        d = 0
        for i in range(n):
            for k in range(indeg[i]):
                j = deps[d]
                d += 1
                u_idx[u_fill[j]] = i
                u_fill[j] += 1
        for i in range(n):
            o.pos[i] = -1
        # placeholders first
        for i in range(n):
            if kind[i] == 1:
                phs[n_ph] = i
                n_ph += 1
        if placeholders_by_key:  # by key, equal keys in index order (Python's sort is stable)
            global _sort_ctx
            _sort_ctx = &o
            qsort(phs, n_ph, sizeof(Py_ssize_t), _cmp_ph)
            _sort_ctx = NULL
        for p in range(n_ph):
            i = phs[p]
            o.pos[i] = placed
            placed += 1
            order.append(i)
        for p in range(n_ph):
            i = phs[p]
            for k in range(u_start[i], u_start[i + 1]):
                indeg[u_idx[k]] -= 1
        for i in range(n):
            if indeg[i] == 0 and kind[i] == 0:
                _set_ex_pos(&o, i)
                heap[size] = i
                size += 1
        for p in range(size // 2 - 1, -1, -1):
            _sift_down(&o, heap, size, p)
        while size:
            i = heap[0]
            size -= 1
            if size:
                heap[0] = heap[size]
                _sift_down(&o, heap, size, 0)
            o.pos[i] = placed
            placed += 1
            order.append(i)
            for k in range(u_start[i], u_start[i + 1]):
                j = u_idx[k]
                indeg[j] -= 1
                if indeg[j] == 0 and kind[j] != 2:
                    if size >= n:
                        raise ValueError("graph has a cycle or dangling dependencies; not a valid FX graph")
                    _set_ex_pos(&o, j)
                    heap[size] = j
                    size += 1
                    _sift_up(&o, heap, size - 1)
        for i in range(n):
            if kind[i] == 2:
                order.append(i)
        if len(order) != n:
            raise ValueError("graph has a cycle or dangling dependencies; not a valid FX graph")
        return order
    finally:
        free(kind)
        free(indeg)
        free(u_start)
        free(u_fill)
        free(u_idx)
        free(deps)
        free(heap)
        free(phs)
        free(o.key)
        free(o.in_start)
        free(o.ex_start)
        free(o.pos)
        free(o.in_idx)
        free(o.ex_idx)
        free(o.ex_pos)


cdef inline int _key_less(_Ord *o, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    cdef Py_ssize_t t
    cdef uint64_t *pa = o.key + a * o.w
    cdef uint64_t *pb = o.key + b * o.w
    for t in range(o.w):
        if pa[t] != pb[t]:
            return pa[t] < pb[t]
    return 0


cdef _Ord *_sort_ctx = NULL


cdef int _cmp_ph(const void *a, const void *b) noexcept nogil:
    cdef Py_ssize_t x = (<const Py_ssize_t *>a)[0]
    cdef Py_ssize_t y = (<const Py_ssize_t *>b)[0]
    if _key_less(_sort_ctx, x, y):
        return -1
    if _key_less(_sort_ctx, y, x):
        return 1
    return (x > y) - (x < y)


cdef inline void _set_ex_pos(_Ord *o, Py_ssize_t i) noexcept nogil:
    cdef Py_ssize_t k
    for k in range(o.ex_start[i], o.ex_start[i + 1]):
        o.ex_pos[k] = o.pos[o.ex_idx[k]]
    _sort_small(o.ex_pos + o.ex_start[i], o.ex_start[i + 1] - o.ex_start[i])


cdef int _cmp_pair(const void *a, const void *b) noexcept nogil:
    cdef const int64_t *x = <const int64_t *>a
    cdef const int64_t *y = <const int64_t *>b
    if x[0] != y[0]:
        return -1 if x[0] < y[0] else 1
    if x[1] != y[1]:
        return -1 if x[1] < y[1] else 1
    return 0


def has_ties(list a, list b):
    """``order.has_ties``: whether two positions ``i != j`` have ``(a[i], b[i]) == (a[j], b[j])``
    (``a``, ``b``: lists of Python ints of one length, each in [-2**63, 2**63), as Merkle hashes
    are). Sorts the pairs in C. OverflowError for an int outside that range, ValueError for lists of
    different lengths (the caller then runs the Python check)."""
    cdef Py_ssize_t n = len(a), i
    cdef int64_t *pairs
    if len(b) != n:
        raise ValueError("has_ties: lists of different lengths")
    if n < 2:
        return False
    pairs = <int64_t *>malloc(2 * n * sizeof(int64_t))
    if pairs == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            pairs[2 * i] = a[i]
            pairs[2 * i + 1] = b[i]
        qsort(pairs, n, 2 * sizeof(int64_t), _cmp_pair)
        for i in range(1, n):
            if pairs[2 * i] == pairs[2 * i - 2] and pairs[2 * i + 1] == pairs[2 * i - 1]:
                return True
        return False
    finally:
        free(pairs)
