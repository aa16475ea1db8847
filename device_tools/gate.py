"""CommandGate: the only way to the device. Reads pass; anything else needs a matching Approval.

The firewall's guarantee lives here: the server, the actuator and the tool modules hold a gate,
never a backend, and a command that changes the device is sent only if an Approval issued for
that action covers it (an exact argv; a value our own code computes after approval, such as the centre
of the Send control sms_send checked, is added to the approval as its exact argv then: no tool allows a
wildcard, though ``Pattern`` can hold one). Each allowance is single-use.

One phone, one gate: when the device and sensors built-ins are configured for the same adb phone they get the
same gate from ``shared_adb_gate`` (through the gateway's ``Services.devices``), and the sensors hold only its
``read_only()`` view, which has no way to send anything but a read-only command.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from dataclasses import dataclass, field

import anyio

from .backend import DeviceBackend, Listening
from .commands import is_read_only
from .errors import CommandRefused
from .phone_identity import adb_phone_key
from sentinel_mcp.core.shared_devices import SharedDevices

Pattern = tuple[str | None, ...]  # None matches any single argument
SENT_KEPT = 512  # the newest commands kept in a gate's record; a long sensor session must not grow it forever


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
    def __init__(self, backend: DeviceBackend, *, keep: int = SENT_KEPT) -> None:
        self.backend = backend
        # what actually went out, for results and the audit trail: the newest ``keep`` commands, plus a count
        # of
        # all of them so a caller can ask for what was sent after a point it marked (``sent_since``)
        self._sent: deque[list[str]] = deque(maxlen=keep)
        self.sent_count = 0
        # the commands that act on the phone (approved, not reads) sent so far: an action rated on a screen
        # read before another action went out reads it again before it is sent (``Actuator.moved_since``)
        self.acted_count = 0
        # one question at a time waits for a key on this phone: a press names no action, so two waiting at
        # once would both take the one press the person gave for the question they saw
        self._key_question = anyio.Lock()
        # while the phone asks the person (a Termux dialog on its screen, the wait for Volume Up) no command
        # reaches it: a tap is an accessibility click on Termux, and one landing on the dialog's button
        # answered the question for the user. ``_sending`` is held while a command runs, so a question waits
        # for the one already on its way, and a command asked for during a question is refused, not queued
        self._asking = 0
        self._sending = anyio.Lock()

    @property
    def sent(self) -> list[list[str]]:
        """The newest commands sent (at most ``keep``), oldest first."""
        return list(self._sent)

    def sent_since(self, mark: int) -> list[list[str]]:
        """What was sent after ``sent_count`` was ``mark`` (as much of it as the record still holds: how much
        it lost, ``lost_since(mark)``)."""
        new = self.sent_count - mark
        return list(self._sent)[-new:] if new > 0 else []

    def lost_since(self, mark: int) -> int:
        """How many commands sent after ``mark`` the record no longer holds (the ring's bound was hit)."""
        return max(0, self.sent_count - mark - len(self._sent))

    def read_only(self, only: Collection[Sequence[str]] | None = None) -> ReadOnlyGate:
        """A view that can only read, and with ``only`` only those exact commands (the sensors' four reads:
        a sensor path has no business dumping the screen or querying contacts through the phone's gate)."""
        return ReadOnlyGate(self, only)

    def _record(self, argv: list[str]) -> None:
        self._sent.append(argv)
        self.sent_count += 1

    @property
    def unicode_text(self) -> bool:
        return self.backend.unicode_text

    async def read(self, argv: Sequence[str], *, timeout: float = 20.0) -> str:
        self._check_read(argv)
        self._record(list(argv))
        return await self.backend.shell(argv, timeout=timeout)

    async def read_bytes(self, argv: Sequence[str], *, timeout: float = 20.0) -> bytes:
        self._check_read(argv)
        self._record(list(argv))
        return await self.backend.exec_out(argv, timeout=timeout)

    async def run(self, argv: Sequence[str], approval: Approval | None, *, timeout: float = 20.0) -> str:
        argv = [str(a) for a in argv]
        if approval is None or not approval.consume(argv):
            raise CommandRefused(f"not approved, nothing sent: {' '.join(argv)[:200]}")
        self._refuse_while_asking(argv)
        async with self._sending:
            self._refuse_while_asking(argv)  # a question may have begun while this waited its turn
            self._record(argv)
            self.acted_count += 1
            return await self.backend.shell(argv, timeout=timeout)

    def _refuse_while_asking(self, argv: Sequence[str]) -> None:
        if self._asking:
            raise CommandRefused(
                "the phone is asking the person a question (answered on the phone): no action is sent until "
                f"it is answered; nothing sent: {' '.join(argv)[:200]}"
            )

    def check_sendable(self, patterns: Sequence[Pattern | Sequence[str | None]]) -> None:
        """Raise ``DeviceError`` if the backend could never send one of these exact commands (a wildcard one
        is measured when it is run): the actuator asks this before it asks the user."""
        for pattern in patterns:
            if None not in pattern:
                self.backend.check_sendable([str(a) for a in pattern])

    @contextlib.asynccontextmanager
    async def question_turn(self) -> AsyncIterator[None]:
        """This phone's turn for one question and the action it answers: held from before the question until
        that action's commands are sent, so the next question is not up (refusing them) when they go out."""
        async with self._key_question:
            yield

    async def wait_for_key(
        self, key: str, *, timeout: float, question: str = "", in_turn: bool = False,
        listening: Listening | None = None,
    ) -> bool:
        """Whether ``key`` went down within ``timeout`` (time spent behind an earlier question counts);
        ``in_turn``: the caller holds ``question_turn`` already; ``listening``: awaited once this question's
        turn has come and the phone listens for the press (where its prompt is shown, never earlier)."""
        deadline = anyio.current_time() + timeout
        with anyio.move_on_after(timeout):
            async with contextlib.AsyncExitStack() as turn:
                if not in_turn:
                    await turn.enter_async_context(self.question_turn())
                self._asking += 1
                try:
                    async with self._sending:  # a command on its way lands before the question is up
                        left = deadline - anyio.current_time()
                        if left > 0:
                            return await self.backend.wait_for_key(key, timeout=left, question=question,
                                                                   listening=listening)
                finally:
                    self._asking -= 1
        return False

    async def describe(self) -> dict[str, str]:
        return await self.backend.describe()

    @staticmethod
    def _check_read(argv: Sequence[str]) -> None:
        if not is_read_only(argv):
            raise CommandRefused(f"not a read-only command, nothing sent: {' '.join(map(str, argv))[:200]}")


class ReadOnlyGate:
    """A gate that can only read: what the sensors hold. It has no ``run`` and no backend to reach around it;
    every read is checked and recorded by the gate it views (``read`` refuses a command that is not
    read-only)."""

    __slots__ = ("_gate", "_only")

    def __init__(self, gate: CommandGate, only: Collection[Sequence[str]] | None = None) -> None:
        self._gate = gate
        self._only = None if only is None else frozenset(tuple(a) for a in only)

    async def read(self, argv: Sequence[str], *, timeout: float = 20.0) -> str:
        self._check(argv)
        return await self._gate.read(argv, timeout=timeout)

    async def read_bytes(self, argv: Sequence[str], *, timeout: float = 20.0) -> bytes:
        self._check(argv)
        return await self._gate.read_bytes(argv, timeout=timeout)

    def _check(self, argv: Sequence[str]) -> None:
        if self._only is None:
            return
        try:  # exact tuples of str: a list, bytes or an int in argv never equals an allowed command
            allowed = tuple(argv) in self._only
        except TypeError:  # an unhashable argument
            allowed = False
        if not allowed:
            raise CommandRefused(
                f"not a command this reader may send, nothing sent: {' '.join(map(str, argv))[:200]}"
            )

    @property
    def serial(self) -> str | None:
        return getattr(self._gate.backend, "serial", None)


def shared_adb_gate(
    devices: SharedDevices | None,
    host: str,
    port: int,
    serial: str | None,
    make_backend: Callable[[], DeviceBackend],
) -> CommandGate:
    """The one gate for the adb phone ``serial`` at ``host:port`` in this gateway (made by the first built-in
    that asks, whichever way it spells the phone: ``phone_identity``), or a gate of its own when the built-in
    runs alone (``devices`` is None)."""
    if devices is None:
        return CommandGate(make_backend())
    return devices.shared(adb_phone_key(host, port, serial), lambda: CommandGate(make_backend()), CommandGate)
