"""Other agents' HumanAssistRequests, kept for the person: ``<data_dir>/a2a/assist.db`` (with replicas: the
PostgreSQL store they share, so any replica's console shows them and the reply reaches the waiting task).

A peer's request arrives over A2A (the service stores it and its task waits), or in a bridged chat (the
channel
shows it too). The person sees them in ``sentinel-mcp chat`` (``/assist``, ``/reply``) and in the console's
inbox
(``AssistInbox.open_requests``); a reply is written here and the A2A service, in whichever process serves the
requester, picks it up and sends it back. Everything here came from another agent: shown safely, never acted
on.
Behind the storage seam (its schema migrated there, every change committed before it returns, a store
that cannot be written refuses): shared (rollback journal), so the terminal and the server process write the
same file. The API is blocking; the async side calls it through a worker thread.
"""

from __future__ import annotations

import json
import logging
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sentinel_mcp.core.errors import A2AError
from sentinel_mcp.core.typed_text import typed_text
from sentinel_mcp.storage import Schema, open_database
from sentinel_mcp.storage.location import is_server_url
from sentinel_mcp.storage.open import release_blocking
from sentinel_mcp.storage.row_signature import PROCESS_KEY, sign, signed
from sentinel_mcp.storage.sqlite import SHARED

# version 1 is the file kept before the seam (unchanged tables: an old assist.db gains the version row)
_SQLITE = """
CREATE TABLE IF NOT EXISTS assist_requests (
    id TEXT PRIMARY KEY,
    at TEXT NOT NULL,
    from_agent TEXT NOT NULL,
    reason TEXT NOT NULL,
    questions TEXT NOT NULL,
    context TEXT,
    channel TEXT,
    task_id TEXT,
    status TEXT NOT NULL DEFAULT 'open',
    reply TEXT,
    replied_at TEXT
);
CREATE INDEX IF NOT EXISTS assist_open ON assist_requests (status, at);
CREATE TABLE IF NOT EXISTS chat_bridges (
    channel TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    target TEXT NOT NULL,
    opened_at TEXT NOT NULL,
    relayed INTEGER NOT NULL DEFAULT 0
)
"""
# replicas on one PostgreSQL keep help requests there: the person answers on any replica's console, and the
# replica whose task waits for the reply reads it (it polls ``get``); the same tables. There the reply goes
# to another agent as the person's word: signed by the replica that took it (request, reply, when), checked
# before it is read as answered, so a reply written in SQL, edited or moved to another request is nobody's
_MAC = "ALTER TABLE assist_requests ADD COLUMN IF NOT EXISTS mac TEXT"
# the agent id the peer claims, apart from its reason: kept in the reason ("... (says agent_id 'x')"), a peer
# could write that suffix itself and the person could not tell Sentinel's attribution from the peer's text
_SAYS = "ALTER TABLE assist_requests ADD COLUMN says_agent TEXT"
_SAYS_PG = "ALTER TABLE assist_requests ADD COLUMN IF NOT EXISTS says_agent TEXT"
SCHEMA = Schema("assist", {"sqlite": [_SQLITE, _SAYS], "postgres": [_SQLITE, _MAC, _SAYS_PG]})
PURPOSE = "assist reply"
FIELDS = (
    "id",
    "at",
    "from_agent",
    "reason",
    "questions",
    "context",
    "channel",
    "task_id",
    "status",
    "reply",
    "replied_at",
    "says_agent",  # the agent id the peer says it is (its word; ``from_agent`` is who authenticated)
)
# beyond them, new requests are refused: one agent cannot flood the person's inbox (MAX_OPEN_PER_AGENT), nor
# all of them together (MAX_OPEN: room for 25 agents at their cap)
MAX_OPEN_PER_AGENT = 20
MAX_OPEN = 500
MAX_REPLY = 4000
# the record of bridged chats is history, not state: each new bridge prunes what is older than
# BRIDGE_KEEP_DAYS and all but the newest MAX_BRIDGES, so a caller who opens bridge after bridge cannot grow
# the shared store without bound (``bridges`` shows the newest 200 anyway)
MAX_BRIDGES = 1000
BRIDGE_KEEP_DAYS = 30
_PRUNE_BRIDGES = (
    "DELETE FROM chat_bridges WHERE opened_at < ? OR channel NOT IN "
    "(SELECT channel FROM chat_bridges ORDER BY opened_at DESC, channel DESC LIMIT ?)"
)
# settled requests (delivered, expired, canceled; a bridged chat's answered: relayed as it was given) are
# history too: each new request prunes those settled more than SETTLED_KEEP_DAYS ago and all but the newest
# MAX_SETTLED, so a peer that asks and cancels in a loop cannot grow the shared store without bound. An open
# request is never pruned, nor a reply its requester's task has not read yet ("answered": the task polls
# ``get`` and marks it "delivered" once it went back). No clock decides that: a wall clock set a year
# forward must not delete a reply nobody has read. Unread replies exist only by the person's hand (a task
# whose process ended before it read one); the newest MAX_UNREAD are kept.
MAX_SETTLED = 1000
MAX_UNREAD = 1000
SETTLED_KEEP_DAYS = 30
_UNREAD = "status = 'answered' AND coalesce(channel, '') = ''"
_PRUNE_SETTLED = (
    f"DELETE FROM assist_requests WHERE status <> 'open' AND NOT ({_UNREAD}) "
    "AND (coalesce(replied_at, at) < ? "
    f"OR id NOT IN (SELECT id FROM assist_requests WHERE status <> 'open' AND NOT ({_UNREAD}) "
    "ORDER BY coalesce(replied_at, at) DESC, id DESC LIMIT ?))"
)
_PRUNE_UNREAD = (
    f"DELETE FROM assist_requests WHERE {_UNREAD} AND id NOT IN "
    f"(SELECT id FROM assist_requests WHERE {_UNREAD} ORDER BY replied_at DESC, id DESC LIMIT ?)"
)
# one statement: the count and the insert are one atomic step, so concurrent peers cannot pass the bound (on
# PostgreSQL, whose statements see what was committed when they began, by no more than the inserts in flight
# at the moment the bound is reached)
_ADD = (
    "INSERT INTO assist_requests "
    "(id, at, from_agent, reason, questions, context, channel, task_id, says_agent) "
    "SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE (SELECT count(*) FROM assist_requests WHERE status = 'open') < ? "
    "AND (SELECT count(*) FROM assist_requests WHERE status = 'open' AND from_agent = ?) < ?"
)


