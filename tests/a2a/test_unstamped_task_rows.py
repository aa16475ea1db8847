"""A waiting A2A task row with no credential stamp (written before stamps existed) resumes unchecked only for
a principal whose credentials cannot lapse while Sentinel runs.

What broke (red team "agentcheck14"): the rule for a row without a stamp asked only whether the owner's token
is a followed file (the owner's rotatable token). A principal that signs in with a client certificate (which
can be revoked, expire, or lose its CA) also has credentials that lapse, yet its unstamped row resumed with no
check at all: the person's answer in the console sent the call as that principal, whatever became of its
certificate. Now such a row resumes only when every way its owner signs in now is a fixed secret of the config
(nothing to rotate or revoke while the process runs); otherwise, or for an owner no resolver knows any more,
it fails closed with the reason.

Real parts: a real SQLite task journal (the row written, its ``pending`` column rewritten as an older version
wrote it, read back by a new journal), a real authenticator chain (certificate rules, fixed tokens, the
owner's token file)."""

from __future__ import annotations

import json
import sqlite3
import uuid
from pathlib import Path

import pytest

from sentinel_mcp.a2a.protocol import Task, TaskStatus, now_iso
from sentinel_mcp.a2a.resumed_credentials import resumed_check
from sentinel_mcp.a2a.task_journal import TaskJournal
from sentinel_mcp.a2a.task_store import PendingCall, TaskRecord
from sentinel_mcp.identity import owner_token
from sentinel_mcp.identity.certificates import CertificateResolver
from sentinel_mcp.identity.file_secret import FileSecret
from sentinel_mcp.identity.principal import ANONYMOUS, Principal
from sentinel_mcp.identity.resolver import Authenticator, AuthFailed, TokenResolver, token_digest
from sentinel_mcp.tls.settings import CertificateMatch

OWNER = Principal("owner", "token")
ALICE = Principal("alice", "token")  # a fixed token of the config: it holds for the process's life
CAROL = Principal("carol", "certificate")  # signs in with a client certificate only
DAVE = Principal("dave", "token")  # a fixed token and a certificate rule: either may have sent the task


def _auth(tmp: Path, *, certificates: bool = True) -> Authenticator:
    token, _ = owner_token.load_or_create(tmp)
    tokens = TokenResolver()
    tokens.follow(OWNER, FileSecret(owner_token.token_path(tmp), "the owner's token", token, token_digest))
    tokens.add(ALICE, token="alice-token-0123456789abcdef")
    tokens.add(DAVE, token="dave-token-0123456789abcdef00")
    rules = [(CertificateMatch(subject="CN=carol"), CAROL), (CertificateMatch(subject="CN=dave"), DAVE)]
    return Authenticator([*([CertificateResolver(rules)] if certificates else []), tokens])


async def _unstamped_rows(tmp: Path, owners: list[str]) -> dict[str, TaskRecord]:
    """Waiting tasks of ``owners`` as a journal reads them back, their pending calls as written before stamps
    existed (no ``credential`` at all)."""
    db = tmp / "tasks.db"
    journal = TaskJournal(db)
    await journal.open()
    for owner in owners:
        task = Task(id=f"task-{owner}", context_id=str(uuid.uuid4()),
                    status=TaskStatus(state="TASK_STATE_INPUT_REQUIRED", timestamp=now_iso()))  # type: ignore
        pending = PendingCall("tb__delete_thing", {"name": "x1"}, ["confirm"], "tool_call",
                              identity="tb__delete_thing")
        await journal.commit(TaskRecord(task=task, owner=owner, session_id=f"{owner}/s", pending=pending))
    await journal.close()
    with sqlite3.connect(db) as conn:  # as an older version wrote the column
        for (task_id, pending_json) in conn.execute("SELECT id, pending FROM a2a_task").fetchall():
            old = {k: v for k, v in json.loads(pending_json).items() if k != "credential"}
            conn.execute("UPDATE a2a_task SET pending = ? WHERE id = ?", (json.dumps(old), task_id))
    conn.close()
    again = TaskJournal(db)
    records = {r.owner: r for r in await again.open()}
    await again.close()
    assert all(r.pending is not None and r.pending.credential is None for r in records.values()), records
    return records


async def test_an_unstamped_row_resumes_unchecked_only_when_its_owner_cannot_lapse(tmp_path: Path) -> None:
    records = await _unstamped_rows(tmp_path, ["owner", "alice", "carol", "dave", "ghost"])
    auth = _auth(tmp_path)

    def check_of(owner: str):  # noqa: ANN202
        record = records[owner]
        assert record.pending is not None
        return resumed_check(auth, record, record.pending)

    assert check_of("alice") is None  # a fixed token: nothing to prove again
    for owner in ("owner", "carol", "dave", "ghost"):  # a token file, a certificate, either, nobody now
        check = check_of(owner)
        assert check is not None, owner
        with pytest.raises(AuthFailed, match="were not recorded|cannot be proved"):
            check()


async def test_without_certificates_a_fixed_token_owner_still_resumes(tmp_path: Path) -> None:
    records = await _unstamped_rows(tmp_path, ["alice", "dave"])
    auth = _auth(tmp_path, certificates=False)
    for owner in ("alice", "dave"):
        record = records[owner]
        assert record.pending is not None
        assert resumed_check(auth, record, record.pending) is None, owner


async def test_the_anonymous_caller_of_an_open_front_resumes(tmp_path: Path) -> None:
    records = await _unstamped_rows(tmp_path, [ANONYMOUS.name, "carol"])
    auth = Authenticator([TokenResolver()], required=False)  # "auth": "none": nobody signs in
    anonymous = records[ANONYMOUS.name]
    assert anonymous.pending is not None
    assert resumed_check(auth, anonymous, anonymous.pending) is None
    carol = records["carol"]
    assert carol.pending is not None
    check = resumed_check(auth, carol, carol.pending)  # a name the open front does not give: not proved
    assert check is not None
    with pytest.raises(AuthFailed):
        check()
