"""What a caller wrote, as Sentinel repeats it (in an error, a refusal, a log line): cut and made visible.

A caller chooses the names it sends (a tool, a prompt, a resource URI, a method) and the values a schema
check quotes; an error that repeats them whole lets a request of 3 MB make an answer, a log line or an
audit row of 3 MB, and a name with terminal escapes or direction-changing characters rewrite the line it is
shown on. Whatever Sentinel quotes back goes through ``echoed``; ``ECHO_LIMIT`` characters are plenty to
recognise a name by.
"""

from __future__ import annotations

from typing import Any

from sentinel_mcp.core.display_text import safe_text

ECHO_LIMIT = 200  # characters of one caller-written value quoted back
MESSAGE_ECHO_LIMIT = 1000  # characters of a whole error message that may quote several


def echoed(value: Any, limit: int = ECHO_LIMIT) -> str:
    """``value`` (a string, or anything as compact JSON) cut to ``limit`` characters with a visible mark,
    its hidden characters (controls, escapes, bidi) shown as ``⟨U+XXXX⟩``."""
    return safe_text(value, limit)
