"""What the HTTP front answers to a request it refuses before any route runs (the parser's 400, a head past
the bound's 431, a request read too slowly's 408), and how often it says so in the log.

A client of /mcp, /messages/, /a2a or the legacy /sse stream reads a refusal as JSON-RPC (``json_rpc_doors``):
given uvicorn's plain "Invalid HTTP request received." it was told nothing it could read. So the answer is a
JSON-RPC error (id null: no request was read) whenever the request's target is such a route, or is not known
(a request line too broken to name one, or not read whole yet); a request known to be for another route
(/healthz, the console) keeps plain text. The connection closes after it either way: a request whose framing
is broken leaves no trustworthy start for the next one.

uvicorn logged a line for each malformed request: a client sending garbage in a loop wrote the log as fast as
it sent. At most ``LOGGED`` lines a window here; the rest are counted, and the count is said with the first
line of a later window.
"""

from __future__ import annotations

import logging
import time
from urllib.parse import unquote_to_bytes

from sentinel_mcp.app.json_rpc_doors import json_rpc_client_route, refusal_body
from sentinel_mcp.core.safe_headers import SAFE_HEAD_LINES
from sentinel_mcp.core.display_text import safe_text
from uvicorn.protocols.http.httptools_impl import STATUS_LINE

log = logging.getLogger(__name__)

MALFORMED = "Invalid HTTP request: its framing cannot be read"
TOO_LARGE = "Request head too large"
# said to a browser: a cookie flood is how a head of a page grows past the bound, and any page of this host
# (another port) can plant one; the person must know to remove them, as nothing here can read past the bound
TOO_LARGE_PAGE = (
    "Request head too large: its request line and headers are over 16 KiB. From a browser this is most often "
    "its cookies for this host: every page of this host (another port too) shares them, and one may have set "
    "many or large ones. Remove this site's cookies in the browser (its settings: cookies and site data of "
    "this host), then reload the page."
)
TOO_SLOW = "Request not received in time"
NOT_A_PATH = "Invalid HTTP request: the request target is not a path (this front is no proxy)"
BAD_CODING = "Invalid HTTP request: a Transfer-Encoding other than chunked"
CUT_SHORT = "Invalid HTTP request: the connection's sending side ended before the request did"
UPGRADE_WITH_BODY = ("Invalid HTTP request: an Upgrade this front does not serve, on a request with a body "
                     "(send it without the Upgrade)")
TOO_MANY_PIPELINED = "Invalid HTTP request: too many pipelined requests"
LOGGED = 20
WINDOW_SECONDS = 60.0


def refusal_answer(status: int, reason: str, target: bytes | None,
                   default_headers: list[tuple[bytes, bytes]]) -> bytes:
    """The whole answer (head and body, ``connection: close``); ``target``: the request target when read
    whole, else None."""
    if target is None or json_rpc_client_route(_path(target)):
        body, kind = refusal_body(reason), b"application/json"
    else:
        # a browser's page (the console): its own words for what the person can do
        body = (TOO_LARGE_PAGE if reason == TOO_LARGE else reason).encode("ascii", "replace")
        kind = b"text/plain; charset=utf-8"
    content = [STATUS_LINE[status]]
    for name, value in default_headers:
        content.extend([name, b": ", value, b"\r\n"])
    content.append(SAFE_HEAD_LINES)
    content.append(b"content-type: %s\r\ncontent-length: %d\r\nconnection: close\r\n\r\n%s"
                   % (kind, len(body), body))
    return b"".join(content)


def _path(target: bytes) -> str:
    """The path a route would be matched on (Starlette's: percent-decoded)."""
    return unquote_to_bytes(target.split(b"?", 1)[0]).decode("latin-1")


class RefusalLogBudget:
    """Lines about refused requests, bounded per window across every connection of the process."""

    def __init__(self, logged: int = LOGGED, window: float = WINDOW_SECONDS) -> None:
        self.logged, self.window = logged, window
        self._since = -window
        self._written = 0
        self.unlogged = 0

    def say(self, peer: object, reason: str) -> None:
        now = time.monotonic()
        if now - self._since >= self.window:
            if self.unlogged:
                log.warning("HTTP: %d more requests refused before routing, not logged one by one",
                            self.unlogged)
            self._since, self._written, self.unlogged = now, 0, 0
        if self._written < self.logged:
            self._written += 1
            where = safe_text(str(peer[0]) if isinstance(peer, tuple) and peer else "?", 64)
            log.warning("HTTP: a request from %s refused before routing: %s", where, reason)
        else:
            self.unlogged += 1


BUDGET = RefusalLogBudget()  # one for the process: a flood comes over many connections
