"""What both thread stores (SQLite and PostgreSQL) share: their errors and how settings are stored."""

from __future__ import annotations

import json
from typing import Any

from wikireact.context import Context

SNAPSHOT_ID_KEY = "_snapshot_id"
"""Stored beside a thread's settings: the id of the snapshot it started on."""
AGENT_KEY = "_agent"
"""Stored beside a thread's settings: the agent that runs it (`wikireact.agents.AGENTS`)."""
DEFAULT_AGENT = "react"
"""The agent of a thread registered without one (every thread before there were others)."""
GRAPH_METADATA_KEY = "wikireact_graph"
"""In the metadata of every checkpoint a wikireact graph saves: the graph's name (`wikireact`,
`wikireact-rewoo`, ...), which names the agent of a thread the CLI did not register."""


def encode_context(context: Context, snapshot_id: str | None, agent: str = DEFAULT_AGENT) -> str:
    """Return the registry's JSON of a thread's settings (with its snapshot id, if any, and agent)."""
    extra = {SNAPSHOT_ID_KEY: snapshot_id} if snapshot_id else {}
    return json.dumps(context.as_dict() | extra | {AGENT_KEY: agent})


def decode_context(text: str) -> dict[str, Any]:
    """Return the `Context` fields stored by `encode_context`.

    Threads registered before the tools protocol existed used the text protocol.
    """
    stored = {"protocol": "text", **json.loads(text)}
    stored.pop(SNAPSHOT_ID_KEY, None)
    stored.pop(AGENT_KEY, None)
    return stored


def decode_agent(text: str) -> str:
    """Return the agent stored by `encode_context` (`react` for threads registered before agents)."""
    return str(json.loads(text).get(AGENT_KEY) or DEFAULT_AGENT)


def decode_snapshot_id(text: str) -> str | None:
    """Return the snapshot id stored by `encode_context` (None: not a snapshot)."""
    value = json.loads(text).get(SNAPSHOT_ID_KEY)
    return str(value) if value else None
