"""PassBench interop: task folders exported in PassBench / GraphNet sample layout (``export``) and
their loader-side check (``check``); ``python -m curate.passbench export ...``."""
