"""Built-in scoring candidates (files loaded by path, statically checked like any candidate).

- ``broken_backend.py``: a deliberately broken ``torch.compile`` backend (reference row).
- ``fusion_pass.py``: a hand-written FX pattern/replacement fusion pass for long-tail patterns.
"""
