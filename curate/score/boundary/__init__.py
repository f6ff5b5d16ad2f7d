"""The scorer's trust boundary: the candidate runs in a sandbox process that holds nothing of the
evaluator, the references in another; what crosses is plain data (shared-memory slots, JSON replies).

``parent`` is the parent's side (sandbox processes, shared-memory slots, the parent's clock, the
memory cap); ``sandbox`` is the script the sandboxes run (``python -s sandbox.py``: stdlib + torch
only, never imported by the parent); ``child`` walks a candidate's subgraphs and replaces failed
sandboxes.
"""
