"""The lean upstream client (gateway/lean_upstream.py): a modern streamable-HTTP upstream's ``tools/call`` as
one POST. Against real upstream processes over real HTTP on 127.0.0.1:

- the same calls down the lean path and down the SDK's client give the same results (``Upstream`` in
  process, its lean caller switched off for the second pass), and through a whole gateway with the real
  ``mcp`` client in front in both eras;
- a hostile upstream (tests/gateway/hostile_http_upstream.py) gets a clear error for every malformed,
  oversized, slow or misdirected answer, never a hang, and the next call still works.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from sentinel_mcp.config import RemoteServer
from sentinel_mcp.gateway.upstream import Upstream, UpstreamCallError, UpstreamHooks
from tests.conftest import free_port, stop_process, wait_http
from tests.gateway.helpers import TOOLBOX

pytestmark = pytest.mark.timeout(180)
ROOT = Path(__file__).resolve().parents[2]


def _serve(cmd: list[str], port: int) -> subprocess.Popen:
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    wait_http(f"http://127.0.0.1:{port}/mcp", proc=proc)
    return proc


@pytest.fixture(scope="module")
def toolbox() -> Any:
    port = free_port()
    proc = _serve([sys.executable, TOOLBOX, "--http", str(port)], port)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_process(proc)


@pytest.fixture(scope="module")
def hostile() -> Any:
    port = free_port()
    proc = _serve([sys.executable, "-m", "tests.gateway.hostile_http_upstream", str(port)], port)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_process(proc)


async def _nothing(*_: Any) -> None:
    return None


async def _with_upstream(url: str, body: Any, *, protocol: str = "modern", timeout: float = 60.0) -> Any:
    up = Upstream("tb", RemoteServer(url=url, protocol=protocol, timeout=timeout),  # type: ignore[arg-type]
                  UpstreamHooks(catalog_changed=_nothing), health_interval=3600)
    async with anyio.create_task_group() as tg:
        tg.start_soon(up.run)
        assert await up.wait_ready(30), up.last_error
        try:
            return await body(up)
        finally:
            await up.stop()


def _plain(result: Any) -> dict:
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)


CALLS = [("noop", {}), ("echo", {"text": "héllo \u2028 \"q\""}), ("add", {"a": 2, "b": 3.5}),
         ("add", {"a": "x", "b": 1}), ("item", {"key": "k1"}), ("no_such_tool", {})]


def test_lean_and_sdk_paths_give_the_same_results(toolbox: str) -> None:
    async def body(up: Upstream) -> tuple[list, list, list]:
        assert up.lean is not None and up.modern
        seen: list[str] = []

        async def progress(p: float, total: float | None, message: str | None) -> None:
            seen.append(f"{p}/{total}")

        async def run() -> list:
            out = []
            for tool, args in CALLS:
                try:
                    out.append(_plain(await up.call_tool(tool, args, progress=progress)))
                except UpstreamCallError as e:
                    out.append({"error": str(e), "code": e.code})
            return out

        lean = await run()
        lean_caller, up.lean = up.lean, None  # the SDK's client for the same calls
        sdk = await run()
        up.lean = lean_caller
        return lean, sdk, seen

    lean, sdk, _ = anyio.run(_with_upstream, toolbox, body)
    assert lean == sdk
    assert lean[0]["content"][0]["text"] == "ok"
    assert lean[2]["structuredContent"] == {"total": 5.5, "terms": 2}
    assert lean[3].get("isError") is True  # a tool error stays a result


def test_only_modern_http_upstreams_get_the_lean_path(toolbox: str) -> None:
    async def body(up: Upstream) -> Any:
        return up.lean, up.modern, _plain(await up.call_tool("noop", {}))

    lean, modern, result = anyio.run(lambda: _with_upstream(toolbox, body, protocol="legacy"))
    assert lean is None and not modern and result["content"][0]["text"] == "ok"


HOSTILE = [
    ("bad_json", "-32700", "Failed to parse JSON response"),
    ("wrong_id", "-32700", "answer to id"),
    ("string_id", "-32700", "answer to id"),
    ("batch", "-32700", "a batch"),
    ("not_a_result", "-32700", "not a valid tools/call result"),
    ("rpc_error", "-32602", "no such thing"),
    ("wrong_type", "-32600", "Unexpected content type: text/html"),
    ("status_500", "-32603", "Server returned an error response"),
    ("oversize_declared", "-32600", "larger than 16777216 bytes"),
    ("oversize_chunked", "-32600", "larger than 16777216 bytes"),
    ("sse_oversize", "-32600", "event larger than"),
    ("sse_no_answer", "-32603", "event stream ended without an answer"),
]


def test_a_hostile_upstream_gets_clear_errors_and_the_next_call_works(hostile: str) -> None:
    async def body(up: Upstream) -> list:
        assert up.lean is not None
        out = []
        for tool, _code, _text in HOSTILE:
            with anyio.fail_after(60):  # never a hang
                try:
                    await up.call_tool(tool, {})
                    out.append((tool, "no error"))
                except UpstreamCallError as e:
                    out.append((tool, str(e)))
            await up.wait_ready(30)  # a lost connection reconnects
            assert _plain(await up.call_tool("noop", {}))["content"][0]["text"] == "ok"
        return out

    out = anyio.run(_with_upstream, hostile, body)
    for (tool, code, text), (_, said) in zip(HOSTILE, out):
        assert text in said, (tool, said)
        assert code is None or f"error {code}" in said, (tool, said)


def test_an_event_stream_answer_is_read_with_its_log_lines(hostile: str) -> None:
    async def body(up: Upstream) -> Any:
        logged: list[Any] = []

        async def on_log(params: Any) -> None:
            logged.append(params.data)

        up._on_log = on_log  # type: ignore[method-assign]
        return _plain(await up.call_tool("sse_answer", {})), logged

    result, logged = anyio.run(_with_upstream, hostile, body)
    assert result["content"][0]["text"] == "hostile ok"
    assert logged == ["working"]


def test_a_slow_drip_times_out_instead_of_hanging(hostile: str) -> None:
    async def body(up: Upstream) -> str:
        with anyio.fail_after(30):
            with pytest.raises(UpstreamCallError) as e:
                await up.call_tool("drip", {})
        assert e.value.timeout
        assert _plain(await up.call_tool("noop", {}))["content"][0]["text"] == "ok"
        return str(e.value)

    said = anyio.run(lambda: _with_upstream(hostile, body, timeout=2.0))
    assert "did not answer within 2s" in said


# ------------------------------------------------------------------ a whole gateway, both eras in front
TOKEN = "lean-upstream-token-0123456789"


def _gateway(tmp: Path, url: str, lean: bool) -> tuple[subprocess.Popen, str]:
    cfg = tmp / f"sentinel-{lean}.json"
    state = str(tmp / f"state-{lean}")
    cfg.write_text(json.dumps({"mcpServers": {"tb": {"url": url, "protocol": "modern"}},
                               "sentinel": {"data_dir": state, "http": {"token": TOKEN}}}))
    port = free_port()
    env = {**os.environ, "SENTINEL_LEAN_UPSTREAM": "on" if lean else "off"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=env)
    wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc)
    return proc, f"http://127.0.0.1:{port}/mcp"


def _masked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _masked(v) for k, v in value.items() if not k.startswith("sentinel/")}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


async def _front_calls(url: str, mode: str) -> list:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"})
    out = []
    async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:  # type: ignore[arg-type]
        for tool, args in CALLS[:5]:
            r = await client.session.call_tool(f"tb__{tool}", args)
            out.append(_masked(_plain(r)))
    return out


def test_through_a_gateway_both_eras_get_the_same_answers_lean_or_not(
    toolbox: str, tmp_path: Path
) -> None:
    gateways = [_gateway(tmp_path, toolbox, lean) for lean in (True, False)]
    try:
        for mode in ("legacy", "auto"):
            lean, sdk = (anyio.run(_front_calls, url, mode) for _, url in gateways)
            assert lean == sdk, mode
            assert lean[0]["content"][0]["text"] == "ok"
    finally:
        for proc, _ in gateways:
            stop_process(proc)
