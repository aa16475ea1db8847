"""A request's credentials as a stamp another process proves again (``identity/credential_stamp.py``): the
stamp holds while its token is one the authenticator takes now and names the stamp's principal; a rotated
token file, a stamp naming someone else, and every malformed stamp (a row tampered with, or written by
something else) fail closed. Real token files, rotated as ``config token --rotate`` does (``owner_token``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.identity import owner_token
from sentinel_mcp.identity.credential_stamp import CredentialCheck, StampCheck, reprove, stamp_from, stamp_of
from sentinel_mcp.identity.credentials import Credentials
from sentinel_mcp.identity.file_secret import FileSecret
from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.identity.resolver import Authenticator, AuthFailed, TokenResolver, token_digest
from tests.support.followed_token import followed_owner_token

OWNER = Principal("owner", "token")
ALICE = Principal("alice", "token")
ALICE_TOKEN = "alice-token-0123456789abcdef"


def _auth(tmp: Path) -> tuple[Authenticator, str, FileSecret]:
    source, token = followed_owner_token(tmp)
    tokens = TokenResolver()
    tokens.follow(OWNER, source)
    tokens.add(ALICE, token=ALICE_TOKEN)
    return Authenticator([tokens]), token, source


def test_a_stamp_holds_until_its_token_file_is_rotated(tmp_path: Path) -> None:
    auth, token, _ = _auth(tmp_path)
    check = CredentialCheck(auth, Credentials(bearer=token), OWNER)
    stamp = json.loads(json.dumps(stamp_from(check)))  # as a row keeps it
    assert token not in json.dumps(stamp) and token_digest(token).hex() not in json.dumps(stamp)
    assert reprove(auth, stamp).name == "owner"
    assert StampCheck(auth, stamp)().name == "owner"
    owner_token.replace(tmp_path)
    with pytest.raises(AuthFailed):
        reprove(auth, stamp)
    with pytest.raises(AuthFailed):
        check()  # the request's own check agrees


def test_a_fixed_token_stamp_holds_and_names_its_principal_only(tmp_path: Path) -> None:
    auth, token, _ = _auth(tmp_path)
    stamp = stamp_of(Credentials(bearer=ALICE_TOKEN), ALICE)
    assert reprove(auth, stamp).name == "alice"
    with pytest.raises(AuthFailed):  # alice's token under the owner's name
        reprove(auth, {**stamp, "principal": "owner"})
    mixed = stamp_of(Credentials(bearer=ALICE_TOKEN, api_key=token), ALICE)  # two secrets, two principals
    with pytest.raises(AuthFailed):
        reprove(auth, mixed)


def _malformed(stamp: dict[str, Any]) -> list[Any]:
    fp = stamp["secrets"][0]
    return [
        None, [], "", json.dumps(stamp), {**stamp, "v": 2}, {**stamp, "v": "1"}, {**stamp, "v": True},
        {**stamp, "principal": ""}, {**stamp, "principal": None}, {**stamp, "principal": ["owner"]},
        {k: v for k, v in stamp.items() if k != "principal"}, {**stamp, "extra": 1},
        {"v": 1, "principal": "owner"}, {**stamp, "secrets": []}, {**stamp, "secrets": fp},
        {**stamp, "secrets": [fp.upper()]}, {**stamp, "secrets": [fp[:-1]]}, {**stamp, "secrets": [fp + "0"]},
        {**stamp, "secrets": [fp, fp, fp]}, {**stamp, "secrets": [1]}, {**stamp, "secrets": [None]},
        {**stamp, "secrets": ["0" * 64]}, {**stamp, "secrets": [token_digest(ALICE_TOKEN).hex()]},
        {**stamp, "secrets": [], "chain": []}, {**stamp, "chain": "pem"}, {**stamp, "chain": [""]},
        {**stamp, "chain": ["x" * (64 * 1024 + 1)]}, {**stamp, "chain": [1]},
    ]


def test_every_malformed_stamp_fails_closed(tmp_path: Path) -> None:
    auth, _, _ = _auth(tmp_path)
    stamp = stamp_of(Credentials(bearer=ALICE_TOKEN), ALICE)
    assert reprove(auth, stamp).name == "alice"
    for bad in _malformed(stamp):
        with pytest.raises(AuthFailed):
            reprove(auth, bad)


def test_a_stamp_is_asked_as_its_request_would_be_now(tmp_path: Path) -> None:
    """The authenticator's resolvers in their order: on a front without client certificates the token
    decides (as it does for the request itself); a certificate alone proves nobody there."""
    auth, _, _ = _auth(tmp_path)
    pem = ["-----BEGIN CERTIFICATE-----"]
    with_token = {**stamp_of(Credentials(bearer=ALICE_TOKEN), ALICE), "chain": pem}
    assert reprove(auth, with_token).name == "alice"
    request = Credentials(bearer=ALICE_TOKEN, tls={"client_cert_chain": pem})
    assert CredentialCheck(auth, request, ALICE)().name == "alice"
    with pytest.raises(AuthFailed):
        reprove(auth, {"v": 1, "principal": "alice", "chain": pem})
