"""The rulebase's version (a hash of its files) is for those who may read the rulebase: through a real
Sentinel over HTTP, a principal whose tools do not cover ``sentinel__*`` (so it may not read ``sentinel://rulebase``)
finds the version nowhere in what it is given - its ``sentinel_why_not`` proofs, the request states of its
questions (sealed, not encrypted: readable by the client), any result - while a reader sees it in its proofs.
Two states for the same call do not even carry a common value (the client cannot tell two versions apart)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from tests.identity.identity_rig import BOOKINGS_PL, http_client, http_sentinel, write_config

from sentinel_mcp.policy.version_readers import reason_without_version, row_without_version

pytestmark = pytest.mark.timeout(180)
READER, NON_READER = "reader-token-0123456789abcdef", "nonreader-token-0123456789abcd"
GUARDED_READ = "\nguard('bk__list_bookings', [user_id = U], current_user(U)).\n"


def everything(result: Any) -> str:
    return result.model_dump_json(by_alias=True) if hasattr(result, "model_dump_json") else json.dumps(result)


def state_payload(state: str) -> dict[str, Any]:
    body = state.split(".", 1)[1]
    return json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))[32:])


async def test_a_principal_that_may_not_read_the_rulebase_sees_no_version(tmp_path: Path) -> None:
    rules = tmp_path / "bookings.pl"
    rules.write_text(BOOKINGS_PL.read_text() + GUARDED_READ)
    cfg = write_config(tmp_path, principals=[
        {"name": "reader", "token": READER, "tools": ["bk__*", "sentinel__*"]},
        {"name": "nonreader", "token": NON_READER, "tools": ["bk__*", "sentinel__sentinel_why_not"]},
    ])
    body = json.loads(cfg.read_text())
    body["sentinel"]["rulebases"][1] = str(rules)
    cfg.write_text(json.dumps(body))
    why = {"tool": "bk__list_bookings", "arguments": {"user_id": "u_123"}}
    with http_sentinel(cfg) as (base, _):
        async with http_client(base, READER, "auto") as reader:
            shown = await reader.call_tool("sentinel__sentinel_why_not", why)
            proof = json.loads(shown.content[0].text)
            assert proof["decision"] == "allow", proof
            version = proof["proof"]["rulebase"]
            assert isinstance(version, str) and len(version) == 64
        seen: list[str] = []
        async with http_client(base, NON_READER, "auto") as other:
            shown = await other.call_tool("sentinel__sentinel_why_not", why)
            assert json.loads(shown.content[0].text)["decision"] == "allow"
            seen.append(everything(shown))
            seen.append(everything(await other.call_tool("bk__list_bookings", {"user_id": "u_123"})))
            states = []
            for _ in range(2):  # a question's round: the state is handed to the client
                asked = await other.client.session.call_tool(
                    "bk__cancel_booking", {"booking_id": "BK-789"}, allow_input_required=True
                )
                assert type(asked).__name__ == "InputRequiredResult", asked
                seen.append(everything(asked))
                states.append(state_payload(asked.request_state))
                seen.append(json.dumps(states[-1]))
            for _ in range(2):
                denied = await other.call_tool("sentinel__sentinel_facts", {})  # out of its reach
                seen.append(everything(denied))
        assert not any(version in s for s in seen), [s for s in seen if version in s][0][:500]
        tags = [s["version"] for s in states]
        assert tags[0] != tags[1] and not set(tags[0].split(".")) & set(tags[1].split("."))


def test_an_audit_row_shown_to_a_non_reader_holds_no_version() -> None:
    row = {"policy_version": "0123456789abcdef",
           "reason": "guard of bk__x proved (rulebase 0123456789abcdef)",
           "proof": {"rulebase": "0123456789abcdef", "tree": {"goal": "x"}}, "tool": "bk__x"}
    shown = row_without_version(row)
    assert "0123456789abcdef" not in json.dumps(shown)
    assert shown["proof"] == {"tree": {"goal": "x"}} and shown["reason"] == "guard of bk__x proved"
    assert reason_without_version("a reason (rulebase of mine)") == "a reason (rulebase of mine)"
