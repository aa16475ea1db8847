"""``sentinel-mcp draft`` lists a server's tools as the gateway does, every page and bounded: it took the
first page alone (a server of 3 pages was drafted as its first 53 tools, said as if whole), and a listing
that never ends, repeats its cursor or sends cursors of megabytes is refused by name, as the gateway refuses
it (upstream_listing.py), never a partial draft."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from sentinel_mcp.cli import main
from sentinel_mcp.paths import PROJECT_ROOT

pytestmark = pytest.mark.timeout(120)


def _draft(tmp_path: Path, timeout: float = 60, **env: str) -> int:
    env = {"LOG": str(tmp_path / "listed.log"), "PYTHONPATH": str(PROJECT_ROOT), **env}
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"mcpServers": {"ev": {
        "command": sys.executable, "args": ["-m", "tests.gateway.listing_upstream"], "env": env,
        "cwd": str(PROJECT_ROOT), "timeout": timeout, "connect_timeout": 20}}}))
    (tmp_path / "policy.md").write_text("# P\n\nThe tools are read on request.\n")
    return main(["-c", str(config), "draft", "--policy", str(tmp_path / "policy.md"), "--server", "ev",
                 "-o", str(tmp_path / "out.pl")])


def _listed(tmp_path: Path) -> int:
    return len((tmp_path / "listed.log").read_text().splitlines())


def test_every_page_is_drafted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _draft(tmp_path, LISTING="endless", PAGES="3") == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    assert "from 153 tools" in err, err
    assert _listed(tmp_path) == 3


@pytest.mark.parametrize("mode,words", [
    ("endless", "more than 5,000 tools"), ("repeat", "same page cursor twice"),
    ("fat_cursor", "cursors passed"),
])
def test_a_listing_past_a_bound_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       mode: str, words: str) -> None:
    code = _draft(tmp_path, LISTING=mode, CURSOR_BYTES="1000000")
    err = capsys.readouterr().err
    assert code == 1 and "cannot list the tools of ev" in err and words in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out.pl").exists()
    assert _listed(tmp_path) <= 101


def test_a_server_that_never_lists_ends_the_command(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """It held the command for ever; now at most its connect and call timeouts (as the gateway's listing)."""
    code = _draft(tmp_path, timeout=1, LISTING="hang")
    err = capsys.readouterr().err
    assert code == 1 and "did not list its tools within 21 s" in err, err
    assert len(err.strip().splitlines()) == 1, err
