"""The owner's token file in a data dir others may reach (a shared volume, ``SENTINEL_DATA_DIR`` under /tmp):
a planted symbolic link, FIFO, directory, another user's file or a file others can write is refused, never
read as the token nor chmod'ed through; the file appears whole, so racing first starts agree on one token and
no reader sees it empty (red team "identity", finding 5). The happy path is in ``test_exposure.py``."""

from __future__ import annotations

import errno
import os
import stat
import threading
from pathlib import Path

import pytest

from sentinel_mcp.config import ConfigError, parse_config
from sentinel_mcp.identity import owner_token
from sentinel_mcp.identity.http_auth import http_auth_for
from sentinel_mcp.identity.owner_token import TokenFileError, load_or_create, read, token_path

KNOWN = "attacker-chosen-token-1234567890"


def test_a_planted_symbolic_link_is_refused_and_its_target_left_alone(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    known = tmp_path / "known.txt"
    known.write_text(KNOWN + "\n")
    known.chmod(0o644)
    os.symlink(known, token_path(data))
    with pytest.raises(TokenFileError, match="symbolic link"):
        load_or_create(data)
    assert stat.S_IMODE(known.stat().st_mode) == 0o644 and known.read_text() == KNOWN + "\n"
    # through the config, a start refuses with the file's name
    cfg = parse_config({"sentinel": {"data_dir": str(data)}})
    with pytest.raises(ConfigError, match="symbolic link"):
        http_auth_for(cfg)
    # a dangling link is not followed to create its target either
    os.unlink(token_path(data))
    os.symlink(tmp_path / "made-through-the-link", token_path(data))
    with pytest.raises(TokenFileError, match="symbolic link"):
        load_or_create(data)
    assert not (tmp_path / "made-through-the-link").exists()
    # nor a link to a directory
    os.unlink(token_path(data))
    os.symlink(tmp_path, token_path(data))
    with pytest.raises(TokenFileError, match="symbolic link"):
        load_or_create(data)


def test_only_a_regular_file_is_a_token_file(tmp_path):
    path = token_path(tmp_path)
    os.mkfifo(path, 0o600)  # would block an open without O_NONBLOCK
    with pytest.raises(TokenFileError, match="not a regular file"):
        load_or_create(tmp_path)
    os.unlink(path)
    path.mkdir(mode=0o700)
    with pytest.raises(TokenFileError, match="not a regular file"):
        load_or_create(tmp_path)


@pytest.mark.parametrize("mode", [0o666, 0o622, 0o620, 0o602, 0o660, 0o606, 0o777])
def test_a_file_others_can_write_is_refused(tmp_path, mode):
    path = token_path(tmp_path)
    path.write_text(KNOWN + "\n")
    path.chmod(mode)
    with pytest.raises(TokenFileError, match="can be written by others"):
        load_or_create(tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == mode  # left as found: nothing is done through a refusal


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o404, 0o444])
def test_a_file_others_can_read_is_tightened_and_kept(tmp_path, mode):
    path = token_path(tmp_path)
    path.write_text(KNOWN + "\n")
    path.chmod(mode)
    assert load_or_create(tmp_path) == (KNOWN, False)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_another_users_file_is_refused(tmp_path, monkeypatch):
    path = token_path(tmp_path)
    path.write_text(KNOWN + "\n")
    path.chmod(0o600)
    real = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: real + 1)  # as seen by another user running Sentinel
    # the data dir is the other user's too: refused there first (the file's own check is below, as root)
    with pytest.raises(TokenFileError, match=f"belongs to user id {real}|belongs to another user"):
        load_or_create(tmp_path)
    monkeypatch.undo()
    if real == 0:  # as root: a file really owned by someone else
        os.chown(path, 65534, 65534)
        with pytest.raises(TokenFileError, match="belongs to user id 65534"):
            load_or_create(tmp_path)


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\n",
        b"short\n",
        b"x" * 15,
        b"x" * 5000,  # oversize
        "tok\u00e9n-0123456789abcdef".encode(),  # not ASCII
        b"\xff\xfe" + b"a" * 20,  # not text
        b"token with spaces 0123456789",
        b"token-0123456789\x00abcdef",
        b"token-0123456789\x1babcdef",
        b"first-line-0123456789\nsecond-line-0123456789",
    ],
)
def test_a_file_without_a_usable_token_is_refused(tmp_path, content):
    path = token_path(tmp_path)
    path.write_bytes(content)
    path.chmod(0o600)
    with pytest.raises(TokenFileError, match="no usable token"):
        load_or_create(tmp_path)
    assert path.read_bytes() == content  # kept: a running Sentinel may still use it


