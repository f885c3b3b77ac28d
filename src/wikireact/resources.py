"""The model, Wikipedia source and few-shot exemplars an episode uses: passed objects, or defaults."""

from __future__ import annotations

from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel
from langgraph.runtime import Runtime

from wikireact.context import Context
from wikireact.exemplars import EpisodeExemplar
from wikireact.models import load_chat_model
from wikireact.wiki.base import WikiSource
from wikireact.wiki.factory import open_source


@dataclass(frozen=True)
class Resources:
    """Objects given to `build_graph`; anything left None is chosen by the run's `Context`."""

    model: BaseChatModel | None = None
    wiki: WikiSource | None = None
    exemplars: tuple[EpisodeExemplar, ...] | None = None
    """Few-shot example episodes (e.g. from `--prompts FILE`); None: wikireact's own."""

    def chat_model(self, context: Context) -> BaseChatModel:
        """Return the chat model for this run."""
        return self.model if self.model is not None else load_chat_model(context.model)

    def wiki_source(self, context: Context) -> WikiSource:
        """Return the Wikipedia source for this run."""
        return self.wiki if self.wiki is not None else open_source(context.wiki)


DEFAULT_RESOURCES = Resources()


def settings(runtime: Runtime[Context]) -> Context:
    """Return the run's `Context`, or the environment's defaults when the caller passed none."""
    context = runtime.context
    if context is None:
        return Context()
    if isinstance(context, dict):  # defensive: servers may hand over plain dicts
        return Context(**context)
    return context
