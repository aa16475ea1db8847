"""A console sign-in session lasts ``SESSION_SECONDS`` by the process clock (``core/process_clock.py``), not
the wall clock: sessions live in the process's memory only (a restart signs everyone out), so nothing stored
needs the wall clock. Set back (NTP stepping a fast clock, ``date -s``, a VM restored from a snapshot), the
wall clock kept a session signed in for as long as the step: a year's step, a year."""

from __future__ import annotations

import time
from typing import Iterator

import pytest
from starlette.requests import Request

from sentinel_mcp.console import auth
from sentinel_mcp.core import process_clock
from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.identity.resolver import Authenticator, TokenResolver

_time, _mono = time.time, time.monotonic
ALICE = Principal("alice", "token")
SECRET = "alice-console-0123456789"


@pytest.fixture(autouse=True)
def fresh_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(process_clock, "CLOCK", process_clock.ProcessClock())
    yield
    monkeypatch.undo()


def set_back(monkeypatch: pytest.MonkeyPatch, *, wall_by: float, later_by: float) -> None:
    """``later_by`` seconds pass (the monotonic clock); the wall clock is ``wall_by`` behind where it was."""
    monkeypatch.setattr(time, "time", lambda: _time() - wall_by + later_by)
    monkeypatch.setattr(time, "monotonic", lambda: _mono() + later_by)


def console() -> auth.ConsoleAuth:
    tokens, secrets = TokenResolver(), TokenResolver()
    tokens.add(ALICE, token="alice-token-0123456789")
    secrets.add(ALICE, token=SECRET)
    return auth.ConsoleAuth(Authenticator([tokens]), secrets)


def request_with(sid: str) -> Request:
    return Request({"type": "http", "method": "GET", "path": "/console", "scheme": "http",
                    "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000),
                    "headers": [(b"host", b"127.0.0.1:8000"), (b"cookie", f"{auth.COOKIE}={sid}".encode())]})


def signed_in(c: auth.ConsoleAuth) -> tuple[str, auth.Viewer]:
    opened = c.sign_in(SECRET)
    assert opened is not None
    sid, principal = opened
    return sid, auth.Viewer(principal, "session:" + sid, sid)


@pytest.mark.parametrize("wall_by", [61, 3600, 86400 * 365])
def test_a_session_ends_after_its_time_when_the_clock_is_set_back(monkeypatch, wall_by):
    c = console()
    sid, viewer = signed_in(c)
    set_back(monkeypatch, wall_by=wall_by, later_by=auth.SESSION_SECONDS + 1)
    assert not c.still_signed_in(viewer)
    assert c.viewer(request_with(sid)) is None
    assert sid not in c._sessions  # dropped when looked at, not kept for a later reading


@pytest.mark.parametrize("wall_by", [61, 3600, 86400 * 365])
def test_a_session_is_signed_in_within_its_time_whatever_the_clock(monkeypatch, wall_by):
    """The other side: the process clock does not end a session early either."""
    c = console()
    sid, viewer = signed_in(c)
    set_back(monkeypatch, wall_by=wall_by, later_by=auth.SESSION_SECONDS - 60)
    assert c.still_signed_in(viewer)
    found = c.viewer(request_with(sid))
    assert found is not None and found.principal.name == "alice" and found.session_id == sid


def test_sessions_opened_after_a_step_back_expire_by_the_same_clock(monkeypatch):
    """Opened after the step back, a session still ends ``SESSION_SECONDS`` later, and the sweep at sign-in
    drops sessions past their time though the wall clock says they were opened in the future."""
    c = console()
    _, first = signed_in(c)
    set_back(monkeypatch, wall_by=86400 * 365, later_by=10)
    sid, second = signed_in(c)
    set_back(monkeypatch, wall_by=86400 * 365, later_by=auth.SESSION_SECONDS + 11)
    assert not c.still_signed_in(first) and not c.still_signed_in(second)
    signed_in(c)  # the sweep
    assert first.session_id not in c._sessions and sid not in c._sessions
