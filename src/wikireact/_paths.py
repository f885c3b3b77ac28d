"""Where wikireact keeps its files: one place, overridable with WIKIREACT_DATA_DIR."""

from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    """Return the directory for checkpoints and the offline snapshot (env WIKIREACT_DATA_DIR)."""
    given = os.environ.get("WIKIREACT_DATA_DIR")
    if given:
        return Path(given)
    from platformdirs import user_data_dir  # a few ms: only when the default is needed

    return Path(user_data_dir("wikireact"))


def cache_dir() -> Path:
    """Return the directory for re-creatable files: the live cache and the local model (env WIKIREACT_DATA_DIR)."""
    given = os.environ.get("WIKIREACT_DATA_DIR")
    if given:
        return Path(given)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("wikireact"))
