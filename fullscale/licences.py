"""The licence of every source model of a release, read offline from what is installed; never guessed.

A captured graph comes from two things: the architecture's **code** (the library that defines it)
and its **configuration** (no weights are ever loaded). Per catalog row:

- ``code_licence``: the defining library's licence from its installed package metadata
  (``License-Expression``, else ``License``; transformers / timm / torchvision), normalised by
  :data:`NORMALISE` only where the text names a licence outright (``Apache 2.0 License`` ->
  ``Apache-2.0``); ``unknown`` for sources without a library (``hf:``, ``local:``, ``module:``,
  ``graphnet:``).
- ``config_licence``: timm: the ``license`` field of the model's default pretrained config
  (``timm.models.get_pretrained_cfg``; it licenses the pretrained weights whose architecture
  hyperparameters the config carries; normalised by :data:`NORMALISE`, so ``apache-2.0`` reads as the code's
  ``Apache-2.0``; other licence ids as timm gives them), ``unknown`` when timm has none; transformers / torchvision:
  the library's default configuration, i.e. the code licence; ``hf:`` / ``local:`` / ``graphnet:`` /
  ``module:``: ``unknown`` (the model card or sample is not read offline).
- ``permissive``: both licences known and in :data:`PERMISSIVE`. ``unknown`` is never permissive.
"""

from __future__ import annotations

from importlib import metadata

PERMISSIVE = {"apache-2.0", "mit", "bsd", "bsd-2-clause", "bsd-3-clause", "cc0-1.0", "cc-by-4.0", "unlicense"}
# spellings of one licence, to its SPDX identifier (timm writes the Hub's lower-case ids, package metadata prose)
NORMALISE = {"apache 2.0 license": "Apache-2.0", "apache 2.0": "Apache-2.0", "apache license 2.0": "Apache-2.0",
             "apache-2.0": "Apache-2.0", "bsd": "BSD", "mit": "MIT", "bsd-2-clause": "BSD-2-Clause",
             "bsd-3-clause": "BSD-3-Clause", "cc0-1.0": "CC0-1.0", "cc-by-4.0": "CC-BY-4.0", "cc-by-nc-4.0": "CC-BY-NC-4.0"}
LIBRARY = {"transformers": "transformers", "timm": "timm", "torchvision": "torchvision"}


def package_licence(package: str) -> str:
    """The installed package's licence (module docstring); ``unknown`` when not installed or unset."""
    try:
        m = metadata.metadata(package)
    except metadata.PackageNotFoundError:
        return "unknown"
    text = (m.get("License-Expression") or m.get("License") or "").strip()
    if not text or len(text) > 200:  # some packages paste the whole licence text here
        return "unknown"
    return NORMALISE.get(text.lower(), text)


def timm_config_licence(name: str) -> str:
    """``license`` of timm's default pretrained config of model ``name`` (``unknown`` when none)."""
    try:
        from timm.models import get_pretrained_cfg  # noqa: PLC0415  (timm is heavy and optional: read only for timm rows)

        cfg = get_pretrained_cfg(name)
    except Exception:  # noqa: BLE001 - a name timm does not know, or timm absent: unknown, not a guess
        return "unknown"
    lic = getattr(cfg, "license", None) if cfg is not None else None
    return NORMALISE.get(str(lic).lower(), str(lic)) if lic else "unknown"


def is_permissive(*licences: str) -> bool:
    return all(lic.lower() in PERMISSIVE for lic in licences)


def model_licences(rows: list[dict]) -> list[dict]:
    """``[{model_id, source, name, code_licence, config_licence, permissive}]`` for catalog ``rows``."""
    libs = {src: package_licence(pkg) for src, pkg in LIBRARY.items()}
    out = []
    for r in rows:
        src = r.get("source") or r["model_id"].split(":", 1)[0]
        code = libs.get(src, "unknown")
        if src == "timm":
            conf = timm_config_licence(r["model_id"].split(":", 1)[1])
        elif src in ("transformers", "torchvision"):
            conf = code
        else:
            conf = "unknown"
        out.append({"model_id": r["model_id"], "source": src, "name": r.get("name"), "code_licence": code,
                    "config_licence": conf, "permissive": is_permissive(code, conf)})
    return out
