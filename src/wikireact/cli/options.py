"""The options `ask` and `resume` share, with help that states each default."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from wikireact.agents import AGENTS
from wikireact.cli.approval import GATED
from wikireact.context import DEFAULT_MAX_STEPS, DEFAULT_MODEL, MAX_STEPS, least

AGENT_CHOICES = "|".join(AGENTS)
AgentOpt = Annotated[
    str,
    typer.Option(
        "--agent",
        metavar=AGENT_CHOICES,
        help="the agent that answers: react (one model call per step), rewoo (plan, run, "
        "answer: 2 model calls), ...",
    ),
]

ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        metavar="MODEL",
        show_default=f"env WIKIREACT_MODEL, else {DEFAULT_MODEL}",
        help="provider:model, local (offline Gemma 3 270M), local:PATH.gguf or scripted:FILE.json",
    ),
]
WikiOpt = Annotated[
    str | None,
    typer.Option(
        "--wiki",
        metavar="SOURCE",
        show_default="env WIKIREACT_WIKI, else live",
        help="live, offline, record:PATH.db or a snapshot PATH.db",
    ),
]
StepsOpt = Annotated[
    int | None,
    typer.Option(
        "--max-steps",
        metavar="N",
        show_default=f"env WIKIREACT_MAX_STEPS, else {DEFAULT_MAX_STEPS}",
        help=f"step budget ({least('max_steps')} to {MAX_STEPS})",
    ),
]
ContextTokensOpt = Annotated[
    int | None,
    typer.Option(
        "--context-tokens",
        metavar="N",
        show_default="env WIKIREACT_CONTEXT_TOKENS, else the model's own window",
        help="the model's context window in tokens; older observations are cleared from the "
        "prompt to fit it (a larger one continues a thread that ran out of context)",
    ),
]


def _budget_option(flag: str, what: str) -> Any:
    return typer.Option(
        flag,
        metavar="N",
        show_default="0: no limit",
        help=f"{what} an episode may use (nested episodes included); raising it continues a "
        "thread that ran out",
    )


MaxModelCallsOpt = Annotated[int | None, _budget_option("--max-model-calls", "model calls")]
MaxInputTokensOpt = Annotated[int | None, _budget_option("--max-input-tokens", "prompt tokens")]
MaxOutputTokensOpt = Annotated[int | None, _budget_option("--max-output-tokens", "reply tokens")]
DbOpt = Annotated[
    str | None,
    typer.Option(
        "--db",
        metavar="PATH|URL",
        show_default="threads.db in the per-user data dir (env WIKIREACT_DATA_DIR)",
        help="SQLite checkpoint file, or a postgresql:// URL",
    ),
]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="print one JSON object instead of the live view")
]
CacheOpt = Annotated[
    Path | None,
    typer.Option(
        "--model-cache",
        metavar="PATH",
        show_default="none",
        help="SQLite file that records every model call and replays the ones it holds",
    ),
]
OfflineOpt = Annotated[
    bool, typer.Option("--offline", help="= --wiki offline --model local: no network at all")
]
ApproveOpt = Annotated[
    bool | None,
    typer.Option(
        "--approve/--no-approve",
        show_default="env WIKIREACT_APPROVE, else off",
        help=f"ask y/n/edit before every action. {GATED}",
    ),
]
VerifyFinishOpt = Annotated[
    bool | None,
    typer.Option(
        "--verify-finish/--no-verify-finish",
        show_default="env WIKIREACT_VERIFY_FINISH, else on",
        help="send back, once, a Finish whose answer appears in no observation",
    ),
]
ProtocolOpt = Annotated[
    str | None,
    typer.Option(
        "--protocol",
        metavar="text|tools",
        show_default="env WIKIREACT_PROTOCOL, else text",
        help="text: Thought/Action lines (any model); tools: native tool calls (models with tool calling)",
    ),
]
TaskOpt = Annotated[
    str | None,
    typer.Option(
        "--task",
        metavar="hotpotqa|fever",
        show_default="env WIKIREACT_TASK, else hotpotqa",
        help="hotpotqa: answer a question; fever: label a claim SUPPORTS, REFUTES or NOT ENOUGH INFO",
    ),
]
MaxTrialsOpt = Annotated[
    int | None,
    typer.Option(
        "--max-trials",
        metavar="N",
        show_default="3",
        help="reflexion: at most N ReAct trials, a lesson written after each failed one",
    ),
]
MemoryOpt = Annotated[
    str | None,
    typer.Option(
        "--memory",
        metavar="off|question",
        show_default="question",
        help="reflexion: keep lessons in --db under the question for later runs (question), "
        "or in this run only (off)",
    ),
]
CandidatesOpt = Annotated[
    int | None,
    typer.Option(
        "--candidates",
        metavar="N",
        show_default="5",
        help="lats: candidate next steps per expansion (1 to 10)",
    ),
]
IterationsOpt = Annotated[
    int | None,
    typer.Option(
        "--max-iterations",
        metavar="N",
        show_default="10",
        help="lats: search iterations at most (each an expansion and its children's values)",
    ),
]
ReviewerOpt = Annotated[
    str | None,
    typer.Option(
        "--reviewer", metavar="NAME", help="your name, recorded with every approval decision"
    ),
]
# `resume` continues with the settings the thread started with unless told otherwise.
SAME = "as the thread started"
ResumeAgentOpt = Annotated[
    str | None,
    typer.Option(
        "--agent",
        metavar=AGENT_CHOICES,
        show_default="the thread's",
        help="the thread's agent (a thread keeps the agent it started with)",
    ),
]
ResumeModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        metavar="MODEL",
        show_default=SAME,
        help="provider:model, local, local:PATH.gguf or scripted:FILE.json",
    ),
]
ResumeWikiOpt = Annotated[
    str | None,
    typer.Option(
        "--wiki",
        metavar="SOURCE",
        show_default=SAME,
        help="live, offline, record:PATH.db or a snapshot PATH.db",
    ),
]
ResumeStepsOpt = Annotated[
    int | None,
    typer.Option(
        "--max-steps",
        metavar="N",
        show_default=SAME,
        help=f"step budget (at most {MAX_STEPS}); more than the steps used continues a thread "
        "that ran out of budget",
    ),
]
ResumeApproveOpt = Annotated[
    bool | None,
    typer.Option(
        "--approve/--no-approve",
        show_default=SAME,
        help=f"ask y/n/edit before every action. {GATED}",
    ),
]
# `eval` reads no WIKIREACT_* variable but the model's: its numbers default to `Context`'s
# own defaults (`wikireact.context.DEFAULT_*`, given where the command declares them) and
# are checked against `Context`'s minimums by `EvalConfig`.
EvalStepsOpt = Annotated[
    int, typer.Option(help=f"step budget of ReAct/Act ({least('max_steps')} to {MAX_STEPS})")
]
RepetitionOpt = Annotated[
    int,
    typer.Option(
        metavar="N",
        help="the n-th proposal of one action in one state ends an episode "
        f"(at least {least('repetition_limit')})",
    ),
]
ObservationCapOpt = Annotated[
    int,
    typer.Option(
        metavar="N",
        help="characters of an observation before it is truncated "
        f"(at least {least('observation_cap')})",
    ),
]
