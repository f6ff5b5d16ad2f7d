"""Serve a synthetic Hub listing of N repos from the stand-in Hub, for the crawl benchmarks.

    python -m benchmarks.hub_listing 100000      # prints the endpoint on its first line, serves until killed

The server is :class:`passnet_common.hub_standin.HubStandIn` with an
:class:`extract.sources.hub_configs.Listing` of N repos.
"""

from __future__ import annotations

import sys
import threading

from extract.sources.hub_configs import Listing
from passnet_common.hub_standin import HubStandIn


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    n = int(argv[0]) if argv else 1000
    with HubStandIn(listing=Listing(n)) as hub:
        print(hub.endpoint, flush=True)
        threading.Event().wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
