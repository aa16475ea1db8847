"""A server's ``envFile`` read line by line as an editor shows it, through the commands a user runs: the value
an upstream is started with is the one the line says (a quoted value followed by a comment kept its quotes),
and a line that cannot be meant as one value is an error naming the file and the line (rc 2, nothing
started), never a silent choice: a key given twice (the last won), a NUL (the spawn failed later, far from the
line), an unclosed quote, a character some editors show as a line break (the reader split the line there, so
``A=x<U+2028>B=y`` set a ``B`` the editor shows inside A's value). A UTF-8 BOM (Windows' editors) is no
character of the first key.

Each command runs in process (``run_command``: the parsing and the messages are the point); one case of each
runs as the real command too (``python -m sentinel_mcp``), for its exit code and streams end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli_in_process import run_command

pytestmark = pytest.mark.timeout(180)

# the upstream writes the environment it was started with, and ends (check --connect starts it)
_DUMP = "import json, os, sys; open(sys.argv[1], 'w').write(json.dumps(dict(os.environ)))"


def _config(tmp_path: Path, env_text: bytes) -> Path:
    env_file = tmp_path / "secrets.env"
    env_file.write_bytes(env_text)
    os.chmod(env_file, 0o600)
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps({
        "mcpServers": {"s": {"command": sys.executable, "args": ["-c", _DUMP, str(tmp_path / "seen.json")],
                             "envFile": "secrets.env"}},
        "sentinel": {"rulebases": ["shipped:rulebases/default.pl"], "data_dir": str(tmp_path / "d")},
    }))
    os.chmod(cfg, 0o600)
    return cfg


def _run(tmp_path: Path, argv: list[str], monkeypatch: pytest.MonkeyPatch | None
         ) -> subprocess.CompletedProcess:
    return run_command(argv, cwd=tmp_path, env={"XDG_STATE_HOME": str(tmp_path / "state")},
                       monkeypatch=monkeypatch, timeout=150)


def _started_with(tmp_path: Path, env_text: bytes, monkeypatch: pytest.MonkeyPatch | None) -> dict[str, str]:
    """The environment ``check --connect`` started the upstream with."""
    run = _run(tmp_path, ["-c", str(_config(tmp_path, env_text)), "check", "--connect"], monkeypatch)
    seen = tmp_path / "seen.json"
    assert seen.exists(), (run.returncode, run.stdout[-2000:], run.stderr[-2000:])
    return json.loads(seen.read_text())


LINES = [
    (b'TOKEN="abc" # the production key', "abc"),
    (b"TOKEN='abc'   # a comment", "abc"),
    (b'export TOKEN="abc"#no space', "abc"),
    (b'TOKEN="a # b" # c', "a # b"),
    (b'TOKEN="say "hi""', 'say "hi"'),  # the last quote closes it, as before
    (b"TOKEN=abc # trailing", "abc"),
    (b"TOKEN=a#b", "a#b"),
    (b"\xef\xbb\xbfTOKEN=abc", "abc"),
]


def _file_with(line: bytes) -> bytes:
    return b"# the key\n" + line + b"\nOTHER=1\n" if not line.startswith(b"\xef") else line + b"\nOTHER=1\n"


@pytest.mark.parametrize("line, value", LINES)
def test_the_upstream_gets_the_value_the_line_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   line: bytes, value: str) -> None:
    env = _started_with(tmp_path, _file_with(line), monkeypatch)
    assert env.get("TOKEN") == value and env.get("OTHER") == "1", {k: env.get(k) for k in ("TOKEN", "OTHER")}


def test_the_command_starts_the_upstream_with_the_value_the_line_says(tmp_path: Path) -> None:
    line, value = LINES[0]
    env = _started_with(tmp_path, _file_with(line), None)
    assert env.get("TOKEN") == value and env.get("OTHER") == "1", {k: env.get(k) for k in ("TOKEN", "OTHER")}


def _refused(tmp_path: Path, env_text: bytes, monkeypatch: pytest.MonkeyPatch | None, *words: str) -> str:
    run = _run(tmp_path, ["-c", str(_config(tmp_path, env_text)), "config", "show"], monkeypatch)
    assert run.returncode == 2 and not run.stdout, (run.returncode, run.stdout, run.stderr)
    text = run.stderr
    for w in ("mcpServers.s.envFile", str(tmp_path / "secrets.env"), *words):
        assert w in text, (w, text)
    assert "Traceback" not in text and "secret-value" not in text, text
    return text


NOT_ONE_VALUE = [
    (b"TOKEN=old-secret-value\nOTHER=1\nTOKEN=secret-value\n", ["line 3", "TOKEN", "line 1", "twice"]),
    (b"A=1\nexport TOKEN=x\nTOKEN = y\n", ["line 3", "TOKEN", "line 2", "twice"]),
    (b"A=1\nTOKEN=secret-value\x00more\n", ["line 2", "NUL"]),
    (b"A=1\nB=2\nTOKEN=\"secret-value\n", ["line 3", "quote"]),
    (b"A=1\nTOKEN='secret-value\" # x\n", ["line 2", "quote"]),
    (b'TOKEN="secret-value" trailing\n', ["line 1", "quote"]),
]


@pytest.mark.parametrize("text, words", NOT_ONE_VALUE)
def test_a_line_that_is_not_one_value_is_an_error_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            text: bytes, words: list[str]) -> None:
    _refused(tmp_path, text, monkeypatch, *words)


def test_the_command_refuses_a_line_that_is_not_one_value_with_rc_2(tmp_path: Path) -> None:
    text, words = NOT_ONE_VALUE[0]
    _refused(tmp_path, text, None, *words)


@pytest.mark.parametrize("breaker", ["\u2028", "\u2029", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85",
                                     "\r"])
def test_a_character_an_editor_may_break_the_line_at_is_an_error(tmp_path: Path, breaker: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    text = f"A=1\nTOKEN=secret-value{breaker}ADMIN=yes\nB=2\n".encode()
    _refused(tmp_path, text, monkeypatch, "line 2", f"U+{ord(breaker):04X}")


def test_line_numbers_count_line_feeds_whatever_the_line_ends(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    _refused(tmp_path, b"A=1\r\n\r\nB=2\r\nA=3\r\n", monkeypatch, "line 4", "line 1", "A")
