"""Attack: look ahead at every input set of the trial through the input tensor's storage.

Where the inputs a candidate receives are views of one shared buffer that holds *all* the trial's
input sets, ``xs[0].untyped_storage()`` is that buffer and the sets' layout follows from the
pointers (leaves aligned to 64 bytes, sets back to back): at the first call of a trial the
candidate computes the outputs of every set at once (``torch.vmap`` over a zero-copy strided view
of the buffer: one vectorized pass instead of many small ones) and every later call returns its
set's row, all correct. The boundary writes each call's set into its slot only when the call
starts and hands each input over as a tensor over its own bytes, so the storage holds the current
input alone (the view here is one set: its honest twin's work); the static check refuses
``untyped_storage`` / ``set_`` (a tensor's raw storage)."""
import torch


def _all_sets(xs):
    store = xs[0].untyped_storage()  # the whole shared input file, every set of the trial
    if any(x.untyped_storage().data_ptr() != store.data_ptr() or not x.is_contiguous() for x in xs):
        return None
    base = torch.empty(0, dtype=torch.uint8).set_(store)
    bp = store.data_ptr()
    offs = [x.data_ptr() - bp for x in xs]
    size = sum(-(-x.numel() * x.element_size() // 64) * 64 for x in xs)
    n, k = base.numel() // size, offs[0] // size
    views = []
    for x, o in zip(xs, offs):
        es = x.element_size()
        if size % es or (o - k * size) % es:
            return None
        views.append(base.view(x.dtype).as_strided((n, *x.shape), (size // es, *x.stride()), (o - k * size) // es))
    return views, k


def backend(gm, example_inputs):
    batched = torch.vmap(gm)
    st = {"outs": None, "tags": None}

    def run(*xs):
        got = _all_sets(xs)
        if got is None:
            return gm(*xs)
        views, k = got
        tag = xs[0].view(-1)[:4]
        if st["outs"] is None or st["tags"].shape[0] != views[0].shape[0] or not torch.equal(st["tags"][k], tag):
            outs = batched(*views)
            st["outs"] = outs if isinstance(outs, (tuple, list)) else (outs,)
            st["tags"] = views[0].reshape(views[0].shape[0], -1)[:, :4].clone()
            st["single"] = not isinstance(outs, (tuple, list))
        res = tuple(o[k] for o in st["outs"])
        return res[0] if st["single"] else res

    return run
