"""A server's name in ``mcpServers`` is its namespace: the prefix of every tool, prompt and resource of it,
what policy patterns (``sentinel.policy.allow``/``deny``, a principal's ``tools``) and a person reading a
confirmation go by. Two names that read as one (``github`` and ``GitHub``, ``café`` composed and decomposed,
``paypal`` with a Cyrillic а) loaded as two servers: a deny of ``github__*`` missed ``GitHub__delete_repo``,
which a person reads as the same tool. A name with a hidden character (a line break, a direction override) or
none at all loaded too. Each is a config error naming the server and the line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import ROOT

pytestmark = pytest.mark.timeout(120)


def _show(tmp_path: Path, names: list[str]) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "sentinel.json"
    servers = {name: {"command": "python3", "prefix": f"p{i}"} for i, name in enumerate(names)}
    path.write_text(json.dumps({"mcpServers": servers}, indent=2))
    os.chmod(path, 0o600)
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "SENTINEL_DATA_DIR": str(tmp_path / "d"),
           "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(path), "config", "show"],
                          capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)


@pytest.mark.parametrize("names, words", [
    (["github", "GitHub"], ["'GitHub'", "'github'", "read as one"]),
    (["caf\u00e9", "cafe\u0301"], ["read as one"]),
    (["paypal", "p\u0430ypal"], ["Cyrillic"]),  # mixed scripts: no name of its own
    (["paypal", "\u0440\u0430\u0443\u0440\u0430\u04cf"], ["read as one"]),  # all Cyrillic, a look-alike
    (["files", "ﬁles"], ["read as one"]),  # the ligature ﬁ
    (["a\nb"], ["U+000A"]),
    (["pay\u202eroll"], ["U+202E"]),
    (["admin\u200b"], ["U+200B"]),
    ([""], ["empty"]),
    (["   "], ["empty"]),
])
def test_a_server_name_that_does_not_read_as_itself_is_a_config_error(tmp_path: Path, names: list[str],
                                                                       words: list[str]) -> None:
    run = _show(tmp_path, names)
    assert run.returncode == 2 and not run.stdout, (run.returncode, run.stdout, run.stderr)
    assert "mcpServers" in run.stderr and "(line " in run.stderr and "Traceback" not in run.stderr, run.stderr
    for w in words:
        assert w in run.stderr, (w, run.stderr)


def test_distinct_names_still_load(tmp_path: Path) -> None:
    run = _show(tmp_path, ["github", "gitlab", "files", "files-2", "my.server", "Бронирование", "日本語"])
    assert run.returncode == 0, run.stderr
