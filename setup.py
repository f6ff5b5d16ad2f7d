"""Optional compiled speed-ups of the canonical form (hashing speed); everything else
is configured in pyproject.toml.

``pip install -e .`` (``make setup``) compiles :mod:`passnet_common.canonical._cmerkle` and
:mod:`passnet_common.canonical._cform` from their Cython sources when Cython (a build requirement
in pyproject.toml) and a C compiler are there. When either is missing or the compile fails, the
install goes on without it and the canonical form uses its pure-Python loops, which give the same
hashes (the compiled path is used only where it agrees with the plain Python definition on sample
graphs at import: :mod:`passnet_common.canonical.seam`; ``PASSNET_CANONICAL_PURE=1`` switches it off).
"""

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """``build_ext`` whose failures are warnings: the extension is optional."""

    def run(self):
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - no compiler, no headers: the Python path is used
            print(f"warning: optional extension not built ({type(exc).__name__}: {exc}); pure-Python canonical form")

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001
            print(f"warning: optional extension {ext.name} not built ({type(exc).__name__}: {exc})")


def _extensions():
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("warning: Cython not found; the canonical form runs its pure-Python loop")
        return []
    try:
        return cythonize([Extension("passnet_common.canonical._cmerkle", ["passnet_common/canonical/_cmerkle.pyx"]),
                          Extension("passnet_common.canonical._cform", ["passnet_common/canonical/_cform.pyx"])],
                         compiler_directives={"language_level": 3}, quiet=True)
    except Exception as exc:  # noqa: BLE001
        print(f"warning: Cython could not translate the extension ({type(exc).__name__}: {exc})")
        return []


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
