"""An A2A task waiting for input (INPUT_REQUIRED) waits ``input_wait_seconds`` by the process clock
(``core/process_clock.py``), not the wall clock, and an answer past that wait is refused. The wait was
measured from the task status's wall-clock stamp against the wall clock: set back 61 s (NTP stepping a fast
clock, ``date -s``, a VM restored from a snapshot), a parked task stayed answerable 61 s past its wait; an
hour, an hour. And an answer arriving past the wait but before the next sweep (up to 30 s later, a tenth of
the wait) resumed the call.

The service runs in-process with a real guard (``open_port``); the clocks are moved as the other
clock-set-back tests move them (``time.time``/``time.monotonic``), the wall clock's ``datetime.now`` with
them."""

from __future__ import annotations

import time
import uuid
from datetime import datetime, timezone
from typing import Any, Iterator

import pytest
from tests.a2a.a2a_rig import open_port

from sentinel_mcp.a2a import input_expiry, protocol
from sentinel_mcp.a2a.jsonrpc import RpcError
from sentinel_mcp.a2a.protocol import Message, Part, SendMessageRequest
from sentinel_mcp.a2a.service import A2AService
from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.core import process_clock

_time, _mono = time.time, time.monotonic
WAIT = 600.0
STEPS = [61, 3600, 86400 * 365]


class _WallClock(datetime):
    """``datetime.now`` read from ``time.time`` (which the tests move)."""

    @classmethod
    def now(cls, tz: Any = None) -> datetime:  # type: ignore[override]
        return datetime.fromtimestamp(time.time(), tz or timezone.utc)


@pytest.fixture(autouse=True)
def clocks(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(process_clock, "CLOCK", process_clock.ProcessClock())
    for module in (protocol, input_expiry):
        if hasattr(module, "datetime"):
            monkeypatch.setattr(module, "datetime", _WallClock)
    yield
    monkeypatch.undo()


def set_back(monkeypatch: pytest.MonkeyPatch, *, wall_by: float, later_by: float) -> None:
    monkeypatch.setattr(time, "time", lambda: _time() - wall_by + later_by)
    monkeypatch.setattr(time, "monotonic", lambda: _mono() + later_by)


def _message(data: dict[str, Any], task_id: str | None = None) -> SendMessageRequest:
    return SendMessageRequest(message=Message(message_id=str(uuid.uuid4()), role="ROLE_USER",
                                              parts=[Part.of_data(data)], task_id=task_id))


def _asking() -> SendMessageRequest:
    return _message({"type": "tool_call", "tool_call_id": str(uuid.uuid4()), "name": "tools__delete_file",
                     "args": {"path": "/tmp/x"}})


async def _parked(service: A2AService) -> tuple[str, list[str]]:
    out = await service.send_message(_asking(), "rover")
    assert out["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", out
    record = next(r for r in service.store.all_records() if r.task.id == out["task"]["id"])
    assert record.pending is not None
    return record.task.id, list(record.pending.question_keys)


def _state(service: A2AService, task_id: str) -> str:
    return next(r for r in service.store.all_records() if r.task.id == task_id).task.status.state


def _answer(task_id: str, keys: list[str]) -> SendMessageRequest:
    yes = {"action": "accept", "content": {"confirm": True}}
    return _message({"answers": {k: yes for k in keys}}, task_id)


@pytest.mark.parametrize("wall_by", STEPS)
async def test_a_parked_task_ends_after_its_wait_when_the_clock_is_set_back(monkeypatch, wall_by):
    async with open_port() as port:
        service = A2AService(port, A2ASettings(input_wait_seconds=WAIT))
        try:
            task_id, _ = await _parked(service)
            set_back(monkeypatch, wall_by=wall_by, later_by=WAIT + 1)
            await service._expire_waiting()
            assert _state(service, task_id) == "TASK_STATE_FAILED"
            assert await service.waiting_for("rover") == []
        finally:
            await service.close()


@pytest.mark.parametrize("wall_by", STEPS)
async def test_a_parked_task_waits_its_time_whatever_the_clock(monkeypatch, wall_by):
    async with open_port() as port:
        service = A2AService(port, A2ASettings(input_wait_seconds=WAIT))
        try:
            task_id, keys = await _parked(service)
            set_back(monkeypatch, wall_by=wall_by, later_by=WAIT - 60)
            await service._expire_waiting()
            assert _state(service, task_id) == "TASK_STATE_INPUT_REQUIRED"
            await service.send_message(_answer(task_id, keys), "rover")  # taken: the call resumes
            assert _state(service, task_id) != "TASK_STATE_INPUT_REQUIRED"
        finally:
            await service.close()


@pytest.mark.parametrize("wall_by", [0, *STEPS])
async def test_an_answer_past_the_wait_is_refused_before_any_sweep(monkeypatch, wall_by):
    async with open_port() as port:
        service = A2AService(port, A2ASettings(input_wait_seconds=WAIT))
        try:
            task_id, keys = await _parked(service)
            set_back(monkeypatch, wall_by=wall_by, later_by=WAIT + 1)
            service._next_expiry = float("inf")  # no sweep runs first
            with pytest.raises(RpcError) as refused:
                await service.send_message(_answer(task_id, keys), "rover")
            assert "no input" in refused.value.message or "terminal" in refused.value.message
            assert _state(service, task_id) == "TASK_STATE_FAILED"
        finally:
            await service.close()


async def test_a_task_stamped_ahead_of_this_clock_waits_from_when_it_was_seen(monkeypatch):
    """A status stamped in this process's future (another replica's, or before a restart that followed a
    step back) waits its time from the first look here, not until the wall clock reaches the stamp."""
    async with open_port() as port:
        service = A2AService(port, A2ASettings(input_wait_seconds=WAIT))
        try:
            task_id, _ = await _parked(service)
            record = next(r for r in service.store.all_records() if r.task.id == task_id)
            ahead = datetime.fromtimestamp(_time() + 86400 * 365, timezone.utc)
            record.task.status.timestamp = ahead.isoformat(timespec="milliseconds").replace("+00:00", "Z")
            service._next_expiry = 0.0  # the sweep looks now (the send's own sweep ran just before)
            await service._expire_waiting()  # the first look: still waiting
            assert _state(service, task_id) == "TASK_STATE_INPUT_REQUIRED"
            set_back(monkeypatch, wall_by=0, later_by=WAIT + 1)
            await service._expire_waiting()
            assert _state(service, task_id) == "TASK_STATE_FAILED"
        finally:
            await service.close()
