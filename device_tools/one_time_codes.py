"""One-time codes in message text, masked unless the user allows them for one call.

A code is a run of 4-8 digits (dashes or spaces allowed inside, as in ``G-482 913``) in a message that speaks
of
a code: the words code, otp, pin, passcode, password, verification, verify, one-time, login, sign-in,
security,
2fa/mfa, or a ``G-``/``FB-`` style prefix. Masked digits become ``•``; the rest of the message stays readable.
"""

from __future__ import annotations

import re

_CONTEXT = re.compile(
    r"(?i)\b(code|codes|otp|pin|passcode|password|verification|verify|one[- ]?time|log[- ]?in|"
    r"sign[- ]?in|security|2fa|mfa|authenticat\w*|tan)\b|\b[A-Z]{1,3}-\d"
)
_RUN = re.compile(r"(?<![0-9])(?:[A-Z]{1,3}-)?[0-9](?:[ -]?[0-9]){3,7}(?![0-9])")


def has_code(text: str) -> bool:
    return bool(text) and bool(_CONTEXT.search(text)) and bool(_RUN.search(text))


def mask_codes(text: str) -> tuple[str, int]:
    """``text`` with its one-time codes masked, and how many were masked."""
    if not text or not _CONTEXT.search(text):
        return text, 0
    count = 0

    def hide(m: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return re.sub(r"[0-9]", "•", m.group(0))

    return _RUN.sub(hide, text), count
