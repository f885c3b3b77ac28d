"""A model cache that replays: every model call and its reply in one SQLite file.

`--model-cache PATH` wraps the chat model in `CachedChatModel`. A call whose key is in
the file is answered from it (no model call); any other call goes to the model and is
stored. A call's key is its messages (with the tool calls and tool-call ids of the tools
protocol), the model's identity (its `--model` string; the client settings wikireact gives
that model, such as temperature 0 and 512 output tokens, come with it), the per-call
parameters (temperature, seed, and the bound tools), the stop sequences, and the call's
index (the step of an episode, the sample of CoT-SC). A reply is stored with its text,
token usage and tool calls, so tools-protocol runs replay like text ones.

Why not LangChain's own chat-model cache (`BaseChatModel(cache=...)`)? It keys a call on
the messages and the model object's parameters (`_get_llm_string`), which does not fit:
the call index is run metadata, not a parameter, so the 21 CoT-SC samples of one prompt
share one key on a model without a seed parameter (every sample would replay the first);
and the parameters of a scripted model include its whole script. The storage does use
LangChain's cache interface (`langchain_core.caches.BaseCache`): `SqliteModelCache` is
one, and any other (e.g. langchain-community's `SQLiteCache`) can be passed instead.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from langchain_core.caches import BaseCache
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult, Generation
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, PrivateAttr

from wikireact._json_text import parse_json
from wikireact.context import no_tool_calling
from wikireact.errors import ForeignFileError, ModelCacheError
from wikireact.models.call_metadata import CALL_INDEX_KEY
from wikireact.protocols.tools import storable_args
from wikireact.storage.sqlite.files import check_writable_as

_TABLE = "wikireact_model_cache"
_SCHEMA = f"CREATE TABLE IF NOT EXISTS {_TABLE}(key TEXT PRIMARY KEY, call TEXT NOT NULL, reply TEXT NOT NULL)"


class SqliteModelCache(BaseCache):
    """A `BaseCache` in one SQLite file: (prompt, llm_string) -> the reply's text and usage."""

    def __init__(self, path: Path) -> None:
        """Open (or create) the cache file; refuse a file that is not a wikireact model cache."""
        self.path = path
        self._lock = threading.Lock()
        try:
            check_writable_as(path, frozenset({_TABLE}))
        except ForeignFileError as exc:
            raise ModelCacheError(f"cannot use model cache {path}: {exc}") from None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(path, check_same_thread=False)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(_SCHEMA)
            self._conn.commit()
        except (sqlite3.Error, OSError) as exc:
            raise ModelCacheError(f"cannot use model cache {path}: {exc}") from None

    @staticmethod
    def _key(prompt: str, llm_string: str) -> str:
        return hashlib.sha256(json.dumps([prompt, llm_string]).encode()).hexdigest()

    def lookup(self, prompt: str, llm_string: str) -> Sequence[Generation] | None:
        """Return the stored reply of this call, or None; a row that holds none is a ModelCacheError."""
        with self._lock:
            row = self._conn.execute(
                f"SELECT rowid, reply FROM {_TABLE} WHERE key = ?", (self._key(prompt, llm_string),)
            ).fetchone()
        if row is None:
            return None
        try:
            reply = parse_json(row[1])
            message = AIMessage(
                content=reply["content"],
                usage_metadata=reply.get("usage_metadata"),
                tool_calls=reply.get("tool_calls", []),
                invalid_tool_calls=reply.get("invalid_tool_calls", []),
            )
        except (
            ValueError,
            TypeError,
            KeyError,
            AttributeError,
        ) as exc:  # pydantic's are ValueErrors
            detail = (str(exc).strip().splitlines() or [""])[0][:200]
            raise ModelCacheError(
                f"model cache {self.path}: row {row[0]} holds no readable reply "
                f"({type(exc).__name__}: {detail}); delete that row of {_TABLE} (or the file) "
                "to ask the model again"
            ) from None
        return [ChatGeneration(message=message)]

    def update(self, prompt: str, llm_string: str, return_val: Sequence[Generation]) -> None:
        """Store the reply of this call (its text and token usage)."""
        generation = return_val[0]
        message = (
            generation.message
            if isinstance(generation, ChatGeneration)
            else AIMessage(generation.text)
        )
        reply = {
            "content": message.content,
            "usage_metadata": getattr(message, "usage_metadata", None),
            **_calls_of(message),
        }
        with self._lock:
            self._conn.execute(
                f"INSERT OR REPLACE INTO {_TABLE}(key, call, reply) VALUES (?, ?, ?)",
                (self._key(prompt, llm_string), llm_string, json.dumps(reply, ensure_ascii=False)),
            )
            self._conn.commit()

    def clear(self, **kwargs: Any) -> None:
        """Forget every stored call."""
        with self._lock:
            self._conn.execute(f"DELETE FROM {_TABLE}")
            self._conn.commit()

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._conn.close()