log = logging.getLogger(__name__)


class InboxFull(A2AError):
    pass


def utc_now() -> str:
    return _stamp(datetime.now(UTC))


def _stamp(at: datetime) -> str:
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def settled_reason(row: dict[str, Any]) -> str:
    """Why a request takes no reply now: another session or the terminal answered it first, or it expired."""
    if row["status"] in ("answered", "delivered"):
        return (
            f"this help request was already answered (at {row['replied_at']}): your reply was not sent, "
            "the first reply is the one that went back"
        )
    return "this help request has expired: your reply was not sent"


class AssistInbox:
    def __init__(self, path: Path | str, key: bytes | None = None) -> None:
        """``path``: the data dir's file (``inbox_path``), or the ``postgresql://`` URL replicas share;
        ``key``: what the replies are signed with there (the cluster's; None: this process's own). A file is
        this machine's: the terminal and the gateway share it unsigned."""
        self.path = path
        self.shared = is_server_url(path)
        self.key = key if key is not None else PROCESS_KEY
        self.refused = 0  # answered rows not signed by a replica of this cluster, seen here
        self._db = open_database(path, "assist", SHARED)
        try:
            self._db.migrate_blocking(SCHEMA)
        except BaseException:
            self.release()
            raise

    def release(self) -> None:
        """Let go of the database (the last holder in this process closes it)."""
        if self._db is not None:
            db, self._db = self._db, None
            release_blocking(db)

    def add(
        self,
        *,
        from_agent: str,
        reason: str,
        questions: list[str],
        context: str | None = None,
        channel: str | None = None,
        task_id: str | None = None,
        says_agent: str | None = None,
    ) -> str:
        """``reason``: the peer's own text, nothing of Sentinel's in it; ``says_agent``: the id it claims."""
        request_id = f"har-{uuid.uuid4().hex[:10]}"
        row = (
            request_id,
            utc_now(),
            from_agent[:200],
            reason[:2000],
            json.dumps([q[:500] for q in questions[:10]]),
            (context or "")[:200] or None,
            channel,
            task_id,
            None if says_agent is None else says_agent[:200],
        )
        if self._db.write_blocking(_ADD, (*row, MAX_OPEN, row[2], MAX_OPEN_PER_AGENT)).rowcount != 1:
            (mine,) = self._db.query_blocking(
                "SELECT count(*) FROM assist_requests WHERE status = 'open' AND from_agent = ?", (row[2],)
            )[0]
            if mine >= MAX_OPEN_PER_AGENT:
                raise InboxFull(
                    f"you already have {mine} open help requests to the person (at most {MAX_OPEN_PER_AGENT} "
                    "per agent): wait for replies"
                )
            (n,) = self._db.query_blocking("SELECT count(*) FROM assist_requests WHERE status = 'open'")[0]
            raise InboxFull(f"the person already has {n} open help requests")
        oldest = _stamp(datetime.now(UTC) - timedelta(days=SETTLED_KEEP_DAYS))
        self._db.write_blocking(_PRUNE_SETTLED, (oldest, MAX_SETTLED))
        self._db.write_blocking(_PRUNE_UNREAD, (MAX_UNREAD,))
        return request_id

    def open_requests(self, limit: int = 50) -> list[dict[str, Any]]:
        return self._select("status = 'open' ORDER BY at LIMIT ?", (limit,))

    def count_open(self, *, not_from: str) -> int:
        """How many open requests wait for the person's reply in the console: every one (no list cut-off), but
        not bridged chats' (answered on their chat) nor those of the agent ``not_from`` (the viewer's own)."""
        (n,) = self._db.query_blocking(
            "SELECT count(*) FROM assist_requests WHERE status = 'open' "
            "AND (channel IS NULL OR channel = '') AND from_agent != ?",
            (not_from,),
        )[0]
        return int(n)

    def get(self, request_id: str) -> dict[str, Any] | None:
        rows = self._select("id = ?", (request_id,))
        return rows[0] if rows else None

    def answer(self, request_id: str, reply: str) -> bool:
        """The person's reply; False when there is no such open request (answered already, or unknown).

        ``TypedTextRefused`` (a ValueError) for a reply that is blank, too long or holds a character that
        changes how text reads. Of several answering at once, exactly one is kept: the UPDATE only takes an
        open row.
        """
        reply = typed_text(reply, limit=MAX_REPLY)
        at = utc_now()
        if not self.shared:
            done = self._db.write_blocking(
                "UPDATE assist_requests SET status = 'answered', reply = ?, replied_at = ? "
                "WHERE id = ? AND status = 'open'",
                (reply, at, request_id),
            )
            return done.rowcount == 1
        done = self._db.write_blocking(
            "UPDATE assist_requests SET status = 'answered', reply = ?, replied_at = ?, mac = ? "
            "WHERE id = ? AND status = 'open'",
            (reply, at, sign(self.key, PURPOSE, request_id, reply, at), request_id),
        )
        return done.rowcount == 1

    def delivered(self, request_id: str) -> None:
        """The requester's task has read the reply and sent it back: history now, pruned like any settled."""
        self._db.write_blocking(
            "UPDATE assist_requests SET status = 'delivered' WHERE id = ? AND status = 'answered'",
            (request_id,),
        )

    def close(self, request_id: str, status: str = "expired") -> None:
        self._db.write_blocking(
            "UPDATE assist_requests SET status = ? WHERE id = ? AND status = 'open'", (status, request_id)
        )

    def record_bridge(self, channel: str, owner: str, target: str) -> None:
        """A person's chat bridged to another agent (who opened it, to whom, when)."""
        self._db.write_blocking(
            "INSERT INTO chat_bridges (channel, owner, target, opened_at) VALUES (?, ?, ?, ?)",
            (channel, owner[:200], target[:300], utc_now()),
        )
        oldest = _stamp(datetime.now(UTC) - timedelta(days=BRIDGE_KEEP_DAYS))
        self._db.write_blocking(_PRUNE_BRIDGES, (oldest, MAX_BRIDGES))

    def bridge_relayed(self, channel: str) -> None:
        self._db.write_blocking("UPDATE chat_bridges SET relayed = relayed + 1 WHERE channel = ?", (channel,))

    def bridges(self, owner: str | None = None) -> list[dict[str, Any]]:
        rows = self._db.query_blocking(
            "SELECT channel, owner, target, opened_at, relayed FROM chat_bridges "
            + ("WHERE owner = ? " if owner else "")
            + "ORDER BY opened_at DESC LIMIT 200",
            (owner,) if owner else (),
        )
        return [dict(zip(("channel", "owner", "target", "opened_at", "relayed"), r)) for r in rows]

    def _select(self, where: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
        mac = ", mac" if self.shared else ""
        rows = self._db.query_blocking(
            f"SELECT {', '.join(FIELDS)}{mac} FROM assist_requests WHERE {where}", params
        )
        out = []
        for row in rows:
            item = dict(zip(FIELDS, row))
            item["questions"] = json.loads(item["questions"])
            if self.shared and item["status"] == "answered" and not signed(
                    self.key, row[len(FIELDS)], PURPOSE, item["id"], item["reply"], item["replied_at"]):
                # nobody's reply: never sent back as the person's (the request takes no other reply either)
                self.refused += 1
                log.warning("help request %s: its reply is not signed by a replica of this cluster; not "
                            "taken", str(item["id"])[:40])
                item.update(status="refused", reply=None)
            out.append(item)
        return out


def inbox_path(data_dir: Path | str) -> Path:
    return Path(data_dir) / "a2a" / "assist.db"


def inbox_location(data_dir: Path | str, store_url: str | None) -> Path | str:
    """Where help requests live: the store replicas share, when there is one; else the data dir's file."""
    return store_url or inbox_path(data_dir)
