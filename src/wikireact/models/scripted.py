"""`ScriptedChatModel`: a chat model that replays scripted outputs (tests, demos, bug reports).

The i-th model call of an episode gets output i. The index comes from the episode's
own history (the `reason` node passes it as run metadata), not from a per-process
counter, so a resumed episode continues its script where it stopped. Calls without
that metadata (e.g. outside the graph) use an internal counter.

A script can also hold one list of outputs per question, `{question_id: [outputs], ...}`:
a call uses the list of its question's id (run metadata `wikireact_question_id`, set by
the evaluation), else the list keyed by the question's text (its last `Question: ...`
or `Claim: ...` message), so each question of a scripted evaluation gets its own trajectory.

A script file may hold calls until a file exists (`hold_until`, after `hold_after` calls), so a
test can stop a process at a known point and let it go on, waiting on no timing.

An output is the model's text, or (tools protocol) a tool call such as
`{"tool": "search", "args": {"title": "Ed Wood"}, "content": "thought"}`, several as
`{"tool_calls": [...]}`, or an `AIMessage` with `tool_calls`.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import ConfigDict, Field, PrivateAttr

from wikireact._json_text import parse_json
from wikireact.errors import JsonTextError, ScriptExhaustedError
from wikireact.models.call_metadata import CALL_INDEX_KEY, QUESTION_ID_KEY
from wikireact.prompting.counting import MessageCounts
from wikireact.protocols.tools import is_script_output, script_message

ScriptOutput = str | dict[str, Any] | AIMessage
"""One scripted reply: text, a tool-call dict, or an AIMessage."""
_Output = Annotated[ScriptOutput, Field(union_mode="left_to_right")]
"""A reply as a field: a dict stays a dict (pydantic's default "smart" union also tries to build
an AIMessage from it, whose validator raises TypeError on `{"tool_calls": [{"tool": ...}]}`)."""
MAX_DELAY_S = 3600
"""The longest wait a script may ask for before each reply (`time.sleep` overflows far above)."""
HOLD_POLL_S = 0.05
"""How often a held call looks for its `hold_until` file."""


def count_tokens(text: str) -> int:
    """Return a cheap, deterministic token estimate (whitespace-separated words)."""
    return len(text.split())


PROMPT_TOKENS = MessageCounts(lambda message: count_tokens(str(message.content)))
"""`count_tokens` summed over a prompt's messages, each message object counted once: a prompt
repeats every earlier step's messages (`wikireact.prompting.counting`)."""


