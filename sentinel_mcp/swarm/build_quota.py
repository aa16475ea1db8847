"""A principal's hourly build quota on a server store, held against rows deleted or edited in SQL.

The quota counted the principal's build rows started within the hour: anyone who could write the database
without the seal key deleted rows (or moved their ``created_at`` back) and had more builds that hour. Now each
principal has a ledger row (``swarm_quota``): how many builds it ever started (``seq``, only growing) and when
its builds of the last hour started (the database's clock), signed with the cluster's key. Each build's row
keeps its number in that sequence, signed (``quota_seq``, ``quota_mac``). A submit reads both and refuses
(``BuildQuotaError``: a cap that cannot be checked denies) when the ledger's signature fails, when the ledger
is gone while a signed build of the principal is still there, or when a signed build is numbered past the
ledger (an older ledger put back). The ledger and the build row are written in one transaction, each
conditional on the ledger read being the one in the store (two submits at once: one starts).

What no row in the database can tell: the ledger and every build of the principal deleted together (the
principal then looks new; its builds' files and the audit log still say otherwise), or an older ledger put
back with the builds numbered after it deleted. An embedded SQLite store is not signed (its file is the
owner's): its quota counts rows as before.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from sentinel_mcp.core.display_text import safe_text
from sentinel_mcp.storage.database import Statement
from sentinel_mcp.storage.row_signature import sign_row, signed_row
from sentinel_mcp.swarm.task_lock import BuildQuotaError

log = logging.getLogger(__name__)

HOUR = 3600.0
MAX_KEPT = 10_000  # starts a ledger keeps (the most a configuration's hourly cap allows)
LEDGER = "swarm quota"
BUILD = "swarm quota build"
SCHEMA = """
CREATE TABLE IF NOT EXISTS swarm_quota (
    principal TEXT PRIMARY KEY,
    seq BIGINT NOT NULL,
    starts TEXT NOT NULL,
    mac TEXT NOT NULL
);
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS quota_seq BIGINT;
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS quota_mac TEXT"""


class Ledger:
    """A principal's ledger as read and checked: ``seq`` builds ever started, ``starts`` of the last hour;
    ``mac``: the signature in the store (None: no ledger yet), the condition its successor is written on."""

    def __init__(self, seq: int, starts: list[float], mac: str | None) -> None:
        self.seq, self.starts, self.mac = seq, starts, mac

    def within(self, since: float) -> list[float]:
        return sorted(t for t in self.starts if t >= since)


def _unverified(principal: str, why: str) -> BuildQuotaError:
    log.warning("swarm: the hourly build count of %s cannot be verified (%s): no build is started for it",
                safe_text(principal, 80), why)
    return BuildQuotaError(
        "your hourly build count cannot be verified (its record in the store was edited or deleted outside "
        "Sentinel); nothing was started: an operator must look at the store")


async def read(db: Any, key: bytes, principal: str) -> Ledger:
    """The principal's ledger, checked against its signature and its newest signed build; raises
    ``BuildQuotaError`` when it cannot be verified."""
    # the builds first, then the ledger: each read sees the store at its own moment, and a build committed by
    # another replica between them is then counted by the ledger read after it (they are committed together,
    # a ledger only grows); the other order took that build for a ledger deleted or put back in SQL
    newest = 0
    for tid, seq, created, mac in await db.query(
            "SELECT task_id, quota_seq, created_at, quota_mac FROM tasks WHERE principal=? AND "
            "quota_seq IS NOT NULL ORDER BY quota_seq DESC LIMIT 8", (principal,)):
        if signed_row(key, mac, BUILD, (tid, principal, seq, created)):  # planted rows vouch for nothing
            newest = int(seq)
            break
    rows = await db.query("SELECT seq, starts, mac FROM swarm_quota WHERE principal=?", (principal,))
    if not rows:
        if newest:
            raise _unverified(principal, f"its ledger is gone while its build #{newest} is there")
        return Ledger(0, [], None)
    seq, starts, mac = rows[0]
    if not signed_row(key, mac, LEDGER, (principal, seq, starts)):
        raise _unverified(principal, "its ledger's signature fails")
    kept = json.loads(starts)
    if int(seq) < newest:
        raise _unverified(principal, f"its ledger says {int(seq)} builds, its build #{newest} is there")
    return Ledger(int(seq), [float(t) for t in kept], mac)


def take(key: bytes, principal: str, ledger: Ledger, task_id: str, now: float) -> tuple[list[Statement],
                                                                                       tuple[Any, ...]]:
    """The statement writing the ledger with this build counted (after the build's own insert, in its
    transaction: written only when the build row was), and what the build's row adds: its number and its
    signature, ``(quota_seq, quota_mac)``, written with ``created_at`` = ``now``."""
    seq = ledger.seq + 1
    starts = json.dumps((ledger.within(now - HOUR) + [now])[-MAX_KEPT:])
    mac = sign_row(key, LEDGER, (principal, seq, starts))
    upsert = Statement(
        "INSERT INTO swarm_quota (principal, seq, starts, mac) SELECT ?, ?, ?, ? "
        "WHERE EXISTS (SELECT 1 FROM tasks WHERE task_id=? AND quota_seq=?) "
        "ON CONFLICT (principal) DO UPDATE SET seq=excluded.seq, starts=excluded.starts, mac=excluded.mac "
        "WHERE swarm_quota.mac IS NOT DISTINCT FROM CAST(? AS TEXT)",
        (principal, seq, starts, mac, task_id, seq, ledger.mac))
    return [upsert], (seq, sign_row(key, BUILD, (task_id, principal, seq, now)))


CURRENT = ("(SELECT mac FROM swarm_quota WHERE principal = ?) IS NOT DISTINCT FROM CAST(? AS TEXT)")
