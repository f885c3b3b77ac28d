"""Plans the embedded model (Gemma 3 270M) writes: the share its agents' readers accept.

For the first N questions of an offline set (`--set`: single-hop, or the two-hop `multi`), asks the embedded model for
ReWOO's plan and for Plan-and-Execute's sub-goals with the prompts those agents build
for it (the small-model variant's), once decoding freely (as before plans had grammars) and once under the reply
form the agent names (`wikireact.models.reply_form`), and reads each reply with the
agent's own reader. ReWOO's planner searches only the embedded snapshot's titles, as in
its episodes (`known_titles`). Prints the share of readable plans and the mean output
tokens and CPU seconds per plan. Not part of `make bench` (about a minute per question on 2 cores).

    python plans_offline.py [--set single|multi] [--limit 5] [--show] [--decoding free,grammar]
                            [--agents rewoo,plan-execute]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from table import Row, print_rows

from wikireact.agents.plan_execute.planning import reply_form
from wikireact.agents.plan_execute.prompts import planner_messages, variant_plan_exemplars
from wikireact.agents.plan_execute.replies import read_reply
from wikireact.agents.rewoo.plan import Plan, read_plan
from wikireact.agents.rewoo.prompts import planner_messages as rewoo_messages
from wikireact.context import DEFAULT_MAX_STEPS
from wikireact.models.local.llama import load_local_model
from wikireact.models.reply_form import ReplyForm
from wikireact.models.variants import prompt_variant
from wikireact.nodes.model_call import call_model, reply_text, reply_tokens
from wikireact.wiki.offline_corpus import ensure_offline_snapshot

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
SETS = {"single": DATA / "offline_single_hop.json", "multi": DATA / "offline_multi_hop.json"}
MAX_SUBGOALS = 4


def rewoo_plan(model: Any, question: str, form: bool) -> tuple[bool, int, str]:
    """Ask for ReWOO's plan; return whether `read_plan` accepts it, its tokens and its text."""
    messages = rewoo_messages(question, DEFAULT_MAX_STEPS, None, variant=prompt_variant(model))
    shape = ReplyForm("rewoo_plan", DEFAULT_MAX_STEPS) if form else None
    titles = model.bind(known_titles=str(ensure_offline_snapshot()))
    reply = call_model(titles, messages, index=0, failure="no plan", reply_form=shape)
    text = reply_text(reply)
    return isinstance(read_plan(text, DEFAULT_MAX_STEPS), Plan), reply_tokens(reply)[1], text


def subgoals(model: Any, question: str, form: bool) -> tuple[bool, int, str]:
    """Ask for Plan-and-Execute's sub-goals; return whether `read_reply` accepts them."""
    exemplars = variant_plan_exemplars("hotpotqa", prompt_variant(model))
    messages = planner_messages(question, MAX_SUBGOALS, None, exemplars)
    shape = reply_form("plan", MAX_SUBGOALS, "hotpotqa") if form else None
    reply = call_model(model, messages, index=0, failure="no plan", reply_form=shape)
    text = reply_text(reply)
    readable = read_reply(text, finish_allowed=False).error is None
    return readable, reply_tokens(reply)[1], text


def measure(
    ask: Callable[[Any, str, bool], tuple[bool, int, str]],
    model: Any,
    questions: list[str],
    form: bool,
    show: bool,
) -> tuple[float, float, float]:
    """Return the share of readable plans, mean output tokens and CPU seconds per plan."""
    readable = tokens = 0
    cpu = time.process_time()
    for question in questions:
        ok, out, text = ask(model, question, form)
        readable, tokens = readable + ok, tokens + out
        if show:
            print(
                f"--- {question} ({'readable' if ok else 'NOT readable'})\n{text}", file=sys.stderr
            )
    n = len(questions)
    return readable / n, tokens / n, (time.process_time() - cpu) / n


def main() -> int:
    """Ask for every plan with and without its grammar; print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=sorted(SETS), default="single", help="question set")
    parser.add_argument("--limit", type=int, default=5, help="questions (default: 5)")
    parser.add_argument("--show", action="store_true", help="print each plan to stderr")
    parser.add_argument("--agents", default="rewoo,plan-execute", help="which planners")
    parser.add_argument(
        "--decoding", default="free,grammar", help="free, grammar or both (default: both)"
    )
    args = parser.parse_args()
    data = json.loads(SETS[args.set].read_text(encoding="utf-8"))
    questions = [item["question"] for item in data[: args.limit]]
    model = load_local_model()
    rows: list[Row] = []
    planners = {
        "rewoo": ("ReWOO plan", rewoo_plan),
        "plan-execute": ("Plan-and-Execute sub-goals", subgoals),
    }
    for name, ask in (planners[agent] for agent in args.agents.split(",")):
        for form in (way == "grammar" for way in args.decoding.split(",")):
            share, tokens, cpu = measure(ask, model, questions, form, args.show)
            how = "under its grammar" if form else "decoded freely"
            rows += [
                Row(f"{name} {how}: readable", 100 * share, "%"),
                Row(f"{name} {how}: output tokens per plan", tokens, ""),
                Row(f"{name} {how}: CPU s per plan", cpu, "s"),
            ]
    return print_rows(rows)


if __name__ == "__main__":
    sys.exit(main())
