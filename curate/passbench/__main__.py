"""``python -m curate.passbench export ...`` (:func:`curate.passbench.export.main`)."""

import sys

from curate.passbench.export import main
from passnet_common.cli import run_cli

if __name__ == "__main__":
    sys.exit(run_cli(main))
