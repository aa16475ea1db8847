"""Where a text holds a hash or an id of a known shape, whose digits are no card number: a hex digest of a
standard length (MD5 32, SHA-1 40, SHA-224 56, SHA-256 64, SHA-384 96, SHA-512 128), a UUID (8-4-4-4-12), a
colon-separated fingerprint of 16, 20, 28, 32, 48 or 64 bytes, a swarm build's id
(``t20261206-010627-2457d5``: a real date from 2020 on and a time, so every window of its digits long
enough for a card starts "202" to "209", no card's prefix; one build id in five held a Luhn-valid window,
and its audit row lost the build's name). An allow list of exact shapes, each standing alone (no letter or
digit touching it, not part of a longer hex word or colon chain): a card number written into a hex word of
any other length, or beside a digest, is still a card. Used by the redactor, so that a certificate
fingerprint or an id in the audit record stays whole (about one random SHA-256 in a hundred holds a
Luhn-valid run of 13 digits)."""

from __future__ import annotations

import re

# "sha256:<hex>" and "key-<hex>" are common spellings, so a colon or a dash may touch a digest or a uuid; a
# colon form is never a window of a longer colon chain
_EDGE_BEFORE = r"(?<![0-9A-Za-z_])"
_EDGE_AFTER = r"(?![0-9A-Za-z_])"
_HEX = "[0-9A-Fa-f]"
_DIGEST = "|".join(f"{_HEX}{{{n}}}" for n in (128, 96, 64, 56, 40, 32))
_UUID = f"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}"
_COLONS = "|".join(f"{_HEX}{{2}}(?::{_HEX}{{2}}){{{n - 1}}}" for n in (64, 48, 32, 28, 20, 16))
# build_service.new_task_id: t, UTC date, -, time, -, three random bytes
_BUILD_ID = (
    "t20[2-9][0-9](?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])-(?:[01][0-9]|2[0-3])[0-5][0-9][0-5][0-9]"
    "-[0-9a-f]{6}"
)
_SHAPES = re.compile(
    f"{_EDGE_BEFORE}(?:{_DIGEST}|{_UUID}|{_BUILD_ID}){_EDGE_AFTER}"
    # a pair standing alone before the colon ("ab:", " ab:") would make this a window; "sha256:" would not
    f"|{_EDGE_BEFORE}(?<!\\A{_HEX}{{2}}:)(?<![^0-9A-Za-z_]{_HEX}{{2}}:)(?:{_COLONS}){_EDGE_AFTER}(?!:{_HEX})",
    re.ASCII,
)


def identifier_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each hash or id of a known shape in ``text``, left to right."""
    return [m.span() for m in _SHAPES.finditer(text)]


def inside_an_identifier(span: tuple[int, int], identifiers: list[tuple[int, int]]) -> bool:
    """Whether ``span`` lies wholly inside one of ``identifiers`` (reaching out: a card)."""
    a, b = span
    return any(s <= a and b <= e for s, e in identifiers)
