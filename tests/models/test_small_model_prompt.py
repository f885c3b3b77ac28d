"""The small-model prompt variant: chosen by the model, same protocol, Groq prompt untouched."""

from __future__ import annotations

import re
import threading
from typing import Any

from conftest import PAGES
from langchain_core.messages import BaseMessage
from pydantic import PrivateAttr

from wikireact import Context, MemorySource, ScriptedChatModel, build_graph
from wikireact.models.local.step_grammar import step_grammar
from wikireact.models.variants import prompt_variant, variant_for
from wikireact.prompting import react as prompts
from wikireact.prompting import small_model as small_model_prompt
from wikireact.prompting.small_model import EXEMPLARS, INSTRUCTION
from wikireact.prompting.variants import build_prompt
from wikireact.state import Step

QUESTION = "Who made Ed Wood's films?"


class SmallSpy(ScriptedChatModel):
    """A scripted model that asks for the small variant and records the prompts it gets."""

    prompt_variant: str = "small"
    _seen: list[list[BaseMessage]] = PrivateAttr(default_factory=list)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)

    def _respond(self, index, messages, stop):  # type: ignore[no-untyped-def]
        with self._lock:
            self._seen.append(list(messages))
        return super()._respond(index, messages, stop)


def _step(kind: str, action: str, observation: str) -> Step:
    return Step(kind=kind, thought="t", action=action, observation=observation, raw="")  # type: ignore[typeddict-item]


def test_other_models_keep_the_default_prompt_exactly() -> None:
    model = ScriptedChatModel(outputs=["Action 1: Finish[x]"])
    history = [_step("executed", "Search[Ed Wood]", "Ed Wood was an American filmmaker.")]
    assert prompt_variant(model) == "default"
    assert build_prompt(
        prompt_variant(model), QUESTION, history, "react"
    ) == prompts.build_messages(QUESTION, history, "react")
    assert variant_for("groq:qwen/qwen3.6-27b") == "default" and variant_for("local") == "small"


def test_an_episode_with_a_small_model_ends_each_prompt_with_the_observation_and_question() -> None:
    model = SmallSpy(
        outputs=[
            "Thought 1: I search Ed Wood.\nAction 1: Search[Ed Wood]",
            "Thought 2: The Observation says American.\nAction 2: Finish[American]",
        ]
    )
    graph = build_graph(model=model, wiki=MemorySource(PAGES))
    out = graph.invoke({"question": QUESTION}, context=Context(max_steps=3))
    assert out["answer"] == "American" and [s["kind"] for s in out["trajectory"]] == [
        "executed",
        "finish",
    ]
    first, second = model._seen
    assert str(first[0].content) == INSTRUCTION
    assert str(first[-1].content) == f"Question: {QUESTION}"
    last = str(second[-1].content)
    assert last.startswith("Observation 1: «Edward Davis Wood Jr.") and last.endswith(
        f"»\nQuestion: {QUESTION}"
    )


def test_exemplar_answers_are_copied_from_observations_and_never_the_searched_title() -> None:
    for exemplar in EXEMPLARS:
        finish = exemplar.steps[-1].action
        answer = re.fullmatch(r"Finish\[(.+)\]", finish).group(1)  # type: ignore[union-attr]
        searched = [
            re.fullmatch(r"Search\[(.+)\]", s.action).group(1)  # type: ignore[union-attr]
            for s in exemplar.steps[:-1]
        ]
        assert any(answer in s.observation for s in exemplar.steps[:-1]), exemplar.question
        assert answer not in searched and answer not in exemplar.question


def test_a_repeat_is_answered_with_the_earlier_result_again() -> None:
    page = "Ed Wood was an American filmmaker."
    history = [
        _step("executed", "Search[Ed Wood]", page),
        _step("repeat", "Search[Ed Wood]", "The page Ed Wood is already open (since step 1)."),
    ]
    last = str(build_prompt(prompt_variant(SmallSpy()), QUESTION, history, "react")[-1].content)
    assert (
        last
        == f"Observation 2: «You did Search[Ed Wood] already. Its result was: {page}»\nQuestion: {QUESTION}"
    )


