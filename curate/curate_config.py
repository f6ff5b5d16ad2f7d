"""The ``curate`` params block: one typed config per wing (decompose, profile, curate).

:class:`CurateConfig` nests :class:`curate.decompose.config.DecomposeConfig`,
:class:`curate.profile.config.ProfileConfig` and :class:`curate.select.config.SelectConfig`;
``curate/config.py`` registers it as the ``curate`` block. A stage reads only its wing
(``<Wing>Config.from_params(block.get(name), "curate.<name>")``), so its DVC dependencies stay its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from curate.decompose.config import DecomposeConfig
from curate.profile.config import ProfileConfig
from curate.select.config import SelectConfig
from passnet_common.config import ParamsConfig, knob


@dataclass(frozen=True)
class CurateConfig(ParamsConfig):
    """``curate``: ``decompose``, ``profile`` and ``curate`` (the select stage)."""

    decompose: DecomposeConfig = knob(factory=DecomposeConfig)
    profile: ProfileConfig = knob(factory=ProfileConfig)
    curate: SelectConfig = knob(factory=SelectConfig)
