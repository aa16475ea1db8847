"""The device built-in through the real gateway: secrets never reach the audit log in clear (allowed or
denied), personal reads need the user's consent, one-time codes need it for each call, and text that others
wrote comes back marked as data."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from tests.identity.identity_rig import text
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.config import parse_config
from sentinel_mcp.gateway.audit import read_audit
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.paths import RULEBASES_DIR

pytestmark = pytest.mark.timeout(120)
PASSWORD = "Tr0ub4dor&3-horse"
CARD = "4111 1111 1111 1111"


def config(tmp_path: Path) -> Any:
    return parse_config({"mcpServers": {}, "sentinel": {
        "rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "device.pl")],
        "builtins": ["device"], "data_dir": str(tmp_path),
        "device": {"backend": "simulated", "risk_classifier": False}}}, base_dir=tmp_path)


class Person:
    """Says yes to the phone's own confirmations, and what ``policy`` says to Sentinel's questions."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.allow = True
        self.remember = False
        self.password_ok = False

    async def __call__(self, ctx: Any, params: Any) -> ElicitResult:
        self.asked.append(params.message)
        props = (params.requested_schema or {}).get("properties", {})
        if "confirm" in props:  # the device's own confirmation
            return ElicitResult(action="accept", content={"confirm": True})
        if "allow" in props:  # a consent
            content = {"allow": self.allow}
            if "remember" in props:
                content["remember"] = self.remember
            return ElicitResult(action="accept", content=content)
        if "password" in params.message:  # a yes/no question: titled string choices, not a boolean
            return ElicitResult(action="accept", content={"answer": "yes" if self.password_ok else "no"})
        return ElicitResult(action="accept", content={k: True for k in props})


def stored_bytes(tmp_path: Path) -> bytes:
    """Everything the audit store holds on disk, WAL included (its own file and every gateway instance's)."""
    return b"".join(p.read_bytes() for p in tmp_path.rglob("sentinel.db*"))


async def test_typed_secrets_never_reach_the_audit_log(tmp_path):
    person = Person()
    async with running_gateway(config(tmp_path)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=person) as c:
            login = await c.call_tool("device__open_app", {"package": "com.example.bank"})
            assert not login.is_error, text(login)
            screen = login.structured_content["screen"]
            field = {e["resource_id"].rsplit("/", 1)[-1]: e["id"] for e in screen["elements"]}
            snap = screen["snapshot_id"]
            typed = {"snapshot_id": snap, "element_id": field["password"]}
            denied = await c.call_tool("device__type_text", {**typed, "text": PASSWORD})
            assert denied.is_error and "password" in text(denied)  # the user did not allow password entry
            card = await c.call_tool(
                "device__type_text", {"snapshot_id": snap, "element_id": field["username"], "text": CARD}
            )
            assert card.is_error and "card number" in text(card)
            bad = await c.call_tool(
                "device__type_text", {**typed, "text": 12345}
            )  # a schema error, not a secret
            assert bad.is_error
        # the "no" to the password question is this conversation's answer; a new conversation asks again
        person.password_ok = True
        async with Client(rt.front.server, mode="legacy", elicitation_callback=person) as c:
            allowed = await c.call_tool("device__type_text", {**typed, "text": PASSWORD})
            assert not allowed.is_error, text(allowed)
        await rt.audit.flush()
    rows = [
        r for r in await read_audit(tmp_path / "sentinel.db", tail=100) if r["tool"] == "device__type_text"
    ]
    assert {r["decision"] for r in rows} >= {"deny", "allow", "ask"}
    dumped = json.dumps(rows)
    for secret in (PASSWORD, CARD, CARD.replace(" ", ""), "Tr0ub4dor"):
        assert secret not in dumped, secret
    assert "[redacted 17 chars]" in dumped
    raw = stored_bytes(tmp_path)
    assert PASSWORD.encode() not in raw and b"4111 1111 1111 1111" not in raw
    for f in tmp_path.rglob(
        "*"
    ):  # nothing Sentinel keeps (facts, consents, the device's decision log) has it
        if f.is_file():
            assert PASSWORD.encode() not in f.read_bytes(), f


async def test_personal_reads_need_consent_and_codes_are_shown_for_one_call_only(tmp_path):
    person = Person()
    async with running_gateway(config(tmp_path)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=person) as c:
            person.allow = False
            r = await c.call_tool("device__sms_list", {})
            assert r.is_error and "declined" in text(r) and "messages" in person.asked[-1]
            person.allow, person.remember = True, True
            inbox = await c.call_tool("device__sms_list", {})
            assert not inbox.is_error, text(inbox)
            # the text others wrote is marked as data, and its codes are masked
            assert text(inbox).startswith("[Untrusted content from SMS messages")
            assert inbox.meta["sentinel/untrusted"] == {"source": "SMS messages"}
            assert "482913" not in text(inbox) and "••••••" in text(inbox)
            n = len(person.asked)
            assert (
                not (await c.call_tool("device__sms_list", {})).is_error and len(person.asked) == n
            )  # remembered
            # one-time codes: asked every call, never remembered
            for _ in range(2):
                shown = await c.call_tool("device__sms_list", {"reveal_codes": True})
                assert "482913" in text(shown) and "one time codes" in person.asked[-1]
            assert len(person.asked) == n + 2
            person.allow = False
            hidden = await c.call_tool("device__sms_list", {"reveal_codes": True})
            assert hidden.is_error and "482913" not in text(hidden)
            # contacts are a kind of their own; the screen's text is marked too
            person.allow, person.remember = True, False
            contacts = await c.call_tool("device__contacts_search", {"query": "ali"})
            assert not contacts.is_error and "contacts" in person.asked[-1]
            assert contacts.meta["sentinel/untrusted"] == {"source": "contacts"}
            screen = await c.call_tool("device__screen_read", {})
            assert text(screen).startswith("[Untrusted content from the phone's screen")
        await rt.audit.flush()
    with sqlite3.connect(tmp_path / "consents.db") as db:
        kinds = db.execute("SELECT principal, kind, granted_by FROM consents").fetchall()
        log = db.execute("SELECT action, principal, kind FROM consent_log").fetchall()
    assert kinds == [("owner", "messages", "elicitation")] and log == [("grant", "owner", "messages")]
    rows = [
        r for r in await read_audit(tmp_path / "sentinel.db", tail=200) if r["tool"] == "device__sms_list"
    ]
    allowed = [r for r in rows if r["decision"] == "allow"]
    assert allowed and all(r["proof"]["consent"] for r in allowed)  # every personal read names its consent
    assert "482913" not in json.dumps(rows)
