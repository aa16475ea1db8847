"""A real gateway's audit rows, read back from disk, keep none of the secrets a call or a tool's error answer
spelled behind an escape or an encoding (red team 'records' 9): HTML character references, ``\\u`` escapes,
quoted-printable, base64 wrapped in MIME lines, hex bytes, card parts under keys differing by a letter or
over arrays of digits, a token as a URL's user, HTTP Basic credentials, keys that mask to one text, a split
card after decoy objects in an error's text. A year and a date beside a code word stay readable."""

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
CARD = "4111 1111 1111 1111"
MIME = base64.b64encode(("x" * 50 + f" password={PASSWORD} " + "y" * 60).encode()).decode()
CALLS = [
    {"note": "card " + "".join(f"&#{ord(c)};" for c in CARD)},
    {"note": f"pass\\u0077ord={PASSWORD}"},
    {"note": f"pass=\nword=3D{PASSWORD}"},
    {"mail": "\n".join(MIME[i:i + 76] for i in range(0, len(MIME), 76))},
    {"dump": "bytes " + CARD.replace(" ", "").encode().hex()},
    {"name": "Bob", "card_a": "5500", "card_b": "0055", "card_c": "5555", "card_d": "5559"},
    {"digits": [[6, 0, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 7]]},
    {"repo": f"https://{PASSWORD}@git.example/app.git"},
    {"header": "Authorization: Basic " + base64.b64encode(f"bob:{PASSWORD}".encode()).decode()},
    {"3782 822463 10005": "first", "3782-822463-10005": "second"},
]
ERROR = ("Traceback (most recent call last):\n  File \"pay.py\", line 12, in charge\n"
         f"    connect(DB_PASSWORD='{PASSWORD}')\n" + '{"a": 1} ' * 20
         + json.dumps({"n": "x", "card_1": "4012", "card_2": "8888", "card_3": "8888", "card_4": "1881"}))
KEPT = {"note": "code review 2024, booking code 4WQ150 on 2024/05/22", "time": "10:30",
        "digest": "52fa2631c3084f57a31ab4eede77e4dfee960abe5cb18a035367a73d5298cc36",
        "box": {"box_x": 4000, "box_y": 3000, "box_w": 1920, "box_h": 1080}, "text": "Tom &amp; Jerry"}


async def test_escaped_and_encoded_secrets_never_reach_an_audit_row(tmp_path) -> None:
    config = parse_config({"mcpServers": {"pay": {"command": sys.executable, "args": [SERVER]}},
                           "sentinel": {"data_dir": str(tmp_path / "data"), "builtins": []}},
                          source="<test>", base_dir=tmp_path)
    async with running_gateway(config) as rt:
        async with Client(rt.front.server) as c:
            for payload in CALLS:
                answer = await c.call_tool("pay__keep", {"payload": payload})
                assert not answer.is_error, (payload, answer)
            failed = await c.call_tool("pay__refuse", {"text": ERROR})
            assert failed.is_error
            kept = await c.call_tool("pay__keep", {"payload": KEPT})
            assert not kept.is_error
    rows = [r for r in audit_rows(config.store_path) if r["tool"].startswith("pay__")]
    assert len({r["decision_id"] for r in rows}) == len(CALLS) + 2, rows
    stored = json.dumps([[_read(r[k]) for k in ("arguments", "reason", "proof", "error")] for r in rows],
                        ensure_ascii=False)
    for secret in (PASSWORD, "hunter2", "&#52;&#49;", "0055", "5555", "8888", "822463", "3431313131",
                   "cGFzc3dv", "[6, 0, 1, 1]", "Ym9iOmh1bn"):
        assert secret not in stored, (secret, stored[:3000])
    for mark in ("[card ****1111]", "[card ****5559]", "[card ****1117]", "[card ****0005] (2)",
                 "[card ****1881]", "[redacted base64", "[redacted hex", "https://[redacted]@git.example"):
        assert mark in stored, (mark, stored[:3000])
    last = json.loads(next(r["arguments"] for r in reversed(rows) if r["tool"] == "pay__keep"))
    assert last == {"payload": KEPT}, last  # a year, a date, a time, a digest, a box, an escape stay


def _read(column: str | None) -> object:
    try:
        return json.loads(column) if column else column
    except ValueError:
        return column
