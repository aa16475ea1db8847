"""A real gateway's audit rows keep no payment secret and no glued code a caller sent: an IBAN in any
spelling, a card spelled over an array, a security code after a label, a code glued to its word (the
redactor's own tests read ``redact_record``; this one reads the rows the store holds)."""

from __future__ import annotations

import json

from mcp import Client

from sentinel_mcp.app.runtime import running_gateway

from .rig import audit_rows, recorder_config

TEXTS = {
    "iban": "pay to de89 3704 0044 0532 0130 00 today",
    "code": "Twój kod482913, nie udostępniaj",
    "cvn": "Kartenprüfnummer: 737",
}


async def test_no_payment_secret_reaches_an_audit_row(tmp_path) -> None:
    config = recorder_config(tmp_path)
    async with running_gateway(config) as rt:
        async with Client(rt.front.server) as c:
            for text in TEXTS.values():
                answer = await c.call_tool("rec__echo", {"text": text})
                assert not answer.is_error and answer.content[0].text == text  # the caller's answer is whole
            split = await c.call_tool("rec__echo", {"text": ["4000", "0566", "5566", "5556"]})
            assert split.is_error  # (a list for a string: refused, and recorded)
    rows = [r for r in audit_rows(config.store_path) if r["tool"] == "rec__echo"]
    assert len({r["decision_id"] for r in rows}) == 4, rows
    # (the columns a call's values are written to; the ids, times and hashes hold any digits by chance)
    stored = json.dumps([[r[k] for k in ("arguments", "reason", "proof", "error")] for r in rows],
                        ensure_ascii=False)
    for secret in ("3704", "0532", "482913", "737", "0566"):
        assert secret not in stored, (secret, stored[:2000])
    assert "[iban ****3000]" in stored and "[card ****5556]" in stored
