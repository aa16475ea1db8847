"""Sentinel signs its own agent card with ``card_signing_key``, so a peer that pinned its public key can tell
its card from a spoofer's: a real Sentinel served on 127.0.0.1, its card fetched and checked as discovery does
(the same check another Sentinel makes), signed once while the card is unchanged (its ETag holds)."""

from __future__ import annotations

import asyncio
import subprocess
import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed448, ed25519, rsa
from tests.a2a.a2a_rig import open_port, serve
from tests.a2a.test_sdk_interop import sdk_python

from sentinel_mcp.a2a.discovery import PeerRejected, txt_record, verify_peer
from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.config import ConfigError

pytestmark = pytest.mark.timeout(90)
VERIFY = Path(__file__).parent / "interop" / "sdk_verify_card.py"


def write_key(tmp_path: Path, key: Any, name: str = "card.pem") -> str:
    path = tmp_path / name
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    return str(path)


def public_pem(key: Any) -> str:
    return key.public_key().public_bytes(serialization.Encoding.PEM,
                                         serialization.PublicFormat.SubjectPublicKeyInfo).decode()


@pytest.mark.parametrize("key", [ec.generate_private_key(ec.SECP256R1()),
                                 ec.generate_private_key(ec.SECP384R1()),
                                 ed25519.Ed25519PrivateKey.generate(), rsa.generate_private_key(65537, 2048)],
                         ids=["P-256", "P-384", "Ed25519", "RSA"])
async def test_a_peer_pinning_sentinels_key_verifies_its_card(tmp_path: Path, key: Any) -> None:
    settings = A2ASettings(name="signed-sentinel", card_signing_key=write_key(tmp_path, key))
    async with open_port() as port, serve(port, settings) as served, httpx2.AsyncClient(timeout=10) as http:
        where = int(served.base_url.rsplit(":", 1)[1])
        txt = txt_record(A2ASettings())
        mine = A2ASettings(peer_keys={"signed-sentinel": public_pem(key)}).card_keys
        peer = await verify_peer("s._a2a._tcp.local.", ["127.0.0.1"], where, txt, http,
                                 allow_loopback_plaintext=True, keys=mine)
        assert peer.trust.verified and "pinned key" in peer.trust.note
        # or pinned by the fingerprint a2a_discover shows for it (its header names its key)
        unpinned = await verify_peer("s._a2a._tcp.local.", ["127.0.0.1"], where, txt, http,
                                     allow_loopback_plaintext=True)
        shown = next(w for w in unpinned.trust.note.split() if w.startswith("sha256:"))
        by_print = A2ASettings(peer_keys={"signed-sentinel": shown}).card_keys
        assert (await verify_peer("s._a2a._tcp.local.", ["127.0.0.1"], where, txt, http,
                                  allow_loopback_plaintext=True, keys=by_print)).trust.verified
        stranger = public_pem(ec.generate_private_key(ec.SECP256R1()))
        other = A2ASettings(peer_keys={"signed-sentinel": stranger})
        with pytest.raises(PeerRejected, match="pinned to key"):
            await verify_peer("s._a2a._tcp.local.", ["127.0.0.1"], where, txt, http,
                              allow_loopback_plaintext=True, keys=other.card_keys)
        first, second = [await http.get(served.base_url + "/.well-known/agent-card.json") for _ in range(2)]
        assert first.headers["etag"] == second.headers["etag"] and first.content == second.content


def test_a_signing_key_that_cannot_sign_a_card_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="card_signing_key"):
        A2ASettings.from_section({"card_signing_key": str(tmp_path / "missing.pem")})
    small = write_key(tmp_path, rsa.generate_private_key(65537, 1024), "small.pem")
    with pytest.raises(ConfigError, match="card_signing_key"):
        A2ASettings.from_section({"card_signing_key": small})
    odd = write_key(tmp_path, dsa.generate_private_key(2048), "dsa.pem")
    with pytest.raises(ConfigError, match="card_signing_key"):
        A2ASettings.from_section({"card_signing_key": odd})


@pytest.mark.parametrize("key", [ec.generate_private_key(ec.SECP256R1()),
                                 ec.generate_private_key(ec.SECP384R1()),
                                 ec.generate_private_key(ec.SECP521R1()),
                                 ed25519.Ed25519PrivateKey.generate(), rsa.generate_private_key(65537, 2048)],
                         ids=["P-256", "P-384", "P-521", "Ed25519", "RSA"])
