"""What changes in the prompts between the two tasks: the input's label, the goal, the Finish rule.

HotpotQA (`task="hotpotqa"`) asks a question and Finish gives a short answer; FEVER
(`task="fever"`) states a claim and Finish gives one of its three labels (see
`wikireact.protocols.labels`). Everything else (actions, observations fenced as untrusted
text, one step per reply) is the same, so both tasks run the same graph.
"""

from __future__ import annotations

from wikireact.context import Task
from wikireact.protocols.tools import FEVER_FINISH_DESCRIPTION, FINISH_DESCRIPTION

INPUT_LABEL: dict[Task, str] = {"hotpotqa": "Question", "fever": "Claim"}
"""How the input is introduced in every prompt (the ReAct paper's FEVER prompts say `Claim:`)."""
GOAL: dict[Task, str] = {
    "hotpotqa": "You answer a question",
    "fever": "You check a claim against Wikipedia",
}
"""The instruction's opening, completed by the method (`... by interleaving Thought, ...`)."""
VERDICT: dict[Task, str] = {
    "hotpotqa": "",
    "fever": "\nThe claim is SUPPORTS when an Observation shows it is true, REFUTES when an "
    "Observation shows it is false, and NOT ENOUGH INFO when Wikipedia says neither.",
}
"""What the instruction adds after the actions: how to choose the label (FEVER only)."""
FINISH_RULE: dict[Task, str] = {
    "hotpotqa": "Finish[answer]: gives the final answer (a short phrase, or yes/no) and ends the task.",
    "fever": "Finish[label]: gives the verdict, exactly one of SUPPORTS, REFUTES or NOT ENOUGH "
    "INFO, and ends the task.",
}
"""The third action of the text protocol's instruction."""
FINISH_TOOL: dict[Task, str] = {"hotpotqa": FINISH_DESCRIPTION, "fever": FEVER_FINISH_DESCRIPTION}
"""The finish tool's description (tools protocol)."""


def input_line(task: Task, text: str) -> str:
    """Return the episode's opening line: `Question: ...` or `Claim: ...`."""
    return f"{INPUT_LABEL[task]}: {text}"
