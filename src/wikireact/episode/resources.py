"""The model, Wikipedia source and few-shot exemplars an episode uses: passed objects, or defaults.

`resolve_resources` is the one resolver for entry points that know their settings up
front (the CLI's ask/resume, the eval): it turns a `Context` into open resources once, so
a bad setting fails before any step and nothing is opened twice. The served graph
(Studio, `wikireact.graph.graph`) learns its `Context` only when a run starts: its nodes
resolve per call through `Resources.chat_model`/`wiki_source`, whose loaders cache.
"""

from __future__ import annotations

from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel

from wikireact.context import Context
from wikireact.errors import MissingApiKeyError
from wikireact.models.registry import load_chat_model
from wikireact.prompting.exemplars import EpisodeExemplar
from wikireact.prompting.tools import bind_protocol_tools
from wikireact.wiki.base import WikiSource
from wikireact.wiki.factory import open_source


@dataclass(frozen=True)
class Resources:
    """Objects given to `build_graph`; anything left None is chosen by the run's `Context`."""

    model: BaseChatModel | None = None
    wiki: WikiSource | None = None
    exemplars: tuple[EpisodeExemplar, ...] | None = None
    """Few-shot example episodes (e.g. from `--prompts FILE`); None: wikireact's own."""

    @classmethod
    def given(
        cls,
        model: BaseChatModel | str | None = None,
        wiki: WikiSource | str | None = None,
        exemplars: tuple[EpisodeExemplar, ...] | None = None,
    ) -> Resources:
        """Return the resources of `build_graph`'s arguments (every agent's).

        A `provider:model` string is loaded and a source string (`live`, `offline`,
        `PATH.db`) opened now; None leaves the choice to the run's `Context`.
        """
        return cls(
            model=load_chat_model(model) if isinstance(model, str) else model,
            wiki=open_source(wiki) if isinstance(wiki, str) else wiki,
            exemplars=exemplars,
        )

    def chat_model(self, context: Context) -> BaseChatModel:
        """Return the chat model for this run."""
        return self.model if self.model is not None else load_chat_model(context.model)

    def wiki_source(self, context: Context) -> WikiSource:
        """Return the Wikipedia source for this run."""
        return self.wiki if self.wiki is not None else open_source(context.wiki)


DEFAULT_RESOURCES = Resources()


def resolve_resources(context: Context, *, key_optional: bool = False) -> Resources:
    """Open `context`'s chat model and Wikipedia source once, checking they can serve it.

    Raises a `wikireact.errors.ConfigurationError` (no API key, unknown provider, a model
    without tool calling under `protocol="tools"`, an unreadable snapshot). With
    `key_optional` (a model cache that may replay every call) a missing API key is not an
    error yet: `model` is then None and the model is loaded at the first cache miss.
    """
    wiki = open_source(context.wiki)
    try:
        model: BaseChatModel | None = load_chat_model(context.model)
    except MissingApiKeyError:
        if not key_optional:
            raise
        model = None
    if model is not None and context.protocol == "tools":
        bind_protocol_tools(model, context.task)
    return Resources(model=model, wiki=wiki)
