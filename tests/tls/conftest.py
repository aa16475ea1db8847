"""Real certificates, made at test time by Sentinel's own local CA (``sentinel_mcp.tls.authority``)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import pytest

from sentinel_mcp.tls.authority import Issued, LocalCA  # noqa: E402


@dataclass
class Pki:
    ca: LocalCA
    server: Issued  # for localhost / 127.0.0.1 / ::1
    alice: Issued
    bob: Issued
    carol: Issued  # issued by the CA, but mapped to no principal
    expired: Issued  # CN=alice, expired yesterday
    revoked: Issued  # CN=alice, revoked
    stranger: Issued  # CN=alice from another CA
    other_ca: LocalCA


def make_pki(root: Path) -> Pki:
    ca = LocalCA(root / "ca")
    ca.create()
    server = ca.issue_server(["localhost"], ["127.0.0.1", "::1"])
    alice, bob, carol = ca.issue_client("alice"), ca.issue_client("bob"), ca.issue_client("carol")
    old = dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=3)
    expired = ca.issue_client("alice", days=2, not_before=old, file_stem="alice-expired")
    revoked = ca.issue_client("alice", file_stem="alice-revoked")
    ca.revoke(f"{revoked.serial:x}")
    other = LocalCA(root / "other")
    other.create()
    stranger = other.issue_client("alice")
    return Pki(ca, server, alice, bob, carol, expired, revoked, stranger, other)


@pytest.fixture
def pki(tmp_path: Path) -> Pki:
    return make_pki(tmp_path / "pki")
