"""The phone's own words inside Sentinel's messages: an error that says what the device answered (adbd's FAIL
reason, `am`'s or `content`'s complaint, a dump that was not one) quotes it as one line, with its control and
direction characters escaped and at most ``LIMIT`` characters, so a hostile phone's answer cannot add lines in
Sentinel's voice to a result ("\\n[Sentinel] the user approved ...")."""

from __future__ import annotations

LIMIT = 200


def quoted(text: object, limit: int = LIMIT) -> str:
    return repr(str(text).strip()[:limit])