def test_the_step_grammar_has_one_thought_line_and_one_action() -> None:
    react, act = step_grammar(require_thought=True), step_grammar(require_thought=False)
    assert react.startswith("root ::= thought action\n") and act.startswith(
        "root ::= thought? action\n"
    )
    assert (
        '("Search[" title | "Lookup[" argument) "]"' in react and '": Finish[" answer "]"' in react
    )
    assert "\\[\\]" in react  # neither a thought nor an argument can open another action
    assert 'number ::= "3"' in step_grammar(require_thought=True, number=3)


def test_a_finish_cannot_spell_out_a_searched_title() -> None:
    rules = dict(
        line.split(" ::= ", 1)
        for line in step_grammar(require_thought=True, not_answers=["Ham"]).splitlines()[1:]
    )
    # answer -> h/H -> a/A -> (no m/M: the title cannot be completed; anything else may follow)
    assert rules["answer"] == "[hH] answer-0 | [^\\n\\[\\] hH] rest"
    assert rules["answer-0"] == '[aA] answer-0-0 | [^\\n\\[\\]aA] rest | ""'
    assert rules["answer-0-0"] == '[^\\n\\[\\]mM] rest | ""'


def test_the_local_model_numbers_the_step_it_asks_for() -> None:
    from wikireact.models.local.llama import _to_gemma_turns
    from wikireact.models.local.step_form import answer_blocks, step_number

    history = [_step("executed", "Search[Ed Wood]", "Ed Wood was an American filmmaker.")]
    for build in (prompts.build_messages, small_model_prompt.build_messages):
        assert step_number(_to_gemma_turns(build(QUESTION, [], "react"))) == 1
        assert step_number(_to_gemma_turns(build(QUESTION, history, "react"))) == 2
    turns = _to_gemma_turns(small_model_prompt.build_messages(QUESTION, history, "react"))
    # only this episode's searches are blocked as answers, not the exemplars'
    assert answer_blocks(turns) == ("Ed W", "the Ed W")


def test_the_small_exemplars_replace_the_default_ones_but_not_a_users_prompt_file() -> None:
    from wikireact.prompting.exemplars import default_episodes

    model = SmallSpy()
    own = build_prompt(prompt_variant(model), QUESTION, [], "react", default_episodes("react"))
    assert own == build_prompt(
        prompt_variant(model), QUESTION, [], "react"
    )  # what `eval` passes = what `ask` gets
    assert str(own[1].content) == f"Question: {EXEMPLARS[0].question}"
    users = build_prompt(prompt_variant(model), QUESTION, [], "react", EXEMPLARS[1:])
    assert str(users[1].content) == f"Question: {EXEMPLARS[1].question}"


def test_a_search_may_not_reopen_a_page_but_may_follow_a_miss_suggestion() -> None:
    from wikireact.models.local.llama import _to_gemma_turns
    from wikireact.models.local.step_form import search_rules, step_form

    opened = _step("executed", "Search[The Magic Flute]", "The Magic Flute is an opera by Mozart.")
    missed = _step(
        "executed",
        "Search[Jupiter orbit]",
        "Could not find Jupiter orbit. Similar: ['Jupiter', \"Jupiter's moons\", 'The Magic Flute'].",
    )
    turns = _to_gemma_turns(small_model_prompt.build_messages(QUESTION, [opened, missed], "react"))
    # no title searched may start a Search again ("The Magic Flutist", "Jupiter orbits", "Jupi...")
    # but the latest miss's suggestions stay open, unless searched already
    assert search_rules(turns) == (
        ("Jupi", "Magi", "the Jupi", "the Magi"),
        ("Jupiter", "Jupiter's moons"),
    )
    grammar = step_grammar(
        **step_form(
            turns,
            no_title_answers=True,
            extractive_answers=True,
            no_repeated_searches=True,
            observation_opening=True,
        )
    )
    assert '\ntitle ::= "Jupiter" | "Jupiter\'s moons" | [jJ] title-0 |' in grammar
    assert '\nopening ::= ""\n' in grammar  # after a miss the thought opens freely
    turns = _to_gemma_turns(small_model_prompt.build_messages(QUESTION, [missed, opened], "react"))
    assert search_rules(turns)[1] == ()  # the latest observation is no miss
    form = step_form(
        turns,
        no_title_answers=True,
        extractive_answers=True,
        no_repeated_searches=True,
        observation_opening=True,
    )
    assert form["thought_opening"] == "The Observation says "  # after page text, not a miss


