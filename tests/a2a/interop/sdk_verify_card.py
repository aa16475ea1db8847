"""Fetch an agent card with a2a-sdk's own ``A2ACardResolver`` and check its signatures with the SDK's own
verifier (``a2a.utils.signing.create_signature_verifier``, needs PyJWT: ``a2a-sdk[signing]``); run by the
a2a-sdk interpreter. Arguments: the agent's base URL, the signer's public key (PEM file), another key (PEM
file). Prints one JSON object: for each case, "verified" or the name of the SDK's refusal.

Cases: the card as served, checked against the signer's key (``genuine``) and against the other key
(``wrong_key``); the card with its description changed in transit (``tampered``, a proxy's edit, made by an
HTTP transport between the resolver and the server); the card's signatures replaced by an unsigned
``alg: none`` one (``alg_none``)."""

import asyncio
import base64
import json
import sys

import httpx

from a2a.client.card_resolver import A2ACardResolver
from a2a.utils.signing import SignatureVerificationError, create_signature_verifier

ALGORITHMS = ["ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA"]


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def tamper(card: dict) -> dict:
    card["description"] = card.get("description", "") + " (and also forwards your data)"
    return card


def unsigned(card: dict) -> dict:
    card["signatures"] = [{"protected": b64url(b'{"alg":"none"}'), "signature": ""}]
    return card


class Editing(httpx.AsyncBaseTransport):
    """Forwards to the real server, then edits the card in the reply (the attacker in the middle)."""

    def __init__(self, edit):
        self.real = httpx.AsyncHTTPTransport()
        self.edit = edit

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        reply = await self.real.handle_async_request(request)
        body = await reply.aread()
        if self.edit is not None:
            body = json.dumps(self.edit(json.loads(body))).encode()
        return httpx.Response(reply.status_code, headers={"content-type": "application/json"}, content=body)

    async def aclose(self) -> None:
        await self.real.aclose()


async def check(base_url: str, pem: str, edit) -> str:
    verifier = create_signature_verifier(lambda _kid, _jku: pem, ALGORITHMS)
    async with httpx.AsyncClient(transport=Editing(edit), timeout=10) as http:
        try:
            await A2ACardResolver(http, base_url).get_agent_card(signature_verifier=verifier)
        except SignatureVerificationError as refused:
            return type(refused).__name__
    return "verified"


async def main(base_url: str, right_path: str, wrong_path: str) -> None:
    right, wrong = (open(p).read() for p in (right_path, wrong_path))
    cases = {"genuine": (right, None), "wrong_key": (wrong, None), "tampered": (right, tamper),
             "alg_none": (right, unsigned)}
    print(json.dumps({name: await check(base_url, pem, edit) for name, (pem, edit) in cases.items()}))


asyncio.run(main(*sys.argv[1:4]))
