"""What Sentinel said marked (``display_text.Marked``: a refusal, an upstream's error quoted) is stored in the
audit row raw and bounded like any text: each reader marks it once where it shows it (``sentinel-mcp audit``,
the console), and a row must never hold text a reader would mark a second time."""

from __future__ import annotations

from sentinel_mcp.core.display_text import compose, safe_text
from sentinel_mcp.gateway.audit import MAX_TEXT_CHARS, AuditEntry, AuditLog


async def test_a_marked_reason_and_error_are_stored_raw_and_bounded(tmp_path) -> None:
    log = await AuditLog(tmp_path / "a.db").open()
    try:
        long = compose("refused: ", safe_text("x\u202e" * 200_000, 10**7))
        error = compose("upstream u error 1: ", safe_text("typed ⟨U+202E⟩ real \u202e"))
        await log.write(AuditEntry(session="s", client="c", origin="o", tool="t", decision="deny",
                                   outcome="refused", reason=long, error=error), False)
        await log.flush()
        [row] = await log.read(tail=1)
    finally:
        await log.close()
    assert len(row["reason"]) <= MAX_TEXT_CHARS + 200 and "x\u202e" in row["reason"], len(row["reason"])
    assert row["error"] == "upstream u error 1: typed ⟨U+202E⟩ real \u202e", row["error"]
    assert safe_text(row["error"]) == error  # shown, it reads as Sentinel said it: marked once
