"""`prune`, `copy_thread` and `delete_for_runs` for the PostgreSQL saver, safe with delta channels.

`PostgresSaver` 3.2 refuses `prune(strategy="keep_latest")` for threads that use a
`DeltaChannel` (every wikireact thread) and implements neither `copy_thread` nor
`delete_for_runs`. For its subclass `NulSafePostgresSaver`, every checkpoint kept while an ancestor goes is first
*materialised* (`wikireact.storage.materialise`): each delta channel's value is stored as a
blob at its current version (a large one in pieces, `wikireact.storage.postgres.layout`) and
marked in the checkpoint, as `PostgresSaver.put` stores a snapshot, so reads stop there.
Then, in one transaction, the unkept checkpoints, their writes (both layouts), the blobs
no kept checkpoint references and the pieces no kept blob references go (under the
thread's pieces lock, which a writer storing pieces holds shared: a snapshot being
written never loses a piece it uses). A kept
checkpoint keeps its parent id (`get_state` shows the same parent; reads stop at it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from psycopg.types.json import Jsonb

from wikireact.errors import ThreadsError
from wikireact.storage.materialise import Specs, check_prune_args, full_values
from wikireact.storage.postgres.deltas import Payloads, keyframe_children
from wikireact.storage.postgres.layout import (
    COLUMNS,
    PIECES,
    PIECES_TYPE,
    TABLES,
    StoredPieces,
    channel_versions,
)

if TYPE_CHECKING:
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg import Cursor

_LOCK_PREFIX = "wikireact-pieces:"
_LOCK_ROWS = (
    "SELECT 1 FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = %s "
    "AND checkpoint_id = ANY(%s) FOR UPDATE"
)
Key = tuple[str, str, str]
"""(thread id, checkpoint namespace, checkpoint id)."""
_SAVE_FULL_VALUE = """
INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
VALUES (%s, %s, %s, %s, %s, %s)
ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO UPDATE
SET type = EXCLUDED.type, blob = EXCLUDED.blob WHERE checkpoint_blobs.type = 'empty'
"""
_MARK_FULL_VALUES = """
UPDATE checkpoints SET checkpoint = jsonb_set(
    checkpoint, '{channel_values}', (checkpoint -> 'channel_values') || %s::jsonb)
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s
"""
_PIECES_IN_USE = (
    "SELECT blob FROM checkpoint_blobs WHERE thread_id = %s AND checkpoint_ns = %s AND type = %s"
)
_UNUSED_PIECES = (
    f"DELETE FROM {PIECES} WHERE thread_id = %s AND checkpoint_ns = %s AND NOT digest = ANY(%s)"
)


def _packed(saver: PostgresSaver) -> Any:
    """Return the saver as `NulSafePostgresSaver` (whose module imports this one: no import back)."""
    return saver


def _config(thread_id: str, ns: str, checkpoint_id: str) -> RunnableConfig:
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": ns,
            "checkpoint_id": checkpoint_id,
        }
    }


def _materialise(saver: PostgresSaver, keys: Sequence[Key], specs: Specs | None) -> None:
    """Store the delta channels of these checkpoints whole (all checked before any is written)."""
    found: list[tuple[Key, dict[str, Any], dict[str, Any]]] = []
    for key in keys:
        saved = saver.get_tuple(_config(*key))
        if saved is not None and (full := full_values(saver, saved, specs)):
            versions = {k: saved.checkpoint["channel_versions"][k] for k in full}
            found.append((key, full, versions))
    if not found:
        return
    stored = []
    with saver._cursor() as cur, cur.connection.transaction():
        for (thread_id, ns, checkpoint_id), full, versions in found:
            pieced = _packed(saver).store_pieces(cur, thread_id, ns, full)
            stored += [((thread_id, ns, ch), p.value.chunked) for ch, p in pieced.items()]
            values = {**full, **pieced}
            cur.executemany(_SAVE_FULL_VALUE, saver._dump_blobs(thread_id, ns, values, versions))
            cur.execute(
                _MARK_FULL_VALUES,
                (Jsonb(dict.fromkeys(full, True)), thread_id, ns, checkpoint_id),
            )
    for key, chunked in stored:
        _packed(saver)._chunks.stored(key, chunked)


def pieces_lock(cur: Cursor[Any], thread_id: str, ns: str, *, shared: bool) -> None:
    """Take a thread namespace's pieces lock until `cur`'s transaction ends.

    Writers storing a snapshot in pieces hold it shared, the cleanup of unused pieces
    exclusively: a piece a snapshot being written uses is never deleted under it.
    """
    kind = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
    cur.execute(f"SELECT {kind}(hashtextextended(%s, 0))", (f"{_LOCK_PREFIX}{ns}:{thread_id}",))


def _delete_unused_blobs(cur: Cursor[Any], thread_id: str, ns: str) -> None:
    """Delete a thread namespace's blobs at versions no remaining checkpoint has."""
    cur.execute(
        "SELECT checkpoint_id, parent_checkpoint_id, checkpoint -> 'channel_versions' AS versions, "
        "packed FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = %s",
        (thread_id, ns),
    )
    rows = cur.fetchall()
    payloads = Payloads(cur, thread_id, ns)
    payloads.add({r["checkpoint_id"]: (r["parent_checkpoint_id"], r["packed"]) for r in rows})
    used = {
        (channel, str(version))
        for row in rows
        for channel, version in channel_versions(
            {"channel_versions": row["versions"]}, payloads.payload(row["checkpoint_id"])
        ).items()
    }
    cur.execute(
        "SELECT channel, version FROM checkpoint_blobs WHERE thread_id = %s AND checkpoint_ns = %s",
        (thread_id, ns),
    )
    unused = sorted({(r["channel"], r["version"]) for r in cur.fetchall()} - used)
    if unused:
        cur.execute(
            "DELETE FROM checkpoint_blobs WHERE thread_id = %s AND checkpoint_ns = %s AND "
            "(channel, version) IN (SELECT * FROM unnest(%s::text[], %s::text[]))",
            (thread_id, ns, [u[0] for u in unused], [u[1] for u in unused]),
        )


