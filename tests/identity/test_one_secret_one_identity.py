"""A secret names one identity (red team "identity").

The config refused two principals' equal ``token`` texts only. An A2A key (an agent: it never answers for the
user) equal to a principal's token, or a principal's ``token_sha256`` equal to another's token, was kept: the
first identity added won, silently, so the peer holding that key signed in as the person (answering that
person's questions in the console) or as the owner. Now any secret two identities share refuses to start,
whichever way each names it (text, digest, A2A key or token, the owner's token).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.config import ConfigError, load_config
from sentinel_mcp.identity.credentials import Credentials
from sentinel_mcp.identity.http_auth import http_auth_for

ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdef00"
OWNER = "owner-token-0123456789abcdef0"


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _config(tmp: Path, principals: list[dict[str, Any]], a2a: dict[str, Any] | None = None) -> Any:
    cfg = tmp / "sentinel.json"
    sentinel = {"data_dir": str(tmp / "state"), "http": {"token": OWNER}, "principals": principals,
                "a2a": {"task_db": "", **(a2a or {})}}
    cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": sentinel}))
    return load_config(cfg)


@pytest.mark.parametrize(
    "principals, a2a",
    [
        ([{"name": "alice", "token": ALICE}], {"api_keys": {"bot": ALICE}}),  # a peer's key is alice's token
        ([{"name": "alice", "token": ALICE}], {"token": ALICE, "token_identity": "bot"}),
        ([], {"api_keys": {"bot": OWNER}}),  # a peer's key is the owner's token
        ([{"name": "alice", "token_sha256": _digest(OWNER)}], None),
        ([{"name": "alice", "token": ALICE}, {"name": "bob", "token_sha256": _digest(ALICE)}], None),
        ([{"name": "alice", "token_sha256": _digest(ALICE).upper()},
          {"name": "bob", "token_sha256": _digest(ALICE)}], None),
        ([], {"api_keys": {"bot": BOB, "other-bot": BOB}}),
    ],
)
def test_a_secret_two_identities_share_refuses_to_start(tmp_path, principals, a2a):
    config = _config(tmp_path, principals, a2a)
    with pytest.raises(ConfigError, match="share a secret"):
        http_auth_for(config)


def test_distinct_secrets_and_one_identity_named_twice_are_kept(tmp_path):
    """alice's A2A key may be her token (one identity, named twice); the A2A token equal to the owner's is the
    owner, as before."""
    config = _config(
        tmp_path,
        [{"name": "alice", "token": ALICE}, {"name": "bob", "token_sha256": _digest(BOB)}],
        {"api_keys": {"alice": ALICE, "bot": "bot-key-0123456789"}, "token": OWNER},
    )
    auth = http_auth_for(config).authenticator
    assert auth.authenticate(Credentials(api_key=ALICE)).name == "alice"
    assert auth.authenticate(Credentials(bearer=BOB)).name == "bob"
    assert auth.authenticate(Credentials(api_key="bot-key-0123456789")).agent
    assert auth.authenticate(Credentials(bearer=OWNER)).is_owner
