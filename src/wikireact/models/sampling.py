"""Per-call sampling options a model's client accepts: a seed where the client takes one.

Groq's client (`langchain_groq.ChatGroq`) and the local llama.cpp model take a per-call
`seed`; other clients are sent none. A loaded model is recognised by its class (a
subclass, e.g. a user's wrapper, counts): the classes are looked up among the modules
already imported, since a model of that class cannot exist without its module.
"""

from __future__ import annotations

import sys
from typing import Any

from langchain_core.language_models import BaseChatModel

from wikireact.models.local.spec import is_local

SEEDED_CLASSES: tuple[tuple[str, str], ...] = (
    ("langchain_groq", "ChatGroq"),
    ("wikireact.models.local.llama", "LlamaCppChatModel"),
)
"""(module, class) of the chat models whose client takes a per-call seed."""


def _takes_seed(model: BaseChatModel) -> bool:
    classes = [
        getattr(sys.modules[module], name, None)
        for module, name in SEEDED_CLASSES
        if module in sys.modules
    ]
    return isinstance(model, tuple(c for c in classes if isinstance(c, type)))


def per_call_sampling(spec: str, model: BaseChatModel | None) -> dict[str, Any]:
    """Return the per-call sampling options of `model` (or of `spec`'s model, not loaded yet)."""
    if model is not None:
        takes_seed = _takes_seed(model)
    else:
        spec = spec.strip()
        takes_seed = spec.startswith("groq:") or is_local(spec)
    return {"seed": 0} if takes_seed else {}