class ScriptedChatModel(BaseChatModel):
    """Replays `outputs` in order, honouring `stop`, reporting usage, optionally slow or failing."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    outputs: list[_Output] = Field(default_factory=list)
    """The outputs, one per model call of an episode (text, or a tool-call dict or AIMessage)."""
    by_question: dict[str, list[_Output]] = Field(default_factory=dict)
    """Per-question outputs, keyed by question id or question text (used instead of `outputs`)."""
    delay_s: float = Field(default=0.0, ge=0, le=MAX_DELAY_S)
    """Seconds to wait on every call (to imitate a real model's latency), at most `MAX_DELAY_S`."""
    errors: dict[int, Any] = Field(default_factory=dict)
    """Call index -> exception (instance, or a callable returning one) to raise on that call."""
    hold_until: str | None = None
    """A file: after the first `hold_after` calls, every call waits until the file exists
    (a test holds a process at a known point, then lets it go on, with no timing)."""
    hold_after: int = Field(default=0, ge=0)
    """Calls (to this model, in this process) that pass before `hold_until` holds the rest."""
    context_window: int | None = Field(default=None, gt=0)
    """Tokens (as `count_tokens` counts them) the model takes, prompt and reply; None: no limit.
    A longer prompt raises llama.cpp's error, as a local model would."""
    max_tokens: int = Field(default=50, gt=0)
    """Tokens kept for a reply under `context_window`."""

    def count_prompt_tokens(self, messages: Sequence[BaseMessage]) -> int:
        """Return a prompt's tokens as this model counts them (and reports as `input_tokens`)."""
        return PROMPT_TOKENS(messages)

    _fallback_calls: int = PrivateAttr(default=0)
    _calls_seen: int = PrivateAttr(default=0)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedChatModel:
        """Load a script: a JSON list of outputs, `{"outputs": [...], "delay_s": 0.2}`, or per question.

        Per question: `{question_id_or_text: [outputs], ...}`, or that mapping as `"outputs"`.
        """
        try:
            data = parse_json(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ValueError(f"script file not found: {path}") from None
        except (OSError, UnicodeDecodeError, JsonTextError) as exc:
            raise ValueError(f"cannot read script file {path}: {exc}") from None
        if isinstance(data, list):
            data = {"outputs": data}
        if isinstance(data, Mapping) and "outputs" not in data:
            data = {"outputs": data}
        if isinstance(data, Mapping) and isinstance(data["outputs"], Mapping):
            scripts = data["outputs"]
            if not scripts or not all(_is_output_list(v) and v for v in scripts.values()):
                raise ValueError(
                    f"script file {path}: every question needs a non-empty list of outputs"
                )
            return cls(
                by_question={str(k): list(v) for k, v in scripts.items()},
                delay_s=_delay_s(data, path),
                **_hold(data, path),
            )
        if not isinstance(data, Mapping) or not _is_output_list(data.get("outputs")):
            raise ValueError(
                f"script file {path} must hold a list of outputs (strings or tool calls "
                f'like {{"tool": "search", "args": {{"title": "..."}}}}) '
                f'or {{"outputs": [...]}}'
            )
        if not data["outputs"]:
            raise ValueError(f"script file {path} holds no outputs; give at least one")
        return cls(outputs=list(data["outputs"]), delay_s=_delay_s(data, path), **_hold(data, path))

    @property
    def _llm_type(self) -> str:
        return "wikireact-scripted"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Accept tools (the script decides the calls; the tools are not used)."""
        return self.bind(tools=list(tools), **kwargs)

    def _index(
        self, run_manager: CallbackManagerForLLMRun | AsyncCallbackManagerForLLMRun | None
    ) -> int:
        metadata = getattr(run_manager, "metadata", None) or {}
        if CALL_INDEX_KEY in metadata:
            return int(metadata[CALL_INDEX_KEY])
        with self._lock:
            index = self._fallback_calls
            self._fallback_calls += 1
        return index

    def _held(self) -> bool:
        """Count this call; return whether it must wait for `hold_until` to exist."""
        if self.hold_until is None:
            return False
        with self._lock:
            seen = self._calls_seen
            self._calls_seen += 1
        return seen >= self.hold_after and not Path(self.hold_until).exists()

    def _script(
        self,
        run_manager: CallbackManagerForLLMRun | AsyncCallbackManagerForLLMRun | None,
        messages: Sequence[BaseMessage],
    ) -> list[ScriptOutput]:
        """Return the outputs for this call: `outputs`, or its question's (by id, else by text)."""
        if not self.by_question:
            return self.outputs
        metadata = getattr(run_manager, "metadata", None) or {}
        question_id = metadata.get(QUESTION_ID_KEY)
        if question_id is not None and str(question_id) in self.by_question:
            return self.by_question[str(question_id)]
        asked = next(
            (
                str(m.content).split(": ", 1)[1]
                for m in reversed(messages)
                if m.type == "human" and str(m.content).startswith(("Question: ", "Claim: "))
            ),
            None,
        )
        if asked is not None and asked in self.by_question:
            return self.by_question[asked]
        raise ScriptExhaustedError(
            f"the script has no outputs for question {question_id or asked!r}"
        )

    def _respond(
        self,
        index: int,
        messages: Sequence[BaseMessage],
        stop: list[str] | None,
        outputs: list[ScriptOutput] | None = None,
    ) -> ChatResult:
        outputs = self.outputs if outputs is None else outputs
        if index in self.errors:
            error = self.errors[index]
            raise error() if callable(error) and not isinstance(error, BaseException) else error
        if index >= len(outputs):
            raise ScriptExhaustedError(
                f"the script has {len(outputs)} outputs; call {index + 1} has none"
            )
        output = outputs[index]
        scripted = (
            AIMessage(content=output)
            if isinstance(output, str)
            else output
            if isinstance(output, AIMessage)
            else script_message(output, index)
        )
        text = str(scripted.text)
        for token in stop or []:
            cut = text.find(token)
            if cut != -1:
                text = text[:cut]
        prompt = self.count_prompt_tokens(messages)
        if self.context_window is not None and prompt + self.max_tokens > self.context_window:
            raise ValueError(
                f"Requested tokens ({prompt}) exceed context window of {self.context_window}"
            )
        produced = count_tokens(text) + sum(
            count_tokens(str(c["args"])) for c in scripted.tool_calls
        )
        usage = {
            "input_tokens": prompt,
            "output_tokens": produced,
            "total_tokens": prompt + produced,
        }
        message = scripted.model_copy(update={"content": text, "usage_metadata": usage})
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        index = self._index(run_manager)
        outputs = self._script(run_manager, messages)
        if self._held():
            while not Path(str(self.hold_until)).exists():
                time.sleep(HOLD_POLL_S)
        if self.delay_s:
            time.sleep(self.delay_s)
        return (
            self._respond(index, messages, stop, outputs)
            if self.by_question
            else self._respond(index, messages, stop)
        )

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        index = self._index(run_manager)
        outputs = self._script(run_manager, messages)
        if self._held():
            while not Path(str(self.hold_until)).exists():
                await asyncio.sleep(HOLD_POLL_S)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        return (
            self._respond(index, messages, stop, outputs)
            if self.by_question
            else self._respond(index, messages, stop)
        )


def _delay_s(data: Mapping[str, Any], path: str | Path) -> float:
    """Return a script's `delay_s`, refusing anything but a number of seconds in [0, MAX_DELAY_S]."""
    delay_s = data.get("delay_s", 0.0)
    if (
        isinstance(delay_s, bool)
        or not isinstance(delay_s, int | float)
        or not 0 <= delay_s <= MAX_DELAY_S
    ):
        raise ValueError(
            f"script file {path}: delay_s must be a number of seconds from 0 to {MAX_DELAY_S}, "
            f"got {delay_s!r}"
        )
    return float(delay_s)


def _is_output_list(value: object) -> bool:
    return isinstance(value, list) and all(is_script_output(v) for v in value)


def _hold(data: Mapping[str, Any], path: str | Path) -> dict[str, Any]:
    """Return a script's `hold_until` (a file path) and `hold_after` (calls before holding)."""
    until, after = data.get("hold_until"), data.get("hold_after", 0)
    if until is None:
        return {}
    if (
        not isinstance(until, str)
        or isinstance(after, bool)
        or not isinstance(after, int)
        or after < 0
    ):
        raise ValueError(
            f"script file {path}: hold_until must be a file path and hold_after a whole number "
            f"of calls, got {until!r} and {after!r}"
        )
    return {"hold_until": until, "hold_after": after}
