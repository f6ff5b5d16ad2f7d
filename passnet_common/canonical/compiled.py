"""The state of the canonical form's optional compiled path: :data:`cform` / :data:`cmerkle` (None
where the Python definition runs) and :func:`python_only`.

The modules of this package call an extension where it is set and their Python definition where it is
None. :func:`passnet_common.canonical.seam.load` (run once when the package is imported) sets them, after
wiring the extensions and checking them against the Python definition on sample graphs;
``PASSNET_CANONICAL_PURE=1`` keeps them off. This module imports nothing of the package, so every
module of it may import this one.
"""

from __future__ import annotations

import contextlib
from typing import Any

ENV_PURE = "PASSNET_CANONICAL_PURE"

cform: Any = None
"""``passnet_common.canonical._cform`` when built, wired and in agreement; else None."""
cmerkle: Any = None
"""``passnet_common.canonical._cmerkle`` when built and in agreement; else None."""
status = "not loaded"
"""Why the compiled path is on or off (``on``, ``not built``, ``off (PASSNET_CANONICAL_PURE)``, ...)."""


@contextlib.contextmanager
def python_only():
    """Run the block on the Python definition only (the compiled path, if on, comes back after)."""
    global cform, cmerkle
    saved = cform, cmerkle
    cform = cmerkle = None
    try:
        yield
    finally:
        cform, cmerkle = saved
