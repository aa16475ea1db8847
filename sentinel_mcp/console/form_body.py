"""A console form's body, read within a bound that counts the bytes received, before anything parses it.

Every console form is ``application/x-www-form-urlencoded`` (none takes a file). Starlette's
``request.form()`` bounds plain fields only: a multipart body's file parts spill to disk without end, and a
limit checked on the ``Content-Length`` header is no limit for a chunked body, which has none. The sign-in
form is open to anyone who can reach the console, so one unauthenticated client grew the gateway by 400 MB.
Here the body is read chunk by chunk and refused past ``limit`` bytes as it arrives, any other content type
is refused, and the fields are parsed from the bytes kept (at most ``max_fields``).
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from starlette.datastructures import FormData
from starlette.requests import Request

from sentinel_mcp.core.errors import ConsoleError

FORM_TYPE = "application/x-www-form-urlencoded"


class FormRefused(ConsoleError):
    def __init__(self, status: int, reason: str) -> None:
        self.status, self.reason = status, reason
        super().__init__(reason)


async def read_form(request: Request, limit: int, max_fields: int) -> FormData:
    kind = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if kind != FORM_TYPE:
        raise FormRefused(415, "a console form is sent as application/x-www-form-urlencoded")
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        raise FormRefused(413, "the form is too large")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise FormRefused(413, "the form is too large")
    try:  # strict: a percent-escape that is not UTF-8 was U+FFFD, another value than the one sent
        fields = parse_qsl(
            body.decode("utf-8"), keep_blank_values=True, max_num_fields=max_fields, errors="strict"
        )
    except (UnicodeDecodeError, ValueError):
        raise FormRefused(
            400, "refused: the form could not be read (not UTF-8, or too many fields)"
        ) from None
    names = [k for k, _ in fields]
    # no console form repeats a field: the last was read, where a proxy or a log sees the first
    if len(set(names)) != len(names):
        twice = next(k for k in names if names.count(k) > 1)
        raise FormRefused(400, f"refused: the form gives {twice[:40]!r} more than once; nothing done")
    return FormData([(k, v) for k, v in fields])


def bounded(value: object, limit: int, what: str) -> str:
    """A text field (or query parameter) within its bound, "" when absent; past it ``FormRefused`` (400),
    never a cut: the first ``limit`` characters of a value name something else (another consent's kind,
    another filter), and the person would be told it was done."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise FormRefused(400, f"refused: {what} is not text")
    if len(value) > limit:
        raise FormRefused(
            400, f"refused: {what} is {len(value)} characters, more than the {limit} taken here; nothing done"
        )
    return value
