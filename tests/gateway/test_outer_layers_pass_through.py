"""The HTTP front's two outermost ASGI layers (``StartupFailure``, ``SafeHeaders``) hand a request's inner
awaitable back instead of awaiting it in a coroutine of their own (issue 21: under load every resumption of a
request's task ran through each awaiting layer's frame). What they did stays: the safe headers on every answer
start, the lifespan's deliberate failure held and said in one line, an inner app's error and a cancellation
reaching whoever awaits the request, and uvicorn running the stack as ASGI 3 (it would take a plain
``__call__`` for ASGI 2: every request would then fail)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from tests.console.console_rig import console_config

from sentinel_mcp.app.safe_headers import SafeHeaders
from sentinel_mcp.app.serve import http_server
from sentinel_mcp.app.startup_failure import StartupFailure
from sentinel_mcp.config import load_config
from sentinel_mcp.core.errors import SentinelError

HTTP = {"type": "http", "method": "POST", "path": "/mcp", "headers": []}


class _Recorder:
    """An inner ASGI app: returns an awaitable of its own (kept, to be compared by identity) that sends an
    answer's start, then raises or waits when told."""

    def __init__(self, *, raises: BaseException | None = None, waits: asyncio.Event | None = None) -> None:
        self.raises, self.waits = raises, waits
        self.returned: list[Any] = []
        self.started = asyncio.Event()

    def __call__(self, scope: Any, receive: Any, send: Any) -> Any:
        async def run() -> None:
            self.started.set()
            await send({"type": "http.response.start", "status": 200, "headers": [(b"x-own", b"1")]})
            if self.waits is not None:
                await self.waits.wait()
            if self.raises is not None:
                raise self.raises
            await send({"type": "http.response.body", "body": b"ok"})

        awaitable = run()
        self.returned.append(awaitable)
        return awaitable


async def _receive() -> dict[str, Any]:
    return {"type": "http.request", "body": b"", "more_body": False}


def _stacks(inner: Any) -> list[Any]:
    return [StartupFailure(inner), SafeHeaders(inner), StartupFailure(SafeHeaders(inner))]


@pytest.mark.parametrize("which", [0, 1, 2])
def test_a_request_gets_the_inner_awaitable_itself(which: int) -> None:
    async def main() -> None:
        inner = _Recorder()
        sent: list[Any] = []

        async def send(message: Any) -> None:
            sent.append(message)

        handed = _stacks(inner)[which](dict(HTTP), _receive, send)
        assert handed is inner.returned[0]  # no coroutine of the layer's around it
        await handed
        assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]
        headers = dict(sent[0]["headers"])
        assert headers[b"x-own"] == b"1"
        if which:  # SafeHeaders in the stack: the safe headers joined to the answer's own
            assert headers[b"x-content-type-options"] == b"nosniff"
            assert headers[b"x-frame-options"] == b"DENY"

    asyncio.run(main())


@pytest.mark.parametrize("which", [0, 1, 2])
@pytest.mark.parametrize("error", [RuntimeError("inner broke"), SentinelError("disk full"), KeyError("k")])
def test_an_inner_error_reaches_the_awaiter_unchanged(which: int, error: BaseException) -> None:
    async def main() -> None:
        inner = _Recorder(raises=error)

        async def send(message: Any) -> None:
            pass

        with pytest.raises(type(error)) as caught:
            await _stacks(inner)[which](dict(HTTP), _receive, send)
        assert caught.value is error

    asyncio.run(main())


@pytest.mark.parametrize("which", [0, 1, 2])
def test_cancelling_the_request_cancels_the_inner_app(which: int) -> None:
    async def main() -> None:
        inner = _Recorder(waits=asyncio.Event())

        async def send(message: Any) -> None:
            pass

        async def request() -> None:
            await _stacks(inner)[which](dict(HTTP), _receive, send)

        task = asyncio.ensure_future(request())
        await inner.started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert inner.returned[0].cr_frame is None  # the inner coroutine ended (closed by the cancellation)

    asyncio.run(main())


def test_the_lifespans_deliberate_failure_is_still_held_and_kept() -> None:
    async def main() -> None:
        async def failing(scope: Any, receive: Any, send: Any) -> None:
            await send({"type": "lifespan.startup.failed", "message": "Traceback ... 60 lines"})
            raise SentinelError("the store is held by another process")

        sent: list[Any] = []

        async def send(message: Any) -> None:
            sent.append(message)

        layer = StartupFailure(SafeHeaders(failing))
        await layer({"type": "lifespan"}, _receive, send)
        assert sent == [{"type": "lifespan.startup.failed", "message": ""}]
        assert isinstance(layer.error, SentinelError)

        async def broken(scope: Any, receive: Any, send: Any) -> None:
            await send({"type": "lifespan.startup.failed", "message": "boom"})
            raise ValueError("a bug")

        sent.clear()
        layer = StartupFailure(SafeHeaders(broken))
        with pytest.raises(ValueError):
            await layer({"type": "lifespan"}, _receive, send)
        assert sent == [{"type": "lifespan.startup.failed", "message": "boom"}]  # a bug keeps its words

    asyncio.run(main())


def test_uvicorn_runs_the_front_as_asgi3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = console_config(tmp_path)
    monkeypatch.setenv("SENTINEL_DATA_DIR", str(Path(cfg).parent / "state"))
    config = http_server(load_config(cfg), "127.0.0.1", 1).config
    config.load()
    assert config.interface == "asgi3"
    assert type(config.loaded_app) is StartupFailure  # not wrapped in uvicorn's ASGI 2 adapter


@pytest.mark.parametrize("kind,start", [("websocket", "websocket.http.response.start"),
                                        ("http", "http.response.start")])
def test_a_refused_upgrade_and_a_plain_answer_still_get_the_safe_headers(kind: str, start: str) -> None:
    async def main() -> None:
        async def refusing(scope: Any, receive: Any, send: Any) -> None:
            await send({"type": start, "status": 403, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "websocket.close" if kind == "websocket" else "http.response.body"})

        sent: list[Any] = []

        async def send(message: Any) -> None:
            sent.append(message)

        handed = StartupFailure(SafeHeaders(refusing))({"type": kind, "path": "/a2a", "headers": []},
                                                       _receive, send)
        await handed
        headers = dict(sent[0]["headers"])
        assert headers[b"x-content-type-options"] == b"nosniff" and headers[b"content-type"] == b"text/plain"
        assert len(sent) == 2

    asyncio.run(main())
