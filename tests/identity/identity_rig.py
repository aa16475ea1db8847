"""Rig for the identity tests: a real Sentinel (subprocess) over the bookings server with the policy engine,
principals with tokens, the real MCP client in both eras over HTTP and stdio, and a user who answers."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, AsyncIterator

import httpx2
from tests.support.carried_session import Carried
from tests.support.forked_upstreams import forked_spec
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ElicitResult

from sentinel_mcp.paths import RULEBASES_DIR

TESTS = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("sentinel_tests_root_conftest", TESTS / "conftest.py")
assert _spec is not None and _spec.loader is not None
_root = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_root)
free_port, stop_process, wait_http = _root.free_port, _root.stop_process, _root.wait_http

BOOKINGS = TESTS / "policy" / "bookings_server.py"
BOOKINGS_PL = TESTS / "policy" / "rulebases" / "bookings.pl"
ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdef00"
CAROL = "carol-token-0123456789abcdef"
OWNER_TOKEN = "owner-token-0123456789abcdef0"  # sentinel.http.token: the operator (whole /metrics, /healthz)
TOKENS = {"alice": ALICE, "bob": BOB, "carol": CAROL}
SESSION_META = "sentinel/session"


def console_secret(token: str) -> str:
    """The console sign-in secret the rigs give the principal holding ``token``: never the token itself (a
    client holds that; the console refuses it)."""
    return "console-secret-of-" + token


def write_config(tmp: Path, **sentinel: Any) -> Path:
    cfg = tmp / "sentinel.json"
    body = {
        "rulebases": [str(RULEBASES_DIR / "default.pl"), str(BOOKINGS_PL)],
        "builtins": ["sentinel"],
        "data_dir": str(tmp / "state"),
        "seeds": {"current_user": "u_123", "today": "2025-01-15"},
        "personal": {"bk__get_booking": "bookings"},
        "principals": [{"name": "alice", "token": ALICE, "console_secret": console_secret(ALICE)},
                       {"name": "bob", "token": BOB, "console_secret": console_secret(BOB)},
                       {"name": "carol", "token": CAROL, "console_secret": console_secret(CAROL),
                        "tools": ["bk__list_bookings"]}],
        "a2a": {"name": "identity-test", "task_db": ""},
        **sentinel,
    }
    # the bookings upstream forked from a warm interpreter (~1 s of CPU less: support/forked_upstreams.py)
    cfg.write_text(json.dumps({"mcpServers": {"bk": forked_spec(str(BOOKINGS))},
                               "sentinel": body}))
    return cfg


def env_for(cfg: Path) -> dict[str, str]:
    return {**os.environ, "SENTINEL_DATA_DIR": str(cfg.parent / "state")}


@contextlib.contextmanager
def http_sentinel(cfg: Path, port: int | None = None):
    port = port or free_port()
    proc = subprocess.Popen([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http",
                             f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True, env=env_for(cfg))
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc, timeout=60)
        yield f"http://127.0.0.1:{port}", proc
    finally:
        stop_process(proc)


class User:
    """The person behind a client: answers every question, records it. ``approve``: what a yes/no gets;
    ``remember``: whether a consent is remembered."""

    def __init__(self, approve: bool = True, remember: bool = False) -> None:
        self.approve, self.remember = approve, remember
        self.asked: list[str] = []

    async def __call__(self, ctx: Any, params: Any) -> ElicitResult:
        self.asked.append(params.message)
        content: dict[str, Any] = {}
        for key, spec in (params.requested_schema or {}).get("properties", {}).items():
            if key == "remember":
                content[key] = self.remember
            elif spec.get("type") == "boolean":
                content[key] = self.approve
            elif spec.get("oneOf"):  # a titled choice (const + title): yes/no as approved, else the first
                consts = [o["const"] for o in spec["oneOf"]]
                content[key] = (
                    ("yes" if self.approve else "no") if {"yes", "no"} <= set(consts) else consts[0]
                )
            elif spec.get("enum"):
                content[key] = spec["enum"][0]
        return ElicitResult(action="accept", content=content)


@contextlib.asynccontextmanager
async def http_client(
    base: str, token: str, mode: str, user: User | None = None, headers: dict[str, str] | None = None
) -> AsyncIterator[Carried]:
    """One conversation of a principal (a 2026-era client carries its session id back)."""
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}", **(headers or {})}, timeout=60)
    async with Client(
        streamable_http_client(f"{base}/mcp", http_client=http),
        mode=mode,
        elicitation_callback=user or User(),
    ) as c:
        yield Carried(c)


@contextlib.asynccontextmanager
async def stdio_client(cfg: Path, mode: str, user: User | None = None) -> AsyncIterator[Carried]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "sentinel_mcp", "-c", str(cfg), "serve"], env=env_for(cfg)
    )
    async with Client(params, mode=mode, elicitation_callback=user or User()) as c:
        yield Carried(c)


def text(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def session_line(result: Any) -> str:
    """The session id a ``sentinel_facts`` summary names (``Session <id>: ...``)."""
    first = text(result).splitlines()[0]
    return first.split(" ", 1)[1].split(":", 1)[0]
