"""The model stack every entry point runs: the chat model, behind the model cache when one is given.

`ask`, `resume` and `eval` all build their model here, so a wrapper added to the stack
(today the model cache of `--model-cache`) carries the same facts about the model for all
of them: the cache is told the model's prompt variant, so a small local model keeps the
small-model prompt whether or not its calls are cached. Whoever builds a stack closes it
(`close_stack`, or `with stack_closed(model)`): that closes the model cache's file.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from langchain_core.language_models import BaseChatModel

from wikireact.models.registry import load_chat_model
from wikireact.models.variants import variant_for

if TYPE_CHECKING:
    from wikireact.models.cache import CachedChatModel


def model_stack(
    spec: str, *, model: BaseChatModel | None = None, cache: Path | None = None
) -> BaseChatModel:
    """Return the chat model of `spec` (`model` when already loaded), behind the cache `cache`.

    Behind a cache the model is loaded at the first call the cache does not hold, so a
    replay needs no API key; the cache knows the model's prompt variant without loading it.
    """
    if cache is None:
        return model if model is not None else load_chat_model(spec)
    from wikireact.models.cache import CachedChatModel, SqliteModelCache, model_identity

    given = model
    return CachedChatModel(
        identity=model_identity(spec),
        prompt_variant=variant_for(spec, model),
        store=SqliteModelCache(cache),
        load_model=lambda: given if given is not None else load_chat_model(spec),
    )


def behind_cache(model: BaseChatModel | None) -> CachedChatModel | None:
    """Return `model` if it is behind the model cache, else None.

    Without a cache the cache's module is never imported (its models cost `ask` startup time):
    a model cannot be a `CachedChatModel` before that module is loaded.
    """
    module = sys.modules.get("wikireact.models.cache")
    return model if module is not None and isinstance(model, module.CachedChatModel) else None


def close_stack(model: BaseChatModel | None) -> None:
    """Close what `model_stack` opened around the model (the model cache's file)."""
    cached = behind_cache(model)
    if cached is not None:
        cached.close()


@contextmanager
def stack_closed(model: BaseChatModel | None) -> Iterator[BaseChatModel | None]:
    """Use `model` (a stack from `model_stack`) for the block, then close it."""
    try:
        yield model
    finally:
        close_stack(model)
