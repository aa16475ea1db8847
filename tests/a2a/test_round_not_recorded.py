"""A continued round (the answers to a task waiting for input) runs only once the task store has it recorded
as running: with one gateway on SQLite that record was only queued, so a store that failed through the round
left the task stored as it was before it (waiting, its call pending) while the call ran; after a restart the
task answered as current what was stale, and the same answers ran the call a second time. Now a round the
store cannot record runs nothing (the caller is told, and may retry), and one whose outcome could not be
recorded is read back as interrupted, never as the round before. Real SQLite, a real guard (``open_port``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.a2a.a2a_rig import open_port
from tests.a2a.test_input_wait_clock_set_back import _answer, _parked

from sentinel_mcp.a2a.jsonrpc import INTERNAL_ERROR, RpcError
from sentinel_mcp.a2a.protocol import GetTaskRequest
from sentinel_mcp.a2a.service import A2AService
from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.storage import Statement

pytestmark = pytest.mark.timeout(60)
# a store that refuses to write tasks (a full disk, as SQLite raises it), or only the states after WORKING
FAILING = [f"CREATE TRIGGER no_{verb} BEFORE {verb} ON a2a_task {{when}} BEGIN "
           "SELECT RAISE(ABORT, 'disk full'); END" for verb in ("INSERT", "UPDATE")]
MENDED = ["DROP TRIGGER no_INSERT", "DROP TRIGGER no_UPDATE"]


async def on_disk(service: A2AService, script: list[str]) -> None:
    """(Through the gateway's own connection: it holds the file's lock.)"""
    assert service._journal is not None
    await service._journal.db.run([Statement(sql) for sql in script])


def deletes(port: object) -> int:
    return sum(1 for c in port.calls if c.name == "tools__delete_file")  # type: ignore[attr-defined]


@pytest.mark.parametrize("failing", ["every write", "past working"])
async def test_a_round_the_store_did_not_record_is_never_answered_as_the_round_before(
        tmp_path: Path, failing: str) -> None:
    db = tmp_path / "tasks.db"
    when = "" if failing == "every write" else "WHEN NEW.state <> 'TASK_STATE_WORKING'"
    async with open_port() as port:
        service = A2AService(port, A2ASettings())
        await service.open(db)
        try:
            task_id, keys = await _parked(service)
            asked = deletes(port)  # (the call that asked)
            await on_disk(service, [sql.format(when=when) for sql in FAILING])
            try:
                out = (await service.send_message(_answer(task_id, keys), "rover"))["task"]
            except RpcError as e:  # not recorded as running: nothing ran, the task waits as stored
                assert failing == "every write" and e.code == INTERNAL_ERROR
                assert "nothing was run" in e.message and deletes(port) == asked
            else:  # recorded as running, its outcome not: said so, never shown as done
                assert failing == "past working" and deletes(port) == asked + 1
                assert out["status"]["state"] == "TASK_STATE_FAILED"
                assert "could not be recorded" in out["status"]["message"]["parts"][0]["text"]
            await on_disk(service, MENDED)
        finally:
            await service.close()
        ran = deletes(port) - asked
    async with open_port() as port:  # the gateway restarts on the same store
        service = A2AService(port, A2ASettings())
        await service.open(db)
        try:
            task = await service.get_task(GetTaskRequest(id=task_id), "rover")
            if ran:  # the round ran: read back as interrupted, and its answers run nothing again
                assert task["status"]["state"] == "TASK_STATE_FAILED"
                with pytest.raises(RpcError):
                    await service.send_message(_answer(task_id, keys), "rover")
                assert deletes(port) == 0
            else:  # nothing ran: the task waits as stored, and the answers run it once
                assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
                done = (await service.send_message(_answer(task_id, keys), "rover"))["task"]
                assert done["status"]["state"] == "TASK_STATE_COMPLETED" and deletes(port) == 1
        finally:
            await service.close()
