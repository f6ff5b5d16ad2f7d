"""The dedupe stage family: grouping captured graphs by canonical hash (``group``), the
per-FX-node table (``nodes``) and the DuckDB database of views over every table
(``database``). The canonical form itself is the core's (:mod:`passnet_common.canonical`)."""
