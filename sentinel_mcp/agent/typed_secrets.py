"""Passwords a run typed into password fields: taken out of everything its trace keeps, and kept out of every
later step but a password field of the app each was typed into.

The typed text itself was never recorded, but the same password in the goal ("sign in with hunter2"), in the
model's reasoning or answer, in a reflection or a progress line was stored in clear in agent.db and shown
by agent_trace, agent_runs and the console. Once a run types into a password field, every occurrence of that
text, in any case or spelled apart (its letters and digits with spaces, dots or hidden characters between
them, or as fullwidth or mathematical letters NFKC folds to them), is replaced in whatever the run keeps
from then on, and the run's rows already on disk are rewritten (``TraceStore.scrub_run``) before the
password is typed.

Redacting the trace does not take back what the phone received: a later step typing the password into a
plain field (where it shows in clear, and a chat app sends it), into another app (a look-alike asking for
it), or passing it in a tool's arguments is an unusable decision (``placed``), never acted on. Which app a
field is in is the window it is drawn in, as the device names it, never the package the screen's nodes claim.
"""

from __future__ import annotations

import re
from typing import Any

from sentinel_mcp.agent import spelled_apart
from sentinel_mcp.agent.decision import Decision, UnusableDecision
from sentinel_mcp.agent.screen import Screen

REDACTED = "<redacted password>"
# a run types few passwords; one more new password past these is an unusable decision (forgetting the first
# ones would stop redacting them, and let them go anywhere)
MAX_SECRETS = 32
MAX_FIELD = 512  # characters of a password field's pieces kept as one password (the end of them)
MAX_PIECES = 64  # a tool call's argument strings read as pieces sent (the first ones)
SENT_TAIL = 256  # characters of what the run sent elsewhere read with the next piece (per channel)
MAX_CHANNELS = 64  # argument names whose pieces are kept


