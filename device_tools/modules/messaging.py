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
import time
from dataclasses import dataclass
from typing import Any, Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult

from .. import commands as C
from ..actions import ProposedAction
from ..android_time import iso_minutes
from ..arg_shapes import MAX_BODY, MAX_RECIPIENT, label_text, package_name, text_arg
from ..content_rows import parse_rows, read_rows
from ..element_registry import Element, Snapshot
from ..device_words import quoted
from ..errors import DeviceError
from ..gate import Approval
from ..hit_test import tap_receivers
from ..errors import CommandRefused
from ..actuator import StaleElement
from ..rated_reading import reading
from ..one_time_codes import carries_code, codes_in, mask_codes, speaks_of_code
from ..results import error_result, read_result
from ..runtime import DeviceRuntime
from ..ui_tools import ACT, READ, SELF_CONFIRMS, Result, finish
from .contacts import search
from sentinel_mcp.core.phone_numbers import is_phone_number

PROJECTION = ["_id", "address", "body", "date", "read"]
RECENT_MESSAGES = 50  # the newest inbox messages whose codes an SMS may never carry
# and every message received within this long, however many came after it: a window counted in messages
# alone is emptied by whoever sends the phone 50 more (or one whose body spells 50 rows of the query's output)
RECENT_MS = 86_400_000
_EPOCH_MS = re.compile(r"[0-9]{1,19}")


def recent_rows(rows: list[dict[str, str | None]], now_ms: float) -> list[dict[str, str | None]]:
    """The newest ``RECENT_MESSAGES`` rows and every other one not received before the last day (a date
    that is no time counts as recent: the check fails towards refusing)."""
    def older(row: dict[str, str | None]) -> bool:
        date = row.get("date") or ""
        return bool(_EPOCH_MS.fullmatch(date)) and int(date) < now_ms - RECENT_MS

    return rows[:RECENT_MESSAGES] + [r for r in rows[RECENT_MESSAGES:] if not older(r)]


# Messaging apps whose compose screen sms_send may tap Send in, besides the default SMS app the phone names
# (``settings get secure sms_default_application``). A package name is the installed app's own: another app
# cannot take it.
SMS_APPS = frozenset({
    "com.google.android.apps.messaging",  # Google Messages
    "com.android.mms",  # AOSP and many OEM builds (Xiaomi, ...)
    "com.android.messaging",  # AOSP Messaging
    "com.samsung.android.messaging",
    "com.oneplus.mms",
    "com.motorola.messaging",
    "com.sonyericsson.conversations",
    "com.textra",
    "xyz.klinker.messenger",
    "org.fossify.messages",
    "com.simplemobiletools.smsmessenger",
})
SEND_LABEL = re.compile(r"\bsend\b", re.IGNORECASE)
NUMBER_ONLY = re.compile(r"[+0-9 ()\-.]+")  # a label that is a phone number and nothing else
COMPOSE_POLL = 0.3  # seconds between reads of the screen while the compose screen comes up


def _digits(text: str) -> str:
    return re.sub(r"[^0-9]", "", text)


def _plain(text: str) -> str:
    return " ".join(text.split()).casefold()


def _shows_number(text: str, number: str) -> bool:
    """Whether ``text`` shows the phone number ``number`` in any formatting (national or international: one
    ends the other, at least 7 digits; a short code must be shown whole)."""
    got, want = _digits(text), _digits(number)
    if not got or not want:
        return False
    if got == want:
        return True
    short, full = sorted((got, want), key=len)
    return len(short) >= 7 and full.endswith(short)


@dataclass(frozen=True)
class Compose:
    """The compose screen as checked: its Send control, and the ids of every element the check read (the
    Send control, the field holding the body, the elements showing the recipient)."""

    send: Element
    parts: tuple[str, ...]


def compose_reading(snapshot: Snapshot, parts: tuple[str, ...]) -> str:
    """What the check read of ``snapshot``: the reading a confirmed tap is held to (``rated_reading``) of
    each part, the window each is drawn in and the app in front."""
    windows = "\x1f".join(e.window if (e := snapshot.by_id.get(i)) else "\x00gone" for i in parts)
    return f"{reading(snapshot, parts)}\x1e{windows}\x1e{snapshot.package}"


