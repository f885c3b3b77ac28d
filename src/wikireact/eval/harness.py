"""The evaluation harness: every method under the same model, budget and snapshot.

It runs questions concurrently in per-question checkpointed threads, and `--resume`
continues after a crash or Ctrl-C.

One configuration is resolved once, before any question runs: every field of the
episodes' `Context` comes from `EvalConfig` (no `WIKIREACT_*` variable applies; approval
is always off), and `settings.json` records every setting that can change a result.
`--resume` refuses a run whose recorded settings differ, naming them; settings that
cannot change a result (`RUN_ONLY`: concurrency, the model cache, file paths whose
contents are compared by hash) may differ.

Records are appended to `trajectories.jsonl` as questions finish; metrics are computed
from that file at the end, so a resumed run reports what an uninterrupted run would
(timings aside). `report.json` is written once, atomically, at the end.
"""

from __future__ import annotations

import json
import os
import platform
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION
from dataclasses import dataclass, fields
from functools import cache, partial
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver

from wikireact._json_text import json_line, json_objects, parse_json
from wikireact.agents import load_agent
from wikireact.agents.channels import agent_channels
from wikireact.context import (
    DEFAULT_KEEP_OBSERVATIONS,
    DEFAULT_MAX_STEPS,
    DEFAULT_OBSERVATION_CAP,
    DEFAULT_REPETITION_LIMIT,
    LIMIT_FIELDS,
    NUMBER_FIELDS,
    Context,
    Task,
    least,
)
from wikireact.errors import EvalError, JsonTextError, ThreadBusyError
from wikireact.eval.dataset import ORDERS, Item, Order, file_digest, load_dataset, sample
from wikireact.eval.method_names import agent_of
from wikireact.eval.methods import (
    EPISODE_METHODS,
    METHODS,
    Method,
    MethodSettings,
    episode_thread,
    register_episode,
    run_method,
)
from wikireact.eval.metrics import summarize
from wikireact.eval.turns import TurnFreeSource, Turns
from wikireact.eval.workers import DaemonPool, close_after, wait_interruptibly
from wikireact.models.cache import CachedChatModel
from wikireact.models.local.known_titles import applies
from wikireact.models.registry import MAX_OUTPUT_TOKENS, is_local
from wikireact.models.sampling import per_call_sampling
from wikireact.models.stack import close_stack, model_stack
from wikireact.models.variants import variant_for
from wikireact.prompting.exemplars import Need, PromptSet, load_prompts
from wikireact.state import ProtocolName
from wikireact.storage.retention import apply_policy, policy_from_env
from wikireact.storage.sqlite.threads import SqliteThreads
from wikireact.storage.threads import runner
from wikireact.wiki.base import WikiSource
from wikireact.wiki.factory import open_source

RECORDS = "trajectories.jsonl"
REPORT = "report.json"
SETTINGS = "settings.json"
RUN_ONLY = ("concurrency", "model_cache", "dataset", "prompts_file", "snapshot_source")
"""Recorded settings that cannot change a result: they may differ on `--resume`."""
THREAD_OPTIONS = {
    "context_tokens": "--context-tokens",
    "max_steps": "--max-steps",
    "max_model_calls": "--max-model-calls",
    "max_input_tokens": "--max-input-tokens",
    "max_output_tokens": "--max-output-tokens",
}
"""Recorded settings a single question's thread may continue with another value of: the
`wikireact resume` option that gives it (named by the refusal of a `--resume` changing them)."""
LIMITS_BEFORE = {
    "context_tokens": 0,
    "keep_observations": DEFAULT_KEEP_OBSERVATIONS,
    "max_model_calls": 0,
    "max_input_tokens": 0,
    "max_output_tokens": 0,
}
"""What a run recorded before these settings existed ran with: the model's own window (never
exceeded then), no budget beside the steps."""
NEEDS: dict[str, tuple[Need, ...]] = {
    "react": ("react",),
    "act": ("act",),
    "cot": ("cot",),
    "cot-sc": ("cot",),
    "standard": ("standard",),
    "react-cot-sc": ("react", "cot"),
    "cot-sc-react": ("react", "cot"),
    "rewoo": ("rewoo",),
}


