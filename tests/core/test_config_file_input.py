"""A hostile or broken config file ends in one clear error naming the file and the problem: never a
traceback, a hang (FIFO), an unbounded read (/dev/zero), or the file's own escapes on the terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sentinel_mcp.config import ConfigError, load_config
from sentinel_mcp.config_file import MAX_CONFIG_BYTES


def _refused(path: Path, *words: str) -> str:
    with pytest.raises(ConfigError) as err:
        load_config(path)
    text = str(err.value)
    assert str(path) in text
    for w in words:
        assert w in text, text
    return text


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "cfg.json"
    os.mkfifo(fifo)
    _refused(fifo, "not a regular file")


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/null"])
def test_a_device_is_refused(tmp_path: Path, target: str) -> None:
    link = tmp_path / "cfg.json"
    link.symlink_to(target)
    _refused(link, "not a regular file")


def test_a_directory_is_refused(tmp_path: Path) -> None:
    _refused(tmp_path, "not a regular file")


def test_an_oversized_config_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_bytes(b"{" + b" " * MAX_CONFIG_BYTES + b"}")
    _refused(big, "too large")


@pytest.mark.parametrize("bad", [b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x80abc"])
def test_non_utf8_names_line_and_offset(tmp_path: Path, bad: bytes) -> None:
    cfg = tmp_path / "cfg.json"
    data = b'{\n  "mcpServers": {},\n  "x": "' + bad + b'"\n}'
    cfg.write_bytes(data)
    _refused(cfg, "line 3", f"byte offset {data.index(bad)}", "not UTF-8")


@pytest.mark.parametrize("digits", [4301, 100_001])
def test_an_over_long_number_is_a_config_error(tmp_path: Path, digits: int) -> None:
    cfg = tmp_path / "cfg.json"
    cfg.write_text('{"mcpServers": {}, "sentinel": {"http": {"port": 1' + "0" * digits + "}}}")
    _refused(cfg, "too long")


@pytest.mark.parametrize("where", [
    {"sentinel": {"data_dir": "a\u0000b"}},
    {"sentinel": {"rulebases": ["ok.pl", "x\u0000.pl"]}},
    {"mcpServers": {"s": {"command": "x", "args": ["\u0000"]}}},
    {"mcpServers": {"s\u0000": {"command": "x"}}},
])
def test_nul_is_refused_naming_the_key(tmp_path: Path, where: dict) -> None:
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"mcpServers": {}, **where}))
    _refused(cfg, "NUL")


def test_a_plain_config_still_loads(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": {"data_dir": str(tmp_path / "d")}}))
    assert load_config(cfg).data_dir == tmp_path / "d"


def _cli(cfg: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), *args],
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("case", ["fifo", "nonutf8", "longint", "nul", "esckey"])
def test_cli_config_show_answers_with_one_clean_line(tmp_path: Path, case: str) -> None:
    cfg = tmp_path / "cfg.json"
    if case == "fifo":
        os.mkfifo(cfg)
    elif case == "nonutf8":
        cfg.write_bytes(b'{"mcpServers": {}, "x": "\xff"}')
    elif case == "longint":
        cfg.write_text('{"mcpServers": {}, "sentinel": {"http": {"port": 1' + "0" * 5000 + "}}}")
    elif case == "nul":
        cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": {"data_dir": "a\u0000b"}}))
    else:
        key = "\x1b]52;c;QUFB\x07\x1b[2J\u202eevil"
        cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": {key: {}}}))
    run = _cli(cfg, "config", "show")
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr
    assert str(cfg) in run.stderr
    assert not any(ch in run.stderr for ch in "\x1b\x07\u202e\r"), run.stderr
