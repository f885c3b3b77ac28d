"""`prune` and `delete_for_runs` for `CompactSqliteSaver`, safe with delta channels.

Every checkpoint that is kept while an ancestor goes is first *materialised*
(`wikireact.storage.materialise`): its delta channels are written whole into its row, in
their own commit, before anything older is deleted, so a crash in between leaves a thread
that reads as before. Then the kept checkpoints stored against an unkept parent are stored
whole (`wikireact.storage.sqlite.parent_deltas`), the unkept checkpoints, their `task_writes` and the
`value_chunks` pieces no kept checkpoint references go in one transaction, and the
saver's caches forget the thread. A kept checkpoint keeps its parent id even when the
parent is gone (`get_state` shows the same parent; reads stop there).

Another process may write the thread meanwhile. What goes is therefore decided again
inside the deleting transaction (`BEGIN IMMEDIATE`: no writer gets in between the check and
the delete); if a writer has added a checkpoint since the kept ones were materialised
(they would no longer be the latest, or a checkpoint left would stand on one that goes),
nothing is deleted, the new ones are materialised and the check runs again, at most
`ATTEMPTS` times.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)

from wikireact.errors import ThreadsError
from wikireact.storage.materialise import Specs, check_prune_args, full_values, with_full_values
from wikireact.storage.sqlite.codec import load_metadata
from wikireact.storage.sqlite.value_chunks import decode_refs

Key = tuple[str, str, str]
"""(thread id, checkpoint namespace, checkpoint id)."""
Plan = Callable[[Any], tuple[list[Key], set[Key]]]
"""Reads with a cursor what goes, and what stays and must be materialised first."""
ATTEMPTS = 5
"""Times a prune re-plans after writers changed the thread, before it gives up."""


class CompactSqliteSaver(Protocol):
    """What these functions use of `wikireact.storage.sqlite.saver.CompactSqliteSaver`."""

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Return a checkpoint with its pending writes."""

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Return each channel's seed and writes along the checkpoint's ancestors."""

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save a checkpoint."""

    def delete_thread(self, thread_id: str) -> None:
        """Delete a thread."""

    def cursor(self, transaction: bool = True) -> AbstractContextManager[Any]:
        """Return a cursor under the saver's lock; commit at the end if `transaction`."""

    def immediate(self) -> AbstractContextManager[Any]:
        """Return a cursor in one `BEGIN IMMEDIATE` transaction under the saver's lock."""

    def forget(self, thread_ids: Iterable[str]) -> None:
        """Drop what the caches hold of these threads."""

    def keyframe_children(
        self, cur: Any, thread_id: str, ns: str, parents: Collection[str], skip: Collection[str]
    ) -> None:
        """Store whole the checkpoints stored against a parent in `parents`."""


def _config(thread_id: str, ns: str, checkpoint_id: str | None) -> RunnableConfig:
    configurable = {"thread_id": thread_id, "checkpoint_ns": ns}
    if checkpoint_id:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def _materialise(saver: CompactSqliteSaver, keys: Sequence[Key], specs: Specs | None) -> None:
    """Write the delta channels of these checkpoints whole (all checked before any is written)."""
    found: list[tuple[CheckpointTuple, dict[str, Any]]] = []
    for key in keys:
        saved = saver.get_tuple(_config(*key))
        if saved is not None and (full := full_values(saver, saved, specs)):
            found.append((saved, full))
    for saved, full in found:
        parent = (
            saved.parent_config["configurable"]["checkpoint_id"] if saved.parent_config else None
        )
        thread_id, ns, _ = (
            saved.config["configurable"][k] for k in ("thread_id", "checkpoint_ns", "checkpoint_id")
        )
        saver.put(_config(thread_id, ns, parent), with_full_values(saved, full), saved.metadata, {})  # type: ignore[arg-type]


