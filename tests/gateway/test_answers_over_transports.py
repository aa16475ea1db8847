"""Forged, replayed, mistyped and cross-conversation answers against Sentinel as a real process: over stdio
and over streamable HTTP, with the real mcp Client in both eras. The destructive tool's marker file tells
whether anything ran."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ElicitResult, Implementation

from sentinel_mcp.core.call_meta import SESSION_KEY as SESSION_META
from sentinel_mcp.core.decision import argument_digest

from ..conftest import free_port, stop_process, wait_http
from .helpers import TOOLBOX

pytestmark = pytest.mark.timeout(120)
YES = ElicitResult(action="accept", content={"approve": True})
TOKEN = (
    "answers-test-owner-token-0123456789"  # Sentinel's HTTP front wants the owner's (or a principal's) token
)


def write_config(tmp_path: Path) -> Path:
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(
        json.dumps(
            {
                "mcpServers": {"tb": {"command": sys.executable, "args": [TOOLBOX]}},
                "sentinel": {"data_dir": str(tmp_path / "state"), "http": {"token": TOKEN}},
            }
        )
    )
    return cfg


@pytest.fixture(scope="module")
def http_sentinel(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    tmp = tmp_path_factory.mktemp("http-answers")
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sentinel_mcp",
            "-c",
            str(write_config(tmp)),
            "serve",
            "--http",
            f"127.0.0.1:{port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc, timeout=60)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_process(proc)


def connect(
    transport: str, tmp_path: Path, url: str | None, mode: str, callback: Any, name: str = "answers-test"
) -> Client:
    info = Implementation(name=name, version="1")
    if transport == "stdio":
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "sentinel_mcp", "-c", str(write_config(tmp_path)), "serve"]
        )
        return Client(params, mode=mode, elicitation_callback=callback, client_info=info)
    assert url is not None
    http = httpx2.AsyncClient(timeout=30, headers={"Authorization": f"Bearer {TOKEN}"})
    return Client(
        streamable_http_client(url, http_client=http),
        mode=mode,
        elicitation_callback=callback,
        client_info=info,
    )


def text(r: Any) -> str:
    return r.content[0].text


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_handshake_era_answers(transport: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue("http_sentinel") if transport == "http" else None
    marker = tmp_path / "marker.txt"
    args = {"path": str(marker), "text": transport}
    replies = [
        ElicitResult(action="accept", content={"approve": "true"}),
        ElicitResult(action="accept", content={"approve": 1}),
        ElicitResult(action="decline"),
        YES,
    ]

    async def callback(ctx: Any, params: Any) -> ElicitResult:
        return replies.pop(0)

    async with connect(transport, tmp_path, url, "legacy", callback) as c:
        r = await c.session.call_tool(
            "tb__write_marker", args, input_responses={f"sentinel.confirm.{argument_digest(args)}": YES}
        )
        assert r.is_error and "handshake" in text(r), text(r)
        for why in ("not accepted", "not accepted", "you declined"):
            r = await c.call_tool("tb__write_marker", args)
            assert r.is_error and why in text(r), text(r)
        assert not marker.exists()
        assert not (await c.call_tool("tb__write_marker", args)).is_error
    assert marker.read_text() == f"{transport}\n"


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_2026_era_answers(transport: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue("http_sentinel") if transport == "http" else None
    marker = tmp_path / "marker.txt"
    args = {"path": str(marker), "text": transport}

    async def yes(ctx: Any, params: Any) -> ElicitResult:
        return YES

    async def ask(c: Client) -> Any:
        r = await c.session.call_tool("tb__write_marker", args, allow_input_required=True)
        assert type(r).__name__ == "InputRequiredResult", r
        return r

    async with connect(transport, tmp_path, url, "auto", yes) as c:
        key = f"sentinel.confirm.{argument_digest(args)}"
        minted = await c.session.call_tool(
            "tb__write_marker", args, allow_input_required=True, input_responses={key: YES}
        )
        assert minted.is_error and "without a request state" in text(minted)
        first = await ask(c)
        r = await c.session.call_tool(
            "tb__write_marker",
            args,
            allow_input_required=True,
            request_state=first.request_state,
            input_responses={key: ElicitResult(action="accept", content={"approve": "yes"})},
        )
        assert r.is_error and "expected a boolean" in text(r), text(r)
        first = await ask(c)
        if url is not None:  # another conversation (another client, in its own) cannot use this state
            async with connect(transport, tmp_path, url, "auto", yes, name="another-client") as other:
                own = (await ask(other)).meta[SESSION_META]  # the other client's conversation, carried back
                r = await other.session.call_tool(
                    "tb__write_marker",
                    args,
                    allow_input_required=True,
                    input_responses={key: YES},
                    request_state=first.request_state,
                    meta={SESSION_META: own},
                )
                assert r.is_error and "another conversation" in text(r), text(r)
        assert not marker.exists()
        ok = await c.session.call_tool(
            "tb__write_marker",
            args,
            allow_input_required=True,
            input_responses={key: YES},
            request_state=first.request_state,
        )
        assert not ok.is_error, text(ok)
        again = await c.session.call_tool(
            "tb__write_marker",
            args,
            allow_input_required=True,
            input_responses={key: YES},
            request_state=first.request_state,
        )
        assert again.is_error and "already used" in text(again)
    assert marker.read_text() == f"{transport}\n"
