"""Where models come from: every source yields rows of the ``models`` table.

``builtin`` (transformers / timm / torchvision architectures), ``local`` (a folder of
``config.json`` files), ``hub_crawl`` + ``hub_configs`` (the Hugging Face Hub at scale, with
config-level dedupe), ``graphnet`` (GraphNet sample folders, statically checked); ``rows`` is
the single config -> row path, ``repairs`` the config repairs, ``catalog`` assembles them
(:func:`extract.sources.catalog.build_catalog`).
"""
