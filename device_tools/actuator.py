"""Actuator: reads the screen, checks staleness, runs the security review, then acts through the gate.

Order for every action: (1) the target is re-read and compared with the snapshot the caller named
(stale = refused, fresh view returned), (2) firewall + risk classifier, (3) confirmation when
risky, (4) after a confirmation the target is checked again (the screen may have moved while the
user decided), (5) the gate sends only the commands the approval covers.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import anyio
import anyio.to_thread
from mcp.types import InputRequiredResult

from . import commands as C
from .actions import ProposedAction
from .confirmation import Outcome, confirm_by_elicitation, confirm_by_volume_up
from .confirmation_text import question_for
from .device_words import quoted
from .element_registry import Element, ElementRegistry, Snapshot, named, parse_dump
from .hit_test import tap_receivers
from .rated_reading import reading
from .errors import CommandRefused, DeviceError, DumpFailed, FocusMoved
from .gate import SENT_KEPT, Approval, CommandGate
from .risk_classifier import ActionRiskClassifier
from .window_list import Window, WindowsUnknown, covering, parse_windows
from sentinel_mcp.core.call_meta import decision_id_of
from sentinel_mcp.core.decision_record import RecordNotWritten
from sentinel_mcp.core.errors import SentinelError

log = logging.getLogger(__name__)
DUMP_FAILURES = ("null root node", "could not get idle state", "error:", "killed")
Status = Literal["done", "denied", "stale", "error"]


class StaleElement(SentinelError):
    area = "device"
    def __init__(self, reason: str, fresh: Snapshot) -> None:
        super().__init__(reason)
        self.reason = reason
        self.fresh = fresh


@dataclass
class ActionOutcome:
    status: Status
    message: str
    decision: dict[str, Any] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    snapshot: Snapshot | None = None
    # where the result's text comes from when the device wrote it (a command's output: a file's text, a file
    # name any app chose), so the gateway marks it as data; an action's ``run`` says it under this key
    untrusted: str | None = None


UNTRUSTED_KEY = "untrusted"

class Actuator:
    def __init__(
        self,
        gate: CommandGate,
        classifier: ActionRiskClassifier,
        *,
        physical_confirmation: bool = False,
        confirm_timeout: float = 30.0,
        dump_attempts: int = 4,
        dump_backoff: float = 0.3,
        on_decision: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.gate = gate
        self.classifier = classifier
        self.registry = ElementRegistry()
        self.physical_confirmation = physical_confirmation
        self.confirm_timeout = confirm_timeout
        self.dump_attempts = max(1, dump_attempts)
        self.dump_backoff = dump_backoff
        self.on_decision = on_decision
        # One UI, one finger: actions run one at a time (reads and confirmations wait outside the lock).
        self._acting = anyio.Lock()

    @property
    def acting(self) -> anyio.Lock:
        """Held while an action sends its commands: a read holding it sees no action of Sentinel's change the
        screen meanwhile (``ScreenPrivacy.captured``: the screens read around a screenshot are the one it
        shows)."""
        return self._acting

    # ---- observing --------------------------------------------------------------------
    async def observe(self) -> Snapshot:
        """Dump the UI, retrying the known transient failures with backoff."""
        last = "empty output"
        for attempt in range(self.dump_attempts):
            raw = await self.gate.read_bytes(C.DUMP)
            text = raw.decode("utf-8", errors="replace")
            if "<hierarchy" in text:
                # parsed off the event loop: a screen of many nodes must not stall every other call
                return self.registry.remember(await anyio.to_thread.run_sync(parse_dump, text))
            stripped = text.strip()
            last = stripped.splitlines()[0][:160] if stripped else "empty output"
            if stripped and not any(f in stripped.lower() for f in DUMP_FAILURES):
                break  # not a known transient failure: retrying will not help
            if attempt + 1 < self.dump_attempts:
                await anyio.sleep(self.dump_backoff * (2**attempt))
        raise DumpFailed(f"uiautomator dump failed after {self.dump_attempts} attempt(s): {quoted(last)}")

    async def target(self, element_ref: str, snapshot_id: str) -> tuple[Element, Snapshot]:
        """The element as it is *now*; StaleElement when it vanished or changed since the snapshot."""
        old = self.registry.get(snapshot_id)
        if old is None:
            raise ValueError(f"unknown snapshot {snapshot_id!r}: call screen_read and use its snapshot_id")
        wanted = old.find(element_ref)
        if wanted is None:
            raise ValueError(f"no element {element_ref!r} in snapshot {snapshot_id}; call screen_read")
        fresh = await self.observe()
        now = fresh.by_id.get(wanted.id)
        if now is None:
            raise StaleElement(f"element {wanted.id} ({wanted.shown}) is no longer on the screen", fresh)
        if now.fingerprint != wanted.fingerprint:
            raise StaleElement(
                f"element {wanted.id} ({wanted.shown}) changed since snapshot {snapshot_id}", fresh
            )
        # what it means: an "OK" is the same node in every app's dialog; the caller chose it under what the
        # snapshot said around it (rated_reading: its app, its row, what it stands under), and that must hold
        if reading(old, [wanted.id]) != reading(fresh, [now.id]):
            raise StaleElement(
                f"what the screen says in or around element {wanted.id} ({wanted.shown}) changed since "
                f"snapshot {snapshot_id}", fresh
            )
        return now, fresh

    async def covered(self, element: Element) -> str | None:
        """Why a tap at ``element``'s centre may reach another app's window drawn over its own (an overlay the
        dump does not show), or None when nothing else lies over it (``window_list``)."""
        x, y = element.center
        return await self.covered_at(element.window or element.package, [(x, y)],
                                     f"the centre of {element.id} ({element.shown})")

    @property
    def visible_windows(self) -> Callable[[], Awaitable[list[Window]]] | None:
        """Reads the visible windows, topmost first (``window_list``): whose pixels a screenshot shows, an
        overlay the dump does not list included, the system UI's notices too; None when the backend cannot
        list them (termux)."""
        if not getattr(self.gate.backend, "lists_windows", False):
            return None

        async def windows() -> list[Window]:
            return [w for w in parse_windows(await self.gate.read(C.WINDOWS)) if w.visible]

        return windows

    async def covered_at(
        self, app: str | Callable[[int, int], str], points: Sequence[tuple[int, int]], where: str
    ) -> str | None:
        """Why a touch at ``points`` may reach a window of another app than ``app`` (one app, or the app each
        point is meant for); None: each reaches its app."""
        if not getattr(self.gate.backend, "lists_windows", False):
            return None
        try:
            windows = parse_windows(await self.gate.read(C.WINDOWS))
        except WindowsUnknown as exc:
            return f"refused: {exc}. Nothing was sent"
        for x, y in points:
            found = covering(windows, app if isinstance(app, str) else app(x, y), x, y)
            if isinstance(found, str):
                return f"refused: {found}. Nothing was sent"
            if found is not None:
                return (
                    f"refused: a window of {named(found.package)} lies over {where} and would receive the "
                    "touch instead. Nothing was sent"
                )
        return None

    async def has_focus(self, element: Element) -> None:
        """After the tap that focuses ``element``: ``FocusMoved`` unless it is the focused field now, in the
        same window. Keys and ``input text`` go to whatever has the focus: the app may move it on the tap (to
        another field, or another app it brings to the front), and the text would land there."""
        fresh = await self.observe()
        now = fresh.by_id.get(element.id)
        if now is None or not now.focused or not now.editable or now.window != element.window:
            where = next((e for e in fresh.elements if e.focused), None)
            moved = f"{where.id} ({where.shown}) in {named(where.window or where.package)}" if where else \
                "no field"
            raise FocusMoved(
                f"not typed: after the tap on {element.id} ({element.shown}) the focus was on {moved}, so "
                "no key was sent (the tap was)"
            )

    def mark(self) -> tuple[int, int]:
        """Where the phone's actions and the model's ratings stand, before a screen is read for an action."""
        return self.gate.acted_count, getattr(self.classifier, "calls", 0)

    def moved_since(self, mark: tuple[int, int]) -> str | None:
        """Why the screen an action was rated on may be gone by the time it is sent (None: nothing says so):
        another action went out to the phone, or the rating waited for the model (tens of seconds, during
        which the person or an app may bring another screen up). Else the action is sent on the screen it was
        checked against (the read and the send are milliseconds apart), with no second read."""
        acted, asked = mark
        if self.gate.acted_count != acted:
            return "while it waited its turn, another action was sent to the phone"
        if getattr(self.classifier, "calls", 0) != asked:
            return "while the model rated it"
        return None

    async def recheck(self, element: Element, *, tapped: str | None = None,
                      rated: tuple[str, Callable[[Snapshot], str]] | None = None,
                      waiting: str = "while waiting for confirmation") -> Element:
        """The element as it is now, unchanged since it was rated; ``tapped``: and a tap at its centre still
        reaches that element id (nothing was put over it meanwhile); ``rated``: (what the rating read, the
        function that read it), and that function reads the same of the screen now (a row's inner labels, a
        switch's row: what the person was asked about, not only the element's own attributes). ``waiting``:
        what the action waited for (said in the refusal)."""
        fresh = await self.observe()
        now = fresh.by_id.get(element.id)
        if now is None or now.fingerprint != element.fingerprint:
            raise StaleElement(f"element {element.id} ({element.shown}) changed {waiting}", fresh)
        if rated is not None and rated[1](fresh) != rated[0]:
            raise StaleElement(
                f"what the screen says in or around element {element.id} ({element.shown}) (the labels its "
                f"question was built from) changed {waiting}", fresh
            )
        if tapped is not None:
            over = await self.covered(now)
            if over is not None:
                raise StaleElement(f"{waiting}, {over.removeprefix('refused: ')}", fresh)
            found = tap_receivers(fresh, now)
            if isinstance(found, str) or found[-1].id != tapped:
                why = "a tap there reaches another element"
                if isinstance(found, str):
                    why = found.removeprefix("refused: ")
                raise StaleElement(f"{waiting}, {why}", fresh)
        return now

    # ---- acting -----------------------------------------------------------------------
    async def guarded(
        self,
        ctx: Any,
        action: ProposedAction,
        patterns: Sequence[Sequence[str | None]],
        run: Callable[[Approval], Awaitable[dict[str, Any]]],
        *,
        context: str = "",
        withheld: list[str] | None = None,
    ) -> ActionOutcome | InputRequiredResult:
        """``withheld``: apps on the rated screen the caller may not read (its question quotes none of it).
        Validate fully, then ask, then act: a command the backend could never send is refused before anyone
        is asked to confirm it."""
        # a question on the phone holds its turn until its action has run (``gate.question_turn``)
        async with contextlib.AsyncExitStack() as turn:
            return await self._guarded(ctx, action, patterns, run, context, withheld, turn)

    async def _ask_on_phone(self, ctx: Any, question: str, turn: contextlib.AsyncExitStack) -> Outcome:
        """Volume Up, in the phone's question turn (kept in ``turn``); waiting for the turn counts against the
        timeout, as waiting behind an earlier question always did."""
        deadline = anyio.current_time() + self.confirm_timeout
        with anyio.move_on_after(self.confirm_timeout):
            await turn.enter_async_context(self.gate.question_turn())
            return await confirm_by_volume_up(self.gate, ctx, question, deadline - anyio.current_time(),
                                              in_turn=True)
        return "timeout"

    async def _guarded(
        self,
        ctx: Any,
        action: ProposedAction,
        patterns: Sequence[Sequence[str | None]],
        run: Callable[[Approval], Awaitable[dict[str, Any]]],
        context: str,
        withheld: list[str] | None,
        turn: contextlib.AsyncExitStack,
    ) -> ActionOutcome | InputRequiredResult:
        try:
            self.gate.check_sendable(patterns)
        except DeviceError as exc:
            refused: dict[str, Any] = {"action": action.for_classifier(), "digest": action.digest,
                                       "confirmation": "not_asked",
                                       "at": datetime.now(UTC).isoformat(timespec="seconds"),
                                       "decision_id": decision_id_of(ctx), "outcome": "refused"}
            return self._finish(action, ActionOutcome("denied", str(exc), refused))
        assessment = await self.classifier.assess(action, context)
        decision: dict[str, Any] = {
            "action": action.for_classifier(),  # a password is never logged
            "digest": action.digest,
            "assessment": assessment.public(),
            "confirmation": "not_needed",
            "at": datetime.now(UTC).isoformat(timespec="seconds"),
            "decision_id": decision_id_of(ctx),  # the gateway's audit row for this call ("" standalone)
        }
        decided_by = "firewall:low-risk"
        if assessment.requires_confirmation:
            question = question_for(action, assessment, withheld)
            if self.physical_confirmation:
                decision["confirmation"] = "volume_up"
                outcome = await self._ask_on_phone(ctx, question, turn)
            else:
                decision["confirmation"] = "elicitation"
                asked = await confirm_by_elicitation(ctx, question, action.digest, self.confirm_timeout)
                if isinstance(asked, InputRequiredResult):
                    return asked  # the client answers and retries this same call
                outcome = asked
            decision["answer"] = outcome
            if outcome != "confirmed":
                why = {
                    "declined": "the user declined",
                    "cancelled": "the user dismissed the confirmation",
                    "timeout": f"no {'Volume Up press' if self.physical_confirmation else 'answer'} "
                    f"within {self.confirm_timeout:g}s",
                    "unavailable": "confirmation needed but this client cannot be asked (no elicitation), "
                        "and "
                    "no answer came in Sentinel's console inbox in time (if it runs); enable elicitation in "
                    "the "
                    "client or sentinel.device.physical_confirmation",
                    "invalid": "the answer was not accepted: the confirmation is JSON true or false, nothing "
                    "else (the question counts as not answered)",
                    "not_user": "the answer was not accepted: it did not come from the user (only the "
                        "person's "
                    "own answer confirms a risky action; the question counts as not answered)",
                }[outcome]
                return self._finish(
                    action,
                    ActionOutcome(
                        "denied",
                        f"not done: {why}. Nothing was sent to the device.",
                        decision
                        | {
                            "outcome": "denied",
                            "provenance": "user"
                            if outcome in ("declined", "cancelled", "timeout")
                            else "policy",
                        },
                    )
                )
            decided_by = "user:volume-up" if self.physical_confirmation else "user:elicitation"
        if self.on_decision is not None:  # the decision is on record before anything reaches the device
            try:
                self.on_decision(decision | {"outcome": "approved", "decided_by": decided_by})
            except RecordNotWritten as exc:
                return _withheld(action, ActionOutcome(
                    "denied",
                    f"not done: the decision could not be recorded ({exc}). Nothing was sent to the device.",
                    decision | {"outcome": "denied"},
                ))
        approval = Approval(action.digest, decided_by).allow(*patterns)
        sent_before = self.gate.sent_count
        started = time.monotonic()
        try:
            async with self._acting:
                data = await run(approval)
        except StaleElement as stale:
            return self._finish(
                action,
                ActionOutcome(
                    "stale",
                    f"refused as stale: {stale.reason}. Nothing was sent; here is the fresh screen.",
                    decision | {"outcome": "stale"},
                    snapshot=stale.fresh,
                )
            )
        except CommandRefused as exc:  # a later command refused: what went before it is on record too
            return self._finish(action, ActionOutcome("denied", str(exc), decision | {
                "outcome": "refused", **self._sent_record(action, sent_before)}))
        except DeviceError as exc:  # an action stopped half way (the tap went, the text did not)
            return self._finish(action, ActionOutcome("error", str(exc), decision | {
                "outcome": "error", **self._sent_record(action, sent_before)}))
        lost = self.gate.lost_since(sent_before)
        if lost:  # the record's bound (gate.SENT_KEPT) was hit during this action: say so, never silently
            log.warning(
                "%s: %d commands sent during this action are older than the gate's record (%d kept); "
                "its record lists the newest only",
                action.kind,
                lost,
                SENT_KEPT,
            )
            decision |= {"commands_lost": lost}
        decision |= {
            "outcome": "allowed",
            "decided_by": decided_by,
            "provenance": "user" if decided_by.startswith("user") else "policy",
            "commands": self._sent_record(action, sent_before)["commands"],
            "elapsed_ms": round((time.monotonic() - started) * 1000, 1),
        }
        untrusted = data.pop(UNTRUSTED_KEY, None)
        return self._finish(action, ActionOutcome("done", data.pop("message", "done"), decision, data,
                                                  untrusted=untrusted))

    def _sent_record(self, action: ProposedAction, mark: int) -> dict[str, list[str]]:
        """The commands that changed the device since ``mark`` (the gate's count), as records keep them."""
        sent = [c for c in self.gate.sent_since(mark) if not C.is_read_only(c)]
        return {"commands": [_on_record(c, bool(action.target and action.target.password)) for c in sent]}

    def _finish(self, action: ProposedAction, outcome: ActionOutcome) -> ActionOutcome:
        """Record the outcome (the record keeps the whole action), then what the caller is shown of it: an
        action that was not done shows only what the caller gave (``_withheld``)."""
        if self.on_decision is not None:
            try:
                self.on_decision(outcome.decision)
            except RecordNotWritten as exc:
                if outcome.status == "done":  # done on the device: say so, but withhold what it returned
                    outcome = ActionOutcome(
                        "error",
                        f"done on the device, but its record could not be written ({exc}); "
                        "the result is withheld",
                        outcome.decision | {"outcome": "error"},
                    )
                else:
                    outcome = ActionOutcome(
                        outcome.status,
                        f"{outcome.message} (its record could not be written: {exc})",
                        outcome.decision,
                        snapshot=outcome.snapshot,
                    )
        return outcome if outcome.status == "done" else _withheld(action, outcome)


def _withheld(action: ProposedAction, outcome: ActionOutcome) -> ActionOutcome:
    """``outcome`` as a caller sees an action that was not done: the action as the caller gave it, and no
    value Sentinel derived from the owner's data (a contact's number) anywhere in its decision or message
    (a classifier's reason, an error's text). Only a done action, which the person approved and the consent
    gate let through, shows them."""
    values = sorted(action.derived_values(), key=len, reverse=True)

    def scrub(value: Any) -> Any:
        if isinstance(value, str):
            for v in values:
                value = value.replace(v, "<withheld>")
            return value
        if isinstance(value, dict):
            return {k: scrub(v) for k, v in value.items()}
        if isinstance(value, list):
            return [scrub(v) for v in value]
        return value

    decision = dict(outcome.decision)
    if "action" in decision:
        decision["action"] = action.for_caller()
    if values:
        decision = {k: (v if k == "action" else scrub(v)) for k, v in decision.items()}
        if "digest" in decision:  # the full digest covers the derived values: guesses could be tested on it
            decision["digest"] = action.caller_digest
    return ActionOutcome(outcome.status, scrub(outcome.message), decision, outcome.data, outcome.snapshot)


def _on_record(argv: Sequence[str], password: bool) -> str:
    """A sent command as records keep it: typed text only by its length (its adb encoding, ``%s`` for spaces,
    would slip past the redactor's patterns), a password's command not at all."""
    if password:
        return "<redacted>"
    if list(argv[:2]) == ["input", "text"]:
        return f"input text <{sum(len(a) for a in argv[2:])} characters>"
    return " ".join(argv)
