"""Shared pieces of the PassNet data pipeline: table schemas, atomic I/O, params."""
