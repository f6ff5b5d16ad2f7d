# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled :func:`passnet_common.canonical.order.merkle` (speed only, no rule): the same cone
and down hashes, bit for bit, computed over C arrays instead of Python tuples.

The Python version hashes tuples of ints with CPython's ``hash``; this module reproduces
CPython 3.11's hash of an int (``long_hash``: the value modulo the Mersenne prime
``2**61 - 1`` with the sign kept, -1 mapped to -2) and of a tuple (``tuplehash``: the
xxHash-style lane mixing of ``Objects/tupleobject.c``) on 64-bit builds. The package uses it
only through its seam, :mod:`passnet_common.canonical.compiled`, whose agreement check at import
(the whole form of sample graphs on both paths) finds out whether it does on the running
interpreter; else the Python loop runs.
"""

from cpython.bytes cimport PyBytes_AS_STRING
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


cdef struct _Graph:
    Py_ssize_t n
    Py_ssize_t *in_start    # data inputs (CSR, argument order)
    Py_ssize_t *in_idx
    Py_ssize_t *ex_start    # ordering dependencies (CSR, as listed)
    Py_ssize_t *ex_idx


cdef void _graph_free(_Graph *g) noexcept:
    free(g.in_start)
    free(g.in_idx)
    free(g.ex_start)
    free(g.ex_idx)
    g.in_start = g.in_idx = g.ex_start = g.ex_idx = NULL


cdef int _graph_from_lists(_Graph *g, list inputs, list extra, Py_ssize_t n, object rows=None) except -1:
    """Fill ``g`` (zeroed by the caller, freed with :func:`_graph_free`) with the CSR form of
    ``inputs`` / ``extra`` (lists of ``n`` lists of node indexes); ``rows``, when given, is
    ``_cform.input_rows(inputs)`` (int64 words ``n, total, start[0..n], idx``, every index checked
    there) and is copied instead of reading the input lists. ValueError for lists of another length,
    an index outside ``[0, n)`` or rows of another graph; TypeError for items that are not lists."""
    cdef Py_ssize_t i, k, p, j, tot_in = 0, tot_ex = 0
    cdef list ins
    cdef const int64_t *w = NULL
    if len(inputs) != n or len(extra) != n:
        raise ValueError("lists of different lengths")
    if rows is not None:
        if type(rows) is not bytes or len(<bytes>rows) < 3 * 8:
            raise ValueError("rows: not from input_rows")
        w = <const int64_t *>PyBytes_AS_STRING(rows)
        if w[0] != n or len(<bytes>rows) != (3 + n + w[1]) * 8:
            raise ValueError("rows: of another graph")
    g.n = n
    for i in range(n):
        if w == NULL:
            tot_in += len(<list?>inputs[i])
        tot_ex += len(<list?>extra[i])
    if w != NULL:
        tot_in = w[1]
    g.in_start = <Py_ssize_t *>malloc((n + 1) * sizeof(Py_ssize_t))
    g.ex_start = <Py_ssize_t *>malloc((n + 1) * sizeof(Py_ssize_t))
    g.in_idx = <Py_ssize_t *>malloc(max(tot_in, 1) * sizeof(Py_ssize_t))
    g.ex_idx = <Py_ssize_t *>malloc(max(tot_ex, 1) * sizeof(Py_ssize_t))
    if g.in_start == NULL or g.ex_start == NULL or g.in_idx == NULL or g.ex_idx == NULL:
        raise MemoryError()
    p = k = 0
    if w != NULL:
        for i in range(n + 1):
            g.in_start[i] = w[2 + i]
        for i in range(tot_in):
            g.in_idx[i] = w[3 + n + i]
    for i in range(n):
        if w == NULL:
            g.in_start[i] = p
            ins = <list>inputs[i]
            for j in ins:  # an int beyond Py_ssize_t: OverflowError
                if j < 0 or j >= n:
                    raise ValueError("an input index outside the graph")
                g.in_idx[p] = j
                p += 1
        g.ex_start[i] = k
        ins = <list>extra[i]
        for j in ins:
            if j < 0 or j >= n:
                raise ValueError("an ordering dependency outside the graph")
            g.ex_idx[k] = j
            k += 1
    if w == NULL:
        g.in_start[n] = p
    g.ex_start[n] = k
    return 0


cdef int _merkle_c(_Graph *g, const int64_t *lab, int64_t *cone, int64_t *down) except -1:
    """The cone and down hashes of :func:`merkle` over the CSR graph ``g``; ``lab[i]`` is
    ``hash(label id of node i)``. ValueError when an input or dependency is not earlier than
    its node (the Python version assumes a topological FX order)."""
    cdef Py_ssize_t n = g.n
    cdef Py_ssize_t i, j, k, p, m, in_tot = g.in_start[n], c_n, u
    cdef Py_ssize_t *c_start = NULL
    cdef Py_ssize_t *c_fill = NULL
    cdef int64_t *c_val = NULL  # per consumer edge: (user, position) as a (user << 32 | position) pair
    cdef int64_t *tmp = NULL
    cdef uint64_t acc
    cdef Py_ssize_t tmp_cap = 0
    try:
        c_start = <Py_ssize_t *>malloc((n + 1) * sizeof(Py_ssize_t))
        c_fill = <Py_ssize_t *>malloc(max(n, 1) * sizeof(Py_ssize_t))
        c_val = <int64_t *>malloc(max(in_tot, 1) * sizeof(int64_t))
        if c_start == NULL or c_fill == NULL or c_val == NULL:
            raise MemoryError()
        for i in range(n + 1):
            c_start[i] = 0
        for i in range(n):
            for k in range(g.in_start[i], g.in_start[i + 1]):
                j = g.in_idx[k]
                if j >= i:
                    raise ValueError("merkle: an input index that is not earlier in the order")
                c_start[j + 1] += 1
        for i in range(n):
            c_start[i + 1] += c_start[i]
            c_fill[i] = c_start[i]
        # cones, in index order; consumer edges in (user, position) order per producer
        for i in range(n):
            m = g.ex_start[i + 1] - g.ex_start[i]
            acc = _X5
            acc = _lane(acc, _hash_i64(lab[i]))
            for k in range(g.in_start[i], g.in_start[i + 1]):
                j = g.in_idx[k]
                acc = _lane(acc, _hash_i64(cone[j]))
                c_val[c_fill[j]] = (<int64_t>i << 32) | (k - g.in_start[i])
                c_fill[j] += 1
            c_n = 1 + (g.in_start[i + 1] - g.in_start[i])
            if m:
                if m > tmp_cap:
                    free(tmp)
                    tmp = <int64_t *>malloc(m * sizeof(int64_t))
                    if tmp == NULL:
                        raise MemoryError()
                    tmp_cap = m
                for p in range(m):
                    j = g.ex_idx[g.ex_start[i] + p]
                    if j >= i:
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
                k = c_val[c_start[i] + p] & <int64_t>0xFFFFFFFF
                tmp[p] = _finish(_lane(_lane(_X5, _hash_i64(down[u])), _hash_i64(k)), 2)
            if m > 1:
                qsort(tmp, m, sizeof(int64_t), _cmp_i64)
            for p in range(m):
                acc = _lane(acc, _hash_i64(tmp[p]))
            down[i] = _finish(acc, 1 + m)
        return 0
    finally:
        free(c_start)
        free(c_fill)
        free(c_val)
        free(tmp)


def merkle(list lab_hashes, list inputs, list extra):
    """``(cone, down)`` as :func:`passnet_common.canonical.order.merkle` computes them;
    ``lab_hashes[i]`` is ``hash(label id of node i)`` (the caller maps ``hash`` over the
    ids). Every argument index must be < the node's own index (a topological FX order),
    as the Python version assumes."""
    cdef Py_ssize_t n = len(lab_hashes), i
    cdef _Graph g
    cdef int64_t *lab = NULL
    cdef int64_t *cone = NULL
    cdef int64_t *down = NULL
    g.in_start = g.in_idx = g.ex_start = g.ex_idx = NULL
    try:
        _graph_from_lists(&g, inputs, extra, n)
        lab = <int64_t *>malloc(max(n, 1) * sizeof(int64_t))
        cone = <int64_t *>malloc(max(n, 1) * sizeof(int64_t))
        down = <int64_t *>malloc(max(n, 1) * sizeof(int64_t))
        if lab == NULL or cone == NULL or down == NULL:
            raise MemoryError()
        for i in range(n):
            lab[i] = lab_hashes[i]
        _merkle_c(&g, lab, cone, down)
        return [cone[i] for i in range(n)], [down[i] for i in range(n)]
    finally:
        _graph_free(&g)
        free(lab)
        free(cone)
        free(down)


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


cdef void _sort_small(Py_ssize_t *a, Py_ssize_t m) noexcept nogil:
    cdef Py_ssize_t i, j, v
    for i in range(1, m):
        v = a[i]
        j = i - 1
        while j >= 0 and a[j] > v:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = v


cdef int _order_c(_Graph *g, const char *kind, uint64_t *key, Py_ssize_t w, bint placeholders_by_key,
                  Py_ssize_t *order) except -1:
    """The canonical order (:func:`canonical_order`) of the CSR graph ``g`` into ``order`` (``g.n``
    node indexes); ``key``: ``g.n * w`` words, node ``i``'s key most significant word first, each
    word the Python hash value with its sign bit flipped (so that unsigned order is signed order);
    ``kind[i]``: 1 placeholder, 2 output, 0 other. ValueError on a cycle (the Python message)."""
    cdef Py_ssize_t n = g.n
    cdef Py_ssize_t i, j, k, p, m, tot = g.in_start[n] + g.ex_start[n], size = 0, placed = 0
    cdef _Ord o
    cdef Py_ssize_t *indeg = NULL
    cdef Py_ssize_t *u_start = NULL
    cdef Py_ssize_t *u_fill = NULL
    cdef Py_ssize_t *u_idx = NULL
    cdef Py_ssize_t *deps = NULL
    cdef Py_ssize_t *heap = NULL
    cdef Py_ssize_t *phs = NULL
    cdef Py_ssize_t n_ph = 0, d, nd
    o.w = w
    o.key = key
    o.in_start, o.in_idx, o.ex_start, o.ex_idx = g.in_start, g.in_idx, g.ex_start, g.ex_idx
    o.pos = NULL
    o.ex_pos = NULL
    try:
        indeg = <Py_ssize_t *>malloc(max(n, 1) * sizeof(Py_ssize_t))
        u_start = <Py_ssize_t *>malloc((n + 1) * sizeof(Py_ssize_t))
        u_fill = <Py_ssize_t *>malloc(max(n, 1) * sizeof(Py_ssize_t))
        heap = <Py_ssize_t *>malloc(max(n, 1) * sizeof(Py_ssize_t))
        phs = <Py_ssize_t *>malloc(max(n, 1) * sizeof(Py_ssize_t))
        o.pos = <Py_ssize_t *>malloc(max(n, 1) * sizeof(Py_ssize_t))
        o.ex_pos = <Py_ssize_t *>malloc(max(g.ex_start[n], 1) * sizeof(Py_ssize_t))
        u_idx = <Py_ssize_t *>malloc(max(tot, 1) * sizeof(Py_ssize_t))
        deps = <Py_ssize_t *>malloc(max(tot, 1) * sizeof(Py_ssize_t))
        if (indeg == NULL or u_start == NULL or u_fill == NULL or heap == NULL or phs == NULL or o.pos == NULL
                or o.ex_pos == NULL or u_idx == NULL or deps == NULL):
            raise MemoryError()
        for i in range(n + 1):
            u_start[i] = 0
        # distinct dependencies per node (data inputs and ordering edges): indegree and users
        d = 0
        for i in range(n):
            nd = d
            for k in range(g.in_start[i], g.in_start[i + 1]):
                deps[d] = g.in_idx[k]
                d += 1
            for k in range(g.ex_start[i], g.ex_start[i + 1]):
                deps[d] = g.ex_idx[k]
                d += 1
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
            order[placed] = i
            placed += 1
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
            order[placed] = i
            placed += 1
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
                if placed >= n:
                    raise ValueError("graph has a cycle or dangling dependencies; not a valid FX graph")
                order[placed] = i
                placed += 1
        if placed != n:
            raise ValueError("graph has a cycle or dangling dependencies; not a valid FX graph")
        return 0
    finally:
        free(indeg)
        free(u_start)
        free(u_fill)
        free(u_idx)
        free(deps)
        free(heap)
        free(phs)
        free(o.pos)
        free(o.ex_pos)


def canonical_order(list kinds, list inputs, list extra, list key_cols, bint placeholders_by_key):
    """The order :func:`passnet_common.canonical.order.canonical_order` returns for
    ``keys[i] = (key_cols[0][i], key_cols[1][i], ...)`` (Python hash values, each in
    [-2**63, 2**63)); ``kinds[i]``: 1 placeholder, 2 output, 0 other; placeholders sorted by
    their keys (``placeholders_by_key``) or kept in index order. Raises ValueError on a
    cycle (the Python message) and on an index out of range."""
    cdef Py_ssize_t n = len(kinds), w = len(key_cols), i, k
    cdef list col
    cdef _Graph g
    cdef char *kind = NULL
    cdef uint64_t *key = NULL
    cdef Py_ssize_t *order = NULL
    g.in_start = g.in_idx = g.ex_start = g.ex_idx = NULL
    try:
        try:
            _graph_from_lists(&g, inputs, extra, n)
        except ValueError as exc:
            raise ValueError(f"canonical_order: index out of range ({exc})") from None
        kind = <char *>malloc(max(n, 1))
        key = <uint64_t *>malloc(max(n * w, 1) * sizeof(uint64_t))
        order = <Py_ssize_t *>malloc(max(n, 1) * sizeof(Py_ssize_t))
        if kind == NULL or key == NULL or order == NULL:
            raise MemoryError()
        for k in range(w):
            col = <list?>key_cols[k]
            if len(col) != n:
                raise ValueError("canonical_order: a key column of another length")
            for i in range(n):
                key[i * w + k] = (<uint64_t><int64_t>col[i]) ^ (<uint64_t>1 << 63)
        for i in range(n):
            kind[i] = <char>(<int>kinds[i])
        _order_c(&g, kind, key, w, placeholders_by_key, order)
        return [order[i] for i in range(n)]
    finally:
        _graph_free(&g)
        free(kind)
        free(key)
        free(order)


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


cdef int _has_ties_c(const int64_t *a, const int64_t *b, Py_ssize_t n) except -1:
    """Whether two positions have equal ``(a[i], b[i])`` (1) or not (0): the pairs sorted in C."""
    cdef Py_ssize_t i
    cdef int64_t *pairs
    if n < 2:
        return 0
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
                return 1
        return 0
    finally:
        free(pairs)


def has_ties(list a, list b):
    """``order.has_ties``: whether two positions ``i != j`` have ``(a[i], b[i]) == (a[j], b[j])``
    (``a``, ``b``: lists of Python ints of one length, each in [-2**63, 2**63), as Merkle hashes
    are). Sorts the pairs in C. OverflowError for an int outside that range, ValueError for lists of
    different lengths (the caller then runs the Python check)."""
    cdef Py_ssize_t n = len(a), i
    cdef int64_t *x
    if len(b) != n:
        raise ValueError("has_ties: lists of different lengths")
    if n < 2:
        return False
    x = <int64_t *>malloc(2 * n * sizeof(int64_t))
    if x == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            x[i] = a[i]
            x[n + i] = b[i]
        return _has_ties_c(x, x + n, n) == 1
    finally:
        free(x)


# --- the order of _core in one call (speed only) -------------------------------------------

cdef int _label_hashes(list ids, int64_t *out, Py_ssize_t n) except -1:
    """``out[i] = hash(ids[i])`` for label ids, ints in [0, 2**64) (CPython's hash of a
    non-negative int: its value modulo ``2**61 - 1``). ValueError for another length; OverflowError
    or TypeError for anything but such an int."""
    cdef Py_ssize_t i
    cdef uint64_t v
    if len(ids) != n:
        raise ValueError("label ids of another length")
    for i in range(n):
        v = ids[i]  # OverflowError for a negative int or one of 2**64 or more
        out[i] = <int64_t>(v % _P)
    return 0


def order_of_labels(list struct_ids, exact_ids, list inputs, list extra, list kinds, bint placeholders_by_key,
                    list ints, rows=None):
    """The canonical order that ``form._core`` computes from its labels, in one call over C arrays
    (the same list as, in Python: ``s = merkle(struct_ids, inputs, extra)``; the keys ``s`` and,
    when two nodes have equal ``s`` keys (:func:`has_ties`), also ``merkle(exact_ids(), ...)``;
    then ``canonical_order(kinds, inputs, extra, keys, placeholders_by_key)``), without the
    Python ints of the hashes and keys between the passes.

    Args:
        struct_ids: the structure label ids (``order.label_ids``), ints in [0, 2**64).
        exact_ids: a callable returning the exact label ids; called only when there are ties.
        inputs, extra: data inputs and ordering dependencies, per node lists of earlier indexes.
        kinds: per node 1 placeholder, 2 output, 0 other.
        placeholders_by_key: sort the placeholders by key (else keep their index order).
        ints: ``n`` ints whose ``ints[i] == i`` to fill the returned order with (shared, not new).
        rows: ``_cform.input_rows(inputs)``, read instead of the input lists, or None.

    Returns:
        ``(order, tied)``: the canonical order (original indexes) and whether the exact labels
        were needed.

    Raises:
        ValueError: a cycle (the Python message); lists of other lengths or an index that is not
            earlier than its node (the caller then runs the Python passes).
    """
    cdef Py_ssize_t n = len(kinds), i, w = 2
    cdef _Graph g
    cdef int64_t *lab = NULL
    cdef int64_t *cols = NULL   # 4 columns: structure cone, down, exact cone, down
    cdef uint64_t *key = NULL
    cdef char *kind = NULL
    cdef Py_ssize_t *order = NULL
    cdef list out
    g.in_start = g.in_idx = g.ex_start = g.ex_idx = NULL
    if len(ints) != n:
        raise ValueError("ints of another length")
    try:
        _graph_from_lists(&g, inputs, extra, n, rows)
        lab = <int64_t *>malloc(max(n, 1) * sizeof(int64_t))
        cols = <int64_t *>malloc(max(4 * n, 1) * sizeof(int64_t))
        kind = <char *>malloc(max(n, 1))
        order = <Py_ssize_t *>malloc(max(n, 1) * sizeof(Py_ssize_t))
        if lab == NULL or cols == NULL or kind == NULL or order == NULL:
            raise MemoryError()
        for i in range(n):
            kind[i] = <char>(<int>kinds[i])
        _label_hashes(struct_ids, lab, n)
        _merkle_c(&g, lab, cols, cols + n)
        if _has_ties_c(cols, cols + n, n):
            _label_hashes(<list?>exact_ids(), lab, n)
            _merkle_c(&g, lab, cols + 2 * n, cols + 3 * n)
            w = 4
        key = <uint64_t *>malloc(max(n * w, 1) * sizeof(uint64_t))
        if key == NULL:
            raise MemoryError()
        for i in range(n):
            key[i * w] = (<uint64_t>cols[i]) ^ (<uint64_t>1 << 63)
            key[i * w + 1] = (<uint64_t>cols[n + i]) ^ (<uint64_t>1 << 63)
            if w == 4:
                key[i * w + 2] = (<uint64_t>cols[2 * n + i]) ^ (<uint64_t>1 << 63)
                key[i * w + 3] = (<uint64_t>cols[3 * n + i]) ^ (<uint64_t>1 << 63)
        _order_c(&g, kind, key, w, placeholders_by_key, order)
        out = [None] * n
        for i in range(n):
            out[i] = ints[order[i]]
        return out, w == 4
    finally:
        _graph_free(&g)
        free(lab)
        free(cols)
        free(key)
        free(kind)
        free(order)