def _delete(saver: CompactSqliteSaver, cur: Any, doomed: Sequence[Key]) -> None:
    """Delete these checkpoints, their writes and the pieces no remaining checkpoint uses."""
    for (thread_id, ns), ids in _by_namespace(doomed).items():
        saver.keyframe_children(cur, thread_id, ns, ids, ids)
    cur.executemany(
        "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
        doomed,
    )
    cur.executemany(
        "DELETE FROM task_writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
        doomed,
    )
    for thread_id, ns in sorted({key[:2] for key in doomed}):
        used = {
            digest
            for (refs,) in cur.execute(
                "SELECT chunks FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
                "AND chunks IS NOT NULL",
                (thread_id, ns),
            )
            for _, digests in decode_refs(refs).values()
            for digest in digests
        }
        stored = cur.execute(
            "SELECT digest FROM value_chunks WHERE thread_id = ? AND checkpoint_ns = ?",
            (thread_id, ns),
        ).fetchall()
        cur.executemany(
            "DELETE FROM value_chunks WHERE thread_id = ? AND checkpoint_ns = ? AND digest = ?",
            [(thread_id, ns, d) for (d,) in stored if d not in used],
        )
    saver.forget({key[0] for key in doomed})


def _settle(saver: CompactSqliteSaver, plan: Plan, specs: Specs | None, what: str) -> None:
    """Materialise what `plan` keeps, then delete what it drops if, checked again, that still holds."""
    materialised: set[Key] = set()
    for _ in range(ATTEMPTS):
        with saver.cursor(transaction=False) as cur:
            doomed, kept = plan(cur)
        if not doomed:
            return
        _materialise(saver, sorted(kept - materialised), specs)
        materialised |= kept
        with saver.immediate() as cur:  # no writer between this check and the delete
            doomed, kept = plan(cur)
            if kept <= materialised:
                _delete(saver, cur, doomed)
                return
    raise ThreadsError(
        f"{what} kept changing while it was pruned ({ATTEMPTS} tries); "
        "try again when nothing writes to it"
    )


def _by_namespace(keys: Iterable[Key]) -> dict[tuple[str, str], set[str]]:
    out: dict[tuple[str, str], set[str]] = {}
    for thread_id, ns, checkpoint_id in keys:
        out.setdefault((thread_id, ns), set()).add(checkpoint_id)
    return out


def prune(
    saver: CompactSqliteSaver, thread_ids: Sequence[str], strategy: str, specs: Specs | None
) -> None:
    """Keep each namespace's latest checkpoint (materialised) of each thread, or delete all."""
    for thread_id in check_prune_args(thread_ids, strategy):
        if strategy == "delete":
            saver.delete_thread(thread_id)
        else:
            _settle(saver, _keep_latest(thread_id), specs, f"thread {thread_id}")


def _keep_latest(thread_id: str) -> Plan:
    """Plan a thread's prune: each namespace's latest checkpoint stays, the others go."""

    def plan(cur: Any) -> tuple[list[Key], set[Key]]:
        rows = cur.execute(
            "SELECT checkpoint_ns, checkpoint_id FROM checkpoints WHERE thread_id = ?",
            (thread_id,),
        ).fetchall()
        heads: dict[str, str] = {}
        for ns, checkpoint_id in rows:
            heads[ns] = max(heads.get(ns, checkpoint_id), checkpoint_id)
        kept = {(thread_id, ns, head) for ns, head in heads.items()}
        return [(thread_id, ns, cid) for ns, cid in rows if (thread_id, ns, cid) not in kept], kept

    return plan


def delete_for_runs(saver: CompactSqliteSaver, run_ids: Sequence[str], specs: Specs | None) -> None:
    """Delete the checkpoints (and writes) of these runs; materialise the children they leave."""
    if isinstance(run_ids, str):
        raise TypeError("run_ids must be a sequence of run IDs, not a str")
    wanted = {str(r) for r in run_ids}
    if wanted:
        _settle(saver, _runs(wanted), specs, "the store")


def _runs(wanted: Collection[str]) -> Plan:
    """Plan deleting these runs: their checkpoints go, the children they leave stay."""

    def plan(cur: Any) -> tuple[list[Key], set[Key]]:
        rows = cur.execute(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, metadata "
            "FROM checkpoints"
        ).fetchall()
        doomed = {
            (t, ns, cid)
            for t, ns, cid, _, meta in rows
            if load_metadata(meta).get("run_id") in wanted
        }
        orphans = {
            (t, ns, cid)
            for t, ns, cid, parent, _ in rows
            if (t, ns, cid) not in doomed and (t, ns, parent) in doomed
        }
        return sorted(doomed), orphans

    return plan