@dataclass(frozen=True)
class EvalConfig:
    """Everything that defines an evaluation run (recorded in settings.json and the report)."""

    dataset: str
    method: Method
    model: str
    wiki: str
    limit: int | None = None
    sample_seed: int | None = 233
    seeds: int = 1
    concurrency: int = 8
    max_steps: int = DEFAULT_MAX_STEPS
    repetition_limit: int = DEFAULT_REPETITION_LIMIT
    observation_cap: int = DEFAULT_OBSERVATION_CAP
    sc_samples: int = 21
    sc_temperature: float = 0.7
    prompts: str | None = None
    """A prompt file in the ReAct paper's layout; None: wikireact's own exemplars."""
    prompts_keys: tuple[str, ...] = ()
    """Keys of the prompt file to use instead of the method's default keys."""
    model_cache: str | None = None
    """A SQLite model cache that records and replays every model call."""
    protocol: ProtocolName = "text"
    """How ReAct/Act episodes state actions: text lines or native tool calls."""
    task: Task = "hotpotqa"
    """hotpotqa: questions and short answers; fever: claims and their three labels."""
    order: Order = "paper"
    """Which questions `limit` takes: the paper's seeded sample, or the file's first ones."""
    verify_finish: bool = False
    """Send an unseen answer back once (`Context.verify_finish`); off: the paper's protocol."""
    known_titles: bool = True
    """A local model over a snapshot searches only its titles (`Context.known_titles`);
    recorded as it applies: off for live Wikipedia and a provider's model."""
    context_tokens: int = 0
    """The model's context window (0: its own); older observations are cleared to fit it."""
    keep_observations: int = DEFAULT_KEEP_OBSERVATIONS
    max_model_calls: int = 0
    """Per-episode budgets beside the steps (0: none, the paper's settings)."""
    max_input_tokens: int = 0
    max_output_tokens: int = 0

    def __post_init__(self) -> None:
        """Reject numbers that mean nothing, with a one-line reason."""
        if self.method not in METHODS:
            raise EvalError(f"unknown method {self.method!r}; choose one of {', '.join(METHODS)}")
        minimum = {
            "limit": 1,
            "seeds": 1,
            "concurrency": 1,
            "sc_samples": 1,
            **{name: least(name) for name in NUMBER_FIELDS},  # the episodes' own minimums
        }
        for name, smallest in minimum.items():
            value = getattr(self, name)
            if value is not None and value < smallest:
                raise EvalError(
                    f"--{name.replace('_', '-')} must be at least {smallest}, got {value}"
                )
        if self.order not in ORDERS:
            raise EvalError(f"--order must be one of {', '.join(ORDERS)}, got {self.order!r}")
        if self.protocol == "tools" and self.method not in EPISODE_METHODS:
            raise EvalError(
                f"--protocol tools applies to methods that run episodes "
                f"({', '.join(EPISODE_METHODS)}), not {self.method}"
            )
        if not 0.0 <= self.sc_temperature <= 2.0:
            raise EvalError(f"sc_temperature must be between 0 and 2, got {self.sc_temperature}")
        self.episode_context()  # settings the episodes refuse (e.g. the local model with tools) fail here

    def episode_context(self) -> Context:
        """Return the episodes' complete `Context`: every field set here, none from the environment."""
        values: dict[str, Any] = {
            "model": self.model,
            "wiki": self.wiki,
            "max_steps": self.max_steps,
            "repetition_limit": self.repetition_limit,
            "observation_cap": self.observation_cap,
            **{name: getattr(self, name) for name in LIMIT_FIELDS},
            "approve": False,
            "method": "act" if self.method == "act" else "react",
            "protocol": self.protocol,
            "task": self.task,
            "verify_finish": self.verify_finish,
            "known_titles": self.known_titles and applies(self.model, self.wiki),
        }
        unset = sorted({f.name for f in fields(Context)} - values.keys())
        if unset:  # a new Context field must be decided here, not read from the environment
            raise EvalError(f"the evaluation does not set Context field(s) {', '.join(unset)}")
        try:
            return Context(**values)
        except ValueError as exc:
            raise EvalError(str(exc)) from None