def model_identity(spec: str) -> str:
    """Return the model's identity in cache keys: its `--model` string (a script by absolute path)."""
    spec = spec.strip()
    if spec.startswith("scripted:"):
        return "scripted:" + str(Path(spec.removeprefix("scripted:")).resolve())
    return spec


def call_key(
    identity: str,
    messages: Sequence[BaseMessage],
    stop: Sequence[str] | None,
    params: dict[str, Any],
    index: Any,
) -> tuple[str, str]:
    """Return a call's (prompt, llm_string) cache key."""
    prompt = json.dumps([_message_key(m) for m in messages], ensure_ascii=False, sort_keys=True)
    llm_string = json.dumps(
        {"model": identity, "stop": list(stop or []), "params": params, "call": index},
        sort_keys=True,
        default=str,
    )
    return prompt, llm_string


def _message_key(message: BaseMessage) -> list[Any]:
    """Return a message as part of a key: type, text, and the calls it makes or answers."""
    calls = getattr(message, "tool_calls", None)
    if calls:
        return [message.type, message.content, [[c["name"], c["args"], c["id"]] for c in calls]]
    if isinstance(message, ToolMessage):
        return [message.type, message.content, message.tool_call_id]
    return [message.type, message.content]  # as before tool calls were cached: old keys hold


def _calls_of(message: BaseMessage) -> dict[str, Any]:
    """Return a reply's tool calls as stored and replayed (arguments as the state keeps them)."""
    if not isinstance(message, AIMessage):
        return {}
    return {
        "tool_calls": [
            {"name": c["name"], "args": storable_args(c["args"]), "id": c["id"]}
            for c in message.tool_calls
        ],
        "invalid_tool_calls": [
            {**c, "args": storable_args(c.get("args"))} for c in message.invalid_tool_calls
        ],
    }


class CachedChatModel(BaseChatModel):
    """A chat model answered from `store` when it holds the call, else by the real model.

    The real model is built by `load_model` on the first miss, so a run whose calls are
    all cached replays with no key and no network.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    identity: str
    """The model's identity in keys (see `model_identity`)."""
    store: BaseCache
    """Where calls and replies are kept."""
    load_model: Callable[[], BaseChatModel]
    """Builds the real model (called at most once, on the first miss)."""
    prompt_variant: str = "default"
    """The real model's prompt variant (see `wikireact.models.variants`), known without loading it."""
    _model: BaseChatModel | None = PrivateAttr(default=None)
    _hits: int = PrivateAttr(default=0)
    _misses: int = PrivateAttr(default=0)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def __init__(self, **data: Any) -> None:
        """Build the wrapper; LangChain's own cache is switched off (this is the cache)."""
        super().__init__(**{**data, "cache": False})

    @property
    def _llm_type(self) -> str:
        return "wikireact-cached"

    def close(self) -> None:
        """Close the cache's storage (when it can be closed); the counts stay readable."""
        close = getattr(self.store, "close", None)
        if callable(close):
            close()

    @property
    def hits(self) -> int:
        """Calls answered from the cache."""
        return self._hits

    @property
    def misses(self) -> int:
        """Calls that went to the model."""
        return self._misses

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind `tools` to every call: they are part of its key, and reach the real model on a miss."""
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _real_model(self) -> BaseChatModel:
        with self._lock:
            if self._model is None:
                self._model = self.load_model()
            return self._model

    def _ask_real_model(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None,
        config: RunnableConfig,
        **kwargs: Any,
    ) -> BaseMessage:
        """Call the real model, with the bound tools bound to it too."""
        model = self._real_model()
        tools, tool_choice = kwargs.pop("tools", None), kwargs.pop("tool_choice", None)
        if tools is None:
            return model.invoke(messages, stop=stop, config=config, **kwargs)
        try:
            bound = model.bind_tools(tools, **({"tool_choice": tool_choice} if tool_choice else {}))
        except NotImplementedError:
            raise no_tool_calling(f"the model {self.identity}") from None
        return bound.invoke(messages, stop=stop, config=config, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        metadata = dict(getattr(run_manager, "metadata", None) or {})
        prompt, llm_string = call_key(
            self.identity, messages, stop, kwargs, metadata.get(CALL_INDEX_KEY)
        )
        cached = self.store.lookup(prompt, llm_string)
        if cached:
            with self._lock:
                self._hits += 1
            return ChatResult(generations=[_as_chat_generation(g) for g in cached])
        with self._lock:
            self._misses += 1
        config: RunnableConfig = {"metadata": metadata}  # the call index, the question id
        reply = self._ask_real_model(messages, stop, config, **kwargs)
        # Keep exactly what a replay returns, so a first run and its replay give the same records.
        message = AIMessage(
            content=reply.content,
            usage_metadata=getattr(reply, "usage_metadata", None),
            **_calls_of(reply),
        )
        generation = ChatGeneration(message=message)
        self.store.update(prompt, llm_string, [generation])
        return ChatResult(generations=[generation])


def _as_chat_generation(generation: Generation) -> ChatGeneration:
    if isinstance(generation, ChatGeneration):
        return generation
    return ChatGeneration(message=AIMessage(content=generation.text))
