"""An answer's caller is checked again when the answer is sent, and while it streams.

A request is authenticated once, when it arrives; an answer may leave much later. A stream stays open for
hours (a 2025-era GET stream, a ``subscriptions/listen`` stream, a legacy ``/sse`` stream, a long call's
progress), and a call's one answer may be ready only after a long run: a client certificate revoked
(``sentinel-mcp tls revoke``), expired, or whose CA was taken out of ``ca``, or a token followed from its file
and replaced (the owner's, rotated after a leak) went on receiving as its principal. So before the answer's
head and each chunk of its body its credentials are checked again as a new request's would be. If they no
longer hold, an answer not begun is a 401 (``refuse``) and a begun one ends there (the client sees its stream
close; a reconnect is refused as any request is); nothing more is sent.

Asked once a second at most, an answer ready within that second of the last ask (a quick call, a queued one
released just then) went whole to a token rotated meanwhile. The check is cheap: a token's SHA-256 and a
cached look at its file (``file_secret.py`` reads the file at most once a second, as the front re-reads its
TLS files), a certificate's parse and issuers cached: 4-7 microseconds measured, two asks for an answer sent
at once.
"""

from __future__ import annotations

import logging
from typing import Any, Awaitable, Callable

from starlette.types import Message, Send

from sentinel_mcp.identity.resolver import AuthFailed

log = logging.getLogger(__name__)

# how stale a credential's files may be when an answer is checked: a token file and the front's TLS files are
# each looked at most once a second (the answer's own check is asked on every message)
RECHECK_SECONDS = 1.0


class StreamRecheck:
    def __init__(self, send: Send, recheck: Callable[[], Any], path: str,
                 refuse: Callable[[str], Awaitable[None]] | None = None) -> None:
        """``refuse``: answer the request with a refusal saying why (its head not sent yet); None: the
        answer's head goes out unchecked, as before."""
        self._send = send
        self._recheck = recheck
        self._path = path
        self._refuse = refuse
        self.cut: str | None = None  # why the answer was refused or its stream ended

    async def send(self, message: Message) -> None:
        if self.cut is not None:
            return  # the response was ended: the app's late chunks go nowhere
        kind = message["type"]
        head = kind == "http.response.start" and self._refuse is not None
        if head or kind == "http.response.body":
            try:
                self._recheck()
            except AuthFailed as e:
                self.cut = str(e)
                log.warning("an answer on %s was withheld: its caller's credentials no longer hold (%s)",
                            self._path[:200], self.cut[:500])
                if head:
                    assert self._refuse is not None
                    await self._refuse(self.cut)
                else:
                    await self._send({"type": "http.response.body", "body": b"", "more_body": False})
                return
        await self._send(message)
