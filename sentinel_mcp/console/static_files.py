"""The console's static files (its one script and one style), served by their exact names as sent.

    StaticRoute("static", HERE / "static")   # GET /console/static/console.css: the bytes read at start

Starlette's ``StaticFiles`` decided on the decoded, normalised path: ``/console/static%2Fconsole.css``,
``/console/%73tatic/console.css``, ``/console/static/x/../console.css`` were the file too, outside the raw
routing every other console route has (segment_routes). Here the raw path must be the mount's words,
``static`` and a shipped name, byte for byte: no decoding, no normalising, so no spelling of anything else
(``%2e%2e``, ``%5c``, overlong UTF-8, NUL, ``;`` parameters, trailing dots, case) is a file; they are the
router's 404. The files are those in the directory when the console starts, regular files only (a link is
never followed), read then and served from memory: one added or swapped for a link later is not served.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Match
from starlette.types import Receive, Scope, Send

TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}
NAME = re.compile(r"[a-z][a-z0-9_-]{0,63}\.(?:css|js)")  # what a shipped file is named: nothing to decode
MAX_BYTES = 1024 * 1024  # a shipped file larger than this is a mistake, not served
METHODS = ("GET", "HEAD")


def shipped(directory: Path) -> dict[bytes, tuple[bytes, str]]:
    """The files of ``directory`` now, by their name's bytes: (content, content type). Regular files of an
    allowed name and type only; a link, a subdirectory or anything else there is left out."""
    files: dict[bytes, tuple[bytes, str]] = {}
    for entry in os.scandir(directory):
        if not NAME.fullmatch(entry.name) or not entry.is_file(follow_symlinks=False):
            continue
        try:  # O_NOFOLLOW: swapped for a link between the listing and the open, it is refused
            fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                continue
            content = f.read(MAX_BYTES + 1)
        if len(content) <= MAX_BYTES:
            files[entry.name.encode("ascii")] = (content, TYPES[Path(entry.name).suffix])
    return files


class StaticRoute(BaseRoute):
    """``/<root>/<word>/<name>`` for each file shipped, matched on the raw path, byte for byte."""

    def __init__(self, word: str, directory: Path) -> None:
        self.word = word.encode("ascii")
        self.files = shipped(directory)

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] != "http":
            return Match.NONE, {}
        raw = scope.get("raw_path")
        if not isinstance(raw, bytes):  # no raw path: nothing is served (never the decoded one)
            return Match.NONE, {}
        root = str(scope.get("root_path", "")).encode("utf-8").split(b"/")  # b"/console" -> [b"", b"console"]
        parts = raw.split(b"/")
        if parts[: len(root)] != root or parts[len(root) :][:1] != [self.word] or len(parts) != len(root) + 2:
            return Match.NONE, {}
        if parts[-1] not in self.files:
            return Match.NONE, {}
        child = {"sentinel.console.static": parts[-1]}
        return (Match.FULL if scope["method"] in METHODS else Match.PARTIAL), child

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] not in METHODS:
            response: Response = PlainTextResponse(
                "Method Not Allowed", status_code=405, headers={"Allow": ", ".join(METHODS)}
            )
        else:
            content, media_type = self.files[scope["sentinel.console.static"]]
            # never stored (the console's answers all say so): nothing to revalidate, no ETag or date
            headers = {"cache-control": "no-store", "content-length": str(len(content))}
            body = b"" if scope["method"] == "HEAD" else content
            response = Response(body, media_type=media_type, headers=headers)
        await response(scope, receive, send)
