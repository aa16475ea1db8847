"""The official MCP conformance suite (npm ``@modelcontextprotocol/conformance``, every server scenario),
scored
against the fixture directly and through Sentinel in transparent mode (``"prefix": ""``): the scores must be
equal,
check by check, for each protocol setting of the upstream hop. Sentinel still governs every call (the
fixture's
tools are read-only, so the fail-safe default allows them) and audits it.

- ``legacy`` and ``auto`` in front of an upstream that asks by push (elicitation, sampling, logging mid-call),
  the kind written for the handshake era;
- ``modern`` in front of an upstream that asks by ``InputRequiredResult`` on 2026-07-28 connections: Sentinel
  turns each input request into a push to the (handshake-era) conformance client.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import anyio
import pytest

from sentinel_mcp.gateway.audit import read_audit

from ..conftest import free_port, stop_process, wait_http
from ..gateway.test_transports import start_http_sentinel
from .ts_node import CONFORMANCE, require_node

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]

FIXTURE = Path(__file__).with_name("conformance_server.py")
Checks = dict[tuple[str, str], tuple[str, ...]]


def run_suite(url: str, out: Path) -> Checks:
    """Every server scenario against ``url``; (scenario, check id) -> the statuses it got."""
    node = require_node()
    done = subprocess.run(
        [str(node), str(CONFORMANCE), "server", "--url", url, "--suite", "all", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert "Total:" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
    checks: dict[tuple[str, str], list[str]] = {}
    for result in sorted(out.glob("server-*/checks.json")):
        scenario = re.sub(r"-\d{4}-\d\d-\d\dT[\d-]+Z$", "", result.parent.name).removeprefix("server-")
        for check in json.loads(result.read_text()):
            if check["status"] != "INFO":  # INFO lines narrate traffic; they are not scored
                checks.setdefault((scenario, check["id"]), []).append(check["status"])
    assert len({s for s, _ in checks}) >= 30, sorted(checks)  # the whole suite ran
    return {k: tuple(v) for k, v in checks.items()}


def score(checks: Checks) -> tuple[int, int]:
    statuses = Counter(s for v in checks.values() for s in v)
    return statuses["SUCCESS"], sum(statuses.values()) - statuses["WARNING"]


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory):
    """The fixture server twice: asking by push, and asking era-portably; with their direct scores."""
    procs, urls, direct = [], {}, {}
    try:
        for asks in ("push", "portable"):
            port = free_port()
            procs.append(
                subprocess.Popen(
                    [sys.executable, str(FIXTURE), str(port), "--asks", asks],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
            urls[asks] = f"http://127.0.0.1:{port}/mcp"
            wait_http(urls[asks], proc=procs[-1])
            direct[asks] = run_suite(urls[asks], tmp_path_factory.mktemp(f"direct-{asks}"))
        yield urls, direct
    finally:
        for p in procs:
            stop_process(p)


def test_direct_score_is_the_whole_suite(fixtures) -> None:
    _, direct = fixtures
    for checks in direct.values():
        passed, scored = score(checks)
        assert passed == scored and passed >= 44, checks


@pytest.mark.parametrize("protocol,asks", [("legacy", "push"), ("auto", "push"), ("modern", "portable")])
def test_score_through_sentinel_equals_direct(fixtures, tmp_path: Path, protocol: str, asks: str) -> None:
    urls, direct = fixtures
    cfg = tmp_path / "sentinel.json"
    store = tmp_path / "state" / "sentinel.db"
    cfg.write_text(
        json.dumps(
            {
                "mcpServers": {"fx": {"url": urls[asks], "prefix": "", "protocol": protocol}},
                # the suite's client sends no token: tokens off explicitly, which Sentinel allows on loopback
                # only
                "sentinel": {"data_dir": str(tmp_path / "state"), "http": {"auth": "none"}},
            }
        )
    )
    port = free_port()
    proc = start_http_sentinel(cfg, port)
    try:
        through = run_suite(f"http://127.0.0.1:{port}/mcp", tmp_path / "out")
    finally:
        stop_process(proc)
    differences = {
        k: (direct[asks].get(k), through.get(k))
        for k in set(direct[asks]) | set(through)
        if direct[asks].get(k) != through.get(k)
    }
    assert differences == {}, f"direct {score(direct[asks])} vs through {score(through)}: {differences}"
    assert score(through) == score(direct[asks])
    # governed, not bypassed: the calls were decided and audited
    rows = anyio.run(read_audit, store, 500)
    decided = {(r["tool"], r["decision"]) for r in rows}
    assert {
        ("test_simple_text", "allow"),
        ("test_sampling", "allow"),
        ("test_elicitation", "allow"),
    } <= decided
