"""An upstream's error is stored raw in the audit row (bounded), and every reader of the row marks it once
where it is shown: ``sentinel-mcp audit`` and the console's activity and call pages. Before, the row held the
text already marked, and each reader marked it again: a real right-to-left override read
``⟨U+27E8⟩U+202E⟨U+27E9⟩``, as if the upstream had typed the mark out (and rows written before marking
existed, raw, would have to read otherwise). Real Sentinel over HTTP, a real upstream, a real CLI."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tests.console.console_rig import (
    OWNER_TOKEN, console_config, env_for, http_sentinel, mcp_client, signed_in,
)

pytestmark = pytest.mark.timeout(240)
ROOT = Path(__file__).resolve().parents[2]
REAL = "real ⟨U+202E⟩"  # the upstream's real override, marked once
TYPED = "typed ⟨U+27E8⟩U+202E⟨U+27E9⟩"  # the mark it typed out, marked once
TWICE = "real ⟨U+27E8⟩U+202E"  # the real one marked again (a mark of a mark)


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory):
    cfg = console_config(tmp_path_factory.mktemp("audit-error-marks"))
    body = json.loads(cfg.read_text())
    body["mcpServers"]["et"] = {"command": sys.executable,
                                "args": ["-m", "tests.gateway.error_text_upstream"],
                                "env": {"SIZE": "8", "PYTHONPATH": str(ROOT)}}
    cfg.write_text(json.dumps(body))
    with http_sentinel(cfg) as (base, _proc):
        yield base, cfg


async def _failed_call(base: str) -> str:
    async with mcp_client(base, OWNER_TOKEN) as client:
        r = await client.call_tool("et__fail", {"n": 6})
    text = r.content[0].text
    assert r.is_error and REAL in text and TYPED in text, text  # Sentinel's own result: marked once
    return str((r.meta or {})["sentinel/decision_id"])


async def test_the_audit_cli_shows_an_upstreams_error_marked_once(sentinel) -> None:
    base, cfg = sentinel
    decision = await _failed_call(base)
    out = subprocess.run(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "audit", "--decision", decision],
        capture_output=True, text=True, timeout=60, env=env_for(cfg))
    assert out.returncode == 0, out.stdout + out.stderr
    assert REAL in out.stdout and TYPED in out.stdout and TWICE not in out.stdout, out.stdout
    assert "\u202e" not in out.stdout
    rows = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "audit", "--json"],
                          capture_output=True, text=True, timeout=60, env=env_for(cfg))
    mine = [json.loads(line) for line in rows.stdout.splitlines() if decision in line]
    # the row holds the upstream's words raw (bounded): what it said, not a rendering of it
    assert any("typed ⟨U+202E⟩ and real \u202e" in str(r.get("error")) for r in mine), mine


async def test_the_consoles_activity_and_call_pages_show_it_marked_once(sentinel) -> None:
    base, _cfg = sentinel
    await _failed_call(base)
    async with signed_in(base, OWNER_TOKEN) as person:
        listing = await person.page("/console/activity?tool=et__fail")
        calls = sorted(set(re.findall(r'href="(/console/activity/[^"?]+)"', listing)))
        assert calls, listing[-2000:]
        errors = []
        for path in ["/console/activity?tool=et__fail", *calls]:
            page = html.unescape(await person.page(path))
            assert "\u202e" not in page, path
            shown = re.sub(r"<[^>]+>", "", page)
            assert TWICE not in shown, (path, shown[-3000:])
            errors += [path] if REAL in shown and TYPED in shown else []
        assert errors, calls  # a call's page shows the upstream's error, marked once