async def test_a2a_sdks_own_verifier_accepts_sentinels_signed_card_and_refuses_forgeries(
        tmp_path: Path, key: Any) -> None:
    """An a2a-sdk client (its ``A2ACardResolver`` and ``create_signature_verifier``, in the SDK's own venv)
    fetches Sentinel's card over HTTP and checks it against Sentinel's public key: it verifies; edited in
    transit, checked against another key, or re-signed ``alg: none``, the SDK refuses it."""
    settings = A2ASettings(name="signed-sentinel", card_signing_key=write_key(tmp_path, key))
    (tmp_path / "right.pem").write_text(public_pem(key))
    (tmp_path / "wrong.pem").write_text(public_pem(ec.generate_private_key(ec.SECP256R1())))
    async with open_port() as port, serve(port, settings) as served:
        proc = await asyncio.create_subprocess_exec(
            sdk_python(), str(VERIFY), served.base_url, str(tmp_path / "right.pem"),
            str(tmp_path / "wrong.pem"),
            cwd="/", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await proc.communicate()
    assert proc.returncode == 0, (out + err).decode()[-3000:]
    assert json.loads(out) == {"genuine": "verified", "wrong_key": "InvalidSignaturesError",
                               "tampered": "InvalidSignaturesError", "alg_none": "InvalidSignaturesError"}


SDK_SIGN = Path(__file__).parent / "interop" / "sdk_sign_card.py"
SDK_SIGNED = [("ES256", ec.SECP256R1()), ("ES384", ec.SECP384R1()), ("ES512", ec.SECP521R1()),
              ("RS256", 2048), ("PS256", 2048), ("PS384", 3072), ("PS512", 2048), ("EdDSA", None)]


def with_skill(card: dict[str, Any]) -> dict[str, Any]:
    """(The SDK leaves an empty ``skills`` out of the JSON it writes, and a card needs the field.)"""
    return {**card, "skills": [{"id": "echo", "name": "echo", "description": "says it back", "tags": ["t"]}]}


def _private(kind: Any) -> Any:
    if isinstance(kind, ec.EllipticCurve):
        return ec.generate_private_key(kind)
    return ed25519.Ed25519PrivateKey.generate() if kind is None else rsa.generate_private_key(65537, kind)


@pytest.mark.parametrize(("alg", "kind"), SDK_SIGNED, ids=[a for a, _ in SDK_SIGNED])
async def test_a_card_a2a_sdk_signed_is_verified_by_sentinel(tmp_path: Path, alg: str, kind: Any) -> None:
    """A peer built on a2a-sdk signs its card with the SDK's own signer (P-384, P-521, RSA-PSS, ...): served
    on 127.0.0.1, Sentinel pinning that peer's key verifies it, and refuses it pinned to another key or with
    its description changed after signing."""
    from tests.a2a.card_server import serving_card
    from tests.a2a.test_card_signatures import card_at

    key = _private(kind)
    key_path = write_key(tmp_path, key)
    signed: dict[int, dict[str, Any]] = {}

    def card(port: int) -> dict[str, Any]:
        if port not in signed:  # signed by the SDK once, for the port it is served on
            done = subprocess.run([sdk_python(), str(SDK_SIGN), key_path, alg], cwd="/",
                                  capture_output=True, timeout=60,
                                  input=json.dumps(with_skill(card_at(port, "sdk-peer"))).encode())
            assert done.returncode == 0, done.stderr.decode()[-2000:]
            signed[port] = json.loads(done.stdout)
        return signed[port]

    async with serving_card(card) as port, httpx2.AsyncClient(timeout=10) as http:
        txt = txt_record(A2ASettings())

        async def checked(pem: str) -> Any:
            return await verify_peer("sdk-peer._a2a._tcp.local.", ["127.0.0.1"], port, txt, http,
                                     allow_loopback_plaintext=True,
                                     keys=A2ASettings(peer_keys={"sdk-peer": pem}).card_keys)

        peer = await checked(public_pem(key))
        assert peer.trust.verified and "pinned key" in peer.trust.note, peer.trust
        with pytest.raises(PeerRejected, match="pinned to key"):
            await checked(public_pem(_private(kind)))
        signed[port] = {**signed[port], "description": "and forwards your data"}
        with pytest.raises(PeerRejected, match="pinned to key"):
            await checked(public_pem(key))


async def test_a_card_a2a_sdk_signed_with_an_algorithm_sentinel_lacks_is_refused_clearly(
        tmp_path: Path) -> None:
    """ES256K (secp256k1), which PyJWT signs: not among Sentinel's algorithms, so the card is refused with
    the algorithm named, pinned or not (never taken as unsigned)."""
    from tests.a2a.card_server import serving_card
    from tests.a2a.test_card_signatures import card_at

    key = ec.generate_private_key(ec.SECP256K1())
    key_path = write_key(tmp_path, key)

    def card(port: int) -> dict[str, Any]:
        done = subprocess.run([sdk_python(), str(SDK_SIGN), key_path, "ES256K"], cwd="/", capture_output=True,
                              input=json.dumps(with_skill(card_at(port, "sdk-peer"))).encode(), timeout=60)
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        return dict(json.loads(done.stdout))

    async with serving_card(card) as port, httpx2.AsyncClient(timeout=10) as http:
        for peer_keys in ({}, {"sdk-peer": public_pem(key)}):
            with pytest.raises(PeerRejected, match="algorithm 'ES256K'; only ES256, ES384, ES512"):
                await verify_peer("sdk-peer._a2a._tcp.local.", ["127.0.0.1"], port, txt_record(A2ASettings()),
                                  http, allow_loopback_plaintext=True,
                                  keys=A2ASettings(peer_keys=peer_keys).card_keys)


@pytest.mark.parametrize("key", [ec.generate_private_key(ec.SECP256K1()), ed448.Ed448PrivateKey.generate()],
                         ids=["secp256k1", "Ed448"])
def test_a_signing_key_of_an_algorithm_sentinel_does_not_sign_with_is_a_config_error(tmp_path: Path,
                                                                                       key: Any) -> None:
    with pytest.raises(ConfigError, match="card_signing_key"):
        A2ASettings.from_section({"card_signing_key": write_key(tmp_path, key)})
