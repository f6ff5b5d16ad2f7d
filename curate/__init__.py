"""curate: decomposition, profiling, long-tail selection, task set and ES_t scoring (later issues)."""
