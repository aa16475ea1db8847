"""The request headers a config gives an HTTP upstream are checked when the config loads: a name that is no
HTTP field name, a value with a line break or another control character or a character outside ASCII, one
field given twice in two spellings (HTTP names are one case-insensitively: ``Authorization`` and
``authorization`` were both sent, and the server picked one), or a field Sentinel writes itself (``Host``,
``Content-Length``, ``Accept-Encoding``, ``Mcp-Session-Id``...: the lean client dropped it silently, the SDK's
client sent it over Sentinel's own) is a config error naming the server, the header and the line (rc 2,
nothing started). Before, each loaded; the upstream then failed at every connect ("UnicodeEncodeError ...")
or was sent a request other than the one configured. A value is never quoted (it is often a secret).

``config show`` runs in process (``run_command``); one refusal and the variable's case run as the real
command."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from tests.support.cli_in_process import run_command

pytestmark = pytest.mark.timeout(120)

SECRET = "s3cret-v4lue"


def _show(tmp_path: Path, headers: dict[str, str], monkeypatch: pytest.MonkeyPatch | None,
          **variables: str) -> subprocess.CompletedProcess[str]:
    """``config show`` of a config of one upstream with ``headers``: in process with ``monkeypatch``."""
    path = tmp_path / "sentinel.json"
    text = json.dumps({"mcpServers": {"r": {"url": "https://mcp.example.com/mcp", "headers": headers}}},
                      indent=2)
    path.write_text(text)
    os.chmod(path, 0o600)
    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "SENTINEL_DATA_DIR": str(tmp_path / "d"), **variables}
    return run_command(["-c", str(path), "config", "show"], cwd=tmp_path, env=env, monkeypatch=monkeypatch)


REFUSED = [
    ({"X-Key": f"{SECRET}\r\nX-Admin: yes"}, ["X-Key", "U+000D"]),
    ({"X-Key": f"{SECRET}\nX-Admin: yes"}, ["X-Key", "U+000A"]),
    ({"X-Key": f"{SECRET}\x7f"}, ["X-Key", "U+007F"]),
    ({"X-Key": f"{SECRET}\x01"}, ["X-Key", "U+0001"]),
    ({"X-Key": f"ключ{SECRET}"}, ["X-Key", "U+043A"]),
    ({"X-Key": f"{SECRET}\u2028"}, ["X-Key", "U+2028"]),
    ({"X Key": SECRET}, ["'X Key'", "field name"]),
    ({"X-Key:": SECRET}, ["'X-Key:'", "field name"]),
    ({"": SECRET}, ["''", "field name"]),
    ({"Ключ": SECRET}, ["field name"]),
    ({"X-Key\r\nX-Admin": SECRET}, ["field name"]),
    ({"Authorization": f"Bearer {SECRET}", "authorization": "Bearer other"}, ["'authorization'",
                                                                               "'Authorization'", "twice"]),
    ({"X-Api-Key": SECRET, "X-API-KEY": SECRET}, ["twice"]),
    ({"Host": "admin.internal"}, ["'Host'", "Sentinel"]),
    ({"content-length": "0"}, ["'content-length'", "Sentinel"]),
    ({"Transfer-Encoding": "chunked"}, ["Sentinel"]),
    ({"Accept-Encoding": "gzip"}, ["Sentinel"]),
    ({"Mcp-Session-Id": "fixed"}, ["Sentinel"]),
    ({"MCP-Protocol-Version": "2024-11-05"}, ["Sentinel"]),
    ({"Connection": "close"}, ["Sentinel"]),
]


@pytest.mark.parametrize("headers, words", REFUSED)
def test_a_header_that_cannot_be_sent_as_configured_is_a_config_error(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      headers: dict[str, str],
                                                                      words: list[str]) -> None:
    _refused(_show(tmp_path, headers, monkeypatch), words)


def test_the_command_refuses_a_header_that_cannot_be_sent_with_rc_2(tmp_path: Path) -> None:
    headers, words = REFUSED[0]
    _refused(_show(tmp_path, headers, None), words)


def _refused(run: subprocess.CompletedProcess[str], words: list[str]) -> None:
    assert run.returncode == 2 and not run.stdout, (run.returncode, run.stdout, run.stderr)
    assert "mcpServers.r.headers" in run.stderr and "(line " in run.stderr, run.stderr
    for w in words:
        assert w in run.stderr, (w, run.stderr)
    assert SECRET not in run.stderr and "Traceback" not in run.stderr, run.stderr


def test_a_value_from_a_variable_is_named_by_it_never_quoted(tmp_path: Path) -> None:
    run = _show(tmp_path, {"Authorization": "Bearer ${TOKEN}"}, None, TOKEN=f"{SECRET}\nX-Admin: yes")
    assert run.returncode == 2 and "Authorization" in run.stderr and "U+000A" in run.stderr, run.stderr
    assert SECRET not in run.stderr and "X-Admin" not in run.stderr, run.stderr


def test_plain_headers_still_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    headers = {"Authorization": "Bearer ${TOKEN}", "X-Api-Key": "k", "x-trace": "a\tb", "X-Empty": "",
               "User-Agent": "my agent/1.0 (+https://example.com)", "Accept-Language": "de"}
    run = _show(tmp_path, headers, monkeypatch, TOKEN="t")
    assert run.returncode == 0, run.stderr
    assert list(json.loads(run.stdout)["mcpServers"]["r"]["headers"]) == list(headers)