def _delete(cur: Cursor[Any], doomed: Sequence[Key]) -> None:
    """Delete these checkpoints, their writes, and the blobs and pieces nothing left uses.

    Their delta children that stay are made keyframes first.
    """
    ids: dict[tuple[str, str], set[str]] = {}
    for thread_id, ns, checkpoint_id in doomed:
        ids.setdefault((thread_id, ns), set()).add(checkpoint_id)
    for (thread_id, ns), gone in sorted(ids.items()):
        cur.execute(_LOCK_ROWS, (thread_id, ns, sorted(gone)))  # a writer's new child waits
        keyframe_children(cur, thread_id, ns, gone, skip=gone)
    for table in ("checkpoints", "checkpoint_writes", "checkpoint_task_writes"):
        cur.executemany(
            f"DELETE FROM {table} WHERE thread_id = %s AND checkpoint_ns = %s "
            "AND checkpoint_id = %s",
            doomed,
        )
    for thread_id, ns in sorted({key[:2] for key in doomed}):
        _delete_unused_blobs(cur, thread_id, ns)
        pieces_lock(cur, thread_id, ns, shared=False)
        cur.execute(_PIECES_IN_USE, (thread_id, ns, PIECES_TYPE))
        used = {d for row in cur.fetchall() for d in StoredPieces.load(row["blob"]).digests}
        cur.execute(_UNUSED_PIECES, (thread_id, ns, sorted(used)))


def prune(
    saver: PostgresSaver, thread_ids: Sequence[str], strategy: str, specs: Specs | None
) -> None:
    """Keep each namespace's latest checkpoint (materialised) of each thread, or delete all."""
    ids = check_prune_args(thread_ids, strategy)
    if strategy == "delete":
        for thread_id in ids:
            saver.delete_thread(thread_id)
        return
    for thread_id in ids:
        with saver._cursor() as cur:
            cur.execute(
                "SELECT checkpoint_ns, max(checkpoint_id) AS head FROM checkpoints "
                "WHERE thread_id = %s GROUP BY checkpoint_ns",
                (thread_id,),
            )
            kept = {(thread_id, row["checkpoint_ns"], row["head"]) for row in cur.fetchall()}
        _materialise(saver, sorted(kept), specs)
        with saver._cursor() as cur, cur.connection.transaction():
            cur.execute(
                "SELECT checkpoint_ns, checkpoint_id FROM checkpoints WHERE thread_id = %s",
                (thread_id,),
            )
            doomed = [
                (thread_id, row["checkpoint_ns"], row["checkpoint_id"])
                for row in cur.fetchall()
                if (thread_id, row["checkpoint_ns"], row["checkpoint_id"]) not in kept
            ]
            if doomed:
                _delete(cur, doomed)
        _packed(saver).forget(thread_id)


def delete_for_runs(saver: PostgresSaver, run_ids: Sequence[str], specs: Specs | None) -> None:
    """Delete the checkpoints (and writes) of these runs; materialise the children they leave."""
    if isinstance(run_ids, str):
        raise TypeError("run_ids must be a sequence of run IDs, not a str")
    wanted = [str(r) for r in run_ids]
    if not wanted:
        return
    with saver._cursor() as cur:
        cur.execute(
            "SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints "
            "WHERE metadata ->> 'run_id' = ANY(%s)",
            (wanted,),
        )
        doomed = {(r["thread_id"], r["checkpoint_ns"], r["checkpoint_id"]) for r in cur.fetchall()}
        if not doomed:
            return
        cur.execute(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id FROM checkpoints "
            "WHERE thread_id = ANY(%s)",
            (sorted({key[0] for key in doomed}),),
        )
        children = cur.fetchall()
    orphans = [
        key
        for r in children
        if (key := (r["thread_id"], r["checkpoint_ns"], r["checkpoint_id"])) not in doomed
        and (r["thread_id"], r["checkpoint_ns"], r["parent_checkpoint_id"]) in doomed
    ]
    _materialise(saver, orphans, specs)
    with saver._cursor() as cur, cur.connection.transaction():
        _delete(cur, sorted(doomed))
    for thread_id in {key[0] for key in doomed}:
        _packed(saver).forget(thread_id)


def copy_thread(saver: PostgresSaver, source: str, target: str) -> None:
    """Copy every checkpoint, blob, write and piece of a thread to another id.

    The whole parent chain is copied, so the target rebuilds its delta channels as the
    source does. A target that already has rows (e.g. copied once, then pruned) is refused,
    changing nothing, as the SQLite saver refuses it: merging two chains under one id would
    mix them (LangGraph's conformance suite only copies to new thread ids).
    """
    with saver._cursor() as cur, cur.connection.transaction():
        for table in TABLES:
            cur.execute(f"SELECT 1 FROM {table} WHERE thread_id = %s LIMIT 1", (str(target),))
            if cur.fetchone() is not None:
                raise ThreadsError(
                    f"cannot copy thread {source!r} to {target!r}: thread {target!r} already "
                    "has checkpoints; delete it first or pick another thread id"
                )
        for table in TABLES:
            columns = COLUMNS[table]
            cur.execute(
                f"INSERT INTO {table} (thread_id, {columns}) "
                f"SELECT %s, {columns} FROM {table} WHERE thread_id = %s ON CONFLICT DO NOTHING",
                (str(target), str(source)),
            )
