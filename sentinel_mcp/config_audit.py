"""``sentinel.audit``: how durable each audit row is when its call goes on (docs/durability.md).

``"sync": "full"`` (the default): a call's decision row is on disk before the call is forwarded and its
outcome row before it is answered (SQLite WAL, ``synchronous=FULL``: an fsync a commit). ``"process"``: the
same commits, each in the operating system's cache when the call goes on (WAL, ``synchronous=NORMAL``):
every answered call's rows survive the gateway's death (``kill -9``, a crash), not a power cut or a kernel
crash, which may take the newest rows (the chain then ends early; an anchor written after them says it was
cut). It saves the two fsyncs a call, about half the gateway's added latency on a disk.

A PostgreSQL store is refused with ``"process"``: the server's equivalent (``synchronous_commit=off``)
confirms a commit the server has not yet flushed, so a crash of the server's process (not only of its
machine) loses rows already reported as written, a weaker promise than the name says. The server's own
``synchronous_commit`` decides how durable its commits are.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

SYNC_MODES = ("full", "process")
# what each mode keeps, in the words the banner, /healthz and ``audit verify`` show
SYNC_MEANING = {
    "full": "each row on disk before its call goes on (survives a power cut)",
    "process": "each row in the OS cache before its call goes on: survives the gateway's kill -9, "
               "NOT a power cut or kernel crash",
}


class AuditSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    sync: Literal["full", "process"] = "full"


def refused_on_server(settings: AuditSettings, server_store: bool) -> str | None:
    """Why ``settings`` cannot apply to the store, or None."""
    if server_store and settings.sync != "full":
        return ('audit.sync "process" applies to a SQLite store only: on PostgreSQL its equivalent '
                "(synchronous_commit=off) confirms commits the server has not flushed, lost with the "
                'server\'s process; use "full" (the server\'s own synchronous_commit decides the rest)')
    return None