class TypedSecrets:
    def __init__(self) -> None:
        self._secrets: list[str] = []
        self._apps: dict[str, str] = {}  # a password (lower case) -> the package it was first typed into
        # each password's letters as they read, looked for spelled apart, in look-alikes, in any case and in
        # part (``spelled_apart``: linear in the text); a password with too few letters, as typed, in any case
        self._keys: list[tuple[str, int]] = []
        self._fragments = spelled_apart.Fragments([])
        self._short: re.Pattern[str] | None = None
        # what the run typed into each password field so far, (package, field) -> text: a password typed in
        # pieces, one step each, is the whole of them
        self._fields: dict[tuple[str, str], str] = {}
        # the end of what the run typed elsewhere, or sent in a tool's argument, one piece after another (by
        # the argument's name; "": typed): pieces of a password sent a step each are read together
        self._sent: dict[str, str] = {}

    def __bool__(self) -> bool:
        return bool(self._secrets)

    def add(self, text: str | None, package: str = "", field: str = "") -> bool:
        """Remember ``text`` as a password typed into a window of ``package`` ("": an app nobody named, so no
        field is its own); ``field``: the field it went into, whose earlier pieces it joins. True when it is
        new (what was kept must be rewritten). ``placed`` refuses a new one past ``MAX_SECRETS``: none is
        ever forgotten."""
        if not text:
            return False
        whole = text
        if field:
            whole = self._fields.get((package, field), "") + text
            self._fields[(package, field)] = whole[-MAX_FIELD:]
        if self._known(whole):
            return False
        self._secrets = [*self._secrets, whole]
        self._apps.setdefault(whole.lower(), package)
        found = spelled_apart.key(whole)
        if found is not None:
            self._keys.append((found, len(self._secrets) - 1))
            self._fragments = spelled_apart.Fragments(self._keys)
            return True
        # the longest first, so a password holding another is replaced whole
        short = sorted({s for s in self._secrets if spelled_apart.key(s) is None}, key=len, reverse=True)
        self._short = re.compile("|".join(re.escape(s) for s in short), re.IGNORECASE)
        return True

    def _known(self, text: str) -> bool:
        return any(text.casefold() == s.casefold() for s in self._secrets)

    def scrub(self, value: Any) -> Any:
        """``value`` (a string, or JSON-like data: keys too) with every typed password replaced, however
        spelled."""
        if not self._secrets:
            return value
        if isinstance(value, str):
            out = self._short.sub(REDACTED, value) if self._short is not None else value
            spelled = spelled_apart.spans(out, self._fragments)
            return spelled_apart.replaced(out, spelled, REDACTED) if spelled else out
        if isinstance(value, dict):
            return {self.scrub(k): self.scrub(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.scrub(v) for v in value]
        return value

    def placed(self, decision: Decision, screen: Screen) -> Decision:
        """``decision`` when no typed password goes where it does not belong; else UnusableDecision (which
        does not quote it). A password goes only into a password field of the app it was typed into; the
        final answer may name it (it is redacted)."""
        if decision.final:
            return decision
        target = screen.element(decision.element_id) if decision.element_id else None
        into_password = decision.action == "type" and target is not None and target.password
        if into_password and len(self._secrets) >= MAX_SECRETS and not self._known(decision.text or ""):
            raise UnusableDecision(f"this run has typed {MAX_SECRETS} passwords already: no new one")
        app = screen.window_of(decision.element_id)
        found = self._found([decision.text, decision.arguments])
        # what the step sends off the phone's password fields, read after what the steps before sent (those
        # pieces alone held no password): only what reaches into this step's counts
        sent = dict(self._sent)
        for channel, piece in _sent_by(decision, into_password):
            before = sent.get(channel, "")
            found |= self._found(before + piece, since=len(before))
            sent[channel] = (before + piece)[-SENT_TAIL:]
        if not found:
            if len(sent) <= MAX_CHANNELS:  # (past it: a new channel's pieces are not kept; the others are)
                self._sent = sent
            else:
                self._sent.update((k, v) for k, v in sent.items() if k in self._sent)
            return decision
        # the app whose window the field is drawn in, as the device names it: not the screen's package (the
        # package most nodes claim: a look-alike's window over the bank's form reads as the bank's)
        if into_password and app and all(self._apps.get(m) == app for m in found):
            return decision
        raise UnusableDecision(
            "it holds a password typed earlier into a password field: a password goes only into a password "
            "field of the app it was typed into; use it nowhere else"
        )

    def _found(self, value: Any, since: int = 0) -> set[str]:
        """The typed passwords (lower case) in ``value``'s strings, keys included, however spelled; ``since``:
        in a string, only those that end past that many characters."""
        if isinstance(value, str):
            # a short one's match no password maps back to (a case IGNORECASE folds differently) is no
            # package's: not placed
            typed = ({m.group(0).lower() for m in self._short.finditer(value) if m.end() > since}
                     if self._short else set())
            found = spelled_apart.spans(value, self._fragments)
            spelled = {self._secrets[tag].lower() for _, end, tag in found if end > since}
            return typed | spelled
        if isinstance(value, dict):
            return set().union(*(self._found(k) | self._found(v) for k, v in value.items()))
        if isinstance(value, (list, tuple)):
            return set().union(*(self._found(v) for v in value))
        return set()


def _sent_by(decision: Decision, into_password: bool) -> list[tuple[str, str]]:
    """The text ``decision`` sends elsewhere than a password field, as (channel, text): what it types
    (channel ""), each of a tool's argument values' strings (channel: its argument's name, so a message's
    body is read after the bodies before, whoever each went to)."""
    if decision.action == "type":
        return [] if into_password or not decision.text else [("", decision.text)]
    out: list[tuple[str, str]] = []
    pending: list[tuple[str, Any]] = [("", decision.arguments)] if decision.tool is not None else []
    while pending and len(out) < MAX_PIECES:
        name, value = pending.pop()
        if isinstance(value, str):
            out.append((name, value))
        elif isinstance(value, dict):
            pending.extend(reversed([(str(k)[:64], v) for k, v in value.items()]))
        elif isinstance(value, (list, tuple)):
            pending.extend(reversed([(name, v) for v in value]))
    return out
