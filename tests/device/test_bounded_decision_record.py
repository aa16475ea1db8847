"""The device firewall's decision record is bounded: an action of megabytes (a caller's title, a label) is
kept cut, as valid JSON that says it was cut, by how much, and the hash of what it held, and the action's
outcome is what it was (refused, nothing sent). One line of ``decisions.jsonl`` stays within
``DEVICE_DECISION``'s limits (``core/record_bounds.py``)."""

from __future__ import annotations

import json

import pytest
from tests.device.device_helpers import Answers, connect, sim_server

from sentinel_mcp.core.record_bounds import CUT_KEY, DEVICE_DECISION, canonical_digest

pytestmark = pytest.mark.timeout(120)
BIG = "A" * 1_000_000
# each refused by the adb gate (too long to send) after the firewall decided: the decision is recorded whole
CALLS = [
    ("calendar_create", {"title": BIG, "start": "2026-12-05T10:00", "location": "x" * 300_000,
                         "description": "d" * 500_000}),
    ("alarm_set", {"hour": 7, "minute": 0, "label": BIG}),
    ("contact_create", {"name": "é" * 900_000, "phone": "+15551234567"}),
]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_megabyte_action_is_recorded_cut_and_verifiable_and_still_refused(tmp_path, mode):
    server = sim_server(tmp_path)
    async with connect(server, mode, Answers(*["yes"] * 10)) as client:
        for name, args in CALLS:
            result = await client.call_tool(name, args)
            assert result.is_error and "nothing was sent" in result.content[0].text, result.content[0].text
    lines = (tmp_path / "decisions.jsonl").read_text().splitlines()
    assert len(lines) == len(CALLS)
    for line, (name, args) in zip(lines, CALLS):
        assert len(line) < DEVICE_DECISION.chars + 2000, len(line)  # not the megabytes it was given
        row = json.loads(line)
        # accountability kept: who decided what, about which action
        assert row["area"] == "device" and row["outcome"] == "refused" and "decision_id" in row
        assert row["digest"] and row["action"]  # the action's digest (of all of it), and what is kept of it
        notice = row[CUT_KEY]
        assert notice["full_chars"] > 1_000_000 // 2 and notice["kept_chars"] < DEVICE_DECISION.chars
        assert notice["limits"] == {"chars": DEVICE_DECISION.chars, "string": DEVICE_DECISION.string,
                                    "items": DEVICE_DECISION.items, "depth": DEVICE_DECISION.depth,
                                    "digits": DEVICE_DECISION.digits}
        assert "more characters]" in json.dumps(row["action"])  # each cut string says how much it lost
        assert len(notice["full_sha256"]) == 64


def test_the_cut_record_holds_the_hash_of_the_full_details() -> None:
    from sentinel_mcp.core.decision_record import BuiltinRecord

    details = {"action": {"kind": "type", "text": BIG}, "digest": "d1", "outcome": "refused"}
    row = BuiltinRecord("device", "refused", "", reason="r" * 100_000, details=details).redacted()
    assert row[CUT_KEY]["full_sha256"] == canonical_digest(details)[0]
    assert len(row["reason"]) < 3000 and "more characters]" in row["reason"]
    assert row["outcome"] == "refused" and row["digest"] == "d1" and row["area"] == "device"
    assert len(json.dumps(row)) < DEVICE_DECISION.chars + 4000


def test_deep_details_neither_crash_nor_hang_the_record() -> None:
    from sentinel_mcp.core.decision_record import BuiltinRecord

    deep: list = []
    cur = deep
    for _ in range(10_000):
        cur.append([])
        cur = cur[0]
    many = {f"k{i}": i for i in range(50_000)}
    row = BuiltinRecord("device", "denied", "", details={"action": deep, "many": many,
                                                         "n": 10 ** 5000}).redacted()
    text = json.dumps(row)
    assert json.loads(text)[CUT_KEY]["full_sha256"] and len(text) < DEVICE_DECISION.chars + 4000
    assert row["outcome"] == "denied"
