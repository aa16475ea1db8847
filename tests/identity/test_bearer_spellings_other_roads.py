"""More ways a client might slip a token past the one spelling the front takes (``Authorization: Bearer
<token>`` or ``X-API-Key``), as raw bytes on a socket to the front as the gateway runs it (red team
"identity8"; the spellings table is ``test_bearer_spellings``): a token in a cookie, in Basic auth (as the
password, or as the user), in a proxy's or a forwarding header; a prefix or an extension of a principal's
token; two tokens in one header; a token ending in CR, LF, NUL or a vertical tab; a megabyte of token.
Each is refused (401 "invalid token" or "authentication required", or a 400/431 for a head HTTP forbids),
and no answer names alice. These held on main: the test pins them (the defence: one header, one scheme,
the whole value's digest compared; nothing else is read).
"""

from __future__ import annotations

import asyncio
import base64

import pytest

from tests.identity.identity_rig import ALICE, BOB
from tests.identity.test_bearer_spellings import exchange, front, get

pytestmark = pytest.mark.timeout(120)


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def utf8(text: str) -> str:
    """``text``'s UTF-8 bytes, as the latin-1 the exchange writes (the bytes a client would send)."""
    return text.encode().decode("latin-1")


NOBODY = b"authentication required"
INVALID = b"invalid token"
REFUSED = [  # (label, accepted statuses, words of a 401, lines, get() keywords)
    ("token in a cookie", {401}, NOBODY, [f"Cookie: token={ALICE}; access_token={ALICE}"], {}),
    ("bare token in a cookie", {401}, NOBODY, [f"Cookie: {ALICE}"], {}),
    ("Basic, token as the password", {401}, NOBODY, [f"Authorization: Basic {b64('alice:' + ALICE)}"], {}),
    ("Basic, token as the user", {401}, NOBODY, [f"Authorization: Basic {b64(ALICE + ':')}"], {}),
    ("Basic, empty user", {401}, NOBODY, [f"Authorization: Basic {b64(':' + ALICE)}"], {}),
    ("Proxy-Authorization", {401}, NOBODY, [f"Proxy-Authorization: Bearer {ALICE}"], {}),
    ("X-Forwarded-Authorization", {401}, NOBODY, [f"X-Forwarded-Authorization: Bearer {ALICE}"], {}),
    ("X-Auth-Token", {401}, NOBODY, [f"X-Auth-Token: {ALICE}"], {}),
    ("Api-Key", {401}, NOBODY, [f"Api-Key: {ALICE}"], {}),
    ("token as the scheme", {401}, NOBODY, [f"Authorization: {ALICE}"], {}),
    ("Token scheme", {401}, NOBODY, [f"Authorization: Token {ALICE}"], {}),
    ("scheme without a space", {401}, NOBODY, [f"Authorization: Bearer{ALICE}"], {}),
    ("scheme with a colon", {401}, NOBODY, [f"Authorization: Bearer: {ALICE}"], {}),
    ("Bearer Bearer", {401}, INVALID, [f"Authorization: Bearer Bearer {ALICE}"], {}),
    ("prefix of alice's token", {401}, INVALID, [f"Authorization: Bearer {ALICE[:-1]}"], {}),
    ("common prefix of both tokens", {401}, INVALID, ["Authorization: Bearer -token-0123456789abcdef"], {}),
    ("alice's token extended", {401}, INVALID, [f"Authorization: Bearer {ALICE}0"], {}),
    ("alice's token then bob's", {401}, INVALID, [f"Authorization: Bearer {ALICE} {BOB}"], {}),
    ("two tokens, comma", {401}, INVALID, [f"Authorization: Bearer {ALICE}, Bearer {BOB}"], {}),
    ("two keys, comma", {401}, INVALID, [f"X-API-Key: {ALICE}, {BOB}"], {}),
    ("alice's token in upper case", {401}, INVALID, [f"Authorization: Bearer {ALICE.upper()}"], {}),
    ("alice's token quoted", {401}, INVALID, [f'Authorization: Bearer "{ALICE}"'], {}),
    ("vertical tab after the token", {400, 401}, INVALID, [f"Authorization: Bearer {ALICE}\x0b"], {}),
    ("form feed after the token", {400, 401}, INVALID, [f"Authorization: Bearer {ALICE}\x0c"], {}),
    ("bare CR after the token", {400}, b"", [f"Authorization: Bearer {ALICE}\rX-API-Key: {BOB}"], {}),
    ("NUL inside the key", {400}, b"", [f"X-API-Key: {ALICE}\x00{BOB}"], {}),
    ("token in the fragment", {400, 401}, NOBODY, [], {"target": f"/mcp#{ALICE}"}),
    ("token in the path", {401, 404}, NOBODY, [], {"target": f"/mcp/{ALICE}"}),
    ("full-width scheme (UTF-8)", {401}, NOBODY, [f"Authorization: {utf8('Ｂearer')} {ALICE}"], {}),
    ("token percent-encoded", {401}, INVALID, [f"Authorization: Bearer {ALICE.replace('-', '%2D')}"], {}),
    ("token in base64", {401}, INVALID, [f"Authorization: Bearer {b64(ALICE)}"], {}),
    ("unit separator after the token", {400, 401}, INVALID, [f"Authorization: Bearer {ALICE}\x1f"], {}),
    ("a megabyte of token", {431}, b"", [f"Authorization: Bearer {ALICE}{'a' * (1 << 20)}"], {}),
]


async def exchange_big(port: int, head: str) -> tuple[int, bytes]:
    """``exchange`` for a head larger than the socket takes at once: the front may answer (431) and close
    before the whole head is written; the answer is read whatever the write met."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(head.encode("latin-1") + b"\r\n")
        try:
            await writer.drain()
        except ConnectionError:
            pass
        answer = await reader.read(8192)
    finally:
        writer.close()
    return int(answer.split(b" ", 2)[1]), answer


async def test_no_other_road_signs_in() -> None:
    async with front() as port:
        for label, expected, words, lines, kw in REFUSED:
            status, answer = await exchange_big(port, get(port, *lines, **kw))
            assert status in expected, (label, answer[:300])
            if status == 401:
                assert words in answer, (label, answer[:300])
            assert b"alice" not in answer.partition(b"\r\n\r\n")[2], (label, answer[:300])
        # the front still answers alice's one spelling afterwards (nothing above broke it)
        status, answer = await exchange(port, get(port, f"Authorization: Bearer {ALICE}"))
        assert status == 200 and answer.endswith(b'{"principal":"alice"}'), answer