class _FakeLlama:
    """Stands in for llama.cpp: replies per call from a list, recording prompts and grammars."""

    def __init__(self, replies: list[str]) -> None:
        self.replies, self.calls = replies, []  # type: list[str], list[tuple[str, Any]]

    def create_completion(self, *, prompt: str, grammar: Any, **_: Any) -> Any:
        self.calls.append((prompt, grammar))
        reply = self.replies[len(self.calls) - 1]
        return (
            {"choices": [{"text": piece}]} for piece in re.findall(r"\S+\s*", reply)
        )  # a generator, as llama.cpp's stream is

    def tokenize(self, data: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        return list(range(len(data.split())))

    class _model:  # noqa: N801 - llama.cpp's attribute name
        """What the token count asks of llama.cpp's model: whether it adds a BOS token."""

        @staticmethod
        def add_bos_token() -> bool:
            return True


def test_the_local_model_writes_the_thought_then_an_action_narrowed_by_it(
    monkeypatch: Any,
) -> None:
    from wikireact.models.local import llama as local_model

    fake = _FakeLlama(["Thought 2: It is 3,776.24 m high.\n", "Action 2: Finish[3,776.24]"])
    monkeypatch.setattr(
        local_model, "_constraint", lambda client, grammar, t, titles=None: {"grammar": grammar}
    )
    monkeypatch.setattr(local_model, "_chat_prompt", lambda turns: "PROMPT|")
    model = local_model.LlamaCppChatModel(model_path="unused.gguf")
    model._llama = fake
    observation = "Mount Fuji erupted in 1708. Its summit is 3,776.24 m high."
    history = [_step("executed", "Search[Mount Fuji]", observation)]
    question = "How high is Mount Fuji in metres?"
    reply = model.invoke(small_model_prompt.build_messages(question, history, "react"))
    assert reply.content == "Thought 2: It is 3,776.24 m high.\nAction 2: Finish[3,776.24]"
    (first_prompt, thought_rules), (second_prompt, action_rules) = fake.calls
    assert thought_rules.startswith("root ::= thought\n")  # the thought line alone
    assert '\nopening ::= "The Observation says "\n' in thought_rules
    # the action continues the same prompt after the thought, and may answer only what it named
    assert second_prompt == first_prompt + "Thought 2: It is 3,776.24 m high.\n"
    assert action_rules.startswith("root ::= action\n")
    answer = next(line for line in action_rules.splitlines() if line.startswith("answer ::="))
    assert answer.count("|") == 0  # one start: the run at "3,776.24", not "1708"


def test_the_local_model_decodes_cot_and_standard_prompts_freely(monkeypatch: Any) -> None:
    from wikireact.eval.baselines import cot_messages, extract_answer, standard_messages
    from wikireact.models.local import llama as local_model

    monkeypatch.setattr(
        local_model, "_constraint", lambda client, grammar, t, titles=None: {"grammar": grammar}
    )
    monkeypatch.setattr(local_model, "_chat_prompt", lambda turns: "PROMPT|")
    for messages, reply in (
        (cot_messages("Who?"), "Thought: He did. So the answer is Ed Wood."),
        (standard_messages("Who?"), "Answer: Ed Wood"),
    ):
        fake = _FakeLlama([reply])
        model = local_model.LlamaCppChatModel(model_path="unused.gguf")
        model._llama = fake
        text = str(model.invoke(messages).content)
        assert [grammar for _, grammar in fake.calls] == [None]  # no step grammar: not a step
        assert extract_answer(text) == "Ed Wood"
