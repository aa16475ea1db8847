"""A root gateway's tools run as an unprivileged user: a tool that user cannot reach is found missing, with
the reason in the build report, not run to fail as if it had found nothing (or as if it had failed itself)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.open_way import open_the_way

from sentinel_mcp.swarm.tool_reach import unreachable
from sentinel_mcp.swarm.tool_user import ToolUser
from sentinel_mcp.swarm.toolchain import Toolchain, VerifySettings

NOBODY = ToolUser("nobody", 65534, 65534)


def _tool(folder: Path, name: str, mode: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / name
    p.write_text("#!/bin/sh\nexit 0\n")
    p.chmod(mode)
    return p


def _open_way(tmp_path: Path) -> None:
    open_the_way(tmp_path)
    tmp_path.chmod(tmp_path.stat().st_mode & 0o7777 | 0o711)


@pytest.mark.parametrize(
    ("folder_mode", "file_mode", "run", "why"),
    [
        (0o755, 0o755, True, None),
        (0o711, 0o644, False, None),  # a jar: read through a folder that can be passed, not listed
        (0o700, 0o755, True, "cannot be passed through"),
        (0o750, 0o755, True, "cannot be passed through"),  # group is root's, not the tool user's
        (0o755, 0o600, False, "cannot be read"),
        (0o755, 0o644, True, "cannot be run"),
        (0o755, 0o640, False, "cannot be read"),
    ],
)
def test_the_tool_users_reach_is_read_from_the_modes_on_the_way(tmp_path, folder_mode, file_mode, run, why):
    _open_way(tmp_path)
    folder = tmp_path / "tools"
    tool = _tool(folder, "t", file_mode)
    folder.chmod(folder_mode)
    got = unreachable(str(tool), NOBODY, run=run)
    assert (got is None) if why is None else (got is not None and why in got), got


def test_a_link_is_judged_where_it_leads(tmp_path):
    _open_way(tmp_path)
    hidden = tmp_path / "hidden"
    real = _tool(hidden, "ktlint", 0o755)
    hidden.chmod(0o700)
    link = tmp_path / "ktlint"
    link.symlink_to(real)
    assert "cannot be passed through" in (unreachable(str(link), NOBODY, run=True) or "")


def test_no_tool_user_means_no_judgement(tmp_path):
    assert unreachable(str(tmp_path / "absent"), None, run=True) is None


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root gateway changes user")
def test_a_tool_only_root_can_read_is_found_missing_and_said(tmp_path):
    _open_way(tmp_path)
    closed = tmp_path / "closed"
    ktlint = _tool(closed, "ktlint", 0o755)
    closed.chmod(0o700)
    tools = Toolchain(VerifySettings(resources=False, ktlint=str(ktlint)))
    assert not tools.checks_kotlin
    said = " ".join(tools.describe())
    assert "not reachable by the tool user" in said and str(closed) in said, said
    assert "Kotlin not parsed" in said