def find_send_button(
    snapshot: Snapshot, apps: frozenset[str], number: str, names: list[str], body: str
) -> tuple[Compose | None, str]:
    """The Send control of the messaging app's compose screen for this message, or None and why not: the
    screen must be a messaging app's window (``apps``, by the window Android names, not a node's claim), show
    the recipient (an element that shows only the number, in any formatting, or a name of that number's
    contact: a number inside other words, in the body or a message, is not the conversation's) and the body in
    an editable field, and hold exactly one control labelled Send (a second, a payment's "Send $", leaves
    which one sends unsure), enabled and the element a tap at its centre reaches (nothing drawn over it)."""
    window = [e for e in snapshot.elements if e.window in apps]
    if not window:
        return None, f"the screen shows {snapshot.package or 'an unknown app'}, not a messaging app"
    fields = [e for e in window if e.editable and _plain(e.text) == _plain(body)]
    if not fields:
        return None, "the messaging app does not show this message's text in its compose field"
    wanted = {_plain(n) for n in names if n.strip()}
    shown = [e for e in window if not e.editable and any(
        (NUMBER_ONLY.fullmatch(label) and _shows_number(label, number)) or _plain(label) in wanted
        for label in (e.text.strip(), e.desc.strip()) if label)]
    if not shown:
        return None, "the messaging app does not show this recipient"
    sends = [
        e for e in window
        if e.clickable and not e.editable
        and SEND_LABEL.search(f"{e.desc} {e.text} {e.resource_id.rsplit('/', 1)[-1].replace('_', ' ')}")
    ]
    if not sends:
        return None, "the compose screen has no Send control"
    if len(sends) > 1:
        return None, f"the compose screen shows {len(sends)} Send controls: which one sends this message " \
            "is unsure"
    send = sends[0]
    if not send.enabled:
        return None, "the compose screen's Send control is disabled"
    reached = tap_receivers(snapshot, send)
    if not isinstance(reached, list) or [r.id for r in reached] != [send.id]:
        return None, "something else lies over the Send control (a tap there would reach another element)"
    return Compose(send, tuple(e.id for e in [send, *fields, *shown])), ""


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
            rows = await read_rows(rt.gate.read, f"content://sms/{box}", PROJECTION, sort="date DESC")
        except (ValueError, DeviceError) as exc:
            return error_result(str(exc))
        needle = (query or "").lower()
        messages = []
        masked = 0
        for r in rows:
            body = r.get("body")
            if not reveal_codes and body:
                body, n = mask_codes(body, r.get("address"))  # a service's sender: any bare group
                masked += n
            # the query sees what the caller may see: a masked code cannot be guessed digit by digit
            if needle and needle not in f"{r.get('address')} {body}".lower():
                continue
            ms = r.get("date") or ""
            when = iso_minutes(ms)
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
        if not text_arg(body, MAX_BODY, lines=True):  # arg_shapes.py, mirrored by device.pl
            return error_result("body: no control character but line breaks and tabs")
        if not label_text(to, MAX_RECIPIENT):
            return error_result(f"to: a phone number or a contact's name, at most {MAX_RECIPIENT} characters "
                                "on one line")
        if speaks_of_code(body):  # device.pl's rule too, one reading (tests/device/test_code_rule_parity.py)
            return error_result("forwarding a one-time code by SMS is never allowed: the message speaks of a "
                                "code and holds one. Nothing was sent")
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
            # checked after the person's yes, not before: a refusal before any question would tell a caller
            # that cannot read the messages whether its guess is a code the phone received
            await refuse_received_codes()
            output = await rt.gate.run(argv, approval)
            if "Error" in output:
                raise DeviceError(f"no SMS app accepted the SENDTO intent: {quoted(output, 300)}")
            # `am start` returns before the app is up (no -W): until the messaging app's compose screen for
            # this message is on the screen, whatever app is there must not get the tap
            apps = SMS_APPS | await default_sms_app()
            names = [name] if name else await contact_names(number)
            deadline = time.monotonic() + rt.settings.compose_timeout
            while True:
                screen = await rt.actuator.observe()
                compose, why = find_send_button(screen, apps, number, names, body)
                if compose is not None or time.monotonic() >= deadline:
                    break
                await anyio.sleep(COMPOSE_POLL)
            if compose is None:
                raise DeviceError(
                    f"the messaging app's compose screen for this message did not come up within "
                    f"{rt.settings.compose_timeout:g}s ({why}): nothing was tapped and the message was NOT "
                    "sent (its draft may be open on the phone)"
                )
            over = await rt.actuator.covered(compose.send)  # another app's window there would take the tap
            if over is not None:
                raise DeviceError(
                    f"{over.removeprefix('refused: ').removesuffix('. Nothing was sent')}: nothing was "
                    "tapped and the message was NOT sent (its draft may be open on the phone)"
                )
            button = await still_shown(compose, compose_reading(screen, compose.parts), apps, names)
            tap = C.tap(*button.center)
            approval.allow(tap)  # exactly this tap, on the Send control checked above: no other
            await rt.gate.run(tap, approval)
            return {"message": f"sent SMS to {name + ' ' if name else ''}{number}", "to": number}

        async def still_shown(
            compose: Compose, checked: str, apps: frozenset[str], names: list[str]
        ) -> Element:
            """The Send control, read again right before the tap, the screen still showing exactly what was
            checked (the recipient, the text, one Send control a tap reaches, the same app): the one recheck
            a confirmed tap gets (``Actuator.recheck``). Else refused: the screen is not returned (the
            conversation is a messages read)."""
            def now(fresh: Snapshot) -> str:
                again, _ = find_send_button(fresh, apps, number, names, body)
                if again is None or again.parts != compose.parts:
                    return "\x00changed"
                return compose_reading(fresh, again.parts)

            try:
                return await rt.actuator.recheck(compose.send, tapped=compose.send.id, rated=(checked, now))
            except StaleElement as stale:
                _, why = find_send_button(stale.fresh, apps, number, names, body)
                raise CommandRefused(
                    "refused: the compose screen changed after it was checked and before the Send tap ("
                    + (why or "the recipient, the message text, the Send control or the app in front is not "
                       "what was checked")
                    + "): nothing was tapped and the message was NOT sent (its draft may be open on the "
                      "phone)"
                ) from None

        async def refuse_received_codes() -> None:
            """No SMS carries a one-time code this phone received lately, in any spelling (``carries_code``:
            "482-913", "c0de 482913", "48two913", ...). The codes stay inside: the refusal does not say which.
            An inbox that cannot be read refuses too: the check cannot be skipped by breaking it."""
            try:
                rows = parse_rows(
                    await rt.gate.read(C.content_query("content://sms/inbox", PROJECTION, sort="date DESC")),
                    PROJECTION,
                )
            except (ValueError, DeviceError):
                raise CommandRefused(
                    "refused: the inbox could not be read to check that this message forwards no one-time "
                    "code the phone received. Nothing was sent"
                ) from None
            recent = recent_rows(rows, time.time() * 1000)
            codes = codes_in((r.get("body") or "" for r in recent), (r.get("address") for r in recent))
            if carries_code(body, codes):
                raise CommandRefused(
                    "refused: the message holds a one-time code this phone received recently (in some "
                    "spelling); forwarding a code by SMS is never allowed. Nothing was sent"
                )

        async def default_sms_app() -> frozenset[str]:
            try:
                named = (await rt.gate.read(C.SMS_DEFAULT_APP)).strip()
            except DeviceError:
                return frozenset()
            return frozenset({named}) if package_name(named) else frozenset()

        async def contact_names(number: str) -> list[str]:
            """The names of this number's contacts, only to recognise the conversation the messaging app
            shows (it titles it with the name): compared with the screen, never returned."""
            try:
                return [c["name"] for c in await search(rt.gate, number) if _shows_number(c["phone"], number)]
            except (ValueError, DeviceError):
                return []

        # no screen after it: the conversation it shows is a messages read (screen_read asks for that consent)
        return await finish(rt, await rt.actuator.guarded(ctx, action, [argv], run), with_screen=False)
