"""The checks the parent runs on a candidate across the trust boundary.

``checks`` makes one ``score_samples`` row per subgraph (every check, in order); ``clock`` times
the three sides on the parent's clock with checked timed outputs; ``compare`` compares outputs with
the reference's (per chunk, input independence, RNG statistics); ``integrity`` is the static check
of a candidate's source and the output checks; ``dispatch_guard`` is PassNet's guard, loaded by
file into the candidate sandbox.
"""
