"""What a path names is judged through every directory the kernel looks it up in: a link chain's middle link
in a folder another account owns, a link another account owns in a sticky folder (``/tmp``), a folder on the
way swapped for a link, and the file opened being the file judged (``core/trusted_path.py``). Before, only the
folders of the name given and of the final file were looked at, by name, so the middle of a chain was
anybody's to point elsewhere."""

from __future__ import annotations

import os
import stat
import struct
from pathlib import Path

import pytest

from sentinel_mcp.core.trusted_path import READ, walk
from sentinel_mcp.tls.file_modes import replaceable_by_others

OTHER = 12345  # an unprivileged account that is neither root nor this gateway's
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another account takes root")


@pytest.fixture
def base(tmp_path: Path) -> Path:
    root = tmp_path / "w"
    root.mkdir(mode=0o755)
    return root


def _key(base: Path) -> Path:
    good = base / "etc"
    good.mkdir(mode=0o755)
    key = good / "key.pem"
    key.write_text("KEY\n")
    key.chmod(0o600)
    return key


def test_a_plain_file_of_this_account_is_trusted(base: Path) -> None:
    assert replaceable_by_others(_key(base)) is None


@as_root
@pytest.mark.parametrize("hops", [1, 2, 5])
def test_a_chain_whose_middle_link_another_account_may_repoint_is_refused(base: Path, hops: int) -> None:
    key = _key(base)
    theirs = base / "theirs"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, OTHER, OTHER)  # its owner may replace any link in it
    middle = theirs / "k0"
    middle.symlink_to(key)
    for i in range(1, hops):
        (theirs / f"k{i}").symlink_to(theirs / f"k{i - 1}")
    mine = base / "mine"
    mine.mkdir(mode=0o700)
    (mine / "key.pem").symlink_to(theirs / f"k{hops - 1}")
    why = replaceable_by_others(mine / "key.pem")
    assert why is not None and f"{theirs} is owned by another account" in why, why


@as_root
def test_a_relative_link_through_a_folder_another_account_owns_is_refused(base: Path) -> None:
    key = _key(base)
    theirs = base / "theirs"
    theirs.mkdir(mode=0o755)
    (theirs / "k").symlink_to(os.path.relpath(key, theirs))
    os.chown(theirs, OTHER, OTHER)
    mine = base / "mine"
    mine.mkdir(mode=0o700)
    (mine / "key.pem").symlink_to("../theirs/k")
    assert "is owned by another account" in (replaceable_by_others(mine / "key.pem") or "")


def test_a_chain_through_a_folder_others_may_write_is_refused(base: Path) -> None:
    key = _key(base)
    shared = base / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    (shared / "k").symlink_to(key)
    mine = base / "mine"
    mine.mkdir(mode=0o700)
    (mine / "key.pem").symlink_to(shared / "k")
    assert "may be written by group or others" in (replaceable_by_others(mine / "key.pem") or "")


@as_root
def test_a_link_another_account_owns_in_a_sticky_folder_is_refused(base: Path) -> None:
    key = _key(base)
    sticky = base / "tmp"
    sticky.mkdir()
    sticky.chmod(0o1777)  # as /tmp: anybody may add names, only an entry's owner may remove it
    link = sticky / "key.pem"
    link.symlink_to(key)
    assert replaceable_by_others(link) is None  # this account's link: nobody else may remove it
    os.lchown(link, OTHER, OTHER)  # its owner may remove it and point a new one at their own file
    why = replaceable_by_others(link)
    assert why is not None and "sticky" in why and str(link) in why, why


@as_root
def test_a_folder_another_account_owns_in_a_sticky_folder_is_refused(base: Path) -> None:
    sticky = base / "tmp"
    sticky.mkdir()
    sticky.chmod(0o1777)
    theirs = sticky / "keys"
    theirs.mkdir(mode=0o755)
    (theirs / "key.pem").write_text("KEY\n")
    assert replaceable_by_others(theirs / "key.pem") is None
    os.chown(theirs, OTHER, OTHER)
    assert "is owned by another account" in (replaceable_by_others(theirs / "key.pem") or "")


