"""The evaluation harness: every method under the same model, budget and snapshot.

It runs questions concurrently in per-question checkpointed threads, and `--resume`
continues after a crash or Ctrl-C.

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
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from wikireact.eval.dataset import file_digest, load_dataset, sample
from wikireact.eval.methods import Method, MethodSettings, run_method
from wikireact.eval.metrics import summarize
from wikireact.graph import build_graph
from wikireact.models import MAX_OUTPUT_TOKENS, load_chat_model
from wikireact.threads import ThreadStore
from wikireact.wiki.base import WikiSource
from wikireact.wiki.factory import open_source

RECORDS = "trajectories.jsonl"
REPORT = "report.json"
SETTINGS = "settings.json"


class EvalError(ValueError):
    """The evaluation cannot start or continue (bad output dir, settings mismatch)."""


@dataclass(frozen=True)
class EvalConfig:
    """Everything that defines an evaluation run (stored in the report)."""

    dataset: str
    method: Method
    model: str
    wiki: str
    limit: int | None = None
    sample_seed: int | None = 233
    seeds: int = 1
    concurrency: int = 8
    max_steps: int = 7
    sc_samples: int = 21
    sc_temperature: float = 0.7


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


def _sampling(model: BaseChatModel) -> dict[str, Any]:
    """Per-call sampling options the model accepts (a seed where the client supports one)."""
    return {"seed": 0} if type(model).__name__ in {"ChatGroq", "LlamaCppChatModel"} else {}


def read_records(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """Return the records by (question id, seed); a torn last line from a crash is ignored."""
    records: dict[tuple[str, int], dict[str, Any]] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            records[(record["id"], record["seed"])] = record
    return records


def _prepare_out(out: Path, config: EvalConfig, resume: bool) -> None:
    stored = out / SETTINGS
    if stored.exists():
        if not resume:
            raise EvalError(f"{out} already holds an evaluation; pass --resume or another --out")
        previous = json.loads(stored.read_text(encoding="utf-8"))
        if previous != asdict(config):
            changed = sorted(k for k in previous if previous[k] != asdict(config).get(k))
            raise EvalError(f"cannot resume {out}: settings differ ({', '.join(changed)})")
        return
    out.mkdir(parents=True, exist_ok=True)
    stored.write_text(json.dumps(asdict(config), indent=2), encoding="utf-8")


def run_eval(
    config: EvalConfig,
    out: Path,
    *,
    resume: bool = False,
    model: BaseChatModel | None = None,
    wiki: WikiSource | None = None,
    on_record: Callable[[dict[str, Any]], None] | None = None,
    on_start: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Run (or resume) an evaluation into `out` and return its report."""
    items = sample(load_dataset(Path(config.dataset)), config.limit, config.sample_seed)
    model = model or load_chat_model(config.model)
    source = wiki or open_source(config.wiki)
    _prepare_out(out, config, resume)
    store = ThreadStore(out / "threads.db")
    settings = MethodSettings(
        model=model, graph=build_graph(store.saver, model=model, wiki=source),
        max_steps=config.max_steps, sc_samples=config.sc_samples,
        sc_temperature=config.sc_temperature, sampling=_sampling(model),
    )
    done = read_records(out / RECORDS)
    todo = [(item, seed) for seed in range(config.seeds) for item in items if (item.id, seed) not in done]
    if on_start:
        on_start(len(items) * config.seeds, len(items) * config.seeds - len(todo))
    lock = threading.Lock()
    records_path = out / RECORDS
    if records_path.exists() and records_path.stat().st_size:
        with records_path.open("rb") as existing:
            existing.seek(-1, os.SEEK_END)
            torn = existing.read(1) != b"\n"
        if torn:  # a crash cut the last line: start a fresh line so no record is glued to it
            with records_path.open("a", encoding="utf-8") as sink:
                sink.write("\n")
    with records_path.open("a", encoding="utf-8") as sink:

        def one(item: Any, seed: int) -> None:
            record = run_method(config.method, item, seed, settings)
            with lock:
                sink.write(json.dumps(record, ensure_ascii=False) + "\n")
                sink.flush()
                os.fsync(sink.fileno())
            if on_record:
                on_record(record)

        pool = ThreadPoolExecutor(max_workers=max(config.concurrency, 1))
        try:
            futures = [pool.submit(one, item, seed) for item, seed in todo]
            finished, _ = wait(futures, return_when=FIRST_EXCEPTION)
            failed = [f for f in finished if f.exception() is not None]
            if failed:
                raise failed[0].exception()  # type: ignore[misc]
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
    store.close()
    wanted = {(item.id, seed) for seed in range(config.seeds) for item in items}
    records = [r for key, r in read_records(out / RECORDS).items() if key in wanted]
    report = {
        "settings": {**asdict(config), "temperature": 0.0, "max_tokens": MAX_OUTPUT_TOKENS,
                     "dataset_sha256": file_digest(Path(config.dataset)),
                     "snapshot_id": _snapshot_id(source), "versions": _versions()},
        "metrics": summarize(records),
    }
    temp = out / (REPORT + ".tmp")
    temp.write_text(json.dumps(report, indent=2), encoding="utf-8")
    temp.replace(out / REPORT)
    return report
