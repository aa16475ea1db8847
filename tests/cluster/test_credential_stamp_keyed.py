"""A task row's credential stamp is keyed with the cluster's seal key: a reader of the rows cannot test
guesses of a token offline, every replica with the seal key proves it, and stamps of the other kind are
refused saying why. On both backends (a SQLite journal; a PostgreSQL store replicas share).

What broke (red team "agentcheck14"): a stamp's fingerprint was HMAC-SHA-256 of the token's SHA-256 under a
fixed key written in the source. Whoever read the task rows (a backup, a replica's database account, a DBA)
could test a dictionary of guesses of a weak configured token against it, offline, as fast as SHA-256 runs.
Now the fingerprint is keyed with ``sentinel.cluster.seal_key``'s stamp key, which the database never holds.
Real parts: the task journal on SQLite and on a real PostgreSQL, the gateway's own authenticator built from a
parsed config (``http_auth_for``), the rows read back by a second journal ("another replica").
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from sentinel_mcp.a2a.protocol import Task, TaskStatus, now_iso
from sentinel_mcp.a2a.resumed_credentials import resumed_check
from sentinel_mcp.a2a.task_journal import TaskJournal
from sentinel_mcp.a2a.task_store import PendingCall, TaskRecord
from sentinel_mcp.config import parse_config
from sentinel_mcp.identity.credential_stamp import CredentialCheck, fingerprint, stamp_of
from sentinel_mcp.identity.credentials import Credentials
from sentinel_mcp.identity.http_auth import http_auth_for
from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.identity.resolver import Authenticator, AuthFailed, token_digest
from sentinel_mcp.storage.location import is_server_url
from sentinel_mcp.storage.row_signature import derived_key

WEAK = "correcthorsebatterystaple"  # a weak configured token: in any dictionary of guesses
GUESSES = ["password1234567890", "letmeinletmeinletmein", WEAK, "iloveyouiloveyou"]
SEAL = "seal-key-of-this-cluster-0123456789abcdef"
OTHER_SEAL = "seal-key-of-another-cluster-0123456789ab"


def _auth(tmp: Path, seal: str | None) -> Authenticator:
    """The gateway's own chain, from a config as a replica of this cluster parses it."""
    sentinel = {"data_dir": str(tmp / "state"), "principals": [{"name": "alice", "token": WEAK}]}
    if seal is not None:
        sentinel["cluster"] = {"seal_key": seal}
    config = parse_config({"mcpServers": {}, "sentinel": sentinel}, source="<test>", base_dir=tmp)
    return http_auth_for(config).authenticator


async def _round_trip(location: str, stamp: dict, owner: str = "alice") -> TaskRecord:
    """``stamp`` kept on a waiting task's row by one journal, read back by another (a replica, a restart)."""
    key = derived_key(SEAL.encode(), "a2a task")
    writer = TaskJournal(location, "replica-a", key=key)
    await writer.open()
    task = Task(id=f"task-{uuid.uuid4().hex[:8]}", context_id=str(uuid.uuid4()),
                status=TaskStatus(state="TASK_STATE_INPUT_REQUIRED", timestamp=now_iso()))  # type: ignore
    pending = PendingCall("tb__delete_thing", {"name": "x1"}, ["confirm"], "tool_call",
                          identity="tb__delete_thing", credential=stamp)
    await writer.commit(TaskRecord(task=task, owner=owner, session_id=f"{owner}/s", pending=pending))
    await writer.close()
    reader = TaskJournal(location, "replica-b", key=key)
    opened = await reader.open()
    if is_server_url(location):
        record = await reader.read(task.id, owner)
    else:
        record = next((r for r in opened if r.task.id == task.id), None)
    await reader.close()
    assert record is not None and record.pending is not None
    return record


def _resumed(auth: Authenticator, record: TaskRecord):  # noqa: ANN202
    assert record.pending is not None
    check = resumed_check(auth, record, record.pending)
    assert check is not None
    return check


async def test_a_keyed_stamp_tells_a_reader_of_the_rows_nothing_and_holds_on_every_replica(
    tmp_path: Path, store_location: str
) -> None:
    auth = _auth(tmp_path, SEAL)
    check = CredentialCheck(auth, Credentials(bearer=WEAK), Principal("alice", "token"))
    record = await _round_trip(store_location, check.stamp())
    stored = record.pending.credential if record.pending is not None else None
    assert isinstance(stored, dict) and WEAK not in json.dumps(stored)
    # the reader of the rows, with the source's public key and a dictionary: no guess matches
    for guess in GUESSES:
        assert fingerprint(token_digest(guess)) not in stored["secrets"], guess
        assert token_digest(guess).hex() not in json.dumps(stored)
    # another replica of the cluster (the same seal key, its own authenticator) proves it
    assert _resumed(_auth(tmp_path, SEAL), record)().name == "alice"
    # a process with another seal key, or none, cannot: refused, saying why
    with pytest.raises(AuthFailed, match="replaced|keyed"):
        _resumed(_auth(tmp_path, OTHER_SEAL), record)()
    with pytest.raises(AuthFailed, match="seal key this process does not have"):
        _resumed(_auth(tmp_path, None), record)()


async def test_a_stamp_under_the_public_key_is_refused_once_the_seal_key_is_set(
    tmp_path: Path, store_location: str
) -> None:
    old = stamp_of(Credentials(bearer=WEAK), Principal("alice", "token"))  # as stamps were written before
    assert old["v"] == 1
    record = await _round_trip(store_location, old)
    assert _resumed(_auth(tmp_path, None), record)().name == "alice"  # still no seal key: still proved
    with pytest.raises(AuthFailed, match="before they were keyed with the seal key"):
        _resumed(_auth(tmp_path, SEAL), record)()
