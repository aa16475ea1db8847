"""A real gateway's audit rows, read back from disk, keep none of the secrets a call spelled to slip past the
redactor (red team 'records' 8): a card split over an object's numbered keys beside other keys or over an
array's objects, a code glued to its word with letters after it, a password under a key of another language
or with an invisible character inside, percent- or base64-encoded in a URL, in a JSON document sent as a
string, and a card in a tool's own error answer. The airline example's ids, dates and digests stay whole."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config

from .rig import audit_rows

SERVER = str(Path(__file__).with_name("payload_server.py"))
PASSWORD = "hunter2-Zq9xW"
CALLS = [
    {"name": "Bob", "card_1": "4111", "card_2": "1111", "card_3": "1111", "card_4": "1111"},
    {"payment": {"parts": [{"p": "5500"}, {"p": "0055"}, {"p": "5555"}, {"p": "5559"}]}},
    {"sms": "Twój Kod482913abc"},
    {"Passwort": PASSWORD},
    {"contraseña": PASSWORD},
    {"login": {"mot_de_passe": PASSWORD}},
    {"pass\u200bword": PASSWORD},
    {"note": f"pass\u200bword={PASSWORD}"},
    {"url": "https://shop.example/cb?q=password%3D" + PASSWORD},
    {"url": "https://shop.example/cb?c=3782%20822463%2010005"},
    {"url": "https://shop.example/cb?d=" + base64.urlsafe_b64encode(
        json.dumps({"password": PASSWORD}).encode()).decode()},
    {"body": json.dumps({"inner": json.dumps({"password": PASSWORD})})},
    {"card": "６０１１ １１１１ １１１１ １１１７"},
]
KEPT = {"reservation_id": "4WQ150", "user_id": "chen_jackson_3290", "payment_id": "credit_card_4421486",
        "flight_number": "HAT170", "date": "2024-05-22", "dob": ["1956-07-07", "1967-04-01"],
        "passengers": [{"dob": "1956-07-07"}, {"dob": "1967-04-01"}],
        "digest": "52fa2631c3084f57a31ab4eede77e4dfee960abe5cb18a035367a73d5298cc36",
        "uuid": "550e8400-e29b-41d4-a716-446655440000", "phone": "+1 555-010-4421"}


async def test_spelled_secrets_never_reach_an_audit_row(tmp_path) -> None:
    config = parse_config({"mcpServers": {"pay": {"command": sys.executable, "args": [SERVER]}},
                           "sentinel": {"data_dir": str(tmp_path / "data"), "builtins": []}},
                          source="<test>", base_dir=tmp_path)
    async with running_gateway(config) as rt:
        async with Client(rt.front.server) as c:
            for payload in CALLS:
                answer = await c.call_tool("pay__keep", {"payload": payload})
                assert not answer.is_error, (payload, answer)
            refused = await c.call_tool("pay__refuse", {"text": "declined: card 4111 1111 1111 1111"})
            assert refused.is_error
            kept = await c.call_tool("pay__keep", {"payload": KEPT})
            assert not kept.is_error
    rows = [r for r in audit_rows(config.store_path) if r["tool"].startswith("pay__")]
    assert len({r["decision_id"] for r in rows}) == len(CALLS) + 2, rows
    # (the columns a call's values are written to, their JSON read back: a "\\uff11" is the "１" it spells)
    stored = json.dumps([[_read(r[k]) for k in ("arguments", "reason", "proof", "error")] for r in rows],
                        ensure_ascii=False)
    for secret in (PASSWORD, "hunter2", "482913", "0055", "5555", "8224", "１１１１", "4111 1111"):
        assert secret not in stored, (secret, stored[:3000])
    for mark in ("[card ****1111]", "[card ****5559]", "[card ****１１１７]", "Kod[code]abc",
                 "[redacted base64"):
        assert mark in stored, (mark, stored[:3000])
    last = json.loads(next(r["arguments"] for r in reversed(rows) if r["tool"] == "pay__keep"))
    assert last == {"payload": KEPT}, last  # the honest ids, dates, digests and phone stay readable


def _read(column: str | None) -> object:
    try:
        return json.loads(column) if column else column
    except ValueError:
        return column
