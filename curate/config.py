"""The params blocks the curate family reads, registered for ``load_params`` / ``check_params``.

``curate`` (:class:`curate.curate_config.CurateConfig`: decompose, profile and curate wings) and
``score`` (:class:`curate.score.config.ScoreConfig`).
"""

from __future__ import annotations

from curate.curate_config import CurateConfig
from curate.score.config import ScoreConfig
from passnet_common.config import register

register("curate", CurateConfig)
register("score", ScoreConfig)
