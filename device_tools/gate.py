"""CommandGate: the only way to the device. Reads pass; anything else needs a matching Approval.

The firewall's guarantee lives here: the server, the actuator and the tool modules hold a gate,
never a backend, and a command that changes the device is sent only if an Approval issued for
that action covers it (exact argv, or a pattern with wildcards for values our own code computes
after approval, e.g. the Send button's centre). Each allowance is single-use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .backend import DeviceBackend
from .commands import is_read_only
from .errors import CommandRefused

Pattern = tuple[str | None, ...]  # None matches any single argument


@dataclass
class Approval:
    action_digest: str
    decided_by: str  # "policy:low-risk", "user:elicitation", "user:volume-up", ...
    allowances: list[Pattern] = field(default_factory=list)

    def allow(self, *patterns: Sequence[str | None]) -> Approval:
        self.allowances.extend(tuple(p) for p in patterns)
        return self

    def consume(self, argv: Sequence[str]) -> bool:
        for i, pattern in enumerate(self.allowances):
            if len(pattern) == len(argv) and all(p is None or p == a for p, a in zip(pattern, argv)):
                del self.allowances[i]
                return True
        return False


class CommandGate:
    def __init__(self, backend: DeviceBackend) -> None:
        self.backend = backend
        self.sent: list[list[str]] = []  # what actually went out, for results and the audit trail

    @property
    def unicode_text(self) -> bool:
        return self.backend.unicode_text

    async def read(self, argv: Sequence[str], *, timeout: float = 20.0) -> str:
        self._check_read(argv)
        self.sent.append(list(argv))
        return await self.backend.shell(argv, timeout=timeout)

    async def read_bytes(self, argv: Sequence[str], *, timeout: float = 20.0) -> bytes:
        self._check_read(argv)
        self.sent.append(list(argv))
        return await self.backend.exec_out(argv, timeout=timeout)

    async def run(self, argv: Sequence[str], approval: Approval | None, *, timeout: float = 20.0) -> str:
        argv = [str(a) for a in argv]
        if approval is None or not approval.consume(argv):
            raise CommandRefused(f"not approved, nothing sent: {' '.join(argv)[:200]}")
        self.sent.append(argv)
        return await self.backend.shell(argv, timeout=timeout)

    async def wait_for_key(self, key: str, *, timeout: float) -> bool:
        return await self.backend.wait_for_key(key, timeout=timeout)

    async def describe(self) -> dict[str, str]:
        return await self.backend.describe()

    @staticmethod
    def _check_read(argv: Sequence[str]) -> None:
        if not is_read_only(argv):
            raise CommandRefused(f"not a read-only command, nothing sent: {' '.join(map(str, argv))[:200]}")
