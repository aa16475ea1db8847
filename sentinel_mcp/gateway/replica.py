"""One replica of several on a shared PostgreSQL store: what it shares, what it keeps, how it names itself.

Shared (in the database ``sentinel.store`` names): facts and contexts (and so confirmations, used once across
the cluster; the default guard's too), conversations named by a plain label, the nonces of sealed request
states, the audit log (one hash chain per replica, ``chain`` = the replica id), A2A tasks and swarm builds
(leased), the search index, consents and the sensors' records, rulebase versions, agent traces, other agents'
help requests, the console inbox. Per replica (in its data dir): a build's files, the console's rulebase load
history (docs/cluster.md has the table).

The sealing keys derive from ``sentinel.cluster.seal_key``, the same on every replica: a state sealed by one
(a 2026-07-28 input-required retry, a conversation id) opens on any other, and is still used once (the nonce
book is shared). A server store without one is refused at start, naming the setting: a key of each process's
own made every row it wrote (tasks, replies, memories, facts, consents) unreadable by the other replicas and
by itself after a restart, silently (a running task never ended, memories never read again). No key is
derived from anything the database or its URL holds: whoever can write the database must not hold it.
"""

from __future__ import annotations

import secrets
import socket
from dataclasses import dataclass
from typing import Any

from sentinel_mcp.config import Config
from sentinel_mcp.storage.postgres import set_statement_bound
from sentinel_mcp.storage.location import LocationError, expand, server_location
from sentinel_mcp.storage.server_transport import check as check_transport
from sentinel_mcp.storage.row_signature import derived_key

MIN_KEY_CHARS = 32
AUDIT = "audit"  # the audit rows' seal (``gateway/audit_seal.py``)


@dataclass(frozen=True)
class SharedStore:
    url: str  # as configured (``${VAR}`` expanded when opened); never logged: see ``redacted``
    redacted: str
    replica: str
    seal_key: bytes | None  # always set by ``shared_store``; None only where a test builds one by hand

    def key(self, purpose: str) -> bytes | None:
        """A sealing key for one purpose (request states, conversation ids: never interchangeable)."""
        if self.seal_key is None:
            return None
        return derived_key(self.seal_key, purpose)


def shared_store(config: Config) -> tuple[SharedStore | None, list[str]]:
    """The shared store a config names (None: the embedded SQLite store), and problems to report."""
    url = config.store_url
    if url is None:
        return None, []
    problems: list[str] = []
    location = server_location(url)  # LocationError (names the variable, never a secret) stops the start
    check_transport(location)  # across the network: verified TLS or nothing (server_transport.py)
    cluster = config.sentinel.cluster
    replica = cluster.replica or f"{socket.gethostname()[:40]}-{secrets.token_hex(3)}"
    if not cluster.seal_key:
        raise LocationError(
            "sentinel.store names a server store, so sentinel.cluster.seal_key must be set, the same on "
            f"every replica and every command run with this config (at least {MIN_KEY_CHARS} characters, "
            "e.g. the output of `openssl rand -hex 32`, as \"${SENTINEL_SEAL_KEY}\"): "
            "without it what this process writes to the shared store could be read by no other replica, "
            "nor by this one after a restart"
        )
    try:
        text = expand(cluster.seal_key)
    except LocationError as e:
        raise LocationError(str(e).replace("sentinel.store", "sentinel.cluster.seal_key")) from None
    if len(text) < MIN_KEY_CHARS:
        raise LocationError(
            f"sentinel.cluster.seal_key must be at least {MIN_KEY_CHARS} characters "
            "(e.g. the output of `openssl rand -hex 32`)"
        )
    set_statement_bound(cluster.commit_wait_seconds)  # before any of the store's connections is opened
    return SharedStore(url, location.redacted, replica, text.encode()), problems


def row_key(config: Config, purpose: str) -> bytes | None:
    """What the replicas sign one kind of shared row with (``"facts"``: ``policy/signed_facts.py``;
    ``"consent"``), for a command that reads or writes them (``sentinel-mcp facts``, ``query``, ``replay``,
    ``consent``). None: no server store. A server store without a seal key raises ``LocationError``."""
    shared, _ = shared_store(config)
    return shared.key(purpose) if shared is not None else None


def audit_key(config: Config) -> bytes | None:
    """What the audit rows are sealed with (``gateway/audit_seal.py``): the cluster's seal key for "audit".
    A server store without one raises ``LocationError`` (``shared_store``). An embedded store seals its rows
    only when ``sentinel.cluster.seal_key`` is set (too short raises as a server store's does); without it,
    None: no MAC, its readers trust the file (docs/durability.md says why there is no local key file)."""
    shared, _ = shared_store(config)
    if shared is not None:
        return shared.key(AUDIT)
    seal_key = config.sentinel.cluster.seal_key
    if not seal_key:
        return None
    try:
        text = expand(seal_key)
    except LocationError as e:
        raise LocationError(str(e).replace("sentinel.store", "sentinel.cluster.seal_key")) from None
    if len(text) < MIN_KEY_CHARS:
        raise LocationError(
            f"sentinel.cluster.seal_key must be at least {MIN_KEY_CHARS} characters "
            "(e.g. the output of `openssl rand -hex 32`)"
        )
    return derived_key(text.encode(), AUDIT)


async def open_nonce_book(shared: SharedStore) -> tuple[Any, Any]:
    """The cluster's nonce book and its database (the caller releases the database)."""
    from sentinel_mcp.gateway.stored_nonces import SCHEMA, StoredNonceBook
    from sentinel_mcp.storage import StorageError, open_database

    db = open_database(shared.url, "nonces")
    try:
        await db.migrate(SCHEMA)
    except StorageError:
        pass  # degraded: issuing raises and consuming refuses until the server is back (fail closed)
    return StoredNonceBook(db), db


async def checked_seal_key(shared: SharedStore) -> list[str]:
    """``gateway/cluster_key_check.py``: raises ``LocationError`` when this replica's seal key is not the
    cluster's; the problem to report when the store could not be reached to check it."""
    from sentinel_mcp.gateway.cluster_key_check import check_cluster_key
    from sentinel_mcp.storage import open_database
    from sentinel_mcp.storage.open import release

    assert shared.seal_key is not None  # shared_store always sets it
    db = open_database(shared.url, "cluster key")
    try:
        problem = await check_cluster_key(db, shared.seal_key)
    finally:
        await release(db)
    return [problem] if problem else []


async def claimed_name(shared: SharedStore) -> tuple[Any, Any, list[str]]:
    """``gateway/replica_name_lease.py``: this replica's name leased to this process (``LocationError`` when
    a live other replica holds it), the database it renews through (the caller releases it), problems."""
    from sentinel_mcp.gateway.replica_name_lease import ReplicaNameLease
    from sentinel_mcp.storage import open_database
    from sentinel_mcp.storage.open import release

    db = open_database(shared.url, "replica lease")
    lease = ReplicaNameLease(db, shared.replica)
    try:
        problem = await lease.claim()
    except BaseException:
        await release(db)
        raise
    return lease, db, [problem] if problem else []
