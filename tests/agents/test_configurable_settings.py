"""A run setting given in `config["configurable"]` (LangGraph's older habit) is refused, not ignored.

LangGraph reads run settings from `context=`; a `Context` field in the configurable would
be dropped without a word (`{"configurable": {"max_steps": 1}}` ran with the default
budget). The door refuses it in one line naming `context=`, before anything runs, for
every agent. The LangGraph server mirrors a run's context into its configurable: a
setting given in both places is the context's, and runs.
"""

from __future__ import annotations

import pytest
from support import QUESTION
from test_agent_settings import graph_of

from wikireact.agents import AGENTS
from wikireact.errors import ConfigurationError


@pytest.mark.parametrize("agent", list(AGENTS))
def test_a_setting_in_configurable_is_refused_in_one_line(agent: str) -> None:
    graph = graph_of(agent)
    config = {"configurable": {"thread_id": "c", "max_steps": 1}}
    with pytest.raises(ConfigurationError) as refused:
        graph.invoke({"question": QUESTION}, config)
    message = str(refused.value)
    assert "\n" not in message and "max_steps" in message and "context=" in message
    assert graph.get_state({"configurable": {"thread_id": "c"}}).values == {}  # nothing ran


@pytest.mark.parametrize("agent", list(AGENTS))
def test_a_setting_mirrored_from_the_context_runs(agent: str) -> None:
    graph = graph_of(agent)
    config = {"configurable": {"thread_id": "m", "max_steps": 7, "model": "x"}}
    out = graph.invoke({"question": QUESTION}, config, context={"max_steps": 7, "model": "x"})
    assert out["answer"] == "yes"