def test_the_file_appears_whole_or_not_at_all(tmp_path, monkeypatch):
    """While the token is written, its name does not exist yet (before: an empty file a second start read
    as "no usable token")."""
    seen: list[str] = []
    real_write = os.write

    def write_then_look(fd: int, data: bytes | memoryview) -> int:
        n = real_write(fd, data)
        try:
            seen.append(read(token_path(tmp_path)))
        except FileNotFoundError:
            seen.append("absent")
        return n

    monkeypatch.setattr(owner_token.os, "write", write_then_look)
    token, created = load_or_create(tmp_path)
    monkeypatch.undo()
    assert created and seen and set(seen) == {"absent"}
    assert read(token_path(tmp_path)) == token
    assert stat.S_IMODE(token_path(tmp_path).stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["http-token"]  # no temporary file left


def test_racing_first_starts_agree_on_one_token(tmp_path):
    for round_ in range(40):
        data = tmp_path / f"d{round_}"
        data.mkdir()
        results: list[tuple[str, bool] | BaseException] = []
        start = threading.Barrier(6)

        def first_start() -> None:
            start.wait()
            try:
                results.append(load_or_create(data))
            except BaseException as e:  # noqa: BLE001 - reported by the assertion below
                results.append(e)

        threads = [threading.Thread(target=first_start) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not [r for r in results if isinstance(r, BaseException)], results
        tokens = {r[0] for r in results if isinstance(r, tuple)}
        assert len(tokens) == 1 and sum(1 for r in results if isinstance(r, tuple) and r[1]) == 1
        assert sorted(p.name for p in data.iterdir()) == ["http-token"]


def test_a_volume_without_hard_links_still_gets_one_token(tmp_path, monkeypatch):
    def no_links(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(owner_token.os, "link", no_links)
    token, created = load_or_create(tmp_path)
    assert created and load_or_create(tmp_path) == (token, False)
    assert stat.S_IMODE(token_path(tmp_path).stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["http-token"]


def test_the_cli_reads_the_token_with_the_same_checks(tmp_path, monkeypatch):
    from sentinel_mcp.app import gateway_cli

    known = tmp_path / "known.txt"
    known.write_text(KNOWN + "\n")
    data = tmp_path / "data"
    data.mkdir()
    os.symlink(known, token_path(data))
    cfg = tmp_path / "c.json"
    cfg.write_text('{"sentinel": {"data_dir": "%s"}}' % data)

    class Args:
        config = str(cfg)

    assert gateway_cli._owner_token(Args()) is None  # type: ignore[arg-type]
    os.unlink(token_path(data))
    token, _ = load_or_create(Path(data))
    assert gateway_cli._owner_token(Args()) == token  # type: ignore[arg-type]


def test_a_data_dir_made_for_the_token_is_the_owners_only(tmp_path):
    old = os.umask(0o022)
    try:
        load_or_create(tmp_path / "new" / "data")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new" / "data").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o700


@pytest.mark.skipif(os.geteuid() != 0, reason="making a directory another user's needs root")
@pytest.mark.parametrize("change", ["others-write", "another-owner"])
def test_no_token_is_kept_in_a_data_dir_another_user_owns_or_may_write(tmp_path: Path, change: str) -> None:
    from sentinel_mcp.identity.owner_token import TokenFileError, load_or_create

    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    if change == "others-write":
        os.chmod(data, 0o777)
    else:
        os.chown(data, 1000, 1000)
    with pytest.raises(TokenFileError, match="another user|group or others"):
        load_or_create(data)
    assert not (data / "http-token").exists()


@pytest.mark.parametrize("change", ["others write", "another owns"])
def test_a_folder_higher_up_that_others_could_change_is_refused(tmp_path, change):
    """Red team "perms12": only the data dir itself was held to the rule; whoever may write (or owns) a folder
    above it can rename the data dir away and put one of their own, token chosen, in its place."""
    up = tmp_path / "up"
    data = up / "state" / "sentinel"
    data.mkdir(parents=True)
    load_or_create(data)  # fine as made
    if change == "others write":
        os.chmod(up, 0o777)
    else:
        os.chown(up, 54321, -1)
    with pytest.raises(TokenFileError) as e:
        load_or_create(data)
    assert str(up) in str(e.value)
    with pytest.raises(TokenFileError):
        owner_token.replace(data)