def test_a_folder_on_the_way_that_is_a_link_into_a_shared_folder_is_refused(base: Path) -> None:
    shared = base / "shared"
    shared.mkdir()
    (shared / "key.pem").write_text("KEY\n")
    shared.chmod(0o777)
    conf = base / "conf"
    conf.mkdir(mode=0o755)
    (conf / "keys").symlink_to(shared)  # the folder named in the config is a link to a shared one
    assert "may be written by group or others" in (replaceable_by_others(conf / "keys" / "key.pem") or "")


def test_dot_dot_after_a_link_is_resolved_where_the_link_points(base: Path) -> None:
    key = _key(base)
    shared = base / "shared"
    (shared / "deep").mkdir(parents=True)
    (shared / "key.pem").write_text("THEIRS\n")
    shared.chmod(0o777)
    conf = base / "conf"
    conf.mkdir(mode=0o755)
    (conf / "d").symlink_to(shared / "deep")
    # conf/d/../key.pem is shared/key.pem to the kernel (".." after a link is its target's parent)
    assert "may be written by group or others" in (replaceable_by_others(conf / "d" / ".." / "key.pem") or "")
    assert replaceable_by_others(key.parent / ".." / "etc" / "key.pem") is None


def test_a_link_loop_is_an_error_not_a_hang(base: Path) -> None:
    (base / "a").symlink_to(base / "b")
    (base / "b").symlink_to(base / "a")
    with pytest.raises(OSError):
        walk(base / "a")


def test_the_descriptor_opened_is_the_file_judged(base: Path) -> None:
    key = _key(base)
    walked = walk(key, READ)
    try:
        moved = key.with_name("old.pem")
        key.rename(moved)  # replaced after the check: the reader reads what was judged
        key.write_text("NEW\n")
        key.chmod(0o666)
        assert walked.why is None and os.read(walked.fd, 100) == b"KEY\n"
        assert stat.S_ISREG(walked.stat.st_mode)
    finally:
        os.close(walked.fd)


def test_a_hard_link_is_judged_as_the_file_it_is(base: Path) -> None:
    key = _key(base)
    other = base / "other"
    other.mkdir(mode=0o755)
    os.link(key, other / "same.pem")
    assert replaceable_by_others(other / "same.pem") is None
    key.chmod(0o646)  # one inode: writable by others under every name
    assert "may be written by group or others" in (replaceable_by_others(other / "same.pem") or "")


def _acl(path: Path, *entries: tuple[int, int, int]) -> None:
    """A POSIX ACL as ``setfacl`` writes it (version 2; tag, permissions, id; undefined id for the owner's,
    the owning group's, the mask's and other's entries)."""
    none = 0xFFFFFFFF
    full = sorted([(0x01, 0o7, none), *entries, (0x04, 0o5, none), (0x10, 0o7, none), (0x20, 0o5, none)])
    os.setxattr(path, "system.posix_acl_access",
                struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in full))


@as_root
@pytest.mark.parametrize("where", ["file", "folder", "folder higher up"])
@pytest.mark.parametrize("entry", [(0x02, 0o7, OTHER), (0x08, 0o6, OTHER)], ids=["named user", "named group"])
def test_an_acl_letting_another_account_write_is_refused(base: Path, where: str,
                                                         entry: tuple[int, int, int]) -> None:
    key = _key(base)
    target = {"file": key, "folder": key.parent, "folder higher up": base}[where]
    try:
        _acl(target, entry)
    except OSError as e:
        pytest.skip(f"no POSIX ACLs here: {e}")
    # the mode bits read 0775 (or 0675), root's own group: as a private group's, which is allowed
    why = replaceable_by_others(key)
    assert why is not None and "(ACL)" in why and str(OTHER) in why, why
    os.removexattr(target, "system.posix_acl_access")
    assert replaceable_by_others(key) is None


@as_root
def test_an_acl_whose_mask_takes_write_away_is_fine(base: Path) -> None:
    key = _key(base)
    none = 0xFFFFFFFF
    try:
        os.setxattr(key.parent, "system.posix_acl_access", struct.pack("<I", 2) + b"".join(
            struct.pack("<HHI", *e) for e in [(0x01, 0o7, none), (0x02, 0o7, OTHER), (0x04, 0o5, none),
                                              (0x10, 0o5, none), (0x20, 0o5, none)]))
    except OSError as e:
        pytest.skip(f"no POSIX ACLs here: {e}")
    assert replaceable_by_others(key) is None  # the mask r-x: the named user cannot write
