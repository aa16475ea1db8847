"""What a caller names itself and its call with (its client's name and version, a tool name) goes into the
audit log cut, as its arguments are: a call of a few bytes cannot make the log, and the disk every principal's
calls need, grow by megabytes (a 3 MB client name wrote 6 MB of audit per 100-byte call)."""

from __future__ import annotations

import json

import pytest
from mcp import Client, MCPError
from mcp.types import Implementation, PromptReference

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.audit_entry import AuditEntry
from sentinel_mcp.gateway.audit import MAX_NAME_CHARS, MAX_TEXT_CHARS, AuditLog, read_audit

from .helpers import make_config, toolbox_stdio
from .test_lean_stdio_front import ENVELOPE, Wire, open_legacy, open_modern

CUT_NOTE = 50  # what a cut text says of itself: "…[cut: N more characters]"

pytestmark = pytest.mark.timeout(90)
HUGE = 1_000_000


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_huge_client_name_or_tool_name_is_audited_cut(data_dir, mode):  # noqa: ANN001
    info = Implementation(name="n" * HUGE, version="v" * HUGE)
    async with running_gateway(make_config(data_dir, {"tb": toolbox_stdio(fork=True)})) as rt:
        async with Client(rt.front.server, mode=mode, client_info=info) as c:
            assert (await c.call_tool("tb__echo", {"text": "small call"})).content[0].text == "small call"
            refused = await c.call_tool("t" * HUGE, {})
            assert refused.is_error
        await rt.audit.flush()
        rows = await read_audit(rt.config.store_path, tail=20)
    assert rows
    for row in rows:
        for column in ("client", "tool", "session", "reason", "error"):
            assert len(row.get(column) or "") <= MAX_TEXT_CHARS + CUT_NOTE, (column, len(row[column]))
        assert len(row.get("client") or "") <= MAX_NAME_CHARS + CUT_NOTE
        assert len(row.get("tool") or "") <= MAX_NAME_CHARS + CUT_NOTE
    echo = [r for r in rows if r["tool"] == "tb__echo"]
    assert echo and echo[0]["client"].startswith("nnn") and "/vvv" in echo[0]["client"]


def test_every_text_a_caller_shapes_is_cut_in_the_row(tmp_path) -> None:  # noqa: ANN001
    log = AuditLog(tmp_path / "audit.db")
    entry = AuditEntry(session="s" * HUGE, client="c" * HUGE, tool="t" * HUGE, decision="deny",
                       reason="r" * HUGE, error="e" * HUGE, arguments={"a": "x" * HUGE}, outcome="refused")
    row = log.row(entry)
    assert max(len(v) for v in row if isinstance(v, str)) <= MAX_TEXT_CHARS + CUT_NOTE
    said = f"…[cut: {HUGE - MAX_TEXT_CHARS:,} more characters]".replace(",", "")  # and says how much it lost
    assert sum(isinstance(v, str) and v.endswith(said) for v in row) == 2  # the reason and the error


# What Sentinel quotes back of a caller's words in an error is cut (core/echoed_text.py,
# gateway/bounded_errors.py): before, each of these answered with the caller's megabytes whole.
QUOTE_BOUND = 2_000  # characters of an error that quotes a 3 MB name (its limit is well under)
BIG = 3_000_000


def _error_text(e: BaseException) -> str:
    error = getattr(e, "error", None)
    return json.dumps({"message": getattr(error, "message", str(e)), "data": getattr(error, "data", None)})


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_errors_quote_a_callers_huge_names_cut(data_dir, mode):  # noqa: ANN001
    async with running_gateway(make_config(data_dir, {"tb": toolbox_stdio(fork=True)}, builtins=[])) as rt:
        async with Client(rt.front.server, mode=mode) as c:
            unknown = await c.call_tool("t" * BIG + "\x1b[2J", {})
            assert unknown.is_error and "unknown tool" in unknown.content[0].text
            assert len(unknown.model_dump_json()) < QUOTE_BOUND + 1_000  # its session and decision id too
            assert "\x1b" not in unknown.content[0].text
            attempts = {
                "prompt": c.get_prompt("p" * BIG),
                "resource": c.read_resource("toolbox://" + "r" * BIG),
                "completion": c.complete(PromptReference(name="p" * BIG), {"name": "a", "value": "b"}),
                "subscription": c.subscribe_resource("toolbox://" + "s" * BIG),
            }
            for what, attempt in attempts.items():
                try:
                    await attempt
                except MCPError as e:
                    assert len(_error_text(e)) < QUOTE_BOUND, (what, len(_error_text(e)))
                else:
                    raise AssertionError(f"the {what} was served")


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_schema_error_quotes_the_value_cut(data_dir, mode):  # noqa: ANN001
    async with running_gateway(make_config(data_dir, {"tb": toolbox_stdio(fork=True)}, builtins=[])) as rt:
        async with Client(rt.front.server, mode=mode) as c:
            for arguments in ({"a": "z" * 300_000, "b": 1},  # the schema check quotes the value
                              {"a": {"k" * 300_000: 3}, "b": 2},  # an object's keys
                              {"a": ["\u202e" * 100_000], "b": 2}):  # characters that turn text around
                refused = await c.call_tool("tb__add", arguments)
                assert refused.is_error and "invalid arguments for tb__add" in refused.content[0].text
                assert len(refused.content[0].text) < QUOTE_BOUND, len(refused.content[0].text)
                assert len(json.dumps(refused.meta)) < QUOTE_BOUND + 1_000, len(json.dumps(refused.meta))
            assert "is not of type 'number'" in (await c.call_tool("tb__add", {"a": "z" * 300_000, "b": 1})
                                                 ).content[0].text  # still says what is wrong


@pytest.mark.parametrize("era", ["handshake", "modern"])
def test_an_unknown_methods_name_is_not_echoed_whole(tmp_path, era):  # noqa: ANN001
    wire = Wire(tmp_path)
    try:
        (open_modern if era == "modern" else open_legacy)(wire)
        params = {"_meta": ENVELOPE} if era == "modern" else {}
        for rid, method in enumerate(["x" * BIG, "tools/" + "y" * BIG, "\x1b]0;owned\x07" * 1000]):
            wire.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
            answer = wire.answer(rid)
            assert "error" in answer and len(json.dumps(answer)) < QUOTE_BOUND, len(json.dumps(answer))
            assert "\x1b" not in json.dumps(answer, ensure_ascii=False)
    finally:
        wire.close()
