"""Connections to PostgreSQL that idle timeouts do not end and that notice a vanished peer.

A server may end idle sessions (`idle_session_timeout`); wikireact's sessions idle
for as long as a model call or an approval prompt takes, and one of them holds the run
locks, so each session turns that timeout off for itself (a setting any user may change).
Server-side TCP keepalives make the server drop the session of a machine that vanished
(and so free its run locks) after about 25 s. Options already in the URL are kept.
The pool checks a connection before lending it, so one the server ended (a restart) is
replaced rather than failing a query.
"""

from __future__ import annotations

import logging
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import DictRow, dict_row
from psycopg_pool import ConnectionPool

# psycopg logs what it ignores while tearing down a lost connection ("error ignored
# terminating <psycopg.Pipeline [BAD]>"); without a handler Python prints that to stderr
# beside wikireact's one-line message. Applications that configure logging still see it.
logging.getLogger("psycopg").addHandler(logging.NullHandler())

SESSION_OPTIONS = (
    "-c idle_session_timeout=0 "
    "-c tcp_keepalives_idle=10 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3"
)


def connection_kwargs(url: str) -> dict[str, Any]:
    """Return the keyword arguments of every wikireact connection to `url` (as LangGraph asks).

    `autocommit`, `prepare_threshold=0` and `dict_row` are what `PostgresSaver` needs.
    """
    given = str(conninfo_to_dict(url).get("options") or "")
    return {
        "autocommit": True,
        "prepare_threshold": 0,
        "row_factory": dict_row,
        "options": f"{given} {SESSION_OPTIONS}".strip(),
    }


def connect(url: str) -> psycopg.Connection[DictRow]:
    """Open one session to `url` (raises `psycopg.Error`)."""
    return psycopg.Connection[DictRow].connect(url, connect_timeout=10, **connection_kwargs(url))


def open_pool(url: str, size: int) -> ConnectionPool[psycopg.Connection[DictRow]]:
    """Open a pool of up to `size` sessions to `url`, each checked before it is lent."""
    return ConnectionPool[psycopg.Connection[DictRow]](
        url,
        min_size=1,
        max_size=max(size, 2),
        open=True,
        connection_class=psycopg.Connection[DictRow],
        kwargs=connection_kwargs(url),
        check=ConnectionPool.check_connection,
    )
