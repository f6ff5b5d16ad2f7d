"""How captures are run: ``attempts`` (the resume key), ``scheduler`` (isolated children,
longest first, resumable), ``executor`` (local forked workers or Ray), ``assemble`` (tables and
graph store from finished work folders), ``coverage`` (coverage figures of a catalog)."""
