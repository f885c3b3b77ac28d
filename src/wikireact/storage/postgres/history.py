"""`get_delta_channel_history` over the packed layout (`wikireact.storage.postgres.layout`).

A `DeltaChannel` stores its full value only every few writes; reading it takes the
nearest ancestor holding a value (the seed) and the channel's writes in the checkpoints
after it. The stock `PostgresSaver` finds them with SQL over the `checkpoint` jsonb's
channel versions, which the packed layout keeps in the row's payload (compressed against
its parent's, `wikireact.storage.postgres.deltas`): this walk reads the thread's rows
newest first, page by page, decodes each row's versions, follows
parent ids, and takes writes from both write tables. What it returns is what the stock
method returns (its own `_build_delta_channels_writes_history` assembles it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langgraph.checkpoint.base import DeltaChannelHistory

from wikireact.storage.postgres import layout
from wikireact.storage.postgres.deltas import Payloads
from wikireact.storage.sqlite.codec import unpack_writes

if TYPE_CHECKING:
    from langgraph.checkpoint.postgres import PostgresSaver

PAGE = 256
"""Checkpoint rows read per query while walking ancestors."""
_PAGE_SQL = (
    "SELECT checkpoint_id, parent_checkpoint_id, checkpoint -> 'channel_values' AS inline, "
    "checkpoint -> 'channel_versions' AS versions, packed FROM checkpoints "
    "WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id <= %s "
    "ORDER BY checkpoint_id DESC LIMIT %s"
)


class _Row:
    """One checkpoint as the walk sees it: parent, inline values, channel versions."""

    __slots__ = ("inline", "parent", "versions")

    def __init__(self, row: Mapping[str, Any], payloads: Payloads) -> None:
        self.parent: str | None = row["parent_checkpoint_id"]
        self.inline: dict[str, Any] = row["inline"] or {}
        self.versions = layout.channel_versions(
            {"channel_versions": row["versions"]}, payloads.payload(row["checkpoint_id"])
        )


def delta_history(
    saver: PostgresSaver,
    thread_id: str,
    ns: str,
    target: str,
    channels: Sequence[str],
) -> dict[str, DeltaChannelHistory]:
    """Return each channel's seed and writes along `target`'s ancestors (oldest first)."""
    rows: dict[str, _Row] = {}
    chains: dict[str, list[str]] = {ch: [] for ch in channels}
    seed_version: dict[str, str | None] = dict.fromkeys(channels)
    seed_inline: dict[str, Any] = {}
    blobs: dict[tuple[str, str], tuple[str, bytes]] = {}
    at: dict[str, str | None] = {}
    cursor: str | None = target
    with saver._cursor() as cur:
        payloads = Payloads(cur, thread_id, ns)
        while cursor is not None:
            page = cur.execute(_PAGE_SQL, (thread_id, ns, cursor, PAGE)).fetchall()
            payloads.add(
                {r["checkpoint_id"]: (r["parent_checkpoint_id"], r["packed"]) for r in page}
            )
            rows.update((r["checkpoint_id"], _Row(r, payloads)) for r in page)
            if target not in rows:
                return {ch: {"writes": []} for ch in channels}
            wanted = {
                (ch, str(row.versions[ch]))
                for row in rows.values()
                for ch in channels
                if ch in row.versions
            } - blobs.keys()
            if wanted:
                pairs = sorted(wanted)
                cur.execute(
                    layout.BLOBS_SQL,
                    (thread_id, ns, [p[0] for p in pairs], [p[1] for p in pairs]),
                )
                blobs |= {(r["channel"], r["version"]): (r["type"], r["blob"]) for r in cur}
            waiting = False
            for ch in channels:
                if ch in seed_version and seed_version[ch] is not None:
                    continue
                cid = at[ch] if ch in at else rows[target].parent
                while cid is not None and cid in rows:
                    chains[ch].append(cid)
                    row = rows[cid]
                    version = str(row.versions.get(ch, ""))
                    if (ch, version) in blobs or row.inline.get(ch) is not None:
                        seed_version[ch] = version
                        if (ch, version) not in blobs:
                            seed_inline[ch] = row.inline[ch]
                        cid = None
                        break
                    cid = row.parent
                at[ch] = cid
                waiting = waiting or cid is not None
            cursor = page[-1]["checkpoint_id"] if waiting and len(page) == PAGE else None
        chain = sorted({cid for cids in chains.values() for cid in cids})
        cur.execute(
            "SELECT 'w' AS _kind, checkpoint_id, channel, type, blob, task_id, task_path, idx "
            "FROM checkpoint_writes WHERE thread_id = %s AND checkpoint_ns = %s "
            "AND checkpoint_id = ANY(%s) AND channel = ANY(%s)",
            (thread_id, ns, chain, list(channels)),
        )
        stage2: list[Any] = cur.fetchall()
        cur.execute(
            f"SELECT checkpoint_id, task_id, task_path, data FROM {layout.TASK_WRITES} "
            "WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = ANY(%s)",
            (thread_id, ns, chain),
        )
        packed = cur.fetchall()
    stage2 += [
        {
            "_kind": "w",
            "checkpoint_id": r["checkpoint_id"],
            "channel": channel,
            "type": type_,
            "blob": blob,
            "task_id": r["task_id"],
            "task_path": r["task_path"],
            "idx": idx,
        }
        for r in packed
        for idx, channel, type_, blob in unpack_writes(r["data"])
        if channel in chains
    ]
    stage2 += [
        {"_kind": "b", "channel": ch, "version": version, "type": kind, "blob": blob}
        for (ch, version), (kind, blob) in blobs.items()
        if seed_version.get(ch) == version
    ]
    return saver._build_delta_channels_writes_history(
        channels=channels,
        chain_by_ch=chains,
        seed_ver_by_ch=seed_version,
        seed_inline_by_ch=seed_inline,
        stage2_rows=stage2,
    )
