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
import unicodedata
from typing import Any

from sentinel_mcp.agent.decision import Decision, UnusableDecision
from sentinel_mcp.agent.screen import Screen

REDACTED = "<redacted password>"
# a run types few passwords; one more new password past these is an unusable decision (forgetting the first
# ones would stop redacting them, and let them go anywhere)
MAX_SECRETS = 32
# what may stand between a password's letters and digits and it still reads as the password to whoever sees
# it ("H u n t e r 2", "Hun\u200bter2", "HUNTER2 SECRET"): anything but a letter or digit, a few at a time
_BETWEEN = r"[\W_]{0,3}"
MIN_SPELLED = 4  # letters and digits a password needs before it is matched spelled apart (else too common)


def _spellings(secret: str) -> str:
    """The pattern of ``secret`` as typed, and as its letters and digits with separators between them."""
    letters = [c for c in secret if c.isalnum()]
    if len(letters) < MIN_SPELLED:
        return re.escape(secret)
    return f"{re.escape(secret)}|{_BETWEEN.join(re.escape(c) for c in letters)}"


class TypedSecrets:
    def __init__(self) -> None:
        self._secrets: list[str] = []
        self._apps: dict[str, str] = {}  # a password (lower case) -> the package it was first typed into
        self._pattern: re.Pattern[str] | None = None  # group s<i>: the i-th password, however spelled

    def __bool__(self) -> bool:
        return bool(self._secrets)

    def add(self, text: str | None, package: str = "") -> bool:
        """Remember ``text`` as a password typed into a window of ``package`` ("": an app nobody named, so no
        field is its own); True when it is new (what was kept must be rewritten). ``placed`` refuses a new
        one past ``MAX_SECRETS``: none is ever forgotten."""
        if not text or self._known(text):
            return False
        self._secrets = [*self._secrets, text]
        self._apps.setdefault(text.lower(), package)
        # the longest first, so a password holding another is replaced whole
        order = sorted(range(len(self._secrets)), key=lambda i: len(self._secrets[i]), reverse=True)
        self._pattern = re.compile(
            "|".join(f"(?P<s{i}>{_spellings(self._secrets[i])})" for i in order), re.IGNORECASE
        )
        return True

    def _known(self, text: str) -> bool:
        return any(text.casefold() == s.casefold() for s in self._secrets)

    def scrub(self, value: Any) -> Any:
        """``value`` (a string, or JSON-like data: keys too) with every typed password replaced."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            out = self._pattern.sub(REDACTED, value)
            # spelled in characters a reader reads as its letters (fullwidth, mathematical): the text is kept
            # as NFKC folds it, only when that shows a password
            folded = unicodedata.normalize("NFKC", out)
            if folded != out and self._pattern.search(folded):
                return self._pattern.sub(REDACTED, folded)
            return out
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
        found = self._found([decision.text, decision.arguments])
        if not found:
            return decision
        # the app whose window the field is drawn in, as the device names it: not the screen's package (the
        # package most nodes claim: a look-alike's window over the bank's form reads as the bank's)
        app = screen.window_of(decision.element_id)
        if into_password and app and all(self._apps.get(m) == app for m in found):
            return decision
        raise UnusableDecision(
            "it holds a password typed earlier into a password field: a password goes only into a password "
            "field of the app it was typed into; use it nowhere else"
        )

    def _found(self, value: Any) -> set[str]:
        """The typed passwords (lower case) in ``value``'s strings, keys included, however spelled."""
        if isinstance(value, str):
            if self._pattern is None:
                return set()
            folded = unicodedata.normalize("NFKC", value)
            return {self._secrets[int(m.lastgroup[1:])].lower()
                    for text in dict.fromkeys((value, folded)) for m in self._pattern.finditer(text)
                    if m.lastgroup is not None}
        if isinstance(value, dict):
            return set().union(*(self._found(k) | self._found(v) for k, v in value.items()))
        if isinstance(value, (list, tuple)):
            return set().union(*(self._found(v) for v in value))
        return set()
