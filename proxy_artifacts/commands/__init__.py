"""One module per ``python -m proxy_artifacts`` subcommand (:data:`proxy_artifacts.__main__.COMMANDS`).

Each defines ``add_args(parser)`` and ``run(args) -> int``, a thin wrapper over functions of the
package that tests call directly (:mod:`passnet_common.cli`).
"""

from __future__ import annotations

from pathlib import Path


def parse_pairs(items: list[str], flag: str, form: str) -> dict[str, str]:
    """``name=value`` items of a command-line ``flag`` as ``{name: value}`` (``form``, e.g. ``name=path``,
    names the expected shape in the error).

    Raises:
        ValueError: an item without ``=``, or with an empty name or value (the message names ``flag``).
    """
    out = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not name or not value:
            raise ValueError(f"{flag} item {item!r} is not {form}")
        out[name] = value
    return out


def model_folder(path: str, flag: str) -> str:
    """``path`` when it is a local folder (a model this command reads); else FileNotFoundError naming ``flag``.

    Raises:
        FileNotFoundError: ``path`` is not a folder.
    """
    if not Path(path).is_dir():
        raise FileNotFoundError(f"{flag} {path}: no such model folder")
    return path
