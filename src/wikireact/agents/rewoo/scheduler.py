"""`schedule`: record the steps that finished, then choose the next round of steps to run.

It runs after the plan and after every round of workers. First it records, in plan
order, each step whose worker returned (its evidence, the page a Search opened, the
cursors a Lookup moved). Then it picks every step whose evidence it waits for is
recorded, substitutes the cited `#E<k>` (capped like observations), and either settles
it here, without a worker, or puts it in the next round (`round`), which the graph fans
out to workers with `Send`: independent steps run at the same time.

Settled here (nothing is executed):
- an input that is not a valid Search/Lookup argument after substitution: `invalid`;
- a repeat (`wikireact.wiki.repetition`: the same action in the same environment state as
  an earlier step; a Search's state is no open page, a Lookup's its page and cursor): its
  evidence is the earlier step's. The `repetition_limit`-th proposal of one action ends the
  episode as `repetition_halted`, as in ReAct.

An LLM step whose prompt could not fit the model's window (its result has a
`stop_reason`) is not recorded: the episode stops `context_exhausted`, nothing more is
dispatched, and a later run (a larger window) sends the step again.

A model-call or token budget reached (`budgets`: counting the recorded steps) ends the
episode `budget_exhausted`, nothing more dispatched; a round never holds more LLM steps
than the calls the budget leaves.

Limits of a round: one Lookup per page (its cursor moves), and with approval on one Search
or Lookup (the reviewer answers one proposal at a time; LLM steps still run beside it).

An LLM step's input gets the evidence it cites fenced (`prompts.fenced`: it is page text
the model reads); a Search/Lookup's gets it as written (it is the title or keyword).

Before choosing a round it checks that the round (`work`, then `schedule` again) fits in
the run's recursion limit, and before solving that `solve` does (`limits`); when the next
part does not fit the episode stops with status `recursion_limit`, nothing dispatched, and
a later run continues here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langgraph.runtime import Runtime

from wikireact.agents.rewoo.budgets import calls_left, spent
from wikireact.agents.rewoo.limits import NEXT_NODE, ROUND_SUPERSTEPS, UNLIMITED
from wikireact.agents.rewoo.plan import substitute
from wikireact.agents.rewoo.prompts import fenced
from wikireact.agents.rewoo.records import Recorder
from wikireact.agents.rewoo.state import PlannedStep, RewooState, StepResult, Task
from wikireact.context import Context
from wikireact.episode.recursion import has_room
from wikireact.episode.stored_context import settle
from wikireact.nodes.window import reopened
from wikireact.protocols.text import Action, make_action
from wikireact.state import ActionDict, State, Status
from wikireact.wiki.repetition import state_key

SEARCHING = ("Search", "Lookup")


def name_of(number: int) -> str:
    """Return the evidence name of step `number` (`#E1`)."""
    return f"#E{number}"


@dataclass
class Board:
    """What the scheduler knows and changes in one run (copied from the state, written back)."""

    plan: list[PlannedStep]
    results: dict[str, StepResult]
    evidence: dict[str, str]
    recorded: list[int]
    dispatched: list[int]
    cursors: dict[str, dict[str, int]]
    proposals: dict[str, list[int]]
    pages_read: list[str]
    settled: dict[str, StepResult] = field(default_factory=dict)
    halted: bool = False

    @classmethod
    def of(cls, state: RewooState) -> Board:
        """Copy what the scheduler reads from `state`."""
        return cls(
            plan=list(state.get("plan") or []),
            results=dict(state.get("results") or {}),
            evidence=dict(state.get("evidence") or {}),
            recorded=list(state.get("recorded") or []),
            dispatched=list(state.get("dispatched") or []),
            cursors={k: dict(v) for k, v in (state.get("cursors") or {}).items()},
            proposals={k: list(v) for k, v in (state.get("proposals") or {}).items()},
            pages_read=list(state.get("pages_read") or []),
        )

    def record(self, step: PlannedStep, result: StepResult, recorder: Recorder) -> None:
        """Record a finished step: its evidence, its page or cursors, and its trajectory entry."""
        name = name_of(step["number"])
        self._rekey(step["number"], result)
        self.evidence[name] = result["evidence"]
        self.recorded.append(step["number"])
        title = result["page_title"]
        if step["tool"] == "Search" and title is not None and title not in self.pages_read:
            self.pages_read.append(title)
        if step["tool"] == "Lookup" and step["page_of"] is not None:
            self.cursors[name_of(step["page_of"])] = dict(result["cursors"])
        action = result["action"]
        parsed = None if result["kind"] == "invalid" else _action_dict(step["tool"], action)
        recorder.add(
            result["kind"],
            thought=step["thought"],
            action_text=action,
            observation=result["evidence"],
            raw=f"{name} = {step['tool']}[{step['text']}]",
            action=parsed,
            input_tokens=result["input_tokens"],
            output_tokens=result["output_tokens"],
            wiki_requests=result["wiki_requests"],
            started_at=result["started_at"],
            ended_at=result["ended_at"],
            approval=result["approval"],
            shown=result.get("shown"),
            model_seconds=result.get("model_seconds", 0.0),
        )

    def _rekey(self, number: int, result: StepResult) -> None:
        """Count an edited step under the reviewer's action (its key), not the planned one."""
        key = result["state_key"]
        if result["kind"] != "executed" or key is None or number in self.proposals.get(key, []):
            return
        for numbers in self.proposals.values():
            if number in numbers:
                numbers.remove(number)
        self.proposals[key] = [*self.proposals.get(key, []), number]


