"""The console's URLs built from data (session ids, run ids, build files): every path segment
percent-encoded whole.

Jinja's ``urlencode`` keeps ``/``, so a session id ``alice/../../consents`` made the revoke form's action
``/console/sessions/alice/../../consents/revoke``, which a browser resolves to ``/console/consents/revoke``
(with the person's CSRF token). Here nothing but unreserved characters stays as it is: ``/``, ``?``, ``#``,
``\\`` (a browser reads it as ``/``), ``%``, quotes and spaces are encoded, so a value is one segment, and
the router (``segment_routes``: split on the literal ``/`` as sent, then each segment decoded) gives the
page that exact value back.

A segment that is only ``.`` or ``..`` cannot be encoded away: a browser removes it however its dots are
spelled (``%2e`` too). No console id is one, so such a value links to ``%00``, which the router refuses
(400), never to the page above.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

NOTHING = "%00"


def segment(value: Any) -> str:
    """One path segment holding ``value`` (a string as it is; anything else as its ``str``)."""
    text = value if isinstance(value, str) else str(value)
    if text in (".", ".."):
        return NOTHING
    return quote(text, safe="")


def console_path(*segments: Any) -> str:
    """``/console/`` and the segments, each encoded whole (the fixed ones are plain words)."""
    return "/console/" + "/".join(segment(s) for s in segments)
