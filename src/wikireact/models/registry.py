"""Choose the chat model from a `provider:model` string.

- `groq:NAME` (the default, `groq:qwen/qwen3.6-27b`): langchain-groq, temperature 0, an
  explicit timeout and retry count (the Groq client retries 429/5xx/timeouts with
  exponential backoff and jitter, honouring `retry-after`; no retry is stacked on top).
- `local`: Gemma 3 270M run on the CPU by llama.cpp (no network, no key);
  `local:PATH.gguf`: your own GGUF model, run the same way (`wikireact.models.local.llama`).
- `scripted:FILE.json`: replays a script through `ScriptedChatModel`.
- any other `provider:model` that LangChain's `init_chat_model` knows.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from langchain_core.language_models import BaseChatModel

from wikireact.errors import MissingApiKeyError, ModelConfigurationError
from wikireact.models.local.spec import absolute_local_spec, local_path
from wikireact.models.local.spec import is_local as is_local  # re-exported

MODEL_TIMEOUT_S = 60.0
MODEL_MAX_RETRIES = 4
MAX_OUTPUT_TOKENS = 512

MISSING_GROQ_KEY = (
    "No GROQ_API_KEY is set, and the default model is Groq's {name}. Either set the key "
    "(export GROQ_API_KEY=...; free keys at console.groq.com), pick another provider with "
    "{other} (e.g. openai:gpt-4o-mini, with that provider's key and package), "
    "or run with no network and no key at all with {offline} (a tiny local model and the "
    "embedded Wikipedia snapshot)."
)
"""The refusal without a Groq key; `{other}`/`{offline}` name the settings (`GROQ_KEY_ADVICE`)."""
GROQ_KEY_ADVICE = {
    "library": {
        "other": 'build_graph(model="provider:model") or Context(model="provider:model")',
        "offline": 'Context(model="local", wiki="offline")',
    },
    "cli": {"other": "--model provider:model", "offline": "--offline"},
}


def load_chat_model(spec: str) -> BaseChatModel:
    """Build the chat model named by `spec`; raise ModelConfigurationError with one clear reason."""
    spec = spec.strip()
    if is_local(spec):
        from wikireact.models.local.llama import load_local_model

        return load_local_model(local_path(spec))
    if spec.startswith("scripted:"):
        path = Path(spec.removeprefix("scripted:"))
        try:
            return _load_script(str(path.resolve()), path.stat().st_mtime_ns)
        except (OSError, ValueError) as exc:
            raise ModelConfigurationError(f"cannot use script {path}: {exc}") from None
    provider, sep, name = spec.partition(":")
    if not sep or not provider or not name:
        raise ModelConfigurationError(
            f"model {spec!r} is not of the form provider:model (e.g. groq:qwen/qwen3.6-27b), "
            "local, local:PATH.gguf or scripted:FILE.json"
        )
    if provider == "groq":
        if not os.environ.get("GROQ_API_KEY"):
            raise MissingApiKeyError(
                MISSING_GROQ_KEY.format(name=name, **GROQ_KEY_ADVICE["library"]),
                cli=MISSING_GROQ_KEY.format(name=name, **GROQ_KEY_ADVICE["cli"]),
            )
        return _groq(name)
    return _other_provider(provider, name)


def absolute_model_spec(spec: str) -> str:
    """Return `spec` with a script's or a GGUF file's path made absolute, so any directory can resume it."""
    stripped = spec.strip()
    if stripped.startswith("scripted:"):
        return "scripted:" + os.path.abspath(stripped.removeprefix("scripted:"))
    return absolute_local_spec(spec)


@functools.lru_cache(maxsize=8)
def _load_script(path: str, mtime_ns: int) -> BaseChatModel:
    from wikireact.models.scripted import ScriptedChatModel  # each model class only when used

    return ScriptedChatModel.from_file(path)


@functools.lru_cache(maxsize=8)
def _groq(name: str) -> BaseChatModel:
    from langchain_groq import ChatGroq

    # Qwen 3.x on Groq accepts reasoning_effort="none" (answer without a thinking phase);
    # other Groq models take low/medium/high or nothing, so it is only sent to Qwen.
    return ChatGroq(
        model=name,
        temperature=0,
        max_tokens=MAX_OUTPUT_TOKENS,
        timeout=MODEL_TIMEOUT_S,
        max_retries=MODEL_MAX_RETRIES,
        reasoning_effort="none" if name.startswith("qwen/") else None,
    )


@functools.lru_cache(maxsize=8)
def _other_provider(provider: str, name: str) -> BaseChatModel:
    from langchain.chat_models import init_chat_model

    try:
        return init_chat_model(
            name,
            model_provider=provider,
            temperature=0,
            max_tokens=MAX_OUTPUT_TOKENS,
            timeout=MODEL_TIMEOUT_S,
            max_retries=MODEL_MAX_RETRIES,
        )
    except ImportError as exc:
        raise ModelConfigurationError(
            f"provider {provider!r} needs a package that is not installed ({exc.name or exc})"
        ) from None
    except Exception as exc:  # unknown provider, missing key, bad arguments
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelConfigurationError(f"cannot use model {provider}:{name}: {first_line}") from None
