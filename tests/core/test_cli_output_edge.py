"""The command line's output edge (``core/terminal_output.py``): whatever a ``sentinel-mcp`` command prints, a
terminal cannot act on it (no escape, OSC 52 clipboard write, OSC 8 link, carriage return, backspace, C1
control or direction override reaches it), even where a command forgot to mark a foreign value; and a
reader that stops reading (``| head``) ends the command quietly, not with a traceback."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from sentinel_mcp.config import load_config
from sentinel_mcp.core.display_text import safe_text
from sentinel_mcp.core.terminal_output import inert
from sentinel_mcp.policy.fact_store import FactStore
from sentinel_mcp.policy.guard_of_config import facts_db_path

pytestmark = pytest.mark.timeout(120)
# a session label a client chose: clipboard write, cleared screen, link, line overwrite, C1 CSI, bidi
HOSTILE = ("owner/\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b]8;;https://evil.example\x1b\\x\x1b]8;;\x1b\\"
           "\rallow\x08\x08\x9b2J\u202eexe\u2028end")


def raw_controls(text: str) -> list[str]:
    return sorted({f"U+{ord(ch):04X}" for ch in text if ch not in "\n\t" and (
        unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") or 0x80 <= ord(ch) < 0xA0)})


def test_inert_marks_every_character_a_terminal_acts_on_and_keeps_lines() -> None:
    shown = inert(HOSTILE + "\n\tnext")
    assert raw_controls(shown) == []
    assert "⟨U+001B⟩]52;c;" in shown and "⟨U+000D⟩allow⟨U+0008⟩" in shown and "⟨U+009B⟩" in shown
    assert "⟨U+202E⟩exe⟨U+2028⟩end" in shown and shown.endswith("\n\tnext")
    marked = safe_text(HOSTILE)
    assert inert(marked) == marked  # text a command marked already passes unchanged
    assert inert("plain ⟨ text ⟩ «ok»") == "plain ⟨ text ⟩ «ok»"


@pytest.fixture
def hostile_facts(tmp_path: Path) -> Path:
    """A config whose fact store holds a conversation labelled ``HOSTILE`` (as another instance wrote it)."""
    cfg = tmp_path / "cli.json"
    cfg.write_text(json.dumps({"sentinel": {"data_dir": str(tmp_path / "data"), "builtins": []}}))

    async def seed() -> None:
        path = facts_db_path(load_config(str(cfg)))
        path.parent.mkdir(parents=True, exist_ok=True)
        async with FactStore(path) as store:
            await store.bind_context(HOSTILE, "k", "v\x1b[31mred\x9b")

    asyncio.run(seed())
    return cfg


def _cli(cfg: Path, *args: str, **kw) -> subprocess.CompletedProcess[str]:
    """The real CLI; its output decoded as written (text mode would read a ``\\r`` as a line end)."""
    run = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), *args], timeout=60, **kw)
    out, err = (o.decode("utf-8", "surrogateescape") if isinstance(o, bytes) else o
                for o in (run.stdout, run.stderr))
    return subprocess.CompletedProcess(run.args, run.returncode, out, err)


@pytest.mark.parametrize(("view", "seen"), [
    (["facts"], "⟨U+001B⟩]52;c;ZXZpbA=="),
    (["facts", "--session", HOSTILE], "⟨U+000D⟩allow⟨U+0008⟩"),
    (["facts", "--session", HOSTILE, "--json"], "\\u001b[31mred\\u009b"),
])
def test_facts_views_never_hand_the_terminal_a_stored_control(hostile_facts: Path, view, seen) -> None:
    run = _cli(hostile_facts, *view, capture_output=True)
    assert run.returncode == 0, run.stderr
    assert seen in run.stdout, run.stdout
    assert raw_controls(run.stdout) == [] and raw_controls(run.stderr) == [], run.stdout


def test_a_reader_that_stops_reading_ends_the_command_quietly(hostile_facts: Path) -> None:
    """``sentinel-mcp facts | head -1`` with the reader gone: exit as SIGPIPE would (141), no traceback."""
    read, write = os.pipe()
    os.close(read)  # gone before the command writes: its first write meets a broken pipe, every time
    try:
        run = _cli(hostile_facts, "facts", stdout=write, stderr=subprocess.PIPE)
    finally:
        os.close(write)
    assert run.returncode == 141, run.stderr
    assert "Traceback" not in run.stderr and "BrokenPipe" not in run.stderr, run.stderr


@pytest.mark.parametrize("command", [["facts"], ["audit"], ["config", "show"]])
def test_a_config_someone_else_wrote_reaches_neither_stream_raw(tmp_path: Path, command) -> None:
    """A data directory named with a clipboard write and a direction override (a config from someone else):
    ``facts`` said "no fact store yet at <it>" on stderr with both acting on the terminal."""
    cfg = tmp_path / "cli.json"
    cfg.write_text(json.dumps({"sentinel": {"data_dir": str(tmp_path / "d\x1b]52;c;QQ==\x07\u202ex"),
                                            "builtins": []}}))
    run = _cli(cfg, *command, capture_output=True)
    assert run.returncode == 0, run.stderr
    assert "52;c;QQ==" in run.stdout + run.stderr
    assert raw_controls(run.stdout) == [] and raw_controls(run.stderr) == [], (run.stdout, run.stderr)
