"""The console sign-in secrets at start: the owner's generated file kept like the token's (a planted link, a
file others can write, refused), and no console secret that is also a token, an A2A key or another's secret
(it would be a bearer the fronts accept, and the token a sign-in: a client answering for the user)."""

from __future__ import annotations

import hashlib
import os
import stat

import pytest

from sentinel_mcp.config import ConfigError, parse_config
from sentinel_mcp.identity import console_secret, owner_token
from sentinel_mcp.identity.credentials import Credentials
from sentinel_mcp.identity.http_auth import http_auth_for
from sentinel_mcp.identity.resolver import AuthFailed
from sentinel_mcp.identity.owner_token import TokenFileError

ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdef00"
ALICE_SECRET = "alice-console-0123456789abcdef"
KNOWN = "attacker-chosen-secret-1234567890"


def config(tmp_path, principals=(), http=None, a2a=None):
    return parse_config({"sentinel": {"data_dir": str(tmp_path / "data"), "principals": list(principals),
                                      "http": http or {}, **({"a2a": a2a} if a2a else {})}})


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_the_owners_secret_is_generated_beside_the_token_and_is_no_bearer(tmp_path):
    alice = {"name": "alice", "token": ALICE, "console_secret": ALICE_SECRET}
    auth = http_auth_for(config(tmp_path, [alice]))
    path = console_secret.secret_path(tmp_path / "data")
    assert auth.console_secret_created and auth.console_secret_file == path
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and path.read_text().strip() == auth.console_secret
    assert auth.console_secret != auth.owner_token
    again = http_auth_for(config(tmp_path))
    assert again.console_secret == auth.console_secret and not again.console_secret_created
    assert auth.console_secrets is not None
    for secret, name in ((auth.console_secret, "owner"), (ALICE_SECRET, "alice")):
        found = auth.console_secrets.resolve(Credentials(bearer=secret))
        assert found is not None and found.name == name
        for creds in (Credentials(bearer=secret), Credentials(api_key=secret)):
            with pytest.raises(AuthFailed):  # the fronts' chain never holds a console secret
                auth.authenticator.authenticate(creds)
    for token in (auth.owner_token, ALICE):  # and the sign-in secrets hold no token
        assert auth.console_secrets.resolve(Credentials(bearer=token)) is None
    # "auth": "none": the person still signs in (any local process calls as anonymous, and answered its own
    # call's question in an open console): the owner's console secret, generated alike, signs in as anonymous
    other = tmp_path / "open"
    none = http_auth_for(parse_config({"sentinel": {"data_dir": str(other), "http": {"auth": "none"}}}))
    assert none.console_secrets is not None and none.console_secret_created
    assert console_secret.secret_path(other).read_text().strip() == none.console_secret
    found = none.console_secrets.resolve(Credentials(bearer=none.console_secret))
    assert found is not None and found.name == "anonymous"


def test_a_planted_link_or_a_file_others_can_write_is_refused(tmp_path):
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    known = tmp_path / "known.txt"
    known.write_text(KNOWN + "\n")
    known.chmod(0o644)
    path = console_secret.secret_path(data)
    os.symlink(known, path)
    with pytest.raises(ConfigError, match="console secret.*symbolic link"):
        http_auth_for(config(tmp_path))
    assert stat.S_IMODE(known.stat().st_mode) == 0o644 and known.read_text() == KNOWN + "\n"
    os.unlink(path)
    os.symlink(tmp_path / "made-through-the-link", path)  # a dangling one is not created through
    with pytest.raises(TokenFileError, match="symbolic link"):
        console_secret.load_or_create(data)
    assert not (tmp_path / "made-through-the-link").exists()
    os.unlink(path)
    for mode in (0o620, 0o602, 0o660):
        path.write_text(KNOWN + "\n")
        path.chmod(mode)
        with pytest.raises(ConfigError, match="can be written by others"):
            http_auth_for(config(tmp_path))
        path.unlink()
    os.mkfifo(path, 0o600)
    with pytest.raises(TokenFileError, match="not a regular file"):
        console_secret.load_or_create(data)
    os.unlink(path)
    # readable by others: tightened and kept, as the token's file
    path.write_text(KNOWN + "\n")
    path.chmod(0o644)
    assert console_secret.load_or_create(data) == (KNOWN, False)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    # the token's file is another file: neither is mistaken for the other
    assert owner_token.load_or_create(data)[0] != KNOWN


@pytest.mark.parametrize("principals, http, a2a, named", [
    ([{"name": "alice", "token": ALICE, "console_secret": ALICE}], None, None, "'alice'"),
    ([{"name": "alice", "token": ALICE}, {"name": "bob", "token": BOB, "console_secret": ALICE}], None, None,
     "'bob'"),
    ([{"name": "alice", "token_sha256": digest(ALICE), "console_secret": ALICE}], None, None, "'alice'"),
    ([{"name": "alice", "token": ALICE, "console_secret_sha256": digest(ALICE)}], None, None, "'alice'"),
    ([{"name": "alice", "token": ALICE, "console_secret_sha256": digest(ALICE).upper()}], None, None,
     "'alice'"),
    ([{"name": "alice", "token": ALICE, "console_secret": "peer-key-0123456789abcdef"}], None,
     {"api_keys": {"rover": "peer-key-0123456789abcdef"}}, "'alice'"),
    ([], {"token": ALICE, "console_secret": ALICE}, None, "'owner'"),
    ([{"name": "alice", "token": ALICE}], {"console_secret": ALICE}, None, "'owner'"),
    ([{"name": "bob", "token": BOB, "console_secret": "the-owners-token-0123456789"}],
     {"token": "the-owners-token-0123456789"}, None, "'bob'"),
])
def test_a_console_secret_equal_to_a_token_is_refused_at_start(tmp_path, principals, http, a2a, named):
    with pytest.raises(ConfigError, match=f"console secret of principal {named}.*no client holds"):
        http_auth_for(config(tmp_path, principals, http, a2a))


def test_two_principals_never_share_a_console_secret(tmp_path):
    same = [{"name": "alice", "token": ALICE, "console_secret": ALICE_SECRET},
            {"name": "bob", "token": BOB, "console_secret_sha256": digest(ALICE_SECRET)}]
    with pytest.raises(ConfigError, match="console secrets.*'alice' and 'bob'"):
        http_auth_for(config(tmp_path, same))
    with pytest.raises(ConfigError, match="console secrets.*'owner' and 'alice'"):
        http_auth_for(config(tmp_path, same[:1], {"console_secret": ALICE_SECRET}))


def test_a_console_secret_is_checked_like_a_token_in_the_config(tmp_path):
    for bad in ({"console_secret": "short"}, {"console_secret": "${NOT_SET_ANYWHERE_X:-}"},
                {"console_secret_sha256": "00"}, {"console_secret": ALICE_SECRET,
                                                  "console_secret_sha256": digest(ALICE_SECRET)}):
        with pytest.raises(Exception, match="console_secret|console secret"):
            config(tmp_path, [{"name": "alice", "token": ALICE, **bad}])
