"""The front's TLS files are refused when another account could change them (a CA bundle or CRL it may write
would let it admit its own client certificates), at start and on reload; a key others may read is warned
about."""

from __future__ import annotations

import os
import time

import pytest

from sentinel_mcp.tls import server_context
from sentinel_mcp.tls.server_context import FrontTLS, ServerContexts, TLSSetupError
from tests.tls.conftest import Pki


def front(pki: Pki) -> FrontTLS:
    return FrontTLS(pki.server.cert, pki.server.key, pki.ca.ca_cert_path, pki.ca.crl_path, "required")


@pytest.mark.parametrize("which", ["cert", "key", "ca", "crl"])
@pytest.mark.parametrize("mode", [0o666, 0o646, 0o602])
def test_a_file_others_may_write_is_refused_naming_it(pki: Pki, which: str, mode: int) -> None:
    tls = front(pki)
    path = getattr(tls, which)
    os.chmod(path, mode)
    with pytest.raises(TLSSetupError, match="may be written by group or others") as e:
        ServerContexts(tls)
    assert str(path.resolve()) in str(e.value) and "go-w" in str(e.value)


def test_group_write_counts_for_another_group_only(pki: Pki) -> None:
    tls = front(pki)
    os.chmod(tls.ca, 0o664)
    if os.stat(tls.ca).st_gid == os.getegid():
        ServerContexts(tls)  # this user's own group: as umask 002 makes it
    if os.geteuid() == 0:  # root may give the file to another group and still be its owner
        os.chown(tls.ca, -1, os.getegid() + 4242)
        with pytest.raises(TLSSetupError, match="may be written by group or others"):
            ServerContexts(tls)


def test_a_directory_others_may_write_is_refused_unless_sticky(pki: Pki) -> None:
    tls = front(pki)
    directory = tls.ca.parent
    os.chmod(directory, 0o777)
    try:
        with pytest.raises(TLSSetupError, match="could be replaced"):
            ServerContexts(tls)
        os.chmod(directory, 0o1777)  # as /tmp: others may add names, never replace this user's files
        ServerContexts(tls)
    finally:
        os.chmod(directory, 0o755)


def test_a_link_is_judged_by_the_file_it_names(pki: Pki, tmp_path) -> None:
    tls = front(pki)
    live = tmp_path / "live"
    live.mkdir(mode=0o700)
    (live / "ca.pem").symlink_to(tls.ca)
    linked = FrontTLS(tls.cert, tls.key, live / "ca.pem", tls.crl, "required")
    ServerContexts(linked)
    os.chmod(tls.ca, 0o666)
    with pytest.raises(TLSSetupError, match=str(tls.ca.resolve())):
        ServerContexts(linked)
    os.chmod(tls.ca, 0o644)
    os.chmod(live, 0o777)  # whoever may write beside the link may point it at their own CA
    try:
        with pytest.raises(TLSSetupError, match="could be replaced"):
            ServerContexts(linked)
    finally:
        os.chmod(live, 0o700)


def test_a_key_others_may_read_is_a_warning(pki: Pki) -> None:
    tls = front(pki)
    assert not any("may be read" in w for w in ServerContexts(tls).warnings)
    os.chmod(tls.key, 0o644)
    contexts = ServerContexts(tls)
    assert any("may be read by every account" in w and str(tls.key) in w for w in contexts.warnings)


def test_a_file_made_writable_while_running_is_not_taken_and_the_old_context_serves(pki: Pki,
                                                                                     monkeypatch) -> None:
    monkeypatch.setattr(server_context, "RECHECK_SECONDS", 0.0)
    tls = front(pki)
    contexts = ServerContexts(tls)
    good = contexts.current()
    time.sleep(0.01)
    pki.ca.revoke(f"{pki.alice.serial:x}")  # a new CRL (its stamp moves) that others may now write
    os.chmod(tls.crl, 0o666)
    assert contexts.current() is good
    why = contexts.warnings[0]
    assert "cannot be used" in why and "may be written by group or others" in why
    os.chmod(tls.crl, 0o644)
    os.utime(tls.crl)  # the stamp moves again: the safe file is taken
    assert contexts.current() is not good and not contexts.warnings


OTHER = 12345  # an unprivileged account that is neither root nor this gateway's


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another account takes root")
@pytest.mark.parametrize("which", ["cert", "key", "ca", "crl"])
def test_a_file_another_account_owns_is_refused_naming_it_and_its_owner(pki: Pki, which: str) -> None:
    tls = front(pki)
    path = getattr(tls, which)
    ServerContexts(tls)
    for uid, gid in ((OTHER, -1), (OTHER, OTHER)):  # its mode still 0644 or 0600: only the owner changed
        os.chown(path, uid, gid)
        with pytest.raises(TLSSetupError, match="is owned by another account") as e:
            ServerContexts(tls)
        assert str(path.resolve()) in str(e.value) and f"uid {OTHER}" in str(e.value)
        assert "chown" in str(e.value)
    os.chown(path, 0, 0)  # root's again
    ServerContexts(tls)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another account takes root")
@pytest.mark.parametrize("depth", [1, 2], ids=["the file's directory", "a directory further up"])
def test_a_directory_another_account_owns_on_the_path_is_refused(pki: Pki, depth: int) -> None:
    tls = front(pki)
    directory = tls.ca.resolve().parents[depth - 1]
    os.chown(directory, OTHER, -1)  # mode unchanged (0755): its owner may still rename what it holds
    try:
        with pytest.raises(TLSSetupError, match="could be replaced") as e:
            ServerContexts(tls)
        assert f"{directory} is owned by another account" in str(e.value) and f"uid {OTHER}" in str(e.value)
    finally:
        os.chown(directory, 0, -1)
    ServerContexts(tls)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another account takes root")
def test_the_links_directory_owned_by_another_account_is_refused(pki: Pki, tmp_path) -> None:
    tls = front(pki)
    live = tmp_path / "live"
    live.mkdir(mode=0o755)
    (live / "ca.pem").symlink_to(tls.ca)
    linked = FrontTLS(tls.cert, tls.key, live / "ca.pem", tls.crl, "required")
    ServerContexts(linked)
    os.chown(live, OTHER, -1)  # its owner may point the link at a CA of its own
    with pytest.raises(TLSSetupError, match=f"{live} is owned by another account"):
        ServerContexts(linked)
    os.chown(live, 0, -1)
    ServerContexts(linked)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another account takes root")
def test_a_file_given_to_another_account_while_running_is_not_taken(pki: Pki, monkeypatch) -> None:
    monkeypatch.setattr(server_context, "RECHECK_SECONDS", 0.0)
    tls = front(pki)
    contexts = ServerContexts(tls)
    good = contexts.current()
    time.sleep(0.01)
    pki.ca.revoke(f"{pki.alice.serial:x}")  # a new CRL (its stamp moves), owned by another account
    os.chown(tls.crl, OTHER, -1)
    assert contexts.current() is good
    assert "cannot be used" in contexts.warnings[0] and "is owned by another account" in contexts.warnings[0]
    os.chown(tls.crl, 0, -1)
    os.utime(tls.crl)
    assert contexts.current() is not good and not contexts.warnings
