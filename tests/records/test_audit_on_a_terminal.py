"""What a client wrote is stored as it was, and shown to the operator as text: `sentinel-mcp audit` (table,
--json, --decision) never hands the terminal a control, escape or direction character a client chose (a
window title, a cleared screen, a forged "allow" line)."""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway.call_record import META_KEY

from .rig import recorder_config

pytestmark = pytest.mark.timeout(120)
HOSTILE = [
    "rec__\x1b]0;OWNED\x07\x1b[2J\x1b[31mFAKE allow\x1b[0m",
    "rec__x\r2026-01-01 00:00:00  owner      allow",
    "rec__\x9b2J\u202eevil",
    "rec__\x7f\x08\x08\x08tab\there",
]


def raw_controls(text: str) -> list[str]:
    return sorted({f"U+{ord(ch):04X}" for ch in text
                   if ch != "\n" and (unicodedata.category(ch) in ("Cc", "Cf") or 0x80 <= ord(ch) < 0xA0)})


async def test_audit_views_never_hand_the_terminal_a_clients_control_characters(tmp_path: Path) -> None:
    config = recorder_config(tmp_path)
    async with running_gateway(config) as rt, Client(rt.front.server) as c:
        results = [await c.call_tool(name, {"note": name}) for name in HOSTILE]
    cfg = tmp_path / "cli.json"
    cfg.write_text(json.dumps({"sentinel": {"data_dir": str(tmp_path / "data"), "builtins": []}}))
    views = [["audit"], ["audit", "--json"], *(["audit", "--decision", r.meta[META_KEY]] for r in results)]
    for view in views:
        run = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), *view],
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr
        assert "unknown_tool" in run.stdout or "unknown" in run.stdout, run.stdout
        assert raw_controls(run.stdout) == [], (view, run.stdout)
    rows = [json.loads(line) for line in subprocess.run(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "audit", "--json"],
        capture_output=True, text=True, timeout=60).stdout.splitlines()]
    assert {r["tool"] for r in rows} >= set(HOSTILE)  # stored and exported exactly: only the display is safe


def test_the_table_tells_apart_sessions_made_in_the_same_moment() -> None:
    """Session ids begin with the time they were made (the stores' indexes grow at their end): the table's
    session column shows an id's start and its random end: two conversations opened together differ there."""
    from sentinel_mcp.app.gateway_cli import _shown
    from sentinel_mcp.core.random_pool import ordered_token_hex

    a, b = (f"owner/conv-{ordered_token_hex(8)}" for _ in range(2))
    shown = [_shown(s, 22, ends=True) for s in (a, b)]
    assert shown[0] != shown[1] and all(len(s) == 22 for s in shown), shown
    assert all(s.startswith("owner/conv") and "…" in s for s in shown) and shown[0][-6:] == a[-6:]
    assert _shown("owner/label-x", 22, ends=True) == "owner/label-x"  # short enough: whole
    cut = _shown("a\x1b]0;T\x07" + "b" * 40, 22, ends=True)
    assert raw_controls(cut) == [] and len(cut) == 22  # made safe before it is cut


async def test_audit_views_show_a_typed_out_mark_apart_from_a_real_hidden_character(tmp_path: Path) -> None:
    """A tool name that types Sentinel's marking out (``⟨U+202E⟩``, a look-alike bracket) is shown with its
    brackets marked in every ``sentinel-mcp audit`` view: only a name really holding U+202E shows
    ``⟨U+202E⟩``."""
    real, typed = "rec__\u202eexe", ["rec__⟨U+202E⟩exe", "rec__〈U+202E〉exe", "rec__⟩exe"]
    config = recorder_config(tmp_path)
    async with running_gateway(config) as rt, Client(rt.front.server) as c:
        results = [await c.call_tool(name, {"note": "n"}) for name in (real, *typed)]
    cfg = tmp_path / "cli.json"
    cfg.write_text(json.dumps({"sentinel": {"data_dir": str(tmp_path / "data"), "builtins": []}}))

    def view(*args: str) -> str:
        run = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "audit", *args],
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr
        return run.stdout

    table = view()
    assert "rec__⟨U+202E⟩exe" in table and table.count("⟨U+202E⟩") == 1, table
    assert "rec__⟨U+27E8⟩U+202E⟨U+27E9⟩exe" in table and "rec__⟨U+3008⟩" in table
    assert "rec__⟨U+27E9⟩exe" in table
    decisions = [view("--decision", r.meta[META_KEY]) for r in results]
    assert "rec__⟨U+202E⟩exe" in decisions[0] and "U+27E8" not in decisions[0]
    for shown in decisions[1:]:
        assert "⟨U+202E⟩" not in shown and ("U+27E" in shown or "U+3008" in shown), shown


def test_a_cut_never_splits_a_mark() -> None:
    """The table cuts a value to its column: never inside one of Sentinel's marks (``⟨U+20`` left over reads
    as something else), at any width, from either end."""
    import re

    from sentinel_mcp.app.gateway_cli import _shown

    value = "x\u202e" * 3 + "middle" + "\u200by" * 3
    whole = re.compile(r"⟨U\+[0-9A-F]{4,6}⟩")
    for width in range(2, 40):
        for ends in (False, True):
            cut = _shown(value, width, ends=ends)
            assert len(cut) <= width, (width, ends, cut)
            rest = whole.sub("", cut)
            assert "⟨" not in rest and "⟩" not in rest and "U+" not in rest, (width, ends, cut)
