"""Where wikireact keeps its files: one place, overridable with WIKIREACT_DATA_DIR."""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_cache_dir, user_data_dir


def data_dir() -> Path:
    """Return the directory for checkpoints and the offline snapshot (env WIKIREACT_DATA_DIR)."""
    return Path(os.environ.get("WIKIREACT_DATA_DIR") or user_data_dir("wikireact"))


def cache_dir() -> Path:
    """Return the directory for re-creatable files: the live cache and the local model (env WIKIREACT_DATA_DIR)."""
    return Path(os.environ.get("WIKIREACT_DATA_DIR") or user_cache_dir("wikireact"))
