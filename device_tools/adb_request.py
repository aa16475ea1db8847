"""How long a request to an adb server may be: its length goes on the wire as four hex digits, so at most
65,535 bytes of ``shell:`` or ``exec:`` and the shell-quoted command. The adb backend refuses a longer one
before it is sent (adbutils would write five digits, and the server would read the last one and the command
after it as the next request); the simulated phone refuses it the same way, with the same error, so what
passes on it passes on a phone."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from .errors import CommandTooLong

MAX_REQUEST_BYTES = 0xFFFF


def service(kind: str, argv: Sequence[str]) -> str:
    """The request that runs ``argv``: ``kind`` is "shell" or "exec" (``adb exec-out``)."""
    return f"{kind}:" + shlex.join(str(a) for a in argv)


def check_fits(request: str) -> None:
    """Raise ``CommandTooLong`` (nothing was sent) unless ``request`` fits an adb request's length."""
    size = len(request.encode())
    if size > MAX_REQUEST_BYTES:
        raise CommandTooLong(
            f"the command is too long for adb ({size:,} bytes, at most {MAX_REQUEST_BYTES:,}): "
            "nothing was sent"
        )


def check_sendable(argv: Sequence[str]) -> None:
    """Whether ``argv`` could be sent by either service ("shell:" is the longer of the two)."""
    check_fits(service("shell", argv))
