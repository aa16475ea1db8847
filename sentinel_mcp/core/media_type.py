"""The one media type a message POSTed to a JSON-RPC door (the MCP front, A2A's ``/a2a``) may declare:
``application/json`` in UTF-8, with no content coding but ``identity``.

The body is parsed as UTF-8 JSON whatever the header says, so a header that says anything else (another
type, ``application/json-patch+json``, a ``charset=utf-16``) describes a body other than the one read: it is
refused (415) instead of being read as something it claims not to be. The rule is an allow list on RFC 9110's
grammar (``type "/" subtype *( OWS ";" OWS [ parameter ] )``): the type and subtype ``application/json`` in
any case, and no parameter but ``charset`` of ``utf-8`` (any case, as a token or a quoted string). The SDK's
own check takes a prefix or a list and is case-sensitive: a request that passes here is handed on with the
header written ``application/json``, so every path behind reads the same verdict.
"""

from __future__ import annotations

import re

CANONICAL = b"application/json"
_JSON_IN_UTF8 = re.compile(
    rb'application/json(?:[ \t]*;[ \t]*(?:charset=(?:utf-8|"utf-8"))?)*[ \t]*', re.IGNORECASE)
REFUSAL = ("Unsupported Media Type: Content-Type must be application/json (its only parameter "
           "charset=utf-8), sent once")


def json_in_utf8(values: list[bytes]) -> bool:
    """Whether the Content-Type values a request sent (every one of them) declare JSON in UTF-8: exactly one
    value, matching the allow list whole."""
    return len(values) == 1 and _JSON_IN_UTF8.fullmatch(values[0]) is not None


def identity_coding(value: bytes) -> bool:
    """A Content-Encoding value that leaves the body as it was sent: ``identity`` (any case). Any other coding
    (gzip, br, a list) describes bytes other than the ones read, which are parsed as sent."""
    return value.strip().lower() == b"identity"


def coding_refused(values: list[bytes]) -> bool:
    """Whether the Content-Encoding values a request sent describe a body other than the one read: more than
    one, or one that is not ``identity``."""
    return len(values) > 1 or (len(values) == 1 and not identity_coding(values[0]))
