"""ReWOO episodes driven whole through its graph with scripted models.

Plan -> workers -> solver: 2 model calls without an LLM step, independent steps in one
round of source latency, `#E` substitution (capped), bad plans (re-planned once, then
`invalid_plan`), the plan's step cap, the repetition rule, approval pauses and resumes.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from support import PAGES, QUESTION, SpyModel, thread

from wikireact import MemorySource
from wikireact.agents.rewoo.graph import build_graph
from wikireact.episode.compiled import EpisodeGraph
from wikireact.errors import WikiOutageError, WikiUnavailableError
from wikireact.graph import run_to_end
from wikireact.wiki.base import Disambiguation, Page

TWO_SEARCHES = (
    "Plan: Find Scott Derrickson's nationality.\n"
    "#E1 = Search[Scott Derrickson]\n"
    "Plan: Find Ed Wood's nationality.\n"
    "#E2 = Search[Ed Wood]\n"
    "Plan: Where was Wood born?\n"
    "#E3 = Lookup[born]"
)
ANSWER = "Thought: both are American.\nFinish[yes]"


class SlowSource(MemorySource):
    """A MemorySource whose every fetch takes `delay_s`, recording when each one ran."""

    def __init__(self, delay_s: float) -> None:
        super().__init__(PAGES)
        self.delay_s = delay_s
        self.spans: list[tuple[float, float]] = []
        self._lock = threading.Lock()

    def fetch(self, title: str) -> Page | Disambiguation | None:
        start = time.perf_counter()
        time.sleep(self.delay_s)
        found = super().fetch(title)
        with self._lock:
            self.spans.append((start, time.perf_counter()))
        return found


def run(
    outputs: list[Any],
    *,
    wiki: Any = None,
    saver: BaseCheckpointSaver | None = None,
    context: dict[str, Any] | None = None,
    thread_id: str = "t1",
) -> tuple[dict[str, Any], SpyModel, EpisodeGraph]:
    model = SpyModel(outputs=outputs)
    graph = build_graph(saver or InMemorySaver(), model=model, wiki=wiki or MemorySource(PAGES))
    result = graph.invoke({"question": QUESTION}, thread(thread_id), context=context)
    return result, model, graph


def test_a_plan_without_llm_steps_costs_two_model_calls() -> None:
    result, model, _ = run([TWO_SEARCHES, ANSWER])
    assert len(model.calls) == 2 and result["model_calls"] == 2
    assert result["status"] == "finished" and result["answer"] == "yes"
    assert [s["kind"] for s in result["trajectory"]] == [
        "plan",
        "executed",
        "executed",
        "executed",
        "finish",
    ]
    assert [s["action"] for s in result["trajectory"][1:]] == [
        "Search[Scott Derrickson]",
        "Search[Ed Wood]",
        "Lookup[born]",
        "Finish[yes]",
    ]
    # the Lookup reads the page of the nearest Search above it
    assert result["evidence"]["#E3"] == "(Result 1 / 1) Wood was born in Poughkeepsie, New York."
    assert result["steps"] == 5 and [u["step"] for u in result["usage"]] == [1, 2, 3, 4, 5]
    assert [u["wiki_requests"] for u in result["usage"]] == [0, 1, 1, 0, 0]
    assert result["usage"][0]["input_tokens"] > 0 and result["usage"][-1]["input_tokens"] > 0
    # the solver saw every step's evidence
    solver_prompt = model.prompts[1]
    assert "Edward Davis Wood Jr." in solver_prompt and "Biola University" in solver_prompt


def test_audit_records_carry_utc_times_for_what_ran() -> None:
    result, _, _ = run([TWO_SEARCHES, ANSWER])
    audit = result["audit"]
    assert [a["kind"] for a in audit] == ["plan", "executed", "executed", "executed", "finish"]
    assert audit[1]["action"] == {"verb": "Search", "arguments": {"title": "Scott Derrickson"}}
    assert all(a["started_at"].endswith("Z") and a["ended_at"] for a in audit[1:4])
    assert audit[0]["started_at"] is None and audit[-1]["action"] == {
        "verb": "Finish",
        "arguments": {"answer": "yes"},
    }


def test_audit_records_time_the_model_calls_apart_from_the_wikipedia_calls() -> None:
    plan = "Plan: Derrickson.\n#E1 = Search[Scott Derrickson]\nPlan: his.\n#E2 = LLM[Which? #E1]"
    model = SpyModel(outputs=[plan, "American.", ANSWER], delay_s=0.02)
    graph = build_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES))
    audit = graph.invoke({"question": QUESTION}, thread())["audit"]
    assert [a["kind"] for a in audit] == ["plan", "executed", "executed", "finish"]
    plan_step, search, llm, finish = audit
    assert all(a["model_seconds"] >= 0.02 and a["wiki_seconds"] == 0 for a in (plan_step, finish))
    assert llm["model_seconds"] >= 0.02 and llm["wiki_seconds"] == 0  # no Wikipedia call
    assert llm["started_at"] is None  # its times are the Wikipedia call's: none ran
    assert search["model_seconds"] == 0 and search["started_at"] is not None


def _window(spans: list[tuple[float, float]]) -> float:
    return max(end for _, end in spans) - min(start for start, _ in spans)


def test_independent_searches_take_one_round_of_source_latency() -> None:
    delay = 0.4
    independent = SlowSource(delay)
    result, _, _ = run([TWO_SEARCHES, ANSWER], wiki=independent)
    assert result["status"] == "finished" and len(independent.spans) == 2
    (a_start, a_end), (b_start, b_end) = sorted(independent.spans)
    assert b_start < a_end, "the two Searches did not overlap"
    assert _window(independent.spans) < 1.5 * delay

    # The same two Searches, the second waiting for an LLM step that reads the first:
    # two rounds of latency.
    dependent = SlowSource(delay)
    plan = (
        "Plan: Find Scott Derrickson.\n#E1 = Search[Scott Derrickson]\n"
        "Plan: Name a filmmaker to compare.\n#E2 = LLM[Name a filmmaker to compare with #E1]\n"
        "Plan: Find him.\n#E3 = Search[#E2]"
    )
    result, _, _ = run([plan, "Ed Wood", ANSWER], wiki=dependent)
    assert result["status"] == "finished" and len(dependent.spans) == 2
    (a_start, a_end), (b_start, b_end) = sorted(dependent.spans)
    assert b_start >= a_end
    assert _window(dependent.spans) >= 2 * delay


def test_evidence_is_substituted_capped_like_an_observation() -> None:
    plan = (
        "Plan: Find Scott Derrickson.\n#E1 = Search[Scott Derrickson]\n"
        "Plan: Extract his birth year.\n#E2 = LLM[Give the birth year in: #E1]\n"
        "Plan: Find the year's page.\n#E3 = Search[#E2]"
    )
    pages = {**PAGES, "1966": "1966 was a common year starting on Saturday."}
    result, model, _ = run(
        [plan, "1966", "Thought: 1966.\nFinish[1966]"],
        wiki=MemorySource(pages),
        context={"observation_cap": 60},
    )
    assert result["model_calls"] == 3 and len(model.calls) == 3
    llm_prompt = model.texts[1][-1]  # the evidence, capped, inside ReAct's fence
    assert llm_prompt.startswith("Give the birth year in: «Scott Derrickson (born")
    assert llm_prompt.endswith("»") and "[… truncated," in llm_prompt
    assert len(llm_prompt) <= len("Give the birth year in: «»") + 60
    assert result["trajectory"][3]["action"] == "Search[1966]"
    assert result["evidence"]["#E3"] == "1966 was a common year starting on Saturday."
    assert result["answer"] == "1966"


BAD_PLANS = {
    "malformed line": ("Plan: look.\n#E1 = Search Scott Derrickson", "is not a step of the form"),
    "unknown tool": ("Plan: look.\n#E1 = Google[Scott Derrickson]", "unknown tool `Google`"),
    "cycle": (
        "Plan: a.\n#E1 = Search[#E2]\nPlan: b.\n#E2 = LLM[Name in #E1]",
        "cycle (#E1 -> #E2 -> #E1)",
    ),
    "missing reference": (
        "Plan: a.\n#E1 = Search[Ed Wood]\nPlan: b.\n#E2 = LLM[Compare #E1 and #E7]",
        "cites #E7, which no step of the plan defines",
    ),
    "no steps": ("Plan: I know it already.", "the plan has no steps"),
}


@pytest.mark.parametrize("case", sorted(BAD_PLANS))
def test_a_bad_plan_is_invalid_and_planned_once_more(case: str) -> None:
    bad, message = BAD_PLANS[case]
    result, model, _ = run([bad, TWO_SEARCHES, ANSWER])
    assert result["status"] == "finished" and result["answer"] == "yes"
    first = result["trajectory"][0]
    assert first["kind"] == "invalid" and message in first["observation"]
    assert first["observation"].startswith("Invalid plan: ")
    assert result["trajectory"][1]["kind"] == "plan"
    assert result["model_calls"] == 3 and len(model.calls) == 3
    assert message in model.prompts[1], "the re-plan prompt does not say what was wrong"
    assert result["audit"][0]["kind"] == "invalid"


@pytest.mark.parametrize("case", sorted(BAD_PLANS))
def test_two_bad_plans_end_the_episode_invalid_plan(case: str) -> None:
    bad, message = BAD_PLANS[case]
    result, model, _ = run([bad, bad, ANSWER])
    assert result["status"] == "invalid_plan" and result["answer"] is None
    assert [s["kind"] for s in result["trajectory"]] == ["invalid", "invalid"]
    assert len(model.calls) == 2 and result["model_calls"] == 2


def test_the_plan_has_a_step_cap() -> None:
    result, _, _ = run([TWO_SEARCHES, TWO_SEARCHES], context={"max_steps": 2})
    assert result["status"] == "invalid_plan"
    assert (
        "the plan has more than 2 steps; the step budget allows at most 2"
        in (result["trajectory"][0]["observation"])
    )


def test_a_repeated_search_is_not_run_again() -> None:
    # `ed Wood` names the page `Ed Wood` (MediaWiki capitalises the first letter only)
    plan = TWO_SEARCHES + "\nPlan: Check Wood again.\n#E4 = Search[ed Wood]"
    result, _, _ = run([plan, ANSWER])
    assert result["status"] == "finished"
    repeat = next(s for s in result["trajectory"] if s["action"] == "Search[ed Wood]")
    assert repeat["kind"] == "repeat"
    assert result["evidence"]["#E4"] == result["evidence"]["#E2"]
    assert sum(u["wiki_requests"] for u in result["usage"]) == 2


def test_the_repetition_limit_halts_the_episode() -> None:
    plan = "\n".join(f"Plan: look.\n#E{n} = Search[Ed Wood]" for n in (1, 2, 3))
    result, model, _ = run([plan, ANSWER], context={"repetition_limit": 3})
    assert result["status"] == "repetition_halted" and result["answer"] is None
    assert [s["kind"] for s in result["trajectory"]] == ["plan", "executed", "repeat", "repeat"]
    assert len(model.calls) == 1, "the solver was called after the episode halted"


def test_a_solver_without_finish_ends_no_answer() -> None:
    result, _, _ = run([TWO_SEARCHES, "I think they are both American."])
    assert result["status"] == "no_answer" and result["answer"] is None
    assert result["trajectory"][-1]["kind"] == "invalid"
    assert result["trajectory"][-1]["observation"].startswith("Invalid answer: ")


def test_approval_pauses_before_every_search_and_lookup(
    checkpointer: BaseCheckpointSaver,
) -> None:
    model = SpyModel(outputs=[TWO_SEARCHES, ANSWER])
    wiki = MemorySource(PAGES, redirects={"Edward D. Wood Jr.": "Ed Wood"})
    graph = build_graph(checkpointer, model=model, wiki=wiki)
    config = thread("approve")
    paused = graph.invoke({"question": QUESTION}, config, context={"approve": True})
    proposals = []
    decisions: list[Any] = [
        True,
        {"action": "Search[Edward D. Wood Jr.]", "by": "ann"},
        {"reject": "not needed"},
    ]
    while paused.get("__interrupt__"):
        pending = paused["__interrupt__"]
        assert len(pending) == 1, "the reviewer gets one proposal at a time"
        proposals.append(pending[0].value["proposed_action"])
        assert pending[0].value["question"] == QUESTION
        paused = graph.invoke(Command(resume=decisions[len(proposals) - 1]), config)
    assert proposals == ["Search[Scott Derrickson]", "Search[Ed Wood]", "Lookup[born]"]
    assert paused["status"] == "finished" and paused["answer"] == "yes"
    assert len(model.calls) == 2
    audit = paused["audit"]
    assert [a["approval"]["decision"] for a in audit[1:4]] == ["approved", "edited", "rejected"]
    assert audit[2]["approval"]["by"] == "ann"
    assert audit[2]["action"] == {"verb": "Search", "arguments": {"title": "Edward D. Wood Jr."}}
    assert paused["trajectory"][3]["kind"] == "rejected"
    assert "not needed" in paused["evidence"]["#E3"]
    assert paused["evidence"]["#E2"].startswith("Edward Davis Wood Jr.")


def test_run_to_end_returns_an_ended_threads_rewoo_output() -> None:
    model = SpyModel(outputs=[TWO_SEARCHES, ANSWER])
    graph = build_graph(InMemorySaver(), model=model, wiki=MemorySource(PAGES))
    first = run_to_end(graph, QUESTION, thread("ended"))
    again = run_to_end(graph, QUESTION, thread("ended"))
    assert len(model.calls) == 2, "the ended episode ran again"
    assert again == first and again["model_calls"] == 2 and len(again["plan"]) == 3


class FlakySource(MemorySource):
    """Fails the first fetch of `title` as an outage (late: the other branch has finished and
    been saved by then); counts every fetch per title.

    A branch still running when another fails is not saved (LangGraph stops the superstep),
    so it runs again on resume: the guarantee is for branches that finished first.
    """

    def __init__(self, title: str) -> None:
        super().__init__(PAGES)
        self.flaky, self.fetched = title, Counter[str]()

    def fetch(self, title: str) -> Page | Disambiguation | None:
        self.fetched[title] += 1
        if title == self.flaky and self.fetched[title] == 1:
            time.sleep(0.5)  # a slow failure, after the sibling's page and its save
            raise WikiUnavailableError("Wikipedia did not answer")
        return super().fetch(title)


def test_an_outage_in_one_branch_resumes_without_repeating_the_other(
    checkpointer: BaseCheckpointSaver,
) -> None:
    model = SpyModel(outputs=[TWO_SEARCHES, ANSWER])
    wiki = FlakySource("Ed Wood")
    graph = build_graph(checkpointer, model=model, wiki=wiki)
    config = thread("outage")
    with pytest.raises(WikiOutageError, match="Search\\[Ed Wood\\] was not run"):
        graph.invoke({"question": QUESTION}, config)
    assert graph.get_state(config).values["steps"] == 1  # only the plan is recorded
    result = graph.invoke(None, config)
    assert result["status"] == "finished" and result["answer"] == "yes"
    assert wiki.fetched == {"Scott Derrickson": 1, "Ed Wood": 2}, "a finished branch ran again"
    assert len(model.calls) == 2
    assert [s["kind"] for s in result["trajectory"]] == [
        "plan",
        "executed",
        "executed",
        "executed",
        "finish",
    ]


def test_an_edited_step_counts_as_the_reviewers_action_for_the_repetition_rule() -> None:
    plan = (
        "Plan: a.\n#E1 = Search[Ed Wood]\n"
        "Plan: b.\n#E2 = LLM[Name the person in #E1]\n"
        "Plan: c.\n#E3 = Search[#E2]\n"
        "Plan: d.\n#E4 = Search[Ed Wood]"
    )
    model = SpyModel(outputs=[plan, "Scott Derrickson", ANSWER])
    wiki = MemorySource(PAGES)
    graph = build_graph(InMemorySaver(), model=model, wiki=wiki)
    config = thread("edit")
    paused = graph.invoke({"question": QUESTION}, config, context={"approve": True})
    proposed = []
    while paused.get("__interrupt__"):
        proposed.append(paused["__interrupt__"][0].value["proposed_action"])
        first = len(proposed) == 1
        decision = {"action": "Search[Scott Derrickson]"} if first else True
        paused = graph.invoke(Command(resume=decision), config)
    # #E3 = Search[Scott Derrickson] repeats the edited #E1: not run, not put to the reviewer;
    # #E4 = Search[Ed Wood] was never run, so it runs
    assert proposed == ["Search[Ed Wood]", "Search[Ed Wood]"]
    kinds = {s["raw"][:3]: s["kind"] for s in paused["trajectory"] if s["raw"].startswith("#E")}
    assert kinds == {"#E1": "executed", "#E2": "executed", "#E3": "repeat", "#E4": "executed"}
    assert paused["evidence"]["#E4"].startswith("Edward Davis Wood Jr.")


def test_a_reference_with_leading_zeros_gets_the_evidence_it_waited_for() -> None:
    plan = (
        "Plan: a.\n#E1 = Search[Ed Wood]\n"
        "Plan: b.\n#E2 = LLM[Name the person in #E01]\n"
        "Plan: c.\n#E3 = Search[#E02]"
    )
    result, model, _ = run([plan, "Scott Derrickson", ANSWER])
    assert result["status"] == "finished"
    llm_prompt = model.texts[1][-1]
    assert (
        llm_prompt.startswith("Name the person in «Edward Davis Wood Jr.")
        and "#E" not in llm_prompt
    )
    assert result["trajectory"][3]["action"] == "Search[Scott Derrickson]"
    assert result["evidence"]["#E3"].startswith("Scott Derrickson (born")


def test_a_megabyte_plan_is_refused_in_one_line_twice() -> None:
    huge = "".join(f"Plan: step {n}.\n#E{n} = Search[Page {n}]\n" for n in range(1, 40_000))
    assert len(huge) > 1_000_000
    result, model, _ = run([huge, huge])
    assert result["status"] == "invalid_plan" and len(model.calls) == 2
    message = "Invalid plan: the plan has more than 7 steps; the step budget allows at most 7."
    assert [s["observation"] for s in result["trajectory"]] == [message, message]
    assert "the step budget allows at most 7" in model.prompts[1]  # the re-plan was told why
