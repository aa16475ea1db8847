"""The sessions' dispatchers kept for the lean 2025 path (app/session_dispatch.py), driven on the SDK's own
memory streams: a session is found only by the read stream its loop serves, a request is handed over only
while that loop runs and only when the span would record nothing, and the answer leaves through the
session's own write stream. (End to end, with real clients and the SDK's path beside it:
test_lean_session_calls.py.)"""

from __future__ import annotations

import asyncio
from functools import partial
from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from mcp.server.lowlevel.server import Server
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError, JSONRPCRequest

from sentinel_mcp.app import session_dispatch
from sentinel_mcp.app.receive_asleep import receive_asleep
from sentinel_mcp.app.session_dispatch import dispatch, kernel_of
from sentinel_mcp.gateway import unspanned_kernel
from sentinel_mcp.gateway.idle_loop import loop_is_idle

pytestmark = pytest.mark.timeout(60)

TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def call(rid: Any, meta: Any = None) -> JSONRPCRequest:
    params: dict[str, Any] = {"name": "anything", "arguments": {}}
    if meta is not None:
        params["_meta"] = meta
    return JSONRPCRequest(jsonrpc="2.0", id=rid, method="tools/call", params=params)


async def _kept(read_stream: Any) -> Any:
    with anyio.fail_after(10):
        while (kernel := kernel_of(read_stream)) is None or kernel.dispatcher._tg is None:
            await anyio.sleep(0.01)
    return kernel


async def test_a_session_is_found_by_its_own_read_stream_and_answers_through_its_own_writer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tracing = [False]  # whether a tracer provider is installed (another test in this process may install one)
    monkeypatch.setattr(unspanned_kernel, "tracing_off", lambda: not tracing[0])
    server: Any = Server("session-dispatch")  # no tools/call handler: the kernel answers METHOD_NOT_FOUND
    read_send, read_recv = create_context_streams[SessionMessage | Exception](0)
    write_send, write_recv = create_context_streams[SessionMessage](4)
    async with anyio.create_task_group() as tg:
        tg.start_soon(partial(session_dispatch.serve_loop, server, read_recv, write_send, lifespan_state=None,
                              session_id="s-1"))
        kernel = await _kept(read_recv)
        # only the very stream object its loop reads: not the other end, not another object, not an id that
        # happens to match once the stream is gone
        assert kernel_of(None) is None and kernel_of(read_send) is None and kernel_of(object()) is None
        impostor = object()
        session_dispatch._KERNELS[id(impostor)] = kernel
        try:
            assert kernel_of(impostor) is None
        finally:
            del session_dispatch._KERNELS[id(impostor)]

        # trace context, or a _meta that is not an object: not handed over, nothing in flight
        for meta in ({"traceparent": TRACEPARENT}, {"baggage": "a=b"}, "text", ["x"], 3):
            assert not dispatch(kernel, call(7, meta), None), meta
        assert not kernel.dispatcher._in_flight

        # with a tracer provider installed every span may record: nothing handed over
        tracing[0] = True
        assert not dispatch(kernel, call(6), None)
        tracing[0] = False

        # the common call: handed over, run by the session's runner, answered on the session's write stream
        assert dispatch(kernel, call(8), None)
        with anyio.fail_after(10):
            answer = await write_recv.receive()
        assert isinstance(answer.message, JSONRPCError) and answer.message.id == 8
        assert answer.message.error.code == -32601  # the kernel's own answer: no such method here
        assert not kernel.dispatcher._in_flight  # the dispatcher's entry for it is gone again

        await read_send.aclose()  # the session ends: its loop returns
        with anyio.fail_after(10):
            while kernel_of(read_recv) is not None:
                await anyio.sleep(0.01)
    # once the loop has ended nothing is handed to its dispatcher (the caller uses the stream, which is shut)
    tracing[0] = False
    assert not dispatch(kernel, call(9), None)
    assert not kernel.dispatcher._in_flight


async def test_a_loop_not_yet_running_takes_nothing() -> None:
    _, read_recv = create_context_streams[SessionMessage | Exception](0)
    write_send, _ = create_context_streams[SessionMessage](1)
    kernel = session_dispatch.SessionKernel(
        dispatcher=session_dispatch.JSONRPCDispatcher(read_recv, write_send),
        unspanned=None,  # type: ignore[arg-type]
        read_stream=read_recv,
    )
    assert not dispatch(kernel, call(1), None)
    assert not kernel.dispatcher._in_flight


def test_install_makes_the_manager_serve_with_the_kept_loop() -> None:
    from mcp.server import streamable_http_manager

    session_dispatch.install()
    session_dispatch.install()  # twice: the same
    assert streamable_http_manager.serve_loop is session_dispatch.serve_loop


async def test_the_handler_runs_in_the_turn_after_the_hand_over_and_finds_the_loop_idle(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The lean 2025 path hands a call over, then waits on its request's stream without a checkpoint first
    (``receive_asleep``). The handler's first step runs in the loop's very next turn, with nothing else
    queued, so the loop looks idle to its audit rows (gateway/idle_loop.py: committed on the loop, not
    handed to the writer thread). It used to start a turn later (a ``sleep(0)`` first), to let the handing
    task's checkpoint step run ahead of it: one loop turn and two task steps a call."""
    monkeypatch.setattr(unspanned_kernel, "tracing_off", lambda: True)
    server: Any = Server("session-dispatch")
    read_send, read_recv = create_context_streams[SessionMessage | Exception](0)
    write_send, write_recv = create_context_streams[SessionMessage](4)
    seen: list[tuple[bool, int]] = []
    loop = asyncio.get_running_loop()
    turns = [0]
    run_once = loop._run_once  # type: ignore[attr-defined]

    def counted() -> None:
        turns[0] += 1
        run_once()

    monkeypatch.setattr(loop, "_run_once", counted, raising=False)

    # the request's own stream, which the lean path waits on (a plain anyio memory stream, as there)
    answers_send, answers = anyio.create_memory_object_stream[Any](1)

    async def on_request(dctx: Any, method: str, params: Any) -> dict[str, Any]:
        seen.append((loop_is_idle(), turns[0]))  # what Gateway._alone asks before each audit row
        answers_send.send_nowait(dctx.request_id)
        return {"content": []}

    async with anyio.create_task_group() as tg:
        tg.start_soon(partial(session_dispatch.serve_loop, server, read_recv, write_send, lifespan_state=None,
                              session_id="s-2"))
        kernel = await _kept(read_recv)
        # a connection of no version: the runner's own on_request is what runs (session_dispatch.handler_of)
        kernel.unspanned = SimpleNamespace(  # type: ignore[assignment]
            on_request=on_request, connection=SimpleNamespace(protocol_version=None))
        handed: list[int] = []
        for rid in range(10, 15):
            await anyio.sleep(0.01)  # nothing of the last call still queued
            handed.append(turns[0])
            assert dispatch(kernel, call(rid), None)
            with anyio.fail_after(10):  # as lean_session_calls._stream waits for its request's answer
                assert await receive_asleep(answers) == rid
                answer = await write_recv.receive()
            assert answer.message.id == rid
        await read_send.aclose()
    assert [idle for idle, _ in seen] == [True] * 5
    assert [turn - at for (_, turn), at in zip(seen, handed)] == [1] * 5
