"""Messaging: list SMS from the Telephony provider; send with confirmation.

Sending uses the SENDTO intent (``am start -a android.intent.action.SENDTO -d sms:NUMBER --es
sms_body TEXT``) and then taps the compose screen's Send button, found in the UI dump. Why not
``service call isms``: its transaction numbers and parcel layout change between Android releases
(and OEM builds), it needs SEND_SMS, which the adb shell user lacks on current Android, and it fails
silently. The intent is a stable public API since Android 1, works with any default SMS app, takes
Unicode (it is an intent extra, not typed keys), and the user can see the message on the screen.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult

from .. import commands as C
from ..actions import ProposedAction
from ..content_rows import parse_rows
from ..element_registry import Snapshot
from ..errors import DeviceError
from ..gate import Approval
from ..one_time_codes import mask_codes
from ..results import error_result, read_result
from ..runtime import DeviceRuntime
from ..ui_tools import ACT, READ, SELF_CONFIRMS, Result, finish
from .contacts import search
from sentinel_mcp.core.phone_numbers import is_phone_number

PROJECTION = ["_id", "address", "body", "date", "read"]
MAX_BODY = 1600  # ten SMS segments; longer is almost certainly a mistake


def find_send_button(snapshot: Snapshot):
    candidates = [
        e
        for e in snapshot.elements
        if e.clickable
        and e.enabled
        and re.search(
            r"\bsend\b",
            f"{e.desc} {e.text} {e.resource_id.rsplit('/', 1)[-1].replace('_', ' ')}",
            re.IGNORECASE,
        )
    ]
    return candidates[-1] if candidates else None


def register(mcp: MCPServer, rt: DeviceRuntime) -> None:
    # message bodies are personal (the gateway asks the user's consent); the codes in them only for one call
    @mcp.tool(annotations=READ, meta={"sentinel/personal": "messages",
                                      "sentinel/personal_arguments": {"reveal_codes": "one_time_codes"}})
    async def sms_list(
        box: Literal["inbox", "sent"] = "inbox",
        query: str | None = None,
        limit: int = 20,
        reveal_codes: bool = False,
    ) -> CallToolResult:
        """SMS messages, newest first, optionally only those whose sender or text contains `query`.
        One-time codes are masked (•); `reveal_codes` shows them, with the user's consent for this call."""
        limit = max(1, min(limit, 200))
        try:
            output = await rt.gate.read(C.content_query(f"content://sms/{box}", PROJECTION, sort="date DESC"))
            rows = parse_rows(output, PROJECTION)
        except (ValueError, DeviceError) as exc:
            return error_result(str(exc))
        needle = (query or "").lower()
        messages = []
        masked = 0
        for r in rows:
            body = r.get("body")
            if not reveal_codes and body:
                body, n = mask_codes(body)
                masked += n
            # the query sees what the caller may see: a masked code cannot be guessed digit by digit
            if needle and needle not in f"{r.get('address')} {body}".lower():
                continue
            ms = r.get("date") or ""
            when = (
                datetime.fromtimestamp(int(ms) / 1000, UTC).isoformat(timespec="minutes")
                if ms.isdigit()
                else None
            )
            messages.append(
                {
                    "id": r["_id"],
                    "address": r.get("address"),
                    "body": body,
                    "date": when,
                    "read": r.get("read") == "1",
                }
            )
            if len(messages) >= limit:
                break
        text = "\n".join(f"{m['date']} {m['address']}: {m['body']}" for m in messages)
        data: dict[str, Any] = {"messages": messages, "box": box}
        if masked:
            data["codes_masked"] = masked
            text += (
                f"\n({masked} one-time code(s) masked; reveal_codes=true shows them if the user allows it)"
            )
        return read_result(text or "no messages", data, untrusted="SMS messages")

    # a name in `to` is looked up in the contacts: that is a contacts read, and the gateway asks the contacts
    # consent for it exactly as for contacts_search (a phone number given by the caller needs none)
    @mcp.tool(annotations=ACT, meta={**SELF_CONFIRMS, "sentinel/personal_names": {"to": "contacts"}})
    async def sms_send(to: str, body: str, ctx: Context) -> Result:
        """Send an SMS to a phone number or a contact's name (a name reads the contacts: it needs the user's
        contacts consent, as contacts_search does). Always asks the user to confirm first."""
        body = body.strip()
        if not body:
            return error_result("body must not be empty")
        if len(body) > MAX_BODY:
            return error_result(f"body too long ({len(body)} > {MAX_BODY} characters)")
        name = None
        number = to.strip()
        derived: list[str] = []
        if not is_phone_number(number):
            # the same rule the gateway's consent gate applies (core.phone_numbers): this branch runs only
            # with the caller's contacts consent (or with no gateway in front, as contacts_search does)
            try:
                found = [c for c in await search(rt.gate, number) if c["name"].lower() == number.lower()]
            except (ValueError, DeviceError):
                return error_result(f"{to!r} is not a phone number and the contacts could not be read; "
                                    "give the number")
            if len(found) != 1:  # how many contacts match is not said: give the number
                return error_result(f"{to!r} is not a phone number or the name of exactly one contact; "
                                    "give the number")
            name, number = found[0]["name"], found[0]["phone"]
            derived = ["to", "name"]  # the caller gave a name: the number is the owner's data
        number = re.sub(r"[ ()\-.]", "", number)
        argv = C.am_start(
            "android.intent.action.SENDTO",
            data=f"sms:{number}",
            extras=[("--es", "sms_body", body), ("--ez", "exit_on_sent", "true")],
        )
        action = ProposedAction(
            kind="sms_send", tool="sms_send", text=body, details={"to": number, "name": name or ""},
            derived=derived,
        )

        async def run(approval: Approval) -> dict[str, Any]:
            output = await rt.gate.run(argv, approval)
            if "Error" in output:
                raise DeviceError(f"no SMS app accepted the SENDTO intent: {output.strip()[:300]}")
            compose = await rt.actuator.observe()
            button = find_send_button(compose)
            if button is None:
                raise DeviceError(
                    "the compose screen opened but has no Send button; the message was NOT sent"
                )
            await rt.gate.run(C.tap(*button.center), approval)
            return {"message": f"sent SMS to {name + ' ' if name else ''}{number}", "to": number}

        return await finish(
            rt, await rt.actuator.guarded(ctx, action, [argv, ("input", "tap", None, None)], run)
        )
