"""`known_titles`: when a local model's Search is held to the titles of the snapshot it searches.

It applies to a local model (`local`, `local:PATH.gguf`) over a snapshot file (`offline`,
`PATH.db`); not to live Wikipedia (a recording included), whose titles are not all known,
nor to a provider's model, whose decoding wikireact does not steer. The model learns the
snapshot per call: the file's path is bound to the call as `known_titles`
(`wikireact.models.local.llama`), and the snapshot's title index is built once and shared.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.runnables import Runnable

from wikireact.context import Context
from wikireact.models.local.spec import is_local
from wikireact.models.stack import behind_cache
from wikireact.wiki.base import WikiSource
from wikireact.wiki.snapshot import SnapshotSource


def applies(model: str, wiki: str) -> bool:
    """Whether `known_titles` can apply to the model and source these specs name."""
    wiki = wiki.strip()
    return is_local(model) and wiki != "live" and not wiki.startswith("record:")


def with_known_titles(
    model: BaseChatModel, context: Context, source: Callable[[], WikiSource]
) -> Runnable[LanguageModelInput, Any]:
    """Return `model` with the snapshot's path bound to its calls when `known_titles` applies.

    `source` returns the run's Wikipedia source (asked for only when the model is local). What
    counts is the model object (or, behind the model cache, the model it stands for), never
    `context.model` alone: a provider's model passed in with `WIKIREACT_MODEL=local` set keeps
    its calls as they are.
    """
    llama = sys.modules.get("wikireact.models.local.llama")  # not loaded: no local model here
    if not context.known_titles or context.protocol != "text":
        return model
    cached = behind_cache(model)  # a cached run's real model is loaded on its first miss
    if not (
        (llama is not None and isinstance(model, llama.LlamaCppChatModel))
        or (cached is not None and is_local(cached.identity))
    ):
        return model  # a provider's model refuses a keyword it does not know
    wiki = source()
    if not isinstance(wiki, SnapshotSource):
        return model
    return model.bind(known_titles=str(wiki.store.path.resolve()))
