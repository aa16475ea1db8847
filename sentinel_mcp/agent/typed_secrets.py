"""Passwords a run typed into password fields, taken out of everything its trace keeps.

The typed text itself was never recorded, but the same password in the goal ("sign in with hunter2"), in the
model's reasoning or answer, in a reflection or a progress line was stored in clear in agent.db and shown
by agent_trace, agent_runs and the console. Once a run types into a password field, every occurrence of that
text, in any case, is replaced in whatever the run keeps from then on, and the run's rows already on disk
are rewritten (``TraceStore.scrub_run``) before the password is typed.
"""

from __future__ import annotations

import re
from typing import Any

REDACTED = "<redacted password>"
MAX_SECRETS = 32  # a run types few passwords; one that types more keeps redacting all it typed before


class TypedSecrets:
    def __init__(self) -> None:
        self._secrets: list[str] = []
        self._pattern: re.Pattern[str] | None = None

    def __bool__(self) -> bool:
        return bool(self._secrets)

    def add(self, text: str | None) -> bool:
        """Remember ``text`` as a typed password; True when it is new (what was kept must be rewritten)."""
        if not text or any(text.casefold() == s.casefold() for s in self._secrets):
            return False
        self._secrets = [*self._secrets, text][-MAX_SECRETS:]
        # the longest first, so a password holding another is replaced whole
        alternatives = sorted(self._secrets, key=len, reverse=True)
        self._pattern = re.compile("|".join(re.escape(s) for s in alternatives), re.IGNORECASE)
        return True

    def scrub(self, value: Any) -> Any:
        """``value`` (a string, or JSON-like data: keys too) with every typed password replaced."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self._pattern.sub(REDACTED, value)
        if isinstance(value, dict):
            return {self.scrub(k): self.scrub(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.scrub(v) for v in value]
        return value