@cache  # installed versions do not change while the process runs (reading them costs ms)
def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in ("wikireact", "langgraph", "langchain-core", "langchain-groq", "wikipedia"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


def _snapshot_id(source: WikiSource) -> str:
    snapshot = getattr(source, "snapshot_id", None)
    return str(snapshot) if snapshot else f"{type(source).__name__} (live, not pinned)"


def _decoding(spec: str, model: BaseChatModel | None) -> dict[str, Any]:
    """Return the prompt variant and, for the local model, its decoding settings (not loading it)."""
    settings: dict[str, Any] = {"prompt_variant": variant_for(spec, model)}
    decoding = getattr(model, "decoding_settings", None)
    if callable(decoding):
        settings.update(decoding())
    elif model is None and is_local(spec):
        from wikireact.models.local.llama import LlamaCppChatModel

        settings.update(LlamaCppChatModel(model_path="").decoding_settings())
    return settings


def resolved_settings(
    config: EvalConfig,
    context: Context,
    prompts: PromptSet,
    sampling: dict[str, Any],
    snapshot_id: str,
) -> dict[str, Any]:
    """Return every setting of the run, as recorded in settings.json and the report."""
    settings: dict[str, Any] = {
        "dataset": config.dataset,
        "dataset_sha256": file_digest(Path(config.dataset)),
        "method": config.method,
        "model": config.model,
        "wiki": config.wiki,
        "snapshot_id": snapshot_id,
        "limit": config.limit,
        "sample_seed": config.sample_seed,
        "order": config.order,
        "seeds": config.seeds,
        **{
            f.name: getattr(context, f.name)
            for f in fields(Context)
            if f.name not in ("model", "wiki", "method")
        },
        "temperature": 0.0,
        "max_tokens": MAX_OUTPUT_TOKENS,
        "sampling": sampling,
        "sc_samples": config.sc_samples,
        "sc_temperature": config.sc_temperature,
        **prompts.summary(),
        "prompts_keys": prompts.keys,
        "concurrency": config.concurrency,
        "model_cache": config.model_cache,
    }
    return json.loads(json.dumps(settings))  # as read back from settings.json


def read_records(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """Return the records by (question id, seed).

    A torn last line from a crash, and any line that is not a record (not a JSON
    object with an id and a seed), is ignored: its question runs again.
    """
    records: dict[tuple[str, int], dict[str, Any]] = {}
    if path.exists():
        for record in json_objects(path.read_text(encoding="utf-8", errors="replace")):
            if isinstance(record.get("id"), str) and isinstance(record.get("seed"), int):
                records[(record["id"], record["seed"])] = record
    return records


def _prepare_out(out: Path, settings: dict[str, Any], resume: bool) -> None:
    stored = out / SETTINGS
    if stored.exists():
        if not resume:
            raise EvalError(f"{out} already holds an evaluation; pass --resume or another --out")
        try:
            previous = parse_json(stored.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, JsonTextError) as exc:
            raise EvalError(f"cannot resume {out}: {SETTINGS} is unreadable ({exc})") from None
        if not isinstance(previous, dict):
            raise EvalError(f"cannot resume {out}: {SETTINGS} is not a JSON object")
        previous.setdefault("task", "hotpotqa")  # runs recorded before FEVER were HotpotQA's
        previous.setdefault("order", "paper")  # and before --order, the paper's sample
        previous.setdefault("verify_finish", False)  # and before verify_finish, without it
        for name, before in LIMITS_BEFORE.items():  # and before the window and budgets: none
            previous.setdefault(name, before)
        previous.setdefault("known_titles", False)  # and before known_titles, without it
        changed = sorted(
            k
            for k in previous.keys() | settings.keys()
            if k not in RUN_ONLY and previous.get(k) != settings.get(k)
        )
        if changed:
            raise EvalError(_settings_differ(out, previous, settings, changed))
        stored.write_text(json.dumps(settings, indent=2), encoding="utf-8")  # this run's paths
        return
    out.mkdir(parents=True, exist_ok=True)
    stored.write_text(json.dumps(settings, indent=2), encoding="utf-8")


def _settings_differ(
    out: Path, previous: dict[str, Any], settings: dict[str, Any], changed: list[str]
) -> str:
    """Return the one-line refusal of a `--resume` with other settings, and the ways forward."""
    shown = ", ".join(
        f"{k}: {previous.get(k)!r} then, {settings.get(k)!r} now" for k in changed[:4]
    )
    message = (
        f"cannot resume {out}: settings differ ({shown}); a run's questions share its settings: "
        "for the new ones start a new run (another --out), or resume with the recorded ones"
    )
    option = next((THREAD_OPTIONS[k] for k in changed if k in THREAD_OPTIONS), None)
    if option is None:
        return message
    return (
        f"{message}; one question's thread goes on alone with "
        f"`wikireact resume THREAD --db {out / 'threads.db'} {option} N` (THREAD: "
        "method/seed/question id, e.g. react/0/ID)"
    )


def _ensure_line_start(records_path: Path) -> None:
    if records_path.exists() and records_path.stat().st_size:
        with records_path.open("rb") as existing:
            existing.seek(-1, os.SEEK_END)
            torn = existing.read(1) != b"\n"
        if torn:  # a crash cut the last line: start a fresh line so no record is glued to it
            with records_path.open("a", encoding="utf-8") as sink:
                sink.write("\n")


@dataclass(frozen=True)
class PreparedRun:
    """What every worker of a run needs, resolved once: items, settings, model, source, prompts."""

    config: EvalConfig
    context: Context
    items: list[Item]
    prompts: PromptSet
    source: WikiSource
    sampling: dict[str, Any]
    settings: dict[str, Any]
    model: BaseChatModel

    def method_settings(
        self, saver: BaseCheckpointSaver, thread_prefix: str = "", *, take_turns: bool = True
    ) -> MethodSettings:
        """Return what `run_method` needs, with the method's agent's graph checkpointed in `saver`.

        With `take_turns` and more than one worker, the workers compute one at a time and
        wait for the model and Wikipedia together (`wikireact.eval.turns`). A worker waits
        for its checkpoints' saves while it holds the turn: take turns only with a local
        saver (SQLite), not with one a network away. Nor with an agent whose graph runs a
        step's tasks on threads of its own (its config sets `max_concurrency`, e.g.
        ReWOO's fan-out): their waits would not give the turn up, so every other worker
        would wait for them.
        """
        build = load_agent(agent_of(self.config.method)).build_graph
        fans_out = "max_concurrency" in (build(saver).config or {})
        # an agent's own exemplars go to it only when its prompt file gave some
        extra = {"plan_exemplars": self.prompts.plans} if self.prompts.plans else {}
        turns = Turns() if take_turns and self.config.concurrency > 1 and not fans_out else None
        source = self.source if turns is None else TurnFreeSource(self.source, turns)
        return MethodSettings(
            model=self.model,
            graph=build(
                saver,
                model=self.model,
                wiki=source,
                exemplars=self.prompts.episodes or None,
                **extra,
            ),
            context=self.context,
            sc_samples=self.config.sc_samples,
            sc_temperature=self.config.sc_temperature,
            sampling=self.sampling,
            qa_exemplars=self.prompts.qa or None,
            thread_prefix=thread_prefix,
            turns=turns,
            snapshot_id=getattr(self.source, "snapshot_id", None),
        )


def prepare_run(
    config: EvalConfig, model: BaseChatModel | None, wiki: WikiSource | None
) -> PreparedRun:
    """Resolve what every worker of a run needs (single-process and shared runs alike)."""
    context = config.episode_context()
    items = sample(
        load_dataset(Path(config.dataset), config.task),
        config.limit,
        config.sample_seed,
        config.task,
        config.order,
    )
    prompts = load_prompts(
        Path(config.prompts) if config.prompts else None,
        NEEDS.get(config.method, ()),
        config.prompts_keys,
        config.task,
    )
    source = wiki or open_source(config.wiki)
    sampling = per_call_sampling(config.model, model)
    settings = resolved_settings(config, context, prompts, sampling, _snapshot_id(source))
    settings["snapshot_source"] = getattr(source, "snapshot_source", None)  # pinned by its id
    settings.update(_decoding(config.model, model))
    return PreparedRun(
        config,
        context,
        items,
        prompts,
        source,
        sampling,
        settings,
        model_stack(
            config.model,
            model=model,
            cache=Path(config.model_cache) if config.model_cache else None,
        ),
    )


def _run_questions(
    prepared: PreparedRun,
    store: SqliteThreads,
    todo: list[tuple[Item, int]],
    records_path: Path,
    on_record: Callable[[dict[str, Any]], None] | None,
    pool: DaemonPool,
) -> None:
    """Run `todo` on `pool`'s threads, appending each record as it comes.

    If a question fails, queued questions are cancelled, and the failure is raised once the
    questions already running have ended (their steps and records saved). On Ctrl-C it is
    raised at once and those run on in the background (the caller shuts `pool` down, and
    `close_after` closes the store and the model cache after `pool.unfinished()`).
    """
    config = prepared.config
    method_settings = prepared.method_settings(store.saver)
    keep = policy_from_env()  # WIKIREACT_KEEP, applied as each question ends
    lock = threading.Lock()
    with records_path.open("a", encoding="utf-8") as sink:

        def one(item: Item, seed: int) -> None:
            # The thread's run lock, as `ask` and `resume` take it: none of them runs it meanwhile.
            key = episode_thread(method_settings, config.method, seed, item)
            try:
                with runner(store, key):
                    register_episode(store, config.method, item, seed, method_settings)
                    record = run_method(config.method, item, seed, method_settings)
                    if keep is not None:
                        apply_policy(store, keep, channels_of=agent_channels, held={key})
            except ThreadBusyError:
                raise EvalError(
                    f"thread {key!r} in {store.location} is being run by another process "
                    "(`wikireact resume`?); wait until it stops, then continue with --resume"
                ) from None
            line = json_line(record)
            with lock:
                sink.write(line)
                sink.flush()
            # Outside the lock: questions finishing together wait for one disk flush, not a
            # queue of them; the record is on disk when this returns (its bytes were written).
            os.fsync(sink.fileno())
            if on_record:
                on_record(record)

        futures = [pool.submit(one, item, seed) for item, seed in todo]
        finished, _ = wait_interruptibly(futures, return_when=FIRST_EXCEPTION)
        failed = [f for f in finished if f.exception() is not None]
        if failed:
            # Nothing works in `out` once this raises (a --resume may follow): wait for the
            # questions running (the shutdown cancelled the others).
            pool.shutdown(cancel_futures=True)
            wait_interruptibly(pool.unfinished())
            raise failed[0].exception()  # type: ignore[misc]


def run_in_directory(
    config: EvalConfig,
    out: Path,
    *,
    resume: bool = False,
    model: BaseChatModel | None = None,
    wiki: WikiSource | None = None,
    on_record: Callable[[dict[str, Any]], None] | None = None,
    on_start: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Run (or resume) an evaluation whose checkpoints and records live in `out`."""
    prepared = prepare_run(config, model, wiki)
    items, settings, chat_model = prepared.items, prepared.settings, prepared.model
    try:
        _prepare_out(out, settings, resume)
        store = SqliteThreads(out / "threads.db")
    except BaseException:
        close_stack(chat_model)
        raise
    pool = DaemonPool(config.concurrency)
    records_path = out / RECORDS
    try:
        done = read_records(records_path)
        todo = [
            (item, seed)
            for seed in range(config.seeds)
            for item in items
            if (item.id, seed) not in done
        ]
        if on_start:
            on_start(len(items) * config.seeds, len(items) * config.seeds - len(todo))
        _ensure_line_start(records_path)
        _run_questions(prepared, store, todo, records_path, on_record, pool)
    finally:
        # Ctrl-C may land anywhere, even inside `submit`: the pool knows every question it
        # was given, and once shut down its unfinished ones are those running on the store.
        pool.shutdown(cancel_futures=True)
        close_after(pool.unfinished(), store.close, partial(close_stack, chat_model))
    wanted = {(item.id, seed) for seed in range(config.seeds) for item in items}
    records = [r for key, r in read_records(records_path).items() if key in wanted]
    report: dict[str, Any] = {
        "settings": {**settings, "versions": dict(_versions())},
        "metrics": summarize(records),
    }
    if isinstance(chat_model, CachedChatModel):
        report["model_cache"] = {
            "file": config.model_cache,
            "hits": chat_model.hits,
            "misses": chat_model.misses,
        }
    temp = out / (REPORT + ".tmp")
    temp.write_text(json.dumps(report, indent=2), encoding="utf-8")
    temp.replace(out / REPORT)
    return report
