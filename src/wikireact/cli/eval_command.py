"""`wikireact eval DATASET --method ...` (= `eval run`) and `wikireact eval report DIR...`."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from wikireact.cli.common import cli_message, errors, fail
from wikireact.cli.options import (
    CacheOpt,
    EvalStepsOpt,
    ModelOpt,
    ObservationCapOpt,
    RepetitionOpt,
)
from wikireact.context import (
    DEFAULT_MAX_STEPS,
    DEFAULT_MODEL,
    DEFAULT_OBSERVATION_CAP,
    DEFAULT_REPETITION_LIMIT,
)
from wikireact.eval.method_names import METHODS

if TYPE_CHECKING:
    from wikireact.episode.resources import Resources
    from wikireact.eval.harness import EvalConfig

# `eval -h` imports only the option definitions: the evaluation is imported when it runs.
console = Console()
# The comparison table is wide; when output is not a terminal, do not squeeze it to 80 columns.
wide = console if console.is_terminal else Console(width=220)


DbOpt = Annotated[
    str | None,
    typer.Option(
        "--db",
        metavar="URL",
        show_default="none: checkpoints in DIR/threads.db",
        help="postgresql:// URL: the run lives there and many workers may share it",
    ),
]


def _eval_limit(flag: str, help: str) -> Any:
    """Return an `eval run` option for a limit of `Context` (the environment is not read)."""
    return typer.Option(flag, metavar="N", help=help)


def _budget(what: str) -> str:
    return f"{what} per episode; 0: no limit (the paper's setting)"


ContextTokensOpt = Annotated[
    int,
    _eval_limit(
        "--context-tokens",
        "the model's context window in tokens, 0: its own; older observations are cleared "
        "from prompts to fit it",
    ),
]
MaxModelCallsOpt = Annotated[int, _eval_limit("--max-model-calls", _budget("model calls"))]
MaxInputTokensOpt = Annotated[int, _eval_limit("--max-input-tokens", _budget("prompt tokens"))]
MaxOutputTokensOpt = Annotated[int, _eval_limit("--max-output-tokens", _budget("reply tokens"))]
RunOpt = Annotated[
    str | None,
    typer.Option(
        "--run",
        metavar="NAME",
        show_default="the --out directory's name",
        help="the shared run's name",
    ),
]


def report_command(
    dirs: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="DIR...",
            help="output directories of runs (an unfinished one: reported as partial)",
            show_default=False,
        ),
    ] = None,
    paper: Annotated[
        bool, typer.Option("--paper", help="add the ReAct paper's Table 1 EM rows (PaLM-540B)")
    ] = False,
    plot: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="write EM/F1 per run to FILE.png or FILE.svg"),
    ] = None,
    html: Annotated[
        Path | None, typer.Option(metavar="FILE", help="write a self-contained trajectory browser")
    ] = None,
    wide_table: Annotated[
        bool, typer.Option("--wide", help="every metric, not only EM/F1/finish/steps")
    ] = False,
    db: DbOpt = None,
    run: RunOpt = None,
    out: Annotated[
        Path | None,
        typer.Option(
            metavar="DIR",
            show_default="a temporary directory",
            help="with --db: write the run's report.json and trajectories.jsonl here",
        ),
    ] = None,
) -> None:
    """Compare runs: tables with 95% intervals and paired tests, optionally a plot and a browser.

    A run without report.json (still going, or stopped) is reported from what it has recorded,
    marked partial. With --db URL --run NAME, the report of a shared run is rebuilt from the
    database first.
    """
    from wikireact.cli.report_command import eval_report
    from wikireact.errors import EvalError
    from wikireact.storage.threads import is_postgres_url

    with tempfile.TemporaryDirectory(prefix="wikireact-report-") as scratch:
        if db is not None:
            if dirs or not run or not is_postgres_url(db):
                fail("eval report --db postgresql://... takes --run NAME and no DIR")
            dirs = [out or Path(scratch)]
            _shared_report(db, run, dirs[0])
        if not dirs:
            fail("eval report needs at least one DIR (or --db URL --run NAME)")
        try:
            eval_report(
                [str(d) for d in dirs],
                console=wide,
                paper=paper,
                wide=wide_table,
                plot=plot,
                html=html,
            )
        except EvalError as exc:
            fail(cli_message(exc))


DEFAULT_CONCURRENCY = 8
LOCAL_CONCURRENCY = 1


def eval_command(
    dataset: Annotated[
        Path,
        typer.Argument(
            metavar="DATASET",
            help="HotpotQA-style .json or .jsonl questions; with --task fever, FEVER .jsonl claims",
            show_default=False,
        ),
    ],
    method: Annotated[
        str, typer.Option(metavar="METHOD", help=f"one of {', '.join(METHODS)}")
    ] = "react",
    limit: Annotated[
        int | None, typer.Option(metavar="N", show_default="all", help="number of questions")
    ] = None,
    sample_seed: Annotated[
        int,
        typer.Option(
            help="shuffle seed; 233 with --limit 500 = the paper's sample (FEVER: of the first "
            "7,405 claims, as the paper drew)"
        ),
    ] = 233,
    order: Annotated[
        str,
        typer.Option(
            metavar="paper|file",
            help="paper: --limit takes the --sample-seed shuffle's first N (the paper's sample); "
            "file: the file's first N, in its order",
        ),
    ] = "paper",
    seeds: Annotated[int, typer.Option(help="repeat every question with seeds 0..N-1")] = 1,
    concurrency: Annotated[
        int | None,
        typer.Option(
            metavar="N",
            show_default=f"{LOCAL_CONCURRENCY} with the local model, else {DEFAULT_CONCURRENCY}",
            help="questions in flight at once",
        ),
    ] = None,
    model: ModelOpt = None,
    wiki: Annotated[
        str, typer.Option(metavar="SOURCE", help="live, offline, record:PATH.db or PATH.db")
    ] = "offline",
    max_steps: EvalStepsOpt = DEFAULT_MAX_STEPS,
    repetition_limit: RepetitionOpt = DEFAULT_REPETITION_LIMIT,
    observation_cap: ObservationCapOpt = DEFAULT_OBSERVATION_CAP,
    context_tokens: ContextTokensOpt = 0,
    max_model_calls: MaxModelCallsOpt = 0,
    max_input_tokens: MaxInputTokensOpt = 0,
    max_output_tokens: MaxOutputTokensOpt = 0,
    sc_samples: Annotated[int, typer.Option(help="CoT-SC samples (the paper: 21)")] = 21,
    prompts: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            show_default="wikireact's own exemplars",
            help="few-shot exemplars: a prompt file in the ReAct paper's layout",
        ),
    ] = None,
    prompts_key: Annotated[
        list[str] | None,
        typer.Option(
            metavar="KEY", show_default="by method", help="key of --prompts to use (repeatable)"
        ),
    ] = None,
    model_cache: CacheOpt = None,
    out: Annotated[
        Path | None,
        typer.Option(
            metavar="DIR",
            show_default="eval-out/METHOD",
            help="output directory (FEVER runs: eval-out/fever-METHOD by default)",
        ),
    ] = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="continue an interrupted run in --out")
    ] = False,
    db: DbOpt = None,
    run: RunOpt = None,
    offline: Annotated[
        bool, typer.Option("--offline", help="= --model local --wiki offline")
    ] = False,
    protocol: Annotated[
        str,
        typer.Option(
            metavar="text|tools",
            help="how ReAct/Act episodes call actions: text lines or native tool calls",
        ),
    ] = "text",
    wide_table: Annotated[
        bool, typer.Option("--wide", help="every metric in the table, not only EM/F1/finish/steps")
    ] = False,
    task: Annotated[
        str,
        typer.Option(
            metavar="hotpotqa|fever",
            help="hotpotqa: questions, scored by EM/F1; fever: claims, scored by label accuracy",
        ),
    ] = "hotpotqa",
    verify_finish: Annotated[
        bool,
        typer.Option(
            "--verify-finish",
            help="send back, once, a Finish whose answer appears in no observation "
            "(without it: the paper's protocol)",
        ),
    ] = False,
    no_known_titles: Annotated[
        bool,
        typer.Option(
            "--no-known-titles",
            help="a local model over a snapshot may spell any Search title (default: only "
            "the snapshot's titles, `known_titles`)",
        ),
    ] = False,
) -> None:
    """Evaluate a method on the HotpotQA-style questions (or FEVER claims) in DATASET."""
    from wikireact.cli.eval_progress import EvalProgress
    from wikireact.errors import (
        ConfigurationError,
        DatasetError,
        EpisodeStoppedError,
        EvalError,
        LockLostError,
        ModelCacheError,
        PromptFileError,
    )
    from wikireact.eval.fever_report import confusion_table
    from wikireact.eval.harness import EvalConfig
    from wikireact.eval.report import categories_table, comparison_tables
    from wikireact.eval.run import run_eval
    from wikireact.eval.runs import Run
    from wikireact.models.registry import absolute_model_spec, is_local
    from wikireact.storage.threads import is_postgres_url
    from wikireact.wiki.factory import absolute_wiki_spec, shown_if_url

    if out is not None and (shown := shown_if_url(str(out))) is not None:
        fail(f"eval --out takes a folder, not a URL ({shown})")
    if run is not None and db is None:
        fail("--run names a shared run: it needs --db postgresql://...")
    if db is not None and not is_postgres_url(db):
        fail(
            "eval --db takes a postgresql:// URL (a run shared by many workers); "
            "without it, checkpoints are kept in --out/threads.db"
        )
    if offline:
        model, wiki = model or "local", "offline"
    # Resolved once: the only environment variable the evaluation reads is WIKIREACT_MODEL
    # (the default --model), and the resolved value is recorded in settings.json.
    model = absolute_model_spec(
        model or os.environ.get("WIKIREACT_MODEL", "").strip() or DEFAULT_MODEL
    )
    wiki = absolute_wiki_spec(wiki)
    if concurrency is None:  # local calls run one at a time anyway: more threads only wait
        concurrency = LOCAL_CONCURRENCY if is_local(model) else DEFAULT_CONCURRENCY
    try:
        config = EvalConfig(
            dataset=str(dataset.resolve()),
            method=method,  # type: ignore[arg-type]
            model=model,
            wiki=wiki,
            limit=limit,
            sample_seed=sample_seed,
            order=order,  # type: ignore[arg-type]
            seeds=seeds,
            concurrency=concurrency,
            max_steps=max_steps,
            repetition_limit=repetition_limit,
            observation_cap=observation_cap,
            sc_samples=sc_samples,
            prompts=str(prompts.resolve()) if prompts else None,
            prompts_keys=tuple(prompts_key or ()),
            model_cache=str(model_cache.resolve()) if model_cache else None,
            protocol=protocol,  # type: ignore[arg-type]
            task=task,  # type: ignore[arg-type]
            verify_finish=verify_finish,
            context_tokens=context_tokens,
            max_model_calls=max_model_calls,
            max_input_tokens=max_input_tokens,
            max_output_tokens=max_output_tokens,
            known_titles=not no_known_titles,
        )
    except EvalError as exc:
        fail(cli_message(exc))
    resources = _open_eval_resources(config)
    out = out or Path("eval-out") / (method if task == "hotpotqa" else f"{task}-{method}")
    try:
        score = "acc" if task == "fever" else "EM"
        with EvalProgress(method, errors, score=score) as progress:
            report = run_eval(
                config,
                out,
                resume=resume,
                db=db,
                run=run,
                on_start=progress.start,
                on_record=progress.record,
                model=resources.model,
                wiki=resources.wiki,
            )
    except KeyboardInterrupt:
        # Episodes in flight are checkpointed after every step and finished records are
        # already on disk; their worker threads are not waited for (`eval.workers`).
        fail(
            f"interrupted; progress is saved in {out}: continue with the same command and --resume",
            130,
        )
    except (EvalError, DatasetError, PromptFileError, ModelCacheError) as exc:
        fail(cli_message(exc))
    except LockLostError as exc:  # a shared run's worker: its message says how to go on
        fail(cli_message(exc), 1)
    except EpisodeStoppedError as exc:
        if isinstance(exc.__cause__, ConfigurationError):  # e.g. a model-cache row: fix it first
            fail(
                f"{str(exc.__cause__).rstrip('.')}. Finished questions are saved in {out}: once "
                "that is fixed, continue with --resume",
                1,
            )
        fail(
            f"{cli_message(exc).rstrip('.')}. Finished questions are saved in {out}: continue later with --resume",
            1,
        )
    finished = [Run(out, report, out.name)]
    for table in comparison_tables(finished, width=wide.width, wide=wide_table):
        wide.print(table)
    wide.print(categories_table(finished))
    confusion = confusion_table(finished)
    if confusion is not None:
        wide.print(confusion)
    console.print(
        Text(f"report: {out / 'report.json'}  trajectories: {out / 'trajectories.jsonl'}")
    )
    cache = report.get("model_cache")
    if cache:
        console.print(
            Text(f"model cache {cache['file']}: {cache['hits']} hits, {cache['misses']} misses")
        )


def _open_eval_resources(config: EvalConfig) -> Resources:
    """Resolve the evaluation's model and wiki once, so a bad setting fails before any question.

    With a model cache, a missing API key is not an error yet: a replay needs no model.
    """
    from wikireact.cli.resolve import open_resources

    return open_resources(config.episode_context(), key_optional=bool(config.model_cache))


def _shared_report(db: str, run: str, out: Path) -> dict[str, Any]:
    """Rebuild a shared run's report (an unfinished run's: partial) and write it into `out`."""
    from wikireact._extras import require
    from wikireact.errors import EvalError

    require("postgres", "PostgreSQL threads need")
    from wikireact.eval.shared_run import shared_report, write_report
    from wikireact.storage.postgres.threads import PostgresThreads

    store = PostgresThreads(db)
    try:
        report, records = shared_report(store, run, partial=True)
    except EvalError as exc:
        fail(cli_message(exc))
    finally:
        store.close()
    write_report(out, report, records)
    return report
