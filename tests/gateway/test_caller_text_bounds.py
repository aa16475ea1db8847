"""What a caller names itself and its call with (its client's name and version, a tool name) goes into the
audit log cut, as its arguments are: a call of a few bytes cannot make the log, and the disk every principal's
calls need, grow by megabytes (a 3 MB client name wrote 6 MB of audit per 100-byte call)."""

from __future__ import annotations

import pytest
from mcp import Client
from mcp.types import Implementation

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.audit_entry import AuditEntry
from sentinel_mcp.gateway.audit import MAX_NAME_CHARS, MAX_TEXT_CHARS, AuditLog, read_audit

from .helpers import make_config, toolbox_stdio

pytestmark = pytest.mark.timeout(90)
HUGE = 1_000_000


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_huge_client_name_or_tool_name_is_audited_cut(data_dir, mode):  # noqa: ANN001
    info = Implementation(name="n" * HUGE, version="v" * HUGE)
    async with running_gateway(make_config(data_dir, {"tb": toolbox_stdio()})) as rt:
        async with Client(rt.front.server, mode=mode, client_info=info) as c:
            assert (await c.call_tool("tb__echo", {"text": "small call"})).content[0].text == "small call"
            refused = await c.call_tool("t" * HUGE, {})
            assert refused.is_error
        await rt.audit.flush()
        rows = await read_audit(rt.config.store_path, tail=20)
    assert rows
    for row in rows:
        for column in ("client", "tool", "session", "reason", "error"):
            assert len(row.get(column) or "") <= MAX_TEXT_CHARS + 1, (column, len(row[column]))
        assert len(row.get("client") or "") <= MAX_NAME_CHARS + 1
        assert len(row.get("tool") or "") <= MAX_NAME_CHARS + 1
    echo = [r for r in rows if r["tool"] == "tb__echo"]
    assert echo and echo[0]["client"].startswith("nnn") and "/vvv" in echo[0]["client"]


def test_every_text_a_caller_shapes_is_cut_in_the_row(tmp_path) -> None:  # noqa: ANN001
    log = AuditLog(tmp_path / "audit.db")
    entry = AuditEntry(session="s" * HUGE, client="c" * HUGE, tool="t" * HUGE, decision="deny",
                       reason="r" * HUGE, error="e" * HUGE, arguments={"a": "x" * HUGE}, outcome="refused")
    row = log.row(entry)
    assert max(len(v) for v in row if isinstance(v, str)) <= MAX_TEXT_CHARS + 1
