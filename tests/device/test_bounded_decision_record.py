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
# megabyte arguments are refused by their shape (arg_shapes.py) before the firewall decides: nothing recorded
HUGE = [
    ("calendar_create", {"title": BIG, "start": "2026-12-05T10:00", "location": "x" * 300_000,
                         "description": "d" * 500_000}),
    ("alarm_set", {"hour": 7, "minute": 0, "label": BIG}),
    ("contact_create", {"name": "é" * 900_000, "phone": "+15551234567"}),
]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_megabyte_action_is_refused_by_its_shape_before_any_decision(tmp_path, mode):
    """Before arg_shapes, these reached the firewall and were recorded cut (the cut itself is tested below and
    in tests/records); now no shape lets a megabyte through, and nothing is decided or sent."""
    server = sim_server(tmp_path)
    async with connect(server, mode, Answers(*["yes"] * 10)) as client:
        for name, args in HUGE:
            result = await client.call_tool(name, args)
            assert result.is_error and "200 characters" in result.content[0].text, result.content[0].text
    assert not (tmp_path / "decisions.jsonl").exists()
    assert not any(c[:1] in (["am"], ["content"]) for c in server.runtime.backend.commands)


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