def schedule(state: RewooState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Record the last round's steps and choose the next round (see the module docstring)."""
    context = settle(state.get("context"), runtime.context)
    board = Board.of(state)
    recorder = Recorder(state.get("steps", 0))
    stopped: str | None = None
    for step in board.plan:
        number = step["number"]
        name = name_of(number)
        if number in board.dispatched and number not in board.recorded and name in board.results:
            if "stop_reason" in board.results[name]:  # its prompt did not fit: sent again later
                board.dispatched.remove(number)
                stopped = board.results[name].get("stop_reason")
                continue
            board.record(step, board.results[name], recorder)
    gated = context.approve or bool((state.get("context") or {}).get("approve"))
    remaining = state.get("remaining_steps", UNLIMITED)
    room_for_round = has_room(remaining, ROUND_SUPERSTEPS)
    reason = spent(state, context, recorder.usage)  # the round's LLM calls count already
    choosing = room_for_round and stopped is None and reason is None
    llm_room = calls_left(state, context)
    tasks = Round(board, context, gated, state, recorder, llm_room).choose() if choosing else []
    waiting = any(step["number"] not in board.recorded for step in board.plan)
    out_of_room = not tasks and (
        (waiting and not room_for_round) or not has_room(remaining, NEXT_NODE)
    )
    status: Status = (
        "repetition_halted"
        if board.halted
        else "context_exhausted"
        if stopped is not None
        else "budget_exhausted"
        if reason is not None
        else "recursion_limit"
        if out_of_room
        else "running"
    )
    recorder.emit(runtime, status)
    update: dict[str, Any] = {
        "results": board.settled,
        "evidence": {
            name_of(n): board.evidence[name_of(n)]
            for n in board.recorded
            if name_of(n) not in (state.get("evidence") or {})
        },
        "recorded": board.recorded,
        "dispatched": board.dispatched,
        "cursors": board.cursors,
        "proposals": board.proposals,
        "pages_read": board.pages_read,
        "round": tasks if status == "running" else [],
        "status": status,
        **({"stop_reason": stopped or reason} if stopped or reason else reopened(state)),
        **recorder.update(),
    }
    return update


@dataclass
class Round:
    """Chooses the next round of steps (and settles the steps that need no worker)."""

    board: Board
    context: Context
    gated: bool
    state: RewooState
    recorder: Recorder
    llm_room: int | None = None
    """LLM steps the call budget leaves for this round (None: no call budget)."""
    tasks: list[Task] = field(default_factory=list)
    lookup_pages: set[int | None] = field(default_factory=set)
    llm_calls: int = 0

    def choose(self) -> list[Task]:
        """Return the round's tasks, settling repeats and invalid inputs until nothing changes."""
        changed = True
        while changed and not self.board.halted:
            changed = False
            for step in self.board.plan:
                if self.board.halted:
                    break
                if step["number"] in self.board.dispatched or not self._ready(step):
                    continue
                changed |= self._consider(step)
        return self.tasks

    def _ready(self, step: PlannedStep) -> bool:
        return all(n in self.board.recorded for n in step["needs"])

    def _consider(self, step: PlannedStep) -> bool:
        """Dispatch or settle `step` if it can be now; return whether something was recorded."""
        if step["tool"] == "LLM":
            if self.llm_room is not None and self.llm_calls >= self.llm_room:
                return False  # no call past the budget: a run that raises it sends the step
            argument = substitute(step["text"], self.board.evidence, fenced)
            self._dispatch(step, argument, None)
            return False
        argument = substitute(step["text"], self.board.evidence)
        made = make_action(step["tool"], argument, argument[:200])  # type: ignore[arg-type]
        if not isinstance(made, Action):
            self._settle(
                step, _result("invalid", f"{step['tool']}[{argument[:200]}]", made.message)
            )
            return True
        page = self._page(step)
        key = state_key(
            ActionDict(name=made.name, argument=made.argument),
            State(  # type: ignore[typeddict-item]
                page_title=page[0], lookup_cursors=page[2], page_key=None
            ),
        )
        earlier = self.board.proposals.get(key or "", [])
        if earlier:
            original = earlier[0]
            if original not in self.board.recorded:
                return False  # its evidence is not in yet: settle it in a later round
            self.board.proposals[key or ""] = [*earlier, step["number"]]
            if len(earlier) + 1 >= self.context.repetition_limit:
                self.board.halted = True
            source = self.board.results.get(name_of(original)) or _result("executed", "", "")
            repeat = StepResult(
                **{
                    **source,
                    "kind": "repeat",
                    "action": str(made),
                    "evidence": self.board.evidence[name_of(original)],
                    "cursors": dict(page[2]),
                    "state_key": key,
                    "wiki_requests": 0,
                    "started_at": None,
                    "ended_at": None,
                    "approval": None,
                }
            )
            self._settle(step, repeat)
            return True
        if made.name == "Lookup" and step["page_of"] in self.lookup_pages:
            return False  # one Lookup per page per round: its cursor moves
        if self.gated and any(t["tool"] in ("Search", "Lookup") for t in self.tasks):
            return False  # the reviewer answers one proposal at a time
        self.board.proposals[key or ""] = [step["number"]]
        if made.name == "Lookup":
            self.lookup_pages.add(step["page_of"])
        self._dispatch(step, made.argument, key, page)
        return False

    def _page(self, step: PlannedStep) -> tuple[str | None, list[str], dict[str, int]]:
        """Return the title, sentences and cursors of the page a Lookup reads (none for a Search)."""
        if step["tool"] != "Lookup" or step["page_of"] is None:
            return None, [], {}
        search = self.board.results.get(name_of(step["page_of"]))
        if search is None:
            return None, [], {}
        cursors = self.board.cursors.get(name_of(step["page_of"]), {})
        return search["page_title"], list(search["sentences"]), cursors

    def _dispatch(
        self,
        step: PlannedStep,
        argument: str,
        key: str | None,
        page: tuple[str | None, list[str], dict[str, int]] = (None, [], {}),
    ) -> None:
        self.board.dispatched.append(step["number"])
        index = self.state.get("model_calls", 0) + self.llm_calls
        if step["tool"] == "LLM":
            self.llm_calls += 1
        self.tasks.append(
            Task(
                number=step["number"],
                tool=step["tool"],
                argument=argument,
                thought=step["thought"],
                question=str(self.state.get("question")),
                context=dict(self.state.get("context") or {}),
                call_index=index,
                state_key=key,
                page_title=page[0],
                sentences=page[1],
                cursors=page[2],
                step=self.recorder.steps + len(self.tasks) + 1,
            )
        )

    def _settle(self, step: PlannedStep, result: StepResult) -> None:
        self.board.dispatched.append(step["number"])
        self.board.settled[name_of(step["number"])] = result
        self.board.results[name_of(step["number"])] = result
        self.board.record(step, result, self.recorder)


def _result(kind: Any, action: str, evidence: str) -> StepResult:
    """Return a result with nothing run (no page, no tokens, no requests, no times)."""
    return StepResult(
        kind=kind,
        action=action,
        evidence=evidence if kind != "invalid" else f"Invalid step: {evidence}",
        page_title=None,
        sentences=[],
        cursors={},
        state_key=None,
        input_tokens=0,
        output_tokens=0,
        wiki_requests=0,
        started_at=None,
        ended_at=None,
        approval=None,
    )


def _action_dict(tool: str, action: str) -> ActionDict | None:
    """Return a Search/Lookup step's action as data (None for an LLM step or an invalid one)."""
    if tool not in SEARCHING or not action.startswith(f"{tool}[") or not action.endswith("]"):
        return None
    return ActionDict(name=tool, argument=action[len(tool) + 1 : -1])  # type: ignore[typeddict-item]
