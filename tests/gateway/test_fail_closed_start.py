"""A configured rulebase that cannot be loaded at start-up fails closed: every call is denied with the file,
line
and problem, /healthz says error (503), `serve` says so on stderr; fixing the file recovers on hot reload."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import anyio
import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.identity import owner_token

from ..conftest import free_port, stop_process
from .helpers import TOOLBOX, make_config

pytestmark = pytest.mark.timeout(120)
GOOD = "guard('tb__delete_thing', [name = N], require(N \\== keep, 'that one is kept')).\n"
BROKEN = (
    "% line 1\nguard('tb__delete_thing', [name = N], require(N \\== keep, 'kept')).\nthis is not ( prolog.\n"
)


async def _wait_for(predicate, timeout: float = 20.0) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await anyio.sleep(0.1)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_broken_rulebase_denies_every_call_until_fixed(data_dir: Path, mode: str) -> None:
    data_dir.mkdir(parents=True)
    rules = data_dir / "rules.pl"
    rules.write_text(BROKEN)
    cfg = make_config(data_dir, rulebases=[str(rules)])
    async with running_gateway(cfg) as rt:
        assert rt.policy_problem and f"{rules}:3" in rt.policy_problem
        async with Client(rt.front.server, mode=mode) as c:
            for tool, args in (("tb__echo", {"text": "read-only too"}), ("tb__delete_thing", {"name": "x"})):
                r = await c.call_tool(tool, args)
                assert r.is_error and f"{rules}:3" in r.content[0].text, r.content[0].text
                assert "denies every call" in r.content[0].text
            rules.write_text(GOOD)
            await _wait_for(lambda: rt.policy_problem is None)
            assert (await c.call_tool("tb__echo", {"text": "back"})).content[0].text == "back"
            r = await c.call_tool("tb__delete_thing", {"name": "keep"})
            assert r.is_error and "that one is kept" in r.content[0].text  # the fixed rulebase governs
            # a file that breaks again later keeps the last good rulebase in charge (not fail-open, not down)
            rules.write_text(BROKEN)
            await anyio.sleep(1.5)
            assert rt.policy_problem is None
            r = await c.call_tool("tb__delete_thing", {"name": "keep"})
            assert r.is_error and "that one is kept" in r.content[0].text


async def test_missing_rulebase_file_fails_closed(data_dir: Path) -> None:
    missing = data_dir / "nowhere.pl"
    async with running_gateway(make_config(data_dir, rulebases=[str(missing)])) as rt:
        async with Client(rt.front.server, mode="auto") as c:
            r = await c.call_tool("tb__echo", {"text": "x"})
            assert (
                r.is_error and f"{missing}:0" in r.content[0].text and "file not found" in r.content[0].text
            )


def _health(port: int, token: str | None = None) -> tuple[int, dict]:
    # the details (the problem, with its file and line) are for callers with a token; the status is public
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        req = urllib.request.Request(f"http://127.0.0.1:{port}/healthz", headers=headers)
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_serve_reports_the_problem_and_health_recovers(tmp_path: Path) -> None:
    rules = tmp_path / "rules.pl"
    rules.write_text(BROKEN)
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(
        json.dumps(
            {
                "mcpServers": {"tb": {"command": sys.executable, "args": [TOOLBOX]}},
                "sentinel": {"data_dir": str(tmp_path / "state"), "rulebases": [str(rules)]},
            }
        )
    )
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                status, body = _health(port)
                if body.get("status") != "starting":
                    break
            except (urllib.error.URLError, ConnectionError):
                pass
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
        assert status == 503 and body == {"status": "error"}, body  # no file names for strangers
        token = owner_token.token_path(tmp_path / "state").read_text().strip()
        status, body = _health(port, token)
        assert status == 503 and body["status"] == "error", body
        assert f"{rules}:3" in body["problem"]
        rules.write_text(GOOD)
        while _health(port)[0] != 200:
            assert time.monotonic() < deadline + 30
            time.sleep(0.2)
        assert _health(port)[1]["status"] == "ok"
        # a file that breaks again: the last good rulebase stays in charge, and health says so (degraded,
        # with the file and line), never a silent older policy
        rules.write_text(BROKEN)
        while _health(port, token)[1]["status"] != "degraded":
            assert time.monotonic() < deadline + 60
            time.sleep(0.2)
        status, body = _health(port, token)
        assert status == 200 and f"{rules}:3" in body["policy_problem"], body
        assert "stays in charge" in body["policy_problem"] and body["policy_problem"] in body["problems"]
        rules.write_text(GOOD)
        while _health(port, token)[1]["status"] != "ok":
            assert time.monotonic() < deadline + 90
            time.sleep(0.2)
        assert "policy_problem" not in _health(port, token)[1]
    finally:
        stop_process(proc)
    banner = proc.stderr.read()
    assert "ERROR: the rulebase could not be loaded" in banner and f"{rules}:3" in banner, banner
